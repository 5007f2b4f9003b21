"""Search stage ``links``: the memories linked to the top hits join the results, decayed.

A-Mem retrieves a memory together with the ones linked to it. Here the best ``link_hits``
candidates each bring up to ``link_fanout`` linked memories (strongest links first) with a score
of ``link_decay`` times their source's. A linked memory that was already a candidate keeps the
better of its two scores. Added or raised memories carry the flag ``linked`` and the evidence
``link`` (the decayed score); the filters of the search still apply to them. The stage's
notes say why each joined memory is linked (the reason evolution recorded with the link:
"shares ... (similarity 0.62 >= 0.34)"), so ``explain()`` shows it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from localmem.retrieval.context import Candidate
from localmem.store import memories
from localmem.store.links import linked_ids, links_of

if TYPE_CHECKING:
    from localmem.retrieval.context import SearchContext

FLAG = "linked"
#: most link reasons the stage's notes list
REASONS_SHOWN = 5


def decayed(score: float, decay: float) -> float:
    """A score lowered by the share ``1 - decay`` of its size (right for negative scores too)."""
    return score - (1.0 - decay) * abs(score)


def expand(
    top: Sequence[tuple[int, float]],
    neighbours: Mapping[int, Sequence[tuple[int, float]]],
    *,
    decay: float,
    fanout: int,
) -> dict[int, tuple[float, int]]:
    """Scores the linked memories earn: ``{label: (score, source label)}`` (pure).

    Args:
        top: the hits to expand as (label, score), best first.
        neighbours: label -> its linked memories as (label, link weight).
        decay: share of the source's score a linked memory gets.
        fanout: most linked memories taken per source (heaviest links first).
    """
    out: dict[int, tuple[float, int]] = {}
    for source, score in top:
        ranked = sorted(neighbours.get(source, ()), key=lambda n: (-n[1], n[0]))
        for label, _ in ranked[:fanout]:
            value = decayed(score, decay)
            if label not in out or value > out[label][0]:
                out[label] = (value, source)
    return out


def links_stage(ctx: SearchContext) -> dict | None:
    """The ``links`` stage of the read pipeline (switched on by ``links=True``)."""
    if not ctx.options.links or not ctx.candidates:
        return None
    config = ctx.kernel.config.evolution
    top = ctx.ranked()[: config.link_hits]
    items = ctx.items([c.label for c in top])
    label_of_id = {items[c.label].id: c.label for c in top if c.label in items}
    rows = linked_ids(ctx.kernel.db, list(label_of_id))
    if not rows:
        return {"expanded": len(top), "links": 0, "added": 0, "raised": 0}
    others = memories.by_ids(ctx.kernel, sorted({other for _, other, _ in rows}))
    allowed = None if ctx.allowed is None else set(ctx.allowed.tolist())
    neighbours: dict[int, list[tuple[int, float]]] = {}
    for src_id, other_id, weight in rows:
        other = others.get(other_id)
        if other is None or other.deleted or (allowed is not None and other.label not in allowed):
            continue
        neighbours.setdefault(label_of_id[src_id], []).append((other.label, weight))
    earned = expand(
        [(c.label, c.score) for c in top],
        neighbours,
        decay=config.link_decay,
        fanout=config.link_fanout,
    )
    added = raised = 0
    joined: list[tuple[int, int]] = []
    for label, (score, source) in earned.items():
        cand = ctx.candidates.get(label)
        if cand is None:
            ctx.candidates[label] = Candidate(label, score, {"link": score}, {FLAG})
            added += 1
        elif score > cand.score:
            cand.score = score
            cand.evidence["link"] = score
            cand.flags.add(FLAG)
            raised += 1
        else:
            continue
        joined.append((label, source))
    notes: dict[str, int | str] = {
        "expanded": len(top),
        "links": len(rows),
        "added": added,
        "raised": raised,
    }
    why = _reasons(ctx, joined[:REASONS_SHOWN], label_of_id, others)
    if why:
        notes["why"] = why
    return notes


def _reasons(ctx: SearchContext, joined, label_of_id, others) -> str:
    """``<memory> via <hit>: <reason>`` for the memories the links brought or raised."""
    id_of_label = {label: id_ for id_, label in label_of_id.items()}
    id_of_other = {m.label: m.id for m in others.values()}
    parts = []
    for label, source in joined:
        src_id, other_id = id_of_label.get(source), id_of_other.get(label)
        if src_id is None or other_id is None:
            continue
        reason = next(
            (x.reason for x in links_of(ctx.kernel.db, src_id) if x.other == other_id), None
        )
        parts.append(f"{other_id[:8]} via {src_id[:8]}: {reason or 'linked'}")
    return "; ".join(parts)
