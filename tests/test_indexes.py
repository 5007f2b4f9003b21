"""The two indexes on their own: hnswlib vectors and the DuckDB-backed BM25."""

from __future__ import annotations

import numpy as np
import pytest

from localmem.store.db import Database
from localmem.store.lexical import LexicalIndex
from localmem.store.vectors import VectorIndex, exact_search
from localmem.text import STOP_WORDS, terms


def _unit(n, dim, seed=0):
    rng = np.random.default_rng(seed)
    v = rng.normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_vector_index_grows_deletes_and_persists(tmp_path):
    vecs = _unit(3000, 16)
    index = VectorIndex(16)
    index.add(np.arange(3000), vecs)  # beyond the initial capacity: grows without rebuild
    labels, sims = index.search(vecs[42], 5)
    assert labels[0] == 42 and sims[0] == pytest.approx(1.0, abs=1e-5)
    index.mark_deleted([42, 43])
    assert 42 not in index.search(vecs[42], 5)[0]
    assert index.live_count == 2998
    index.save(tmp_path / "v.hnsw", {"vec_seq": 7})
    loaded, sidecar = VectorIndex.load(tmp_path / "v.hnsw", 16)
    assert sidecar["vec_seq"] == 7 and loaded.live_count == 2998
    assert 42 not in loaded.search(vecs[42], 5)[0]
    loaded.add([42], vecs[42:43])  # re-adding a deleted label brings it back
    assert loaded.search(vecs[42], 1)[0][0] == 42 and loaded.live_count == 2999


def test_vector_index_never_asks_for_more_than_it_holds():
    index = VectorIndex(8)
    assert len(index.search(_unit(1, 8)[0], 10)[0]) == 0
    index.add([5], _unit(1, 8))
    assert index.search(_unit(1, 8, seed=3)[0], 10)[0].tolist() == [5]


def test_load_rejects_truncated_and_foreign_files(tmp_path):
    index = VectorIndex(8)
    index.add(np.arange(100), _unit(100, 8))
    path = tmp_path / "v.hnsw"
    index.save(path, {})
    with pytest.raises(ValueError, match="dimension"):
        VectorIndex.load(path, 16)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError):
        VectorIndex.load(path, 8)


def test_exact_search_matches_brute_force():
    vecs = _unit(50, 8)
    labels = np.arange(100, 150)
    got, sims = exact_search(vecs[7], vecs, labels, 3)
    assert got[0] == 107 and len(got) == 3 and sims[0] >= sims[1] >= sims[2]


def test_terms_stem_and_drop_stop_words():
    assert terms("The runners were running to Caroline's") == ["runner", "run", "carolin"]
    assert "the" in STOP_WORDS and terms("the and of") == []


@pytest.fixture
def lex(tmp_path):
    db = Database(tmp_path / "l.duckdb")
    db.migrate()
    yield LexicalIndex(db)
    db.close()


def test_bm25_ranks_rare_terms_higher(lex):
    docs = ["cats and dogs", "dogs and more dogs", "a platypus among dogs", "cats cats cats"]
    lex.add(list(range(4)), docs)
    labels, scores = lex.search("platypus dogs", 4)
    assert labels[0] == 2 and np.all(np.diff(scores) <= 0)
    assert lex.search("nothing-matches", 3)[0].size == 0


def test_bm25_is_incremental_and_survives_reload(lex, tmp_path):
    lex.add([0, 1], ["alpha beta", "beta gamma"])
    assert lex.search("alpha", 5)[0].tolist() == [0]  # loads the compressed rows
    lex.add([2], ["alpha delta"])  # goes to the delta, no re-index
    assert sorted(lex.search("alpha", 5)[0].tolist()) == [0, 2]
    lex.remove([0])
    assert lex.search("alpha", 5)[0].tolist() == [2]
    fresh = LexicalIndex(lex.db)  # a new process would build this from DuckDB
    a = lex.search("alpha beta gamma delta", 5)
    b = fresh.search("alpha beta gamma delta", 5)
    assert a[0].tolist() == b[0].tolist()
    np.testing.assert_allclose(a[1], b[1], rtol=1e-5)


def test_bm25_allowed_labels(lex):
    lex.add([0, 1, 2], ["red apple", "red car", "red house"])
    assert sorted(lex.search("red", 5, allowed=np.array([1, 2]))[0].tolist()) == [1, 2]


def test_an_updated_document_is_found_by_its_new_words_only(lex):
    """remove + add of one label (what an update does) while the index is loaded: the old
    text's postings, in the compressed rows or in the delta, must not come back."""
    lex.add([0, 1], ["alpha beta", "beta gamma"])
    assert lex.search("alpha", 5)[0].tolist() == [0]  # loaded: alpha is in the compressed rows
    lex.remove([0])
    lex.add([0], ["delta"])
    assert lex.search("alpha", 5)[0].size == 0
    assert lex.search("delta", 5)[0].tolist() == [0]
    lex.remove([0])
    lex.add([0], ["epsilon"])  # delta was only in the delta: it goes too
    assert lex.search("delta", 5)[0].size == 0
    fresh = LexicalIndex(lex.db)
    for query in ("alpha", "delta", "epsilon beta"):
        a, b = lex.search(query, 5), fresh.search(query, 5)
        assert a[0].tolist() == b[0].tolist()
        np.testing.assert_allclose(a[1], b[1], rtol=1e-5)
    assert np.all(np.isfinite(lex.scores("epsilon beta gamma")))


def test_an_updated_memory_is_not_found_by_its_old_words(memory):
    item = memory.add("The deploy runs on Fridays")
    memory.add("Rollbacks need two people")
    assert memory.search("Fridays", mode="lexical")[0].memory.id == item.id
    memory.update(item.id, content="The deploy moved to Thursdays")
    assert all(h.memory.id != item.id for h in memory.search("Fridays", mode="lexical"))
    assert memory.search("Thursdays", mode="lexical")[0].memory.id == item.id
