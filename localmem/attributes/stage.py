"""The ``attributes`` stage of search (MemInsight): filter or boost candidates by attribute match.

The query is mined the same way as memories (cached), then matched against the candidates'
stored attributes in one SQL statement. Per candidate, each axis either matches or not:

- ``filter`` keeps the candidates matching at least ``min_matches`` of the chosen ``axes`` and
  leaves their order to the score they came with (the seed's mechanism). When fewer than ``k``
  remain, the best of the dropped ones fill the result after them, flagged ``fill``, and the
  stage's note says how many: a search never comes back short because of the filter.
- ``boost`` drops nothing: each matched axis adds ``boost_weight`` x its weight x the score.
- ``priority`` weighs a match by the priority positions of the two attributes
  (1/(1+position) each), so a match on what matters most for the query and the memory counts
  more; in filter mode this orders the kept candidates by score x (1 + bonus).
- ``strategy``: ``refined`` matches only confident main labels (and every entity);
  ``comprehensive`` also matches second labels and unconfident ones.

Every candidate gets evidence ``attr_matches`` (axes matched) and ``attr_<axis>`` (the weight).
"""

from __future__ import annotations

from localmem.attributes import rows
from localmem.attributes.mining import miner_for
from localmem.retrieval.context import Candidate, SearchContext


def bonus(weights: dict[str, float], boost_weight: float) -> float:
    """The share added to a score for these matched-axis weights."""
    return boost_weight * sum(weights.values())


def raise_score(score: float, share: float) -> float:
    """A score raised by ``share`` of its size (works for negative scores too)."""
    return score + abs(score) * share


def fill_scores(floor: float | None, fills: list[Candidate]) -> None:
    """Give fill candidates scores just below ``floor`` (the lowest kept), keeping their order."""
    if floor is None:
        return
    step = max(abs(floor), 1e-6) * 1e-3
    for i, cand in enumerate(fills):
        cand.score = min(cand.score, floor - step * (i + 1))


def attributes_stage(ctx: SearchContext) -> dict | None:
    """Run the MemInsight stage (None when ``attributes="off"``)."""
    opts = ctx.options
    if opts.attributes == "off":
        return None
    kernel = ctx.kernel
    cfg = kernel.config.attributes
    miner = miner_for(kernel)
    vector = ctx.vector(ctx.query) if miner.name == "model-free" else None
    query = miner.mine(ctx.query, vector=vector, query=True)
    wanted = rows.query_rows(
        query, opts.axes, strategy=opts.strategy, min_confidence=cfg.refined_min_confidence
    )
    labels = list(ctx.candidates)
    matches, mined = rows.match(
        kernel.db,
        labels,
        wanted,
        strategy=opts.strategy,
        min_confidence=cfg.refined_min_confidence,
        entity_match=cfg.entity_match,
        priority=opts.priority,
    )
    weights: dict[int, dict[str, float]] = {}
    for label, cand in ctx.candidates.items():
        found = matches.get(label, {})
        weights[label] = {
            axis: (m.weight if opts.priority else m.strength) for axis, m in found.items()
        }
        cand.evidence["attr_matches"] = float(len(found))
        for axis, w in weights[label].items():
            cand.evidence[f"attr_{axis}"] = round(w, 4)
    notes: dict = {
        "implementation": miner.name,
        "mode": opts.attributes,
        "query": query.summary() or "(nothing mined)",
    }
    if opts.axes != ("entities", "intent", "topic"):
        notes["axes"] = ",".join(opts.axes)
    if not opts.priority:
        notes["priority"] = "off"
    if opts.strategy != "refined":
        notes["strategy"] = opts.strategy
    if opts.attributes == "boost":
        for label, cand in ctx.candidates.items():
            cand.score = raise_score(cand.score, bonus(weights[label], cfg.boost_weight))
        notes["boosted"] = sum(1 for w in weights.values() if w)
    else:
        _filter(ctx, weights, opts.min_matches, cfg.boost_weight, notes)
    other_sets = sorted({name for name in mined.values() if name != query.label_set})
    if other_sets:  # labels of another set never equal the query's: say why nothing matches
        notes["label_sets"] = f"candidates mined with {', '.join(other_sets)}, query with " + (
            query.label_set
        )
    unmined = len(labels) - len(mined)
    if unmined:
        notes["unmined"] = unmined
        if not mined:
            notes["hint"] = "no candidate has attributes yet: run `localmem mine`"
    return notes


def _filter(ctx: SearchContext, weights, min_matches: int, boost_weight: float, notes) -> None:
    opts = ctx.options
    ranked = ctx.ranked()  # by the score the candidates came with
    kept = [c for c in ranked if len(weights[c.label]) >= min_matches]
    if opts.priority:  # order the kept ones by how important their matches are
        for cand in kept:
            cand.score = raise_score(cand.score, bonus(weights[cand.label], boost_weight))
        kept.sort(key=lambda c: (-c.score, c.label))
    notes["min_matches"] = min_matches
    notes["kept"] = len(kept)
    fills: list[Candidate] = []
    if len(kept) < opts.k:
        kept_labels = {c.label for c in kept}
        fills = [c for c in ranked if c.label not in kept_labels][: opts.k - len(kept)]
        fill_scores(min((c.score for c in kept), default=None), fills)
        for cand in fills:
            cand.flags.add("fill")
        if fills:
            notes["fill"] = f"{len(fills)} unfiltered hit(s) added after the {len(kept)} kept"
    ctx.candidates = {c.label: c for c in kept + fills}
