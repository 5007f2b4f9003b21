"""The lexical index's answer for the reranker's length and coverage features (held_terms):
the same as tokenising each memory's text, whatever adds, removes, updates and reloads came
before; where it cannot answer (a memory with context; postings the store does not record as
made by this code's tokeniser) the reranker tokenises; a rebuild records the version."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from store_helpers import apply_lexical

from localmem.retrieval import features, joining
from localmem.retrieval import rerank as rerank_module
from localmem.store import lexical as lexical_module
from localmem.store.db import Database
from localmem.store.lexical import TERMS_META, LexicalIndex
from localmem.store.maintenance import check_store
from localmem.text import TERMS_VERSION, term_counts, terms

WORDS = ["alpha", "beta", "gamma", "the", "running", "runners", "café", "Caroline's", "and"]
STEMS = ["alpha", "beta", "run", "runner", "carolin", "cafe", "absent"]

ops = st.lists(
    st.tuples(
        st.sampled_from(["add", "remove", "update", "reload", "search"]),
        st.integers(0, 7),
        st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join),
    ),
    max_size=25,
)


def _expected(texts: dict[int, str], labels: list[int]) -> tuple[list[int], np.ndarray]:
    lengths = [len(terms(texts[x])) if x in texts else 0 for x in labels]
    holds = np.array(
        [[x in texts and s in set(terms(texts[x])) for s in STEMS] for x in labels], dtype=bool
    ).reshape(len(labels), len(STEMS))
    return lengths, holds


@settings(max_examples=60, deadline=None)
@given(ops)
def test_held_terms_are_the_texts_terms(tmp_path_factory, steps):
    db = Database(tmp_path_factory.mktemp("held") / "l.duckdb")
    db.migrate()
    try:
        lex = LexicalIndex(db)
        lex.record_terms()  # as a new store does
        texts: dict[int, str] = {}
        for op, label, text in steps:
            lex = apply_lexical(lex, db, texts, op, label, text)
            if op == "search":
                lex.scores(text)  # loads the compressed rows; later adds go to the delta
            labels = list(range(9))
            known = lex.held_terms(labels, STEMS)
            assert known is not None
            lengths, holds = _expected(texts, labels)
            assert known[0].tolist() == lengths
            assert np.array_equal(known[1], holds)
    finally:
        db.close()


def _pool_terms(memory, query: str) -> dict[int, tuple[int, frozenset[str]]]:
    """Each pool memory's term count and held query terms, as the reranker read them."""
    seen: dict[int, tuple[int, frozenset[str]]] = {}
    original = joining.scored_pool

    def spy(ctx):
        pool, joined = original(ctx)
        held = features.index_terms(ctx, pool.rows)
        # coverage from the held query terms is the one summed over every term, to the last bit
        whole = [features.term_set(item.content) for item in pool.items]
        assert features.coverage(ctx, held).tobytes() == _coverage(ctx, whole).tobytes()
        rows = held.holds.tolist()
        for item, n, h in zip(pool.items, held.counts.tolist(), rows, strict=True):
            seen[item.label] = (n, frozenset(t for t, x in zip(held.stems, h, strict=True) if x))
        return pool, joined

    rerank_module.scored_pool = spy
    try:
        memory.search(query, k=10)
    finally:
        rerank_module.scored_pool = original
    return seen


def _coverage(ctx, held: list[frozenset[str]]) -> np.ndarray:
    """Coverage as a loop over each memory's whole term set gives it (the reference)."""
    query = set(ctx.parsed.terms)
    if not query:
        return np.zeros(len(held))
    lexical = ctx.kernel.store.lexical
    n = max(lexical.doc_count, 1)
    df = lexical.document_frequencies(query)
    idf = {t: np.log(1.0 + (n - df.get(t, 0) + 0.5) / (df.get(t, 0) + 0.5)) for t in query}
    total = sum(idf.values()) or 1.0
    return np.array([sum(idf[t] for t in idf if t in terms) / total for terms in held])


def _tokenised(item, query: str) -> tuple[int, frozenset[str]]:
    return features.word_count(item.content), features.term_set(item.content) & set(terms(query))


def test_the_reranker_reads_what_tokenising_gives_after_writes(memory):
    """Adds, an update and a delete after the index was loaded; a memory with an evolved
    context (whose postings hold more than its content) is tokenised instead."""
    query = "where do the runners meet for the deploy?"
    for text in ["The runners meet at the café", "Deploy runs on Fridays", "Lunch at noon"]:
        memory.add(text)
    memory.search(query)  # the index loaded; what follows goes to its delta
    late = memory.add("Runners meet again after the deploy on Friday evenings")
    moved = memory.add("The deploy moved to the runners' track")
    memory.update(moved.id, content="The deploy moved to Thursdays")
    gone = memory.add("Runners deploy nothing here")
    memory.delete(gone.id)
    memory.update(late.id, context="runners everywhere, the deploy too")  # indexed with it
    assert memory.kernel.store.lexical.held_terms([late.label], ["runner"]) is not None
    seen = _pool_terms(memory, query)
    items = {m.label: m for m in memory.list(limit=100)}
    assert late.label in seen and moved.label in seen and gone.label not in seen
    for label, got in seen.items():
        assert got == _tokenised(items[label], query), items[label].content


def test_postgres_does_not_answer_from_memory():
    from localmem.store.postgres.lexical import PgLexicalIndex

    assert PgLexicalIndex.held_terms(object.__new__(PgLexicalIndex), [1], ["a"]) is None


@pytest.mark.parametrize("labels", [[], [5], [-1, 0, 10**9]])
def test_labels_the_index_never_saw(tmp_path, labels):
    db = Database(tmp_path / "l.duckdb")
    db.migrate()
    try:
        lex = LexicalIndex(db)
        lex.record_terms()
        lex.add([0], ["alpha beta"])
        lengths, holds = lex.held_terms(labels, STEMS)
        expected = [2 if x == 0 else 0 for x in labels]
        assert lengths.tolist() == expected and holds.shape == (len(labels), len(STEMS))
        assert holds.sum() == sum(2 for x in labels if x == 0)
    finally:
        db.close()


def test_an_index_without_the_record_or_of_another_version_does_not_answer(tmp_path):
    db = Database(tmp_path / "l.duckdb")
    db.migrate()
    try:
        lex = LexicalIndex(db)
        lex.add([0], ["alpha beta"])
        assert lex.recorded_terms() is None and lex.held_terms([0], STEMS) is None
        db.set_meta(TERMS_META, str(TERMS_VERSION - 1))
        lex.rollback()  # what it read of the table is forgotten, as after a failed unit
        assert not lex.terms_current() and lex.held_terms([0], STEMS) is None
        lex.record_terms()
        assert lex.held_terms([0], STEMS)[0].tolist() == [2]
        assert LexicalIndex(db).terms_current()  # read from the table by another process
    finally:
        db.close()


def test_postings_added_by_another_version_remove_the_record(tmp_path):
    """A store recorded at another version, written by this code: its postings are of two
    tokenisers now, so no version is recorded (and nothing answers from them)."""
    db = Database(tmp_path / "l.duckdb")
    db.migrate()
    try:
        db.set_meta(TERMS_META, "2")
        lex = LexicalIndex(db)
        lex.add([0], ["alpha beta"])
        assert db.get_meta(TERMS_META) is None and lex.held_terms([0], STEMS) is None
    finally:
        db.close()


def _older_term_counts(text: str):
    """A tokeniser that differs from today's on some texts (as 5af091f's language vote did)."""
    counts = term_counts(text)
    counts.pop("runner", None)
    return counts


TEXTS = [
    "The runners meet at the café before the deploy",
    "Runners of the night shift deploy on Fridays",
    "Lunch at noon with Caroline's runners",
    "Take care, talk soon",
]


def _store_made_by_older_code(open_memory, store_path, monkeypatch):
    """A store whose postings an older tokeniser made and that records no version (made
    before the record existed)."""
    memory = open_memory(store_path)
    with monkeypatch.context() as patched:
        patched.setattr(lexical_module, "term_counts", _older_term_counts)
        memory.add_many(TEXTS)
    store = memory.kernel.store
    store.db.execute("DELETE FROM meta WHERE key = ?", [TERMS_META])
    store.lexical.rollback()
    return memory


def test_a_store_without_the_record_is_tokenised(open_memory, store_path, monkeypatch):
    memory = _store_made_by_older_code(open_memory, store_path, monkeypatch)
    assert memory.kernel.store.lexical.held_terms([0], ["runner"]) is None
    query = "when do the runners deploy?"
    seen = _pool_terms(memory, query)
    items = {m.label: m for m in memory.list(limit=100)}
    assert len(seen) == len(TEXTS)
    for label, got in seen.items():  # what tokenising gives, not the older postings
        assert got == _tokenised(items[label], query), items[label].content


def test_a_rebuild_records_the_version(open_memory, store_path, monkeypatch):
    """``doctor --repair`` rebuilds the postings of a store that records no version: then
    they are today's terms, the record says so and the reranker reads them."""
    memory = _store_made_by_older_code(open_memory, store_path, monkeypatch)
    query = "when do the runners deploy?"
    before = [(h.memory.label, h.score) for h in memory.search(query, k=10).hits]
    memory.close()
    facts = check_store(store_path, repair=True)
    assert any("rebuilt from 4 memories" in line for line in facts["repaired"])
    assert facts["lexical_terms"] == str(TERMS_VERSION) and facts["lexical_terms_current"]
    assert facts["lexical_in_step"]
    memory = open_memory(store_path)
    lexical = memory.kernel.store.lexical
    items = memory.list(limit=100)
    known = lexical.held_terms([m.label for m in items], ["runner"])
    assert known is not None
    assert known[0].tolist() == [len(terms(m.content)) for m in items]
    assert known[1][:, 0].tolist() == ["runner" in terms(m.content) for m in items]
    seen = _pool_terms(memory, query)
    for label, got in seen.items():
        item = next(m for m in items if m.label == label)
        assert got == _tokenised(item, query)
    after = [(h.memory.label, h.score) for h in memory.search(query, k=10).hits]
    assert {x for x, _ in after} == {x for x, _ in before}  # the same memories, BM25 of today
    memory.close()
    assert check_store(store_path, repair=True)["repaired"] == []  # nothing left to do


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(0.0, 20.0, allow_nan=False), min_size=1, max_size=8),
    st.data(),
)
def test_coverage_by_columns_is_the_loop_over_each_memorys_terms(weights, data):
    """HeldTerms.weight adds a term's weight down its column, in the weights' order: the same
    float, bit for bit, as summing each memory's held terms one memory at a time."""
    stems = [f"t{j}" for j in range(len(weights))]
    order = data.draw(st.permutations(stems))  # the query's order need not be the columns'
    by_term = dict(zip(order, weights, strict=True))
    n = data.draw(st.integers(0, 12))
    holds = np.array(
        data.draw(
            st.lists(
                st.lists(st.booleans(), min_size=len(stems), max_size=len(stems)),
                min_size=n,
                max_size=n,
            )
        ),
        dtype=bool,
    ).reshape(n, len(stems))
    held = features.HeldTerms(np.zeros(n, dtype=np.int64), holds, stems)
    rows = [{t for t, h in zip(stems, row, strict=True) if h} for row in holds.tolist()]
    expected = np.array([sum(w for t, w in by_term.items() if t in row) for row in rows])
    assert held.weight(by_term).tobytes() == expected.astype(np.float64).tobytes()
