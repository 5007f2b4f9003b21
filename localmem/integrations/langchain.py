"""LangChain on localmem: :class:`LocalmemRetriever` (a ``BaseRetriever`` whose documents are
search hits) and :func:`memory_tools` (add and search as ``StructuredTool``\\ s an LLM can call).

Both speak the declared API only, so an open :class:`localmem.Memory` and a ``Memory.connect``
client work alike. The parameter descriptions the tools show a model come from the declaration
(:mod:`localmem.api`), as the MCP tools' do.
"""

from __future__ import annotations

import json
from typing import Any, cast

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.tools import StructuredTool
from pydantic import ConfigDict, Field, create_model

from localmem.api import MemoryAPI, operations
from localmem.errors import InputError
from localmem.types import KINDS, Hit, Kind
from localmem.wire import compact_hit


def _search_options(options: dict[str, Any]) -> dict[str, Any]:
    """Search options checked against the declared ``search`` (a typo fails at once)."""
    declared = {p.name for p in operations()["search"].params} - {"query", "k"}
    unknown = set(options) - declared
    if unknown:
        raise InputError(
            f"not options of search: {sorted(unknown)} (options: {', '.join(sorted(declared))})"
        )
    return options


def document(hit: Hit) -> Document:
    """A search hit as a LangChain document: the memory's text, its id, and in ``metadata`` the
    hit's compact form (id, score, kind, time, source) with its scopes."""
    memory = hit.memory
    metadata = {key: value for key, value in compact_hit(hit).items() if key != "content"}
    for key in ("user_id", "agent_id", "session_id"):
        if getattr(memory, key) is not None:
            metadata[key] = getattr(memory, key)
    if memory.metadata:
        metadata["metadata"] = memory.metadata
    return Document(page_content=memory.content, id=memory.id, metadata=metadata)


class LocalmemRetriever(BaseRetriever):
    """Documents for a query from a localmem store: ``LocalmemRetriever(memory=mem, k=4,
    user_id="alice")``; any option of ``search`` (scopes, kinds, time range, ``as_of``,
    reranker...) may be given and applies to every query.

    Raises:
        InputError: an option that ``search`` does not declare.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: Any
    k: int = 5
    search_options: dict[str, Any] = Field(default_factory=dict)

    def __init__(self, *, memory: MemoryAPI, k: int = 5, **search_options: Any) -> None:
        super().__init__(memory=memory, k=k, search_options=_search_options(search_options))

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        result = self.memory.search(query, k=self.k, **self.search_options)
        return [document(hit) for hit in result.hits]


def _describe(operation: str, name: str) -> str:
    return operations()[operation].param(name).description


def memory_tools(
    memory: MemoryAPI,
    *,
    user_id: str | None = None,
    agent_id: str | None = None,
    session_id: str | None = None,
    k: int = 5,
) -> list[StructuredTool]:
    """The store's add and search as LangChain tools: ``remember`` stores a memory,
    ``recall`` finds memories for a query (compact hits as JSON). The scopes given here apply
    to every call (a model cannot reach another user's memories through them)."""
    given = {"user_id": user_id, "agent_id": agent_id, "session_id": session_id}
    scope: dict[str, Any] = {key: value for key, value in given.items() if value is not None}

    remember_args = create_model(
        "RememberArgs",
        content=(str, Field(description=_describe("add", "content"))),
        kind=(
            str,
            Field(default="note", description=f"{_describe('add', 'kind')}: {', '.join(KINDS)}"),
        ),
        event_time=(str | None, Field(default=None, description=_describe("add", "event_time"))),
    )
    recall_args = create_model(
        "RecallArgs",
        query=(str, Field(description=_describe("search", "query"))),
        k=(int, Field(default=k, ge=1, le=50, description=_describe("search", "k"))),
        since=(str | None, Field(default=None, description=_describe("search", "since"))),
        until=(str | None, Field(default=None, description=_describe("search", "until"))),
    )

    def remember(content: str, kind: str = "note", event_time: str | None = None) -> str:
        item = memory.add(content, kind=cast(Kind, kind), event_time=event_time, **scope)
        return json.dumps({"id": item.id, "stored": item.content})

    def recall(query: str, k: int = k, since: str | None = None, until: str | None = None) -> str:
        result = memory.search(query, k=k, since=since, until=until, **scope)
        return json.dumps([compact_hit(hit) for hit in result.hits], ensure_ascii=False)

    return [
        StructuredTool.from_function(
            remember,
            name="remember",
            description=(
                "Store something worth remembering for later conversations (a fact about the "
                "user, a decision, a preference) in long-term memory. Returns its id."
            ),
            args_schema=remember_args,
        ),
        StructuredTool.from_function(
            recall,
            name="recall",
            description=(
                "Search long-term memory for what is known about a subject. Returns the best "
                "memories as JSON: id, content, score, kind, time (when it happened) and "
                "source."
            ),
            args_schema=recall_args,
        ),
    ]


__all__ = ["LocalmemRetriever", "document", "memory_tools"]
