"""Pieces shared by the task prompts: input records, numbered references, dynamic schemas."""

from __future__ import annotations

import types
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, create_model

# Output bounds (characters). Every string a model writes is bounded: see localmem.llm.grammar.
SHORT = 60  # a name, an entity, a label
LINE = 200  # one sentence
PARAGRAPH = 600  # a few sentences of reasoning

Phrase = Annotated[str, Field(min_length=1, max_length=SHORT)]
Sentence = Annotated[str, Field(min_length=1, max_length=LINE)]

M = TypeVar("M", bound=BaseModel)

JSON_ONLY = "Reply with one JSON object that follows the requested fields, and nothing else."


class TaskInput(BaseModel):
    """Base of task inputs: immutable, unknown fields refused."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class TaskOutput(BaseModel):
    """Base of task outputs (what the model writes)."""

    model_config = ConfigDict(extra="forbid")


class MemoryLine(TaskInput):
    """One memory shown to a model: its text and, when known, when it happened."""

    text: str = Field(min_length=1)
    time: str | None = Field(None, description="When it happened, as the prompt should show it.")

    def line(self) -> str:
        """The memory as one prompt line (the number is added by the message)."""
        text = " ".join(self.text.split())
        return f"({self.time}) {text}" if self.time else text


def memory_lines(memories: list[MemoryLine] | tuple[MemoryLine, ...]) -> tuple[str, ...]:
    """The trimmable memory part of a message."""
    return tuple(m.line() for m in memories)


def list_of(item: Any) -> Any:
    """``list[item]`` for an item type made at run time (``ref(n)``, a derived model): what
    ``list[...]`` makes, spelled out, as mypy reads ``list[x]`` as a static type."""
    return types.GenericAlias(list, (item,))


def ref(n: int) -> Any:
    """The type of a reference to one of ``n`` numbered memories (1..n)."""
    return Annotated[int, Field(ge=1, le=max(n, 1))]


def derive(base: type[M], suffix: str, **fields: tuple[Any, Any]) -> type[M]:
    """A subclass of ``base`` with some fields narrowed (wrap the caller in ``lru_cache`` so
    the grammar of each variant is built once).

    ``derive(Answer, "n3", evidence=(list_of(ref(3)), Field(max_length=3)))``.
    """
    # mypy checks the unpacked fields against create_model's own keywords (__config__, ...)
    # too, which no field definition is: no overload matches, though the call is right
    return create_model(  # type: ignore[call-overload]
        f"{base.__name__}_{suffix}", __base__=base, **fields
    )
