"""Query expansion: more queries that reach memories the words of the question miss.

- ``engine``: the model writes 2-3 rewrites (time, entities, synonyms) through the
  ``expand_query`` task; each is searched like the query, with a lower weight.
- ``prf`` (model-free): pseudo-relevance feedback. A first search finds the best few memories;
  the terms that are frequent in them and rare in the store (an RM3-style weight: term
  frequency in the feedback documents times inverse document frequency) become a second,
  BM25-only query. No extra embedding is computed, so it costs one more lexical search.
- ``auto``: the engine when one is configured, else pseudo-relevance feedback.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence, Set

from localmem.retrieval import candidates, filters
from localmem.retrieval.context import Query, SearchContext
from localmem.text import STOP_WORDS, stem, words


def expand_stage(ctx: SearchContext) -> dict | None:
    """Add expansion queries to ``ctx.queries`` (the stage ``expand``)."""
    mode = ctx.options.expand
    if mode == "off":
        return None
    if mode == "auto":
        mode = "engine" if ctx.kernel.engine is not None else "prf"
    if mode == "engine":
        return _engine_expansion(ctx)
    return _prf_expansion(ctx)


# -- model-free: pseudo-relevance feedback ---------------------------------------------------
def feedback_terms(
    docs: Sequence[str],
    query: str,
    doc_freqs: dict[str, int],
    n_docs: int,
    *,
    n_terms: int,
    doc_weights: Sequence[float] | None = None,
    query_stems: Set[str] | None = None,
) -> list[tuple[str, float]]:
    """The best expansion words from feedback documents, with their weights (pure).

    A word's weight is the sum over documents of its share of the document's words (times the
    document's weight), multiplied by its inverse document frequency in the store. Words of
    the query, stop-words, numbers and words in one document only are left out: a word the
    feedback documents agree on is evidence, a word one of them happens to use is noise.

    Args:
        docs: Texts of the feedback documents, best first.
        query: The query (its words are not added again).
        doc_freqs: Documents holding each stemmed term, in the whole store.
        n_docs: Documents in the store.
        n_terms: How many words to return.
        doc_weights: Weight of each document (default: equal).
        query_stems: The stems of the query's words, when the caller has them already.

    Returns:
        ``[(surface word, weight)]``, best first.
    """
    if query_stems is None:
        query_stems = {stem(w) for w in words(query)}
    weights = doc_weights or [1.0] * len(docs)
    score: dict[str, float] = defaultdict(float)
    seen_in: Counter[str] = Counter()
    surface: dict[str, Counter[str]] = defaultdict(Counter)
    for text, w in zip(docs, weights, strict=True):
        toks = [t for t in words(text) if t not in STOP_WORDS and not t.isdigit() and len(t) > 2]
        if not toks:
            continue
        counts = Counter(stem(t) for t in toks)
        for t in toks:
            surface[stem(t)][t] += 1
        for s, c in counts.items():
            score[s] += w * c / len(toks)
            seen_in[s] += 1
    out = []
    for s, value in score.items():
        if s in query_stems or seen_in[s] < 2:
            continue
        df = doc_freqs.get(s, 0)
        idf = math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
        out.append((surface[s].most_common(1)[0][0], value * idf))
    out.sort(key=lambda x: (-x[1], x[0]))
    return out[:n_terms]


def _prf_expansion(ctx: SearchContext) -> dict:
    cfg = ctx.kernel.config.search
    if ctx.allowed is None and filters.needed(ctx.kernel, ctx.options):  # respect the scope
        ctx.allowed = filters.allowed_labels(ctx.kernel, ctx.options)
    candidates.generate(ctx)  # the first pass; the candidate stage searches again with more
    ranked = ctx.ranked()
    top = ranked[: cfg.prf_docs]
    ctx.candidates = {}
    if not top:
        return {"implementation": "model-free", "method": "prf", "terms": []}
    # one fetch for every first-pass candidate: the later stages read most of them again
    items = ctx.items([c.label for c in ranked])
    docs = [items[c.label].content for c in top if c.label in items]
    weights = [1.0 / (1 + i) for i in range(len(docs))]  # trust the first ones more
    stems = {stem(w) for d in docs for w in words(d)}
    lexical = ctx.kernel.store.lexical
    chosen = feedback_terms(
        docs,
        ctx.query,
        lexical.document_frequencies(stems),
        lexical.doc_count,
        n_terms=cfg.prf_terms,
        doc_weights=weights,
        query_stems=ctx.parsed.stems,
    )
    if chosen:
        text = " ".join(w for w, _ in chosen)
        ctx.queries.append(Query(text, cfg.prf_weight, "prf", retrievers=("bm25",)))
    return {
        "implementation": "model-free",
        "method": "prf",
        "feedback": len(docs),
        "terms": [w for w, _ in chosen],
    }


# -- engine: rewrites -----------------------------------------------------------------------
def _engine_expansion(ctx: SearchContext) -> dict:
    from localmem.llm.tasks import run_task  # the model stack loads only when used
    from localmem.retrieval.tasks.expand_query import SPEC as EXPAND_QUERY
    from localmem.retrieval.tasks.expand_query import Expansion

    result = run_task(
        EXPAND_QUERY,
        {"query": ctx.query, "now": ctx.now.date().isoformat()},
        engine=ctx.kernel.engine,
        implementation="model",
    )
    value: Expansion = result.value
    weight = ctx.kernel.config.search.rewrite_weight
    rewrites = value.queries(ctx.query)
    focus = {" ".join(r.query.lower().split()): r.focus for r in value.rewrites}
    for text in rewrites:
        source = f"rewrite:{focus.get(' '.join(text.lower().split()), 'other')}"
        ctx.queries.append(Query(text, weight, source))
    return {
        "implementation": result.served_by,
        "method": "rewrites",
        "rewrites": rewrites,
        "tokens": result.usage.prompt_tokens + result.usage.completion_tokens,
    }
