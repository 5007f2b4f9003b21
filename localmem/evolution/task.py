"""Memory evolution (A-Mem): does a new memory change how an older one should be read?

One call per (new memory, older neighbour), as in the seed: each step of an evolution is then
decided and written on its own, so a crash or a spent token budget never leaves half a
decision. The prompt starts from the seed's ("should the existing thought's context be updated
to reflect its relationship to the new insight? If so, the enriched context, 1-2 sentences")
and makes each part explicit: link or not (its reason labels the link), update or not (the
enriched context replaces the old one, so it must keep what that said). The key phrases the two
notes share are shown as a hint; the model-free implementation decides from them and from the
similarity (:mod:`localmem.evolution.modelfree`).
"""

from __future__ import annotations

from pydantic import Field

from localmem.llm.base import Message
from localmem.llm.schema import JSON_ONLY, LINE, TaskInput, TaskOutput
from localmem.llm.tasks import TaskContext, TaskSpec

VERSION = 2
#: longest context the model may write (the seed: 1-2 sentences)
CONTEXT_CHARS = 2 * LINE


class EvolutionInput(TaskInput):
    """The new memory and one older, related memory."""

    new: str = Field(min_length=1)
    new_time: str | None = None
    existing: str = Field(min_length=1)
    existing_context: str | None = None
    existing_time: str | None = None
    shared: tuple[str, ...] = Field((), description="Key phrases both memories have.")
    adds: tuple[str, ...] = Field((), description="Key phrases of the new memory the old lacks.")
    similarity: float = Field(0.0, ge=-1.0, le=1.0, description="Cosine similarity of the two.")


class Evolution(TaskOutput):
    """The decision about the existing memory."""

    link: bool
    link_reason: str = Field("", max_length=LINE)
    update: bool
    context: str = Field("", max_length=CONTEXT_CHARS)


def _dated(text: str, when: str | None) -> str:
    text = " ".join(text.split())
    return f"({when}) {text}" if when else text


def build_prompt(inp: EvolutionInput) -> list[Message]:
    system = (
        "You keep the notes of an agent's memory up to date. When a new note arrives, you "
        "decide whether an older, related note should now be read differently. Be "
        f"conservative: update only when the new note changes what the older one means. {JSON_ONLY}"
    )
    hint = f"\nThey share: {', '.join(inp.shared)}.\n" if inp.shared else ""
    user = (
        "A new note was just added:\n"
        f"NEW NOTE: {_dated(inp.new, inp.new_time)}\n\n"
        "Here is an existing related note:\n"
        f"EXISTING NOTE: {_dated(inp.existing, inp.existing_time)}\n"
        f"CURRENT CONTEXT: {inp.existing_context or 'None'}\n{hint}\n"
        "Should the existing note's context be updated to reflect its relationship to the "
        "new note?\n"
        "- link: true if the two notes are about the same thing (one continues, explains, "
        "answers or contradicts the other)\n"
        "- link_reason: when linked, a short phrase naming the connection; else empty\n"
        "- update: true only if the new note adds something a reader of the existing note "
        "should know (a cause, a fix, a correction, an outcome)\n"
        "- context: when updated, the enriched context in 1-2 sentences: it describes the "
        "existing note in the light of the new one and keeps what its current context says; "
        "else empty"
    )
    return [Message("system", system), Message("user", user)]


def model_free(inp: EvolutionInput, ctx: TaskContext) -> Evolution:
    """Link by shared key phrases and similarity; a templated context (no model)."""
    from localmem.evolution.modelfree import Rules, decide, link_similarity_for

    cfg = ctx.config.evolution
    rules = Rules(
        min_similarity=cfg.min_similarity,
        link_similarity=link_similarity_for(
            getattr(ctx.embedder, "name", None) or ctx.config.embedder.model,
            cfg.link_similarity,
        ),
        max_context_chars=min(cfg.max_context_chars, CONTEXT_CHARS),
    )
    d = decide(
        inp.existing_context,
        similarity=inp.similarity,
        shared=list(inp.shared),
        adds=list(inp.adds),
        rules=rules,
    )
    return Evolution(
        link=d.link, link_reason=d.link_reason[:LINE], update=d.update, context=d.context or ""
    )


def example() -> EvolutionInput:
    return EvolutionInput(
        new="The rate limiter should use a sliding window, not fixed buckets.",
        existing="The current limiter keeps one counter per client that resets every minute.",
        shared=("limiter",),
        adds=("sliding window", "fixed buckets"),
        similarity=0.42,
    )


SPEC = TaskSpec(
    name="evolution",
    version=VERSION,
    inputs=EvolutionInput,
    output=Evolution,
    build_prompt=build_prompt,
    description="link and re-contextualise an older memory when a new one arrives (A-Mem)",
    model_free=model_free,
    max_tokens=300,
    example=example,
)
