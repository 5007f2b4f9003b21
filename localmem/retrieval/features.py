"""Evidence about each candidate, as numbers a reranker can weigh (model-free reranking).

Every feature is a column over the candidate pool, standardised or bounded so that one set of
weights fits any store:

- ``dense`` / ``bm25``: the query's cosine and BM25 score, z-scored over the pool;
- ``dense_raw``: the cosine itself (not standardised: a strong match is strong anywhere);
  ``dense_rank`` / ``bm25_rank``: the pool rank by each, as ``10 / (10 + rank)``;
- ``context``: cosine between the query and the memory *with its neighbours* (the previous and
  next memory of the same session, at half weight; a chat turn without a session, one with a
  speaker, takes the memories stored just before and after it, when within ten minutes and in
  the same scope): a reply often only makes sense with the question before it. Other memories
  without a session (notes, chunks, thoughts stored in a row) have no neighbours: what was
  stored next to a note is not its context, and on those shapes it lifted the wrong memory
  (docs/benchmarks.md, section ``trust``);
- ``session``: how well the memory's session matches (mean of its best three dense + BM25);
- ``speaker`` / ``other_speaker``: the question names the person who said it, or names
  someone else (the speaker is ``metadata.speaker`` when a conversation's ingestion gave it,
  else a "Name: " prefix of the text, as a chat log stored as plain text has);
- ``coverage``: the share of the query's term weight (idf) the memory holds;
- ``length``: log of the memory's word count, centred on the pool (a document-length prior:
  a short "wow, nice!" rarely holds an answer);
- ``time_stated`` / ``time_close``: the temporal stage's evidence (0 when it did not run);
- ``attributes``: axes the attribute stage matched (``attr_matches``), ``linked``: reached
  through a link (the links stage).

Features that a store cannot have (no sessions, no speakers) are simply constant, so they do
not move the ranking.
"""

from __future__ import annotations

import itertools
import math
import os
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from localmem.retrieval.context import Candidate, SearchContext
from localmem.retrieval.speakers import named_speakers, speaker_of
from localmem.store.columns import MemoryColumns, in_order
from localmem.text import terms
from localmem.types import MemoryItem

NEIGHBOUR_WEIGHT = 0.5  # each neighbour's share of the context vector
SESSION_TOP = 3  # a session is as good as its best few memories
NEAR_SECONDS = 600  # memories without a session are neighbours when stored this close
RANK_DAMPING = 10  # rank features: RANK_DAMPING / (RANK_DAMPING + rank), as RRF does


@dataclass
class Pool:
    """The candidates being reranked and what is known about them (built once per search).

    The features read the fields of the pool's memories from :attr:`rows`, a column each;
    :attr:`items` makes the memories themselves, for a caller that wants them. :attr:`read`
    holds the rows read for it: its own, then those of memories that may join it next."""

    ctx: SearchContext
    cands: list[Candidate]
    labels: np.ndarray
    rows: MemoryColumns
    read: MemoryColumns
    _cache: dict[str, Any] = field(default_factory=dict)

    @property
    def items(self) -> list[MemoryItem]:
        """The pool's memories, in its order (made when asked: no feature reads them)."""
        found = self.ctx.items(self.labels)
        return [found[x] for x in self.labels.tolist()]

    def cached(self, name: str, make: Callable[[], Any]) -> Any:
        """A value computed once per pool."""
        if name not in self._cache:
            self._cache[name] = make()
        return self._cache[name]


def zscore(x: np.ndarray) -> np.ndarray:
    """Standardised values (all zeros when they do not vary).

    ``(x - x.mean()) / x.std()`` by the same steps numpy takes (the sum over the count, the
    sum of the squared differences from it over the count, its root): the same values bit for
    bit, without ``std``'s Python-level bookkeeping (~15 us a call, four calls a search)."""
    x = np.asarray(x, dtype=np.float64)
    if not len(x):
        return np.zeros_like(x)
    centred = x - x.sum() / len(x)
    sd = math.sqrt(np.square(centred).sum() / len(x))
    return centred / sd if sd > 1e-9 else np.zeros_like(x)


def sorted_unique(labels: np.ndarray) -> np.ndarray:
    """``np.unique(labels)`` of a 1-d integer array (its distinct values, sorted) by a sort and
    a mask: ~7 against ~27 us for a pool's ~300 labels (numpy 2's ``unique`` hashes them
    first), twice a search."""
    ordered = np.sort(labels)
    if len(ordered) < 2:
        return ordered
    first = np.empty(len(ordered), dtype=bool)
    first[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    return ordered[first]


def build_pool(
    ctx: SearchContext,
    cands: list[Candidate],
    *,
    prefetch: Sequence[int] = (),
) -> Pool:
    """The pool of candidates with their memories (candidates whose memory is gone are left out;
    :func:`grow_pool` adds those that join it after).

    The rows of ``prefetch`` (memories that may join the pool next) are read with the pool's:
    from the database in the same round trip, with the memories stored just before and after
    each one that may have no session located too (:func:`near_in_time` reads where they sit);
    from the rows held in memory as columns (:attr:`Pool.read`: the neighbours of the best
    candidates join most searches, and a second read of a few rows, their neighbours found
    apart, cost ~0.35 ms against ~0.05 ms read here, ``latency11``). No item is made there: the
    features read the pool's columns (:meth:`SearchContext.columns`)."""
    asked = [c.label for c in cands]
    read = _read(ctx, asked, prefetch)  # the pool's rows first, then those read ahead
    ahead = set(prefetch).difference(asked)
    end = len(read)
    while end and read.labels[end - 1] in ahead:
        end -= 1
    rows = read.head(end)
    if len(rows) == len(cands):  # each found (a pool's labels are distinct)
        kept = list(cands)
    else:
        found = set(rows.labels)
        kept = [c for c in cands if c.label in found]
    return Pool(ctx, kept, np.array(rows.labels, dtype=np.int64), rows, read)


def grow_pool(pool: Pool, joined: Sequence[Candidate]) -> Pool:
    """``pool`` with the memories of ``joined`` (candidates that joined it, none of them in it)
    after its own, in their order (those whose memory is gone left out): the pool
    :func:`build_pool` gives for ``pool.cands`` then ``joined``, without rebuilding the pool's
    columns nor reading its rows again (~0.12 ms a search, ``latency12``). Their
    rows come from what was read ahead where it holds them, else are read; the neighbours the
    first pool found are kept, only theirs are looked up."""
    ctx = pool.ctx
    ahead = {label: i for i, label in enumerate(pool.read.labels)}
    labels = [c.label for c in joined]
    missing = [x for x in labels if x not in ahead]
    read = _read(ctx, missing)
    if not missing:
        rows = pool.read.take([ahead[x] for x in labels])
    else:
        rows = in_order(labels, [pool.read.take([ahead[x] for x in labels if x in ahead]), read])
    if len(rows) == len(joined):
        kept = [*pool.cands, *joined]
    else:
        found = set(rows.labels)
        kept = [*pool.cands, *(c for c in joined if c.label in found)]
    grown = Pool(
        ctx,
        kept,
        np.concatenate([pool.labels, np.array(rows.labels, dtype=np.int64)]),
        pool.rows.then(rows),
        read,
    )
    first = pool._cache.get("neighbours")
    if first is not None:  # a memory's neighbours do not depend on the rest of the pool
        prev, nxt = _neighbour_pairs(grown, rows.labels)
        grown._cache["neighbours"] = np.concatenate([first, np.stack([prev, nxt])], axis=1)
    return grown


def _read(ctx: SearchContext, labels: list[int], ahead: Sequence[int] = ()) -> MemoryColumns:
    """The columns of ``labels`` (those whose memory is gone left out), in their order. From
    the rows held in memory, ``ahead``'s follow them; from the database, ``ahead``'s memories
    are fetched in the same round trip, with the memories stored around each that may have no
    session located (:func:`near_in_time` reads where they sit), and kept by the search."""
    if not labels and not ahead:
        return MemoryColumns.of_items(())
    if ctx.rows_held():
        return ctx.columns([*labels, *ahead])
    wanted = [*labels, *ahead]
    items = ctx.items(wanted, placed=_maybe_near(ctx, wanted))
    return MemoryColumns.of_items([items[x] for x in labels if x in items])


def _maybe_near(ctx: SearchContext, labels: list[int]) -> list[int]:
    """The labels next to those of chat turns without a session, or of memories not fetched
    yet (:func:`neighbours` reads where they sit)."""
    out: set[int] = set()
    for label in labels:
        item = ctx.held(label)
        if item is None or (not item.session_id and speaker_of(item)):
            out.update((label - 1, label + 1))
    return sorted(x for x in out if x >= 0)


# -- raw signals ------------------------------------------------------------------------------
def _query_vector(pool: Pool) -> np.ndarray:
    return np.asarray(pool.ctx.vector(pool.ctx.query), dtype=np.float32)


@dataclass(frozen=True)
class _Vectors:
    """Stored vectors (float64) of some labels, kept sorted by label."""

    labels: np.ndarray
    matrix: np.ndarray

    def of(self, labels: np.ndarray) -> np.ndarray:
        """The vectors of ``labels`` (each one of :attr:`labels`), one row each."""
        return self.matrix[np.searchsorted(self.labels, labels)]


def _vectors(pool: Pool) -> _Vectors:
    """The stored vectors the dense features need, read in one call (hnswlib reads a vector
    in ~10 us; a pool has 100): those of memories the dense search did not return (their
    cosine is not known), and of memories with neighbours and the neighbours (the context)."""
    prev, nxt = pool.cached("neighbours", lambda: np.stack(neighbours(pool)))
    unknown = np.isnan(pool.cached("cosines known", lambda: _known_cosine(pool)))
    mixed = (prev >= 0) | (nxt >= 0)
    wanted = sorted_unique(np.concatenate([pool.labels[unknown | mixed], prev[mixed], nxt[mixed]]))
    wanted = wanted[wanted >= 0]
    return _Vectors(wanted, pool.ctx.label_vectors(wanted).astype(np.float64))


def _cosine(pool: Pool) -> np.ndarray:
    """The query's cosine with each pool memory: known from the dense search for most, from
    the stored vectors for the rest."""
    out = pool.cached("cosines known", lambda: _known_cosine(pool)).copy()
    missing = np.flatnonzero(np.isnan(out))
    if len(missing):
        vecs: _Vectors = pool.cached("vectors", lambda: _vectors(pool))
        out[missing] = vecs.of(pool.labels[missing]) @ _query_vector(pool).astype(np.float64)
    return out


def _known_cosine(pool: Pool) -> np.ndarray:
    """The query's cosine with each pool memory the dense search returned (NaN for others)."""
    known = pool.ctx.cosines
    got = map(known.get, pool.labels.tolist(), itertools.repeat(np.nan))
    return np.fromiter(got, dtype=np.float64, count=len(pool.labels))


def _bm25(pool: Pool) -> np.ndarray:
    scores = pool.ctx.bm25_scores(pool.ctx.query)  # scored once, by the candidate stage
    return scores.at(pool.labels).astype(np.float64)


def neighbours(pool: Pool) -> tuple[np.ndarray, np.ndarray]:
    """The previous and next memory (label, or -1) of each pool memory.

    In its session, in event-time order (insertion order breaks ties); a chat turn without a
    session (a memory with a speaker, :func:`speaker_of`) falls back on the memories stored just
    before and after it (:func:`near_in_time`), as turns of a chat added as plain text are.
    Other memories without a session have none. A memory's neighbours do not depend on the
    rest of the pool: they are found once per search (:func:`grow_pool` keeps those of the
    pool and looks up only those of the memories that join it).
    """
    return _neighbour_pairs(pool, pool.labels.tolist())


def _neighbour_pairs(pool: Pool, labels: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """:func:`neighbours` of ``labels`` (of the pool's), found for what the pool read first."""
    # each memory's previous and next (-1: none), by label: two maps, so that each side's
    # array is one C-level map over the labels (no pair a memory made and taken apart)
    before, after = pool.ctx.once(("neighbours",), _no_neighbours_yet)
    # those of the memories read ahead too (they may join the pool): in one pass
    read = pool.read
    todo = [i for i, label in enumerate(read.labels) if label not in before]
    if todo and len(todo) == len(read):  # the first pool of a search: all of it, not a copy
        _neighbours_of(pool.ctx, read, before, after)
    elif todo:
        _neighbours_of(pool.ctx, read.take(todo), before, after)
    prev = np.fromiter(map(before.__getitem__, labels), dtype=np.int64, count=len(labels))
    nxt = np.fromiter(map(after.__getitem__, labels), dtype=np.int64, count=len(labels))
    return prev, nxt


def _no_neighbours_yet() -> tuple[dict[int, int], dict[int, int]]:
    return {}, {}


def _neighbours_of(
    ctx: SearchContext,
    rows: MemoryColumns,
    known_before: dict[int, int],
    known_after: dict[int, int],
) -> None:
    """Give each of ``rows``' memories its previous and next memory (-1: none) in
    ``known_before`` and ``known_after``."""
    labels = rows.labels
    before: dict[int, int] = {}
    after: dict[int, int] = {}
    sessions = sorted({session for session in rows.session_id if session})
    if sessions:
        for order in ctx.session_order(sessions).values():
            for a, b in itertools.pairwise(order):
                after[a] = b
                before[b] = a
    # the chat turns without a session (speaker_in of the columns: ~120 rows a search)
    loose = [
        label
        for label, session, given, written in zip(
            labels, rows.session_id, rows.speaker, rows.written, strict=True
        )
        if not session and (given or written)
    ]
    if loose:
        near_before, near_after = near_in_time(ctx, loose)
        before.update(near_before)
        after.update(near_after)
    # each label's neighbours by C-level maps, not a comprehension of two lookups a row
    for known, found in ((known_before, before), (known_after, after)):
        if sessions:  # the sessions' orders hold other memories too
            known.update(zip(labels, map(found.get, labels, itertools.repeat(-1)), strict=True))
        else:  # only loose ones have neighbours, all of them among ``labels``
            known.update(zip(labels, itertools.repeat(-1)))
            known.update(found)


def near_in_time(ctx: SearchContext, labels: Sequence[int]) -> tuple[dict, dict]:
    """For memories without a session (``labels``): the memory stored right before and right
    after each (the neighbouring labels), when it has the same scope, no session either, and
    was stored within :data:`NEAR_SECONDS` of it. Returns ``({label: previous}, {label: next})``.

    Over arrays, both sides at once: a few dozen numpy steps whatever the number of memories
    (a tuple and a test a memory cost ~2.5 us each, twice a search for ~25-70 memories)."""
    at = np.array(labels, dtype=np.int64)
    n = len(at)
    # where they and their neighbours sit, not their rows: the test below needs nothing else
    placed = ctx.placements(np.concatenate([at, at - 1, at + 1]))
    found, deleted, session = placed.found, placed.deleted, placed.session_id
    user, agent, when = placed.user_id, placed.agent_id, placed.when
    mine = slice(0, n)

    def near(theirs: slice) -> np.ndarray:
        # each side against the memories themselves by slices of the columns (views), not
        # gathers of both sides' rows (~14 a search)
        return (
            found[mine]
            & found[theirs]
            & ~deleted[theirs]
            & ~session[theirs].astype(bool)
            & (user[theirs] == user[mine])
            & (agent[theirs] == agent[mine])
            & (np.abs(when[theirs] - when[mine]) <= NEAR_SECONDS * 1_000_000)
        )

    before, after = near(slice(n, 2 * n)), near(slice(2 * n, 3 * n))
    return (
        dict(zip(at[before].tolist(), (at[before] - 1).tolist(), strict=True)),
        dict(zip(at[after].tolist(), (at[after] + 1).tolist(), strict=True)),
    )


def _context_cosine(pool: Pool) -> np.ndarray:
    """The query's cosine with each memory mixed with its neighbours (its own cosine when it
    has none: stored vectors are unit length)."""
    prev, nxt = pool.cached("neighbours", lambda: np.stack(neighbours(pool)))
    out = pool.cached("cosine", lambda: _cosine(pool)).copy()
    rows = np.flatnonzero((prev >= 0) | (nxt >= 0))
    if not len(rows):
        return out
    vecs: _Vectors = pool.cached("vectors", lambda: _vectors(pool))
    mixed = vecs.of(pool.labels[rows])
    for side in (prev[rows], nxt[rows]):
        has = np.flatnonzero(side >= 0)
        if not len(has):
            continue
        theirs = vecs.of(side[has])  # a gathered copy: scaled in place, the same products
        theirs *= NEIGHBOUR_WEIGHT
        if len(has) == len(rows):  # each has one on this side (most): no gather and scatter
            mixed += theirs
        else:
            mixed[has] += theirs
    mixed /= np.maximum(np.linalg.norm(mixed, axis=1, keepdims=True), 1e-12)
    out[rows] = mixed @ _query_vector(pool).astype(np.float64)
    return out


# -- features ---------------------------------------------------------------------------------
def f_dense(pool: Pool) -> np.ndarray:
    # z-scored once: the session feature reads it again (the matrix is copied from each)
    return pool.cached("dense", lambda: zscore(pool.cached("cosine", lambda: _cosine(pool))))


def f_bm25(pool: Pool) -> np.ndarray:
    return pool.cached("bm25 z", lambda: zscore(pool.cached("bm25", lambda: _bm25(pool))))


def f_dense_raw(pool: Pool) -> np.ndarray:
    """The cosine itself: a strong semantic match is strong on any store."""
    return pool.cached("cosine", lambda: _cosine(pool))


def _rank_value(scores: np.ndarray) -> np.ndarray:
    order = np.argsort(-scores, kind="stable")
    ranks = np.empty(len(scores))
    ranks[order] = np.arange(len(scores))
    return RANK_DAMPING / (RANK_DAMPING + ranks)


def f_dense_rank(pool: Pool) -> np.ndarray:
    """The rank by cosine in the pool, as ``10 / (10 + rank)``: free of any score scale."""
    return _rank_value(pool.cached("cosine", lambda: _cosine(pool)))


def f_bm25_rank(pool: Pool) -> np.ndarray:
    """The rank by BM25 in the pool, as ``10 / (10 + rank)``."""
    return _rank_value(pool.cached("bm25", lambda: _bm25(pool)))


def f_context(pool: Pool) -> np.ndarray:
    return zscore(_context_cosine(pool))


def f_context_bm25(pool: Pool) -> np.ndarray:
    """BM25 of the memory with its neighbours (each at half weight), z-scored: the words of a
    question are often split between a turn and the one around it."""
    prev, nxt = pool.cached("neighbours", lambda: np.stack(neighbours(pool)))
    scores = pool.ctx.bm25_scores(pool.ctx.query)
    out = pool.cached("bm25", lambda: _bm25(pool)).copy()
    for side in (prev, nxt):
        at = np.flatnonzero(side >= 0)
        out[at] += NEIGHBOUR_WEIGHT * scores.at(side[at]).astype(np.float64)
    return zscore(out)


def f_coverage(pool: Pool) -> np.ndarray:
    """The share of the query's term weight (idf) that the memory holds: BM25 rewards one rare
    word repeated; coverage rewards holding every part of the question."""
    return coverage(pool.ctx, pool.cached("terms", lambda: index_terms(pool.ctx, pool.rows)))


def coverage(ctx: SearchContext, held: HeldTerms) -> np.ndarray:
    """The share of the query's term weight (BM25's idf) held by each memory, given the query
    terms each holds (:func:`index_terms`)."""
    query = set(ctx.parsed.terms)
    if not query:
        return np.zeros(len(held.counts))
    lexical = ctx.kernel.store.lexical
    n = max(lexical.doc_count, 1)
    df = lexical.document_frequencies(query)
    idf = {t: np.log(1.0 + (n - df.get(t, 0) + 0.5) / (df.get(t, 0) + 0.5)) for t in query}
    total = sum(idf.values()) or 1.0
    return held.weight(idf) / total


@dataclass(frozen=True)
class HeldTerms:
    """Each memory's count of index terms and which of the query's terms it holds."""

    counts: np.ndarray  # int64, a memory each
    holds: np.ndarray  # bool, a memory a row, a column each of :attr:`stems`
    stems: list[str]  # the query's terms, each once

    def weight(self, weights: dict[str, float]) -> np.ndarray:
        """The sum of ``weights`` over the terms each memory holds, added in ``weights``'
        order, the same for every memory: the order of ``query & terms`` followed the
        memory's own term set, so its last bit differed when the postings answered instead
        of the whole set of its terms. Column by column, a memory not holding a term adds
        0.0, which leaves a float as it is: the sum a loop over one memory's terms makes,
        bit for bit."""
        column = {t: j for j, t in enumerate(self.stems)}
        out = np.zeros(len(self.counts))
        for t, w in weights.items():
            j = column.get(t)
            if j is not None:
                out += np.where(self.holds[:, j], w, 0.0)
        return out


#: ``LOCALMEM_POOL_TERMS=tokenise``: the features tokenise every text even where the postings
#: answer (a benchmark's switch, to show both give the same results; never needed otherwise)
_TOKENISE_ALL = os.environ.get("LOCALMEM_POOL_TERMS") == "tokenise"


def index_terms(ctx: SearchContext, rows: MemoryColumns) -> HeldTerms:
    """Each memory's count of index terms and the query's terms it holds. Where the lexical
    index holds a memory's postings and they are of its content alone (no evolved context
    joined to it) and the store records them as made by this code's tokeniser, they answer:
    the same terms, without tokenising ~100 texts a search; otherwise (an older store,
    PostgreSQL) the content is tokenised."""
    stems = list(dict.fromkeys(ctx.parsed.terms))
    lexical = ctx.kernel.store.lexical
    known = None if _TOKENISE_ALL else lexical.held_terms(rows.labels, stems)
    if known is not None:
        counts, holds = known  # arrays made for this call
        answered = (counts > 0) & ~np.fromiter(rows.has_context, bool, len(rows))
        tokenise = np.flatnonzero(~answered).tolist()
    else:
        counts = np.zeros(len(rows), dtype=np.int64)
        holds = np.zeros((len(rows), len(stems)), dtype=bool)
        tokenise = range(len(rows))
    for i in tokenise:
        text = rows.content[i]
        counts[i] = word_count(text)
        found = term_set(text)
        holds[i] = [t in found for t in stems]
    return HeldTerms(counts, holds, stems)


def f_session(pool: Pool) -> np.ndarray:
    base = f_dense(pool) + f_bm25(pool)
    if not any(pool.rows.session_id):  # no memory of the pool has a session (most stores)
        return base
    groups: dict[str, list[int]] = defaultdict(list)
    for i, session in enumerate(pool.rows.session_id):
        if session:
            groups[session].append(i)
    out = base.copy()
    for members in groups.values():
        best = np.sort(base[members])[-SESSION_TOP:].mean()
        out[members] = best
    return out


def _pool_speakers(pool: Pool) -> list[str | None]:
    """Each candidate's speaker; a written prefix counts only when two candidates share it (a
    speaker speaks more than once; a lone "Error: ..." or "Note: ..." is not a speaker)."""
    rows = pool.rows
    if any(rows.speaker):
        written = [None if g else w for g, w in zip(rows.speaker, rows.written, strict=True)]
    else:  # no metadata names one (a chat stored as plain text): the written ones count
        written = rows.written
    twice = {w for w, n in Counter(written).items() if n >= 2 and w}
    return [g or (w if w in twice else None) for g, w in zip(rows.speaker, written, strict=True)]


def _speakers(pool: Pool) -> tuple[list[str | None], set[str]]:
    """Each candidate's speaker, and the speakers the query names (once per pool: two
    features read them)."""
    return pool.cached("speakers", lambda: _speakers_named(pool))


def _speakers_named(pool: Pool) -> tuple[list[str | None], set[str]]:
    who = _pool_speakers(pool)
    return who, named_speakers(pool.ctx.parsed.word_set, {w for w in who if w})


def f_speaker(pool: Pool) -> np.ndarray:
    who, named = _speakers(pool)
    return np.array([1.0 if w in named else 0.0 for w in who])


def f_other_speaker(pool: Pool) -> np.ndarray:
    who, named = _speakers(pool)
    return np.array([1.0 if named and w and w not in named else 0.0 for w in who])


@lru_cache(maxsize=100_000)
def _terms_of(text: str) -> tuple[int, frozenset[str]]:
    """How many index terms a text holds and which (stop-words left out), tokenised once for
    both features that read them; kept: a memory is read again by every search whose pool it
    enters."""
    found = terms(text)
    return len(found), frozenset(found)


def term_set(text: str) -> frozenset[str]:
    """The distinct index terms of a text (stop-words left out)."""
    return _terms_of(text)[1]


def word_count(text: str) -> int:
    """Index terms in a text (stop-words left out)."""
    return _terms_of(text)[0]


def f_length(pool: Pool) -> np.ndarray:
    counts = pool.cached("terms", lambda: index_terms(pool.ctx, pool.rows)).counts
    n = np.log1p(counts.astype(np.float64))
    return n - n.mean() if len(n) else n


def _evidence(name: str) -> Callable[[Pool], np.ndarray]:
    def feature(pool: Pool) -> np.ndarray:
        # each candidate's evidence.get(name, 0.0) by C-level maps (three features a search)
        held = pool.cached("evidence", lambda: [c.evidence for c in pool.cands])
        got = map(dict.get, held, itertools.repeat(name), itertools.repeat(0.0))
        return np.fromiter(got, dtype=np.float64, count=len(held))

    feature.__name__ = f"f_{name}"
    return feature


def f_linked(pool: Pool) -> np.ndarray:
    return np.array([1.0 if "linked" in c.flags else 0.0 for c in pool.cands])


#: feature name -> function(pool) -> one value per candidate
FEATURES: dict[str, Callable[[Pool], np.ndarray]] = {
    "dense": f_dense,
    "bm25": f_bm25,
    "dense_raw": f_dense_raw,
    "dense_rank": f_dense_rank,
    "bm25_rank": f_bm25_rank,
    "context": f_context,
    "context_bm25": f_context_bm25,
    "coverage": f_coverage,
    "session": f_session,
    "speaker": f_speaker,
    "other_speaker": f_other_speaker,
    "length": f_length,
    "time_stated": _evidence("time_stated"),
    "time_close": _evidence("time_close"),
    "attributes": _evidence("attr_matches"),
    "linked": f_linked,
}


def feature_matrix(pool: Pool, names: list[str]) -> np.ndarray:
    """One row per candidate, one column per named feature."""
    unknown = [n for n in names if n not in FEATURES]
    if unknown:
        raise KeyError(f"unknown reranker feature(s) {unknown}; known: {', '.join(FEATURES)}")
    if len(pool.labels) == 0:
        return np.zeros((0, len(names)))
    return np.stack([np.asarray(FEATURES[n](pool), dtype=np.float64) for n in names], axis=1)
