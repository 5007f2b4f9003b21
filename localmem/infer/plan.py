"""Inference for one add: extract candidate facts, find their neighbours, decide, as a plan.

A plan is a list of decisions, one per candidate fact. The decision types are the only way a
plan can change the store, and none of them removes a memory without storing another:

- :class:`Add` stores the fact;
- :class:`Update` rewrites one memory's text (the old text goes to its history);
- :class:`Invalidate` stores the fact *and* ends the old memory's validity with a link to it
  (it cannot be built without the fact that replaces the old memory);
- :class:`Skip` stores nothing new and records that the fact was said again.

:mod:`localmem.infer.apply` writes a plan in one unit of the kernel.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import partial
from typing import Any

import numpy as np

from localmem.conversation.facts import self_contained
from localmem.conversation.tasks import facts as facts_task
from localmem.embed.base import Embedder
from localmem.errors import EngineUnavailableError, ModelError
from localmem.infer import task as reconcile_task
from localmem.llm.tasks import MODEL_FREE, Implementation, TaskContext, run_task
from localmem.retrieval.pipeline import search
from localmem.store import memories, records
from localmem.store.kernel import Kernel
from localmem.types import MemoryItem

log = logging.getLogger("localmem")


@dataclass(frozen=True)
class Candidate:
    """One fact to reconcile, with its vector and what the extraction said about it."""

    text: str
    vector: np.ndarray = field(repr=False, compare=False)
    speaker: str | None = None
    extracted_by: str = MODEL_FREE
    note: str | None = None  # why it is the raw text (nothing extracted, a failed model)


@dataclass(frozen=True)
class Add:
    """Store the fact as a new memory."""

    fact: Candidate
    reason: str
    decider: str


@dataclass(frozen=True)
class Update:
    """Rewrite ``target`` with ``text`` (the fact, or the model's merge of the two)."""

    fact: Candidate
    target: MemoryItem
    text: str
    reason: str
    decider: str


@dataclass(frozen=True)
class Invalidate:
    """Store the fact and end ``target``'s validity: the fact supersedes it (and ``also``,
    other current memories it contradicts the same way)."""

    fact: Candidate
    target: MemoryItem
    reason: str
    decider: str
    also: tuple[MemoryItem, ...] = ()

    def __post_init__(self) -> None:
        if not self.fact.text.strip():
            raise ValueError("a memory is invalidated only by a fact that replaces it")


@dataclass(frozen=True)
class Skip:
    """The fact is already stored as ``target``: nothing new is written but the repetition."""

    fact: Candidate
    target: MemoryItem
    reason: str
    decider: str


Decision = Add | Update | Invalidate | Skip


_IMPLEMENTATIONS: dict[str, Implementation] = {
    "auto": "auto",
    "engine": "model",
    "model-free": MODEL_FREE,
}


def _implementation(mode: str) -> Implementation:
    return _IMPLEMENTATIONS[mode]


def as_said(text: str, speaker: str | None) -> str:
    """A text kept as given, with who said it ("Ann: ok")."""
    return f"{speaker}: {text}" if speaker else text


def whole(text: str, speaker: str | None, when: str | None) -> str:
    """The model-free candidate: the whole message made self-contained ("I" becomes the
    speaker, relative dates get their date), its speaker named.

    Rules do not split a message into facts: splitting LoCoMo's turns into sentences doubled
    the memories and cost evidence recall (R@10 0.636 against 0.652 raw; docs/experiments/
    infer.md), and the sentences that rules drop (questions, short replies) are often the
    evidence. Splitting is the engine's job (the ``facts`` task).
    """
    out = self_contained(" ".join(text.split()), speaker, when)
    if speaker and speaker.lower() not in out.lower():
        out = f"{speaker}: {out}"
    return out


def extract(
    kernel: Kernel, text: str, *, speaker: str | None, when: str | None
) -> tuple[list[str], str, str | None]:
    """The candidate facts of ``text``: ``(facts, served_by, failure)``.

    Nothing is dropped silently: when the extraction finds no fact, the text itself is the one
    candidate; when the model's output stays malformed after its retry, so is the text, and
    ``failure`` says what went wrong.
    """
    cfg = kernel.config.infer
    engine = kernel.engine if cfg.extractor != "model-free" else None
    if engine is None and cfg.extractor != "engine":
        return [whole(text, speaker, when)], MODEL_FREE, None
    try:
        result = run_task(
            facts_task.SPEC,
            {"text": text, "speaker": speaker, "time": when},
            engine=engine,
            context=TaskContext(embedder=kernel.embedder, config=kernel.config),
            implementation=_implementation(cfg.extractor),
        )
    except EngineUnavailableError:  # infer.extractor = engine with no engine: a config error
        raise
    except ModelError as exc:  # malformed twice (SchemaError) or the engine failed
        log.warning("fact extraction failed, storing the text as given: %s", exc)
        return [as_said(text, speaker)], "failed", f"{type(exc).__name__}: {exc}"
    found = [f.fact.strip() for f in result.value.facts if f.fact.strip()]
    if not found:
        return [as_said(text, speaker)], result.served_by, "no fact extracted: stored as given"
    return found, result.served_by, None


def scope_key(scope: Mapping[str, Any]) -> str:
    """The name inferences that may decide about the same memories take turns under
    (``Kernel.serialised``): the scope :func:`neighbours` searches, a user and an agent.
    An inference with no user searches every user's memories; it takes turns only with
    others that have none."""
    return "infer\0" + "\0".join(str(scope.get(name) or "") for name in ("user_id", "agent_id"))


def neighbours(
    kernel: Kernel,
    fact: Candidate,
    scope: Mapping[str, Any],
    when: datetime | None = None,
    vectors: dict[str, np.ndarray] | None = None,
) -> list[tuple[MemoryItem, float]]:
    """The memories of the same scope ``fact`` could duplicate or contradict (dense + lexical
    search), with their cosine to it: the current ones first, then those true at ``when`` (a
    fact about the past is compared with what was true then, so a message ingested again is
    recognised even when a later one superseded it)."""
    k = kernel.config.infer.neighbours
    if memories.count(kernel) == 0:
        return []
    # plain hybrid candidates: the decision reads cosines, not the default pipeline's order,
    # and the search should not pay for its temporal stage and reranker. The memories true
    # at the fact's time are searched too (a fact about the past is compared with what was
    # true then), by a second search only when they differ from those true now: never for
    # facts added in time order
    user_id, agent_id = scope.get("user_id"), scope.get("agent_id")
    plain = partial(
        search,
        kernel,
        fact.text,
        k=k,
        mode="hybrid",
        temporal=False,
        rerank="off",
        user_id=user_id,
        agent_id=agent_id,
        query_vector=query_vector(kernel.embedder, fact.vector),
    )
    hits = list(plain().hits)
    if when is not None and not records.true_now_as_at(
        kernel.db, when, user_id=user_id, agent_id=agent_id
    ):
        past = plain(as_of=when).hits
        seen = {h.memory.id for h in hits}
        hits += [h for h in past if h.memory.id not in seen]
    out = []
    for hit in hits:
        vec = memories.stored_vector(kernel, hit.memory.id)
        cos = float(np.dot(vec, fact.vector)) if vec is not None else 0.0
        if vec is not None and vectors is not None:
            vectors[hit.memory.content] = vec
        out.append((hit.memory, cos))
    return out


def query_vector(embedder: Any, vector: np.ndarray) -> np.ndarray | None:
    """The fact's own vector as its search's query vector, when the embedder embeds a query
    as it embeds a text (MiniLM; not E5, whose queries take a prefix): the search then embeds
    nothing again."""
    if isinstance(embedder, Embedder) and type(embedder).embed_queries is Embedder.embed_queries:
        return vector
    return None


class KnownVectors:
    """The store's embedder, answering first from vectors already at hand (the fact's and its
    neighbours' stored vectors), so the model-free decision embeds nothing twice."""

    def __init__(self, embedder: Any, known: Mapping[str, np.ndarray]) -> None:
        self.embedder = embedder
        self.known = dict(known)
        self.name = getattr(embedder, "name", None)
        self.dim = getattr(embedder, "dim", None)

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self.known]
        if missing:
            self.known.update(zip(missing, self.embedder.embed_batch(missing), strict=True))
        return np.stack([self.known[t] for t in texts])

    def __getattr__(self, name: str) -> Any:
        return getattr(self.embedder, name)


def decide(
    kernel: Kernel,
    fact: Candidate,
    near: Sequence[tuple[MemoryItem, float]],
    vectors: Mapping[str, np.ndarray] | None = None,
) -> Decision:
    """One decision for one fact, by the ``reconcile`` task (engine or rules)."""
    cfg = kernel.config.infer
    shown = list(near)
    inputs = reconcile_task.ReconcileInput(
        fact=fact.text,
        speaker=fact.speaker,
        memories=tuple(
            reconcile_task.Known(
                text=m.content,
                time=m.when.date().isoformat(),
                similarity=round(cos, 4),
                current=m.valid_to is None,
            )
            for m, cos in shown
        ),
    )
    engine = kernel.engine if cfg.decider != "model-free" else None
    known = {fact.text: fact.vector, **(vectors or {})}
    try:
        result = run_task(
            reconcile_task.SPEC,
            inputs,
            engine=engine,
            context=TaskContext(
                embedder=KnownVectors(kernel.embedder, known), config=kernel.config
            ),
            implementation=_implementation(cfg.decider),
        )
    except EngineUnavailableError:
        raise
    except ModelError as exc:  # nothing is lost: the fact is added
        log.warning("reconcile failed, adding the fact: %s", exc)
        return Add(fact, f"reconcile failed ({type(exc).__name__}: {exc}): added", "failed")
    value, served = result.value, result.served_by
    limit = result.memories_shown if result.memories_shown is not None else len(shown)
    target = shown[value.target - 1][0] if value.target and value.target <= limit else None
    reason = value.reason or value.event.lower()
    if value.event == "ADD" or target is None:
        why = reason if value.event == "ADD" else f"{value.event} without a target: added"
        return Add(fact, why, served)
    if value.event == "NONE":
        return Skip(fact, target, reason, served)
    if value.event == "INVALIDATE":
        return Invalidate(fact, target, reason, served)
    return Update(fact, target, (value.text or fact.text).strip() or fact.text, reason, served)


def plan(
    kernel: Kernel,
    texts: Sequence[tuple[str, str | None]],
    *,
    scope: Mapping[str, Any],
    when: str | None,
    at: datetime | None = None,
) -> list[Decision]:
    """The decisions for the texts of one add (each ``(text, speaker)``), in order; ``when``
    is the add's date as the extraction reads it, ``at`` its event time.

    A later fact of the same add sees the earlier ones as neighbours only through the rules'
    own list (they are not stored yet): two facts of one add that repeat each other are one.
    """
    raw: list[tuple[str, str | None, str, str | None]] = []
    for text, speaker in texts:
        found, served, note = extract(kernel, text, speaker=speaker, when=when)
        raw += [(f, speaker, served, note) for f in found]
    vectors = kernel.embedder.embed_batch([r[0] for r in raw]) if raw else np.zeros((0, 0))
    out: list[Decision] = []
    seen: set[str] = set()
    for (text, speaker, served, note), vec in zip(raw, vectors, strict=True):
        key = reconcile_task.normal(text)
        if key in seen:
            continue
        seen.add(key)
        fact = Candidate(text, vec, speaker, served, note)
        stored: dict[str, np.ndarray] = {}
        near = neighbours(kernel, fact, scope, at, stored)
        decision = decide(kernel, fact, near, stored)
        if isinstance(decision, Invalidate):
            decision = every_current(kernel, decision, near, stored)
        out.append(decision)
    return out


def every_current(
    kernel: Kernel,
    first: Invalidate,
    near: Sequence[tuple[MemoryItem, float]],
    vectors: Mapping[str, np.ndarray] | None = None,
) -> Invalidate:
    """A fact that ends one memory ends every other current one it contradicts the same way
    (several current values of one slot: what racing inferences left). The
    decider is asked again without the memories it already ended, until it ends no more."""
    ended = [first.target]
    rest = [(m, cos) for m, cos in near if m.id != first.target.id and m.valid_to is None]
    while rest:
        again = decide(kernel, first.fact, rest, vectors)
        if not isinstance(again, Invalidate):
            break
        ended.append(again.target)
        rest = [(m, cos) for m, cos in rest if m.id != again.target.id]
    return replace(first, also=tuple(ended[1:]))
