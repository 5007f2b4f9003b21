"""The lexical index's answer for the reranker's length and coverage features (held_terms):
the same as tokenising each memory's text, whatever adds, removes, updates and reloads came
before; and where it cannot answer (a memory with context), the reranker tokenises."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from localmem.retrieval import features, joining
from localmem.retrieval import rerank as rerank_module
from localmem.store.db import Database
from localmem.store.lexical import LexicalIndex
from localmem.text import terms

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
        texts: dict[int, str] = {}
        for op, label, text in steps:
            if op == "add" and label not in texts:
                lex.add([label], [text])
                texts[label] = text
            elif op == "remove" and label in texts:
                lex.remove([label])
                del texts[label]
            elif op == "update" and label in texts:  # what an update of a memory does
                lex.remove([label])
                lex.add([label], [text])
                texts[label] = text
            elif op == "reload":
                lex = LexicalIndex(db)  # another process, or one after a rollback
            elif op == "search":
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
        counts, held = features.index_terms(ctx, pool.items)
        for item, n, h in zip(pool.items, counts.tolist(), held, strict=True):
            seen[item.label] = (n, h & set(ctx.parsed.terms))
        return pool, joined

    rerank_module.scored_pool = spy
    try:
        memory.search(query, k=10)
    finally:
        rerank_module.scored_pool = original
    return seen


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
        lex.add([0], ["alpha beta"])
        lengths, holds = lex.held_terms(labels, STEMS)
        expected = [2 if x == 0 else 0 for x in labels]
        assert lengths.tolist() == expected and holds.shape == (len(labels), len(STEMS))
        assert holds.sum() == sum(2 for x in labels if x == 0)
    finally:
        db.close()


def test_held_rows_times_are_those_of_the_database():
    """The row mirror makes its times from their microseconds: the same aware datetimes as
    pyarrow's own conversion made aware, nulls kept; other kinds of time the slow way."""
    from datetime import datetime

    import pyarrow as pa

    from localmem.store.mirror import _values
    from localmem.store.records import aware

    moments = [datetime(2023, 5, 7, 13, 1, 2, 345678), None, datetime(1969, 12, 31, 23, 59, 59)]
    for kind in (pa.timestamp("us"), pa.timestamp("ns"), pa.timestamp("us", tz="UTC")):
        column = pa.chunked_array([pa.array(moments, kind)])
        expected = [aware(x.replace(tzinfo=None)) if x else None for x in column.to_pylist()]
        got = _values(column)
        assert got == expected and [repr(x) for x in got] == [repr(x) for x in expected]
    assert _values(pa.chunked_array([pa.array(["a", None])])) == ["a", None]
