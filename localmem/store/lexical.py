"""A persistent, incremental BM25 index kept in DuckDB tables.

Postings live in ``lex_postings`` (term id, memory label, term frequency) and document lengths in
``lex_docs``, written in the same transaction as the memory itself, so the lexical index is never
out of step with the store. Adding a memory appends its postings; nothing is re-indexed.

For speed the postings are also held in memory in compressed-row form (one sorted array of labels
per term) loaded on first use, plus a small per-term delta for what was added since.

The store's ``meta`` row :data:`TERMS_META` names the tokeniser version
(:data:`localmem.text.TERMS_VERSION`) that made every posting: written when the postings are made
(a new store) or rebuilt (:meth:`LexicalIndex.rebuild`, ``localmem doctor --repair``), and
removed when code of another version adds postings to them. Where it is this code's version, a
memory's postings are its text's terms exactly, and the reranker reads them instead of
tokenising (:meth:`LexicalIndex.held_terms`); a store without it (made before it existed) is
tokenised.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext

import numpy as np
import pyarrow as pa

from localmem.store.backend import StoreDatabase
from localmem.store.db import Database
from localmem.store.lookup import members
from localmem.store.maxscore import PrunedScores, TermPostings, weight
from localmem.store.scores import Scores, best
from localmem.text import TERMS_VERSION, term_counts, terms

#: the ``meta`` key naming the :data:`localmem.text.TERMS_VERSION` that made every posting
TERMS_META = "lexical_terms"
#: its value where no version made every posting (a copy into PostgreSQL, and back)
UNRECORDED = "unrecorded"
_UNREAD = object()


class LexicalIndex:
    """BM25 over the memories of one store."""

    def __init__(self, db: StoreDatabase) -> None:
        self.db = db
        self._lock = threading.RLock()
        self._term_ids: dict[str, int] | None = None
        self._loaded = False
        # compressed rows: postings of term t are _labels[_offsets[t]:_offsets[t+1]]
        self._offsets = np.zeros(1, dtype=np.int64)
        self._labels = np.empty(0, dtype=np.int64)
        self._tfs = np.empty(0, dtype=np.float32)
        # by term, over its compressed postings: the largest tf and the shortest document (the
        # bounds of :mod:`localmem.store.maxscore`; removals leave them bounds)
        self._most_tf = np.empty(0, dtype=np.float32)
        self._least_len = np.empty(0, dtype=np.float32)
        self._delta: dict[int, list[tuple[int, int]]] = defaultdict(list)
        self._doc_len = np.zeros(0, dtype=np.float32)  # by label; 0 = absent or deleted
        self._removed: set[int] = set()  # labels removed since the compressed rows were built
        self._n_docs = 0
        self._total_len = 0.0
        self._recorded: object = _UNREAD  # the store's TERMS_META, read on first use

    # -- loading -----------------------------------------------------------------------------
    def _ensure_terms(self) -> dict[str, int]:
        if self._term_ids is None:
            tbl = self.db.arrow("SELECT term, id FROM lex_terms")
            self._term_ids = dict(
                zip(tbl.column("term").to_pylist(), tbl.column("id").to_pylist(), strict=True)
            )
        return self._term_ids

    def _ensure_loaded(self) -> None:
        if self._loaded:
            return
        # DuckDB's connection lock first, in the order a writer takes them (it holds it for its
        # transaction, then indexes): the other order deadlocked a first search against an add.
        # PostgreSQL's index (PgLexicalIndex) scores on the server and never loads postings
        db_lock: AbstractContextManager[object] = (
            self.db.lock if isinstance(self.db, Database) else nullcontext()
        )
        with db_lock, self._lock:
            if self._loaded:
                return
            ids = self._ensure_terms()
            n_terms = (max(ids.values()) + 1) if ids else 0
            post = self.db.arrow(
                "SELECT term_id, label, tf FROM lex_postings ORDER BY term_id, label"
            )
            term_col = post.column("term_id").to_numpy()
            self._labels = post.column("label").to_numpy().astype(np.int64)
            self._tfs = post.column("tf").to_numpy().astype(np.float32)
            counts = (
                np.bincount(term_col, minlength=n_terms) if len(term_col) else np.zeros(n_terms)
            )
            self._offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
            docs = self.db.arrow("SELECT label, length FROM lex_docs")
            labels = docs.column("label").to_numpy()
            lengths = docs.column("length").to_numpy().astype(np.float32)
            size = int(labels.max()) + 1 if len(labels) else 0
            self._doc_len = np.zeros(max(size, 1024), dtype=np.float32)
            self._doc_len[labels] = lengths
            self._n_docs = len(labels)
            self._total_len = float(lengths.sum())
            self._most_tf, self._least_len = _bounds(
                self._offsets, self._tfs, self._doc_len[self._labels]
            )
            self._delta.clear()
            self._removed.clear()
            self._loaded = True

    def recorded_terms(self) -> str | None:
        """The tokeniser version the store records for its postings (None or
        :data:`UNRECORDED`: not recorded, as in stores made before the record existed, postings
        of several versions, or a store copied through PostgreSQL)."""
        with self._lock:
            if self._recorded is _UNREAD:
                self._recorded = self.db.get_meta(TERMS_META)
            return self._recorded  # type: ignore[return-value]

    def terms_current(self) -> bool:
        """Whether this code's tokeniser made every posting of the store (so a memory's
        postings are its text's terms)."""
        return self.recorded_terms() == str(TERMS_VERSION)

    # -- writes (call inside the store's transaction) -----------------------------------------
    def record_terms(self) -> None:
        """Record that this code's tokeniser made every posting (a new store, a rebuild; in the
        caller's transaction)."""
        with self._lock:
            self.db.set_meta(TERMS_META, str(TERMS_VERSION))
            self._recorded = str(TERMS_VERSION)

    def rebuild(self, labels: Sequence[int], texts: Sequence[str]) -> None:
        """Make the postings again from these documents alone, with this code's tokeniser, and
        record its version (in the caller's transaction; on failure the in-memory state is
        forgotten and reloads from the tables)."""
        with self._lock:
            try:
                for table in ("lex_postings", "lex_docs", "lex_terms"):
                    self.db.execute(f"DELETE FROM {table}")
                self._term_ids, self._loaded = {}, False
                self.add(labels, texts)
                self.record_terms()
            except BaseException:
                self.rollback()
                raise
            self.rollback()  # the compressed rows reload from the new tables on first use

    def add(self, labels: Sequence[int], texts: Sequence[str]) -> None:
        """Index documents under their labels (in the caller's transaction)."""
        if not labels:
            return
        with self._lock:
            recorded = self.recorded_terms()
            if recorded is not None and recorded != str(TERMS_VERSION):
                # postings of another tokeniser join them: no version made them all now
                self.db.execute("DELETE FROM meta WHERE key = ?", [TERMS_META])
                self._recorded = None
            ids = self._ensure_terms()
            new_terms: dict[str, int] = {}
            p_term, p_label, p_tf, d_label, d_len = [], [], [], [], []
            for label, text in zip(labels, texts, strict=True):
                counts = term_counts(text)
                for term, tf in counts.items():
                    tid = ids.get(term)
                    if tid is None:
                        tid = len(ids)
                        ids[term] = tid
                        new_terms[term] = tid
                    p_term.append(tid)
                    p_label.append(int(label))
                    p_tf.append(tf)
                d_label.append(int(label))
                d_len.append(sum(counts.values()))
            try:
                if new_terms:
                    t = pa.table(
                        {
                            "id": pa.array(list(new_terms.values()), pa.int32()),
                            "term": pa.array(list(new_terms.keys()), pa.string()),
                        }
                    )
                    self.db.insert_arrow("lex_terms", t, "id, term")
                if p_term:
                    p = pa.table(
                        {
                            "term_id": pa.array(p_term, pa.int32()),
                            "label": pa.array(p_label, pa.int64()),
                            "tf": pa.array(p_tf, pa.int32()),
                        }
                    )
                    self.db.insert_arrow("lex_postings", p, "term_id, label, tf")
                d = pa.table(
                    {"label": pa.array(d_label, pa.int64()), "length": pa.array(d_len, pa.int32())}
                )
                self.db.insert_arrow("lex_docs", d, "label, length")
            except BaseException:
                for term in new_terms:  # the transaction rolls back; so must the term ids
                    ids.pop(term, None)
                raise
            if self._loaded:
                for tid, label, tf in zip(p_term, p_label, p_tf, strict=True):
                    self._delta[tid].append((label, tf))
                self._grow(max(d_label) + 1)
                for label, length in zip(d_label, d_len, strict=True):
                    # a label removed and added again (an update) stays in ``_removed``: the
                    # compressed rows still hold its old text's postings; its new ones are in
                    # the delta
                    self._doc_len[label] = length
                    self._n_docs += 1
                    self._total_len += length

    def remove(self, labels: Iterable[int]) -> None:
        """Drop documents from the index (in the caller's transaction)."""
        labels = [int(x) for x in labels]
        if not labels:
            return
        with self._lock:
            t = pa.table({"label": pa.array(labels, pa.int64())})
            self.db.with_arrow(
                t, "DELETE FROM lex_postings WHERE label IN (SELECT label FROM _arg)"
            )
            self.db.with_arrow(t, "DELETE FROM lex_docs WHERE label IN (SELECT label FROM _arg)")
            if self._loaded:
                for label in labels:
                    if label < len(self._doc_len) and self._doc_len[label] > 0:
                        self._n_docs -= 1
                        self._total_len -= float(self._doc_len[label])
                        self._doc_len[label] = 0
                    self._removed.add(label)
                gone = set(labels)  # postings added since the load go too
                for tid, entries in list(self._delta.items()):
                    kept = [e for e in entries if e[0] not in gone]
                    if len(kept) != len(entries):
                        self._delta[tid] = kept

    def refresh_stats(self) -> None:
        """Recount what the index keeps about its documents after its tables were written
        directly (a copy): here everything reloads from the tables on first use."""
        self.rollback()

    def rollback(self) -> None:
        """Forget the in-memory state after a failed transaction; it reloads from DuckDB."""
        with self._lock:
            self._term_ids = None
            self._loaded = False
            self._recorded = _UNREAD

    def _grow(self, size: int) -> None:
        if size > len(self._doc_len):
            grown = np.zeros(max(size, int(len(self._doc_len) * 1.5)), dtype=np.float32)
            grown[: len(self._doc_len)] = self._doc_len
            self._doc_len = grown

    # -- reads -------------------------------------------------------------------------------
    def _postings(self, tid: int) -> tuple[np.ndarray, np.ndarray]:
        if tid + 1 < len(self._offsets):
            lo, hi = self._offsets[tid], self._offsets[tid + 1]
            labels, tfs = self._labels[lo:hi], self._tfs[lo:hi]
        else:
            labels, tfs = np.empty(0, np.int64), np.empty(0, np.float32)
        if self._removed and len(labels):
            keep = ~np.isin(labels, np.fromiter(self._removed, np.int64))
            labels, tfs = labels[keep], tfs[keep]
        extra = self._delta.get(tid)
        if extra:  # merged in label order: the pruned scoring looks labels up by bisection
            d = np.asarray(extra, dtype=np.float64)
            d = d[np.argsort(d[:, 0], kind="stable")]
            added = d[:, 0].astype(np.int64)
            at = np.searchsorted(labels, added)
            labels = np.insert(labels, at, added)
            tfs = np.insert(tfs, at, d[:, 1].astype(np.float32))
        return labels, tfs

    def scores(self, query: str) -> np.ndarray:
        """The BM25 score of every document for ``query``, indexed by label (0: no match)."""
        return self._scored(query).dense()

    def scored(self, query: str) -> Scores:
        """The query's scores as a search reads them (:mod:`localmem.store.scores`): the best
        ``k`` without reading every posting of a common word (:mod:`localmem.store.maxscore`),
        any memory's score by label, so later stages read it without scoring the query again."""
        return self._scored(query)

    def _scored(self, query: str) -> PrunedScores:
        self._ensure_loaded()
        with self._lock:
            ids = self._ensure_terms()
            tids = [ids[t] for t in dict.fromkeys(terms(query)) if t in ids]
            avgdl = self._total_len / max(self._n_docs, 1)
            if avgdl <= 0:  # every live document has no terms: no length to normalise by
                avgdl = 1.0
            lists = []
            if self._n_docs:
                for tid in tids:
                    labels, tfs = self._postings(tid)
                    if len(labels):
                        lists.append(self._term_postings(tid, labels, tfs, avgdl))
            return PrunedScores(lists, self._doc_len, avgdl)

    def _term_postings(
        self, tid: int, labels: np.ndarray, tfs: np.ndarray, avgdl: float
    ) -> TermPostings:
        df = len(labels)
        idf = np.log(1.0 + (self._n_docs - df + 0.5) / (df + 0.5))
        most_tf, least_len = np.float32(0), np.float32(np.inf)
        if tid < len(self._most_tf):
            most_tf, least_len = self._most_tf[tid], self._least_len[tid]
        extra = self._delta.get(tid)
        if extra:  # postings added since the load
            added = np.fromiter((x for x, _ in extra), np.int64, len(extra))
            most_tf = max(most_tf, np.float32(max(tf for _, tf in extra)))
            least_len = min(least_len, self._doc_len[added].min())
        bound = float(weight(idf, np.float32(most_tf), np.float32(least_len), avgdl))
        return TermPostings(labels, tfs, idf, bound)

    @staticmethod
    def top(
        scores: np.ndarray, k: int, *, allowed: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` best labels of a :meth:`scores` array, best first, ties by label (only
        ``allowed`` ones if given; documents that do not match are never returned)."""
        return best(scores, k, allowed=allowed)

    def search(
        self, query: str, k: int, *, allowed: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Top-k labels by BM25 score, best first (only among ``allowed`` labels if given)."""
        return self.top(self.scores(query), k, allowed=allowed)

    def document_frequencies(self, stems: Iterable[str]) -> dict[str, int]:
        """How many indexed memories hold each term (terms as :func:`localmem.text.terms`)."""
        self._ensure_loaded()
        with self._lock:
            ids = self._ensure_terms()
            return {t: (len(self._postings(ids[t])[0]) if t in ids else 0) for t in set(stems)}

    def held_terms(
        self, labels: Sequence[int] | np.ndarray, stems: Sequence[str]
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """What the index knows of some memories without their texts: each one's length in
        index terms (0: not indexed, or no terms) and, for each of ``stems``, whether it holds
        it (a bool matrix, a row a memory). The reranker's length and coverage features read
        these instead of tokenising ~100 texts a search (:func:`localmem.text.terms` made the
        postings, so the answers are the same). None where they might not be: postings not
        recorded as made by this code's tokeniser (:meth:`terms_current`), or not held in memory
        (PostgreSQL)."""
        if not self.terms_current():
            return None
        self._ensure_loaded()
        labels = np.asarray(labels, dtype=np.int64)
        with self._lock:
            n_docs = len(self._doc_len)
            if len(labels) and labels.min() >= 0 and labels.max() < n_docs:
                # every label inside the table (a search's pool): one gather, no masks
                lengths = self._doc_len[labels].astype(np.int64)
            else:
                lengths = np.zeros(len(labels), dtype=np.int64)
                inside = (labels >= 0) & (labels < n_docs)
                lengths[inside] = self._doc_len[labels[inside]].astype(np.int64)
            ids = self._ensure_terms()
            holds = np.zeros((len(labels), len(stems)), dtype=bool)
            # removed labels' compressed postings are an older text's: the same for every term
            removed = (
                np.isin(labels, np.fromiter(self._removed, np.int64)) if self._removed else None
            )
            for j, stem in enumerate(stems):
                tid = ids.get(stem)
                if tid is not None:
                    holds[:, j] = self._holds(tid, labels, removed)
            return lengths, holds

    def _holds(self, tid: int, labels: np.ndarray, removed: np.ndarray | None) -> np.ndarray:
        """Whether each label has a posting of term ``tid`` (as :meth:`_postings` lists them,
        without copying the postings of a common word); ``removed``: which labels' compressed
        postings no longer count."""
        found = np.zeros(len(labels), dtype=bool)
        if tid + 1 < len(self._offsets):
            rows = self._labels[self._offsets[tid] : self._offsets[tid + 1]]  # sorted by label
            if len(rows):
                found = members(rows, labels)
            if removed is not None:
                found &= ~removed
        extra = self._delta.get(tid)
        if extra:
            found |= np.isin(labels, np.fromiter((x for x, _ in extra), np.int64))
        return found

    @property
    def doc_count(self) -> int:
        """Documents in the index."""
        self._ensure_loaded()
        return self._n_docs


def _bounds(
    offsets: np.ndarray, tfs: np.ndarray, lengths: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Each term's largest tf and shortest document over its postings (``tfs`` and the
    documents' ``lengths`` in compressed rows by ``offsets``; a term without postings: 0 and
    infinity)."""
    n_terms = len(offsets) - 1
    most = np.zeros(n_terms, dtype=np.float32)
    least = np.full(n_terms, np.inf, dtype=np.float32)
    held = np.flatnonzero(np.diff(offsets) > 0)
    if len(held):
        starts = offsets[held]
        most[held] = np.maximum.reduceat(tfs, starts)
        least[held] = np.minimum.reduceat(lengths, starts)
    return most, least
