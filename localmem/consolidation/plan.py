"""Planning a consolidation run: clusters, facts and patterns, decided before anything is written.

Facts come from the ``consolidate`` task (the engine, or extraction without one) per cluster of
episodic memories not consolidated yet. A new fact that says what a known fact says (same text,
or embeddings within ``duplicate_similarity``) extends the known one with links instead of
being written twice; a left-over memory close to a fact joins it as a source. Meta memories
come from the patterns across all facts of the scope (and from the engine's patterns).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from localmem.consolidation.cluster import ClusterParams, agglomerate, cannot_link, centroid
from localmem.consolidation.extract import key_phrases
from localmem.consolidation.model import KnownFact, KnownMeta, Source
from localmem.consolidation.patterns import FactView, MetaDraft, find_patterns
from localmem.text import content_hash

if TYPE_CHECKING:
    from localmem.llm.tasks import Implementation


@dataclass
class FactDraft:
    """A semantic memory to write."""

    id: str
    content: str
    context: str
    sources: list[str]
    weights: list[float]
    members: list[str]  # the whole cluster (all of it counts as consolidated)
    served_by: str
    vector: np.ndarray = field(repr=False)


@dataclass
class Plan:
    """Everything a run would write."""

    facts: list[FactDraft] = field(default_factory=list)
    # (known fact id, episodic id, weight, reason) for facts of earlier runs
    extend: list[tuple[str, str, float, str]] = field(default_factory=list)
    # episodic id -> the semantic memory it is consolidated into
    consolidated: dict[str, str] = field(default_factory=dict)
    meta: list[MetaDraft] = field(default_factory=list)
    replaced: list[KnownMeta] = field(default_factory=list)
    clusters: int = 0
    served_by: set[str] = field(default_factory=set)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Settings:
    """A run's knobs (from the config section ``consolidation`` and the call)."""

    cluster: ClusterParams
    min_cluster: int
    duplicate_similarity: float
    attach_similarity: float
    meta_min_facts: int
    implementation: Implementation
    max_tokens: int | None
    meta: bool


def clusters_of(pending: Sequence[Source], params: ClusterParams) -> list[list[int]]:
    """Clusters of pending memories (indices into ``pending``)."""
    if not pending:
        return []
    vectors = np.stack([s.vector for s in pending])
    forbid = cannot_link([s.session_id for s in pending], [s.event_time for s in pending], params)
    return agglomerate(vectors, params, forbid=forbid)


def fact_context(members: Sequence[Source], *, names: Sequence[str] = ()) -> str:
    """What a fact is about and where it comes from, stored as its (embedded) context.

    ``names``: the speakers of the scope (never a key phrase: they are in every memory).
    """
    phrases = key_phrases([m.content for m in members], exclude=[*names, *names_of(members)])
    times = sorted(m.event_time for m in members if m.event_time is not None)
    span = ""
    if times:
        first, last = times[0].strftime("%d %b %Y"), times[-1].strftime("%d %b %Y")
        span = f", {first}" if first == last else f", {first} to {last}"
    about = f"about: {', '.join(phrases)}; " if phrases else ""
    return f"{about}from {len(members)} memories{span}"


def names_of(members: Sequence[Source]) -> list[str]:
    """The speakers' names and their short forms ("Mel" for "Melanie")."""
    names = {m.speaker for m in members if m.speaker}
    out: set[str] = set()
    for name in names:
        for part in name.split():
            out.update(part[:n] for n in range(3, len(part) + 1))
    return sorted(out)


def subject_of(members: Sequence[Source]) -> str | None:
    """The one speaker of a cluster, if there is one."""
    speakers = {m.speaker for m in members}
    return speakers.pop() if len(speakers) == 1 else None


def task_inputs(members: Sequence[Source], known: Sequence[str]) -> dict[str, Any]:
    """The ``consolidate`` task's inputs for a cluster."""
    return {
        "memories": [{"text": m.content, "time": _when(m.event_time)} for m in members[:40]],
        "known": list(known),
        "subject": subject_of(members),
    }


def nearest_known(
    vector: np.ndarray, facts: Sequence[KnownFact | FactDraft], *, most: int = 3
) -> list[tuple[float, KnownFact | FactDraft]]:
    """The facts most similar to a vector, best first."""
    if not facts:
        return []
    matrix = np.stack([_unit(f.vector) for f in facts])
    sims = matrix @ _unit(vector)
    order = np.argsort(-sims, kind="stable")[:most]
    return [(float(sims[i]), facts[i]) for i in order]


def add_fact(
    plan: Plan,
    draft: FactDraft,
    known: Sequence[KnownFact],
    hashes: dict[str, KnownFact],
    settings: Settings,
) -> None:
    """Add a new fact to the plan, or extend the known fact it duplicates."""
    same: KnownFact | FactDraft | None = hashes.get(content_hash(draft.content))
    if same is None:
        best = nearest_known(draft.vector, [*known, *plan.facts], most=1)
        if best and best[0][0] >= settings.duplicate_similarity:
            same = best[0][1]
    if same is None:
        plan.facts.append(draft)
        for member in draft.members:
            plan.consolidated.setdefault(member, draft.id)
        return
    if isinstance(same, FactDraft):  # two clusters of one run said the same: merge them
        for src, w in zip(draft.sources, draft.weights, strict=True):
            if src not in same.sources:
                same.sources.append(src)
                same.weights.append(w)
        same.members += [m for m in draft.members if m not in same.members]
        for member in draft.members:
            plan.consolidated.setdefault(member, same.id)
        return
    for src, w in zip(draft.sources, draft.weights, strict=True):
        if src not in same.sources:
            plan.extend.append((same.id, src, w, "the same fact again"))
    for member in draft.members:
        plan.consolidated.setdefault(member, same.id)


def attach_leftovers(
    plan: Plan, leftovers: Sequence[Source], known: Sequence[KnownFact], threshold: float
) -> None:
    """Memories in no cluster that are close to a fact become its sources."""
    facts: list[KnownFact | FactDraft] = [*known, *plan.facts]
    for s in leftovers:
        best = nearest_known(s.vector, facts, most=1)
        if not best or best[0][0] < threshold:
            continue
        sim, fact = best[0]
        if isinstance(fact, FactDraft):
            fact.sources.append(s.id)
            fact.weights.append(round(sim, 4))
        else:
            plan.extend.append((fact.id, s.id, round(sim, 4), "joined: close to the fact"))
        plan.consolidated[s.id] = fact.id


def plan_meta(
    plan: Plan,
    known: Sequence[KnownFact],
    sources: dict[str, Source],
    known_meta: dict[str, KnownMeta],
    settings: Settings,
    *,
    subject: str | None,
    extra: Sequence[MetaDraft] = (),
) -> None:
    """Meta memories from patterns across every fact; a changed pattern replaces its old one."""
    views = []
    order = {mid: i for i, mid in enumerate(sources)}  # sources come in the order they happened
    facts: list[KnownFact | FactDraft] = [*known, *plan.facts]
    for fact in facts:
        ids = list(fact.sources)
        ids += [e[1] for e in plan.extend if e[0] == fact.id]
        ids = sorted((i for i in set(ids) if i in sources), key=order.__getitem__)
        texts = tuple(sources[i].content for i in ids)
        topics = tuple(_topics(fact.context))
        views.append(FactView(fact.id, texts, topics))
    drafts = list(find_patterns(views, min_facts=settings.meta_min_facts, subject=subject))
    drafts += list(extra)
    for draft in drafts:
        old = known_meta.get(draft.key)
        if old is not None and old.content == draft.content:
            continue
        if old is not None:
            plan.replaced.append(old)
        plan.meta.append(draft)


def centroid_of(members: Sequence[Source]) -> np.ndarray:
    return centroid(np.stack([m.vector for m in members]))


def _topics(context: str | None) -> list[str]:
    if not context or not context.startswith("about: "):
        return []
    return [t.strip() for t in context[len("about: ") :].split(";", 1)[0].split(",") if t.strip()]


def _unit(v: np.ndarray) -> np.ndarray:
    n = float(np.linalg.norm(v))
    return v / n if n > 0 else v


def _when(ts: datetime | None) -> str | None:
    return ts.strftime("%d %B %Y") if ts is not None else None
