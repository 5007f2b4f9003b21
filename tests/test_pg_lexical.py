"""PostgreSQL's BM25 read from postings ordered by impact (localmem/store/postgres/impact.py,
issue 34): the best k of a query and the score of any label are the embedded index's, for
random collections, queries, filters and depths (shallow reads that must go deeper, and the
fall-back to scoring every posting), after removals and in a copied store."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from localmem.store.postgres import impact as impact_module

WORDS = [f"w{i}" for i in range(12)]


def _texts(seed: int, n: int) -> list[str]:
    """Texts whose words follow a skewed law (some words in most memories, some in few),
    of varied lengths, so term lists are long and impacts spread."""
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, len(WORDS) + 1)
    weights /= weights.sum()
    return [" ".join(rng.choice(WORDS, size=int(rng.integers(1, 14)), p=weights)) for _ in range(n)]


def _tied_texts(seed: int, n: int) -> list[str]:
    """Texts of a few distinct words each, once, in three lengths: nearly every posting of a
    word has one of three impacts and many memories tie on their score (as the synthetic
    benchmark texts do at a million memories), so the bounds meet ties at the k-th place."""
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, len(WORDS) + 1) ** 0.5
    weights /= weights.sum()
    return [
        " ".join(rng.choice(WORDS, size=int(rng.integers(3, 6)), replace=False, p=weights))
        for _ in range(n)
    ]


@pytest.fixture
def pair(pg_url, embedder, tmp_path):
    from localmem import Memory

    embedded = Memory.open(tmp_path / "embedded", embedder=embedder)
    postgres = Memory.open(pg_url, embedder=embedder)
    yield embedded, postgres
    embedded.close()
    postgres.close()


def _same(embedded, postgres, query: str, k: int, allowed) -> None:
    want = embedded.store.lexical.scores(query)
    got = postgres.store.lexical.scored(query)
    labels, scores = got.top(k, allowed)
    exp_labels, exp_scores = embedded.store.lexical.top(want, k, allowed=allowed)
    # the same memories in the same order with the same float32 scores, ties included: near
    # ties are ordered by the last bit, so the scores are added as the embedded index adds them
    np.testing.assert_array_equal(scores, exp_scores)
    np.testing.assert_array_equal(labels, exp_labels)
    probe = np.arange(-1, len(want) + 2)
    inside = (probe >= 0) & (probe < len(want))
    expected = np.zeros(len(probe), dtype=np.float32)
    expected[inside] = want[probe[inside]]
    np.testing.assert_array_equal(got.at(probe), expected)


_SETTINGS = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
_CASES = given(
    seed=st.integers(0, 10_000),
    query=st.lists(st.sampled_from([*WORDS, "absent"]), min_size=1, max_size=4),
    k=st.integers(1, 25),
    scope=st.sampled_from([None, 2, 5]),
    first=st.sampled_from([1, 4]),
    deepest=st.sampled_from([8, 20_000]),
    few=st.sampled_from([0, 4096]),
    full_below=st.sampled_from([0, 10**9]),
    share=st.sampled_from([0.05, 10.0**9]),
    lookups=st.sampled_from([0, 5, 2000]),
)


@_SETTINGS
@_CASES
def test_the_best_k_and_any_score_are_the_embedded_indexs(pair, monkeypatch, seed, **case):
    _check(pair, monkeypatch, _texts(seed, 300), **case)


@_SETTINGS
@_CASES
def test_ties_at_the_kth_place_are_decided_as_the_embedded_index_does(
    pair, monkeypatch, seed, **case
):
    """Many equal scores: a bound that only equals the k-th score must not stop the rounds,
    and memories whose scores round to the same float32 are ordered by label."""
    _check(pair, monkeypatch, _tied_texts(seed, 400), **case)


def _check(pair, monkeypatch, texts, query, k, scope, first, deepest, few, full_below, share,
           lookups) -> None:  # fmt: skip
    embedded, postgres = pair
    monkeypatch.setattr(impact_module, "FIRST", first)
    monkeypatch.setattr(impact_module, "SHALLOWEST", 1)
    monkeypatch.setattr(impact_module, "DEEPEST", deepest)
    monkeypatch.setattr(impact_module, "FEW", few)
    monkeypatch.setattr(impact_module, "FULL_BELOW", full_below)
    monkeypatch.setattr(impact_module, "ROUNDS_SHARE", share)
    monkeypatch.setattr(impact_module, "LOOKUPS_MOST", lookups)
    if not embedded.count():  # the first example's texts serve the test's examples
        for mem in pair:
            mem.add_many(texts)
        pairs = zip(embedded.list(limit=300), postgres.list(limit=300), strict=True)
        for e, p in list(pairs)[::9]:  # the same memories leave both
            assert (e.label, e.content) == (p.label, p.content)
            embedded.delete(e.id)
            postgres.delete(p.id)
    top = int(postgres.kernel.db.scalar("SELECT max(label) FROM memories")) + 1
    allowed = None if scope is None else np.arange(0, top, scope, dtype=np.int64)
    _same(embedded, postgres, " ".join(query), k, allowed)


def test_a_copied_store_scores_as_its_source(pg_url, embedder, tmp_path):
    """migrate-store copies the postings without impacts or counts: they are filled after."""
    from localmem import Memory
    from localmem.store.copy import copy_store

    texts = _texts(3, 200)
    with (
        Memory.open(tmp_path / "src", embedder=embedder) as src,
        Memory.open(pg_url, embedder=embedder) as dst,
    ):
        src.add_many(texts)
        copy_store(src.store, dst.store)
        assert not dst.kernel.db.scalar("SELECT count(*) FROM lex_postings WHERE impact IS NULL")
        assert dst.store.lexical.document_frequencies(["w0", "w5"]) == (
            src.store.lexical.document_frequencies(["w0", "w5"])
        )
        assert dst.store.lexical.doc_count == src.store.lexical.doc_count == 200
        for q in ("w0", "w1 w7", "w11 w3 w0"):
            _same(src, dst, q, 10, None)


def test_a_store_made_before_gets_covering_indexes_at_a_writable_open(pg_url, embedder, tmp_path):
    """A store whose postings' indexes lack tf and lengths (made by earlier code) reads the
    same scores, and its first writable open rebuilds them; a read-only open does not."""
    from localmem import Memory

    texts = _texts(5, 200)
    with (
        Memory.open(pg_url, embedder=embedder) as mem,
        Memory.open(tmp_path / "e", embedder=embedder) as ref,
    ):
        mem.add_many(texts)
        ref.add_many(texts)
        db = mem.kernel.db
        db.execute("DROP INDEX lex_postings_impact")
        db.execute("CREATE INDEX lex_postings_impact ON lex_postings (term_id, impact DESC, label)")
        db.execute("DROP INDEX memories_embed_hash")
        _same(ref, mem, "w0 w3 w7", 10, None)  # the old indexes: the same answer
    with Memory.open(pg_url, embedder=embedder, read_only=True) as mem:
        found = mem.kernel.db.scalar("SELECT pg_get_indexdef(to_regclass('lex_postings_impact'))")
        assert "INCLUDE" not in found
    with (
        Memory.open(pg_url, embedder=embedder) as mem,
        Memory.open(tmp_path / "e", embedder=embedder) as ref,
    ):
        db = mem.kernel.db
        found = db.scalar("SELECT pg_get_indexdef(to_regclass('lex_postings_impact'))")
        assert found.endswith("(term_id, impact DESC, label) INCLUDE (tf, dl)")
        assert db.scalar("SELECT to_regclass('memories_embed_hash') IS NOT NULL")
        assert any("built the indexes" in n for n in mem.store.notices)
        _same(ref, mem, "w0 w3 w7", 10, None)


def test_every_posting_of_some_terms_comes_back_as_arrays_in_the_order_asked(pg_url, embedder):
    """postings.each_term: each term's postings as the table holds them (labels past 32 bits,
    a length not yet filled in read as 0), in the order the terms were given; a term without
    postings is skipped."""
    from localmem import Memory
    from localmem.store.postgres.postings import each_term

    with Memory.open(pg_url, embedder=embedder) as mem:
        db = mem.kernel.db
        rows = [(7, 2**40 + 3, 2, 9), (7, 5, 1, 4), (3, 11, 4, None), (9, 5, 1, 4)]
        for term_id, label, tf, dl in rows:
            db.execute(
                "INSERT INTO lex_postings (term_id, label, tf, dl, impact) VALUES (?, ?, ?, ?, 1)",
                [term_id, label, tf, dl],
            )
        got = []
        each_term(
            db,
            [9, 4, 7, 3],
            lambda place, labels, tf, dl: got.append(
                (place, sorted(zip(labels.tolist(), tf.tolist(), dl.tolist(), strict=True)))
            ),
        )
        assert got == [
            (0, [(5, 1, 4)]),
            (2, [(5, 1, 4), (2**40 + 3, 2, 9)]),
            (3, [(11, 4, 0)]),
        ]
        assert all(isinstance(x, int) for _, r in got for x in r[0])
        each_term(db, [], lambda *a: got.append(a))  # nothing asked: no statement, no call
        assert len(got) == 3
