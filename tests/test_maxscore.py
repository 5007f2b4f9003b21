"""BM25's best k read without every posting (localmem.store.maxscore): the same labels, order
and float32 scores as scoring every document, after any adds, removals, updates and reloads,
with and without a filter, on the pruned path and on the dense one it falls back to."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_helpers import apply_lexical

from localmem.store import maxscore
from localmem.store.db import Database
from localmem.store.lexical import LexicalIndex
from localmem.store.maxscore import PrunedScores
from localmem.store.scores import best
from localmem.text import term_counts, terms

# a few common words and many rare ones, so lists differ in length and bounds
WORDS = ["deploy", "server", "cache", "alpha", "beta", "gamma", "delta", "kappa", "lambda"]
WORDS += [f"w{i}" for i in range(20)]
ZIPF = 1.0 / np.arange(1, len(WORDS) + 1)
ZIPF /= ZIPF.sum()

texts_st = st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join)


def _corpus(seed: int, n: int) -> list[str]:
    """``n`` texts of 1-8 words drawn by Zipf's law (a store's bulk: long and short lists)."""
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, size=int(rng.integers(1, 9)), p=ZIPF)) for _ in range(n)]


ops = st.lists(
    st.tuples(
        st.sampled_from(["add", "remove", "update", "reload"]), st.integers(0, 239), texts_st
    ),
    max_size=40,
)
queries = st.lists(st.sampled_from([*WORDS, "absent"]), min_size=1, max_size=5).map(" ".join)


def _reference(texts: dict[int, str], query: str, size: int) -> np.ndarray:
    """Every document scored term by term in the query's order (as the index adds them)."""
    counts = {label: term_counts(text) for label, text in texts.items()}
    lengths = np.zeros(size, dtype=np.float32)
    for label, c in counts.items():
        lengths[label] = sum(c.values())
    n = len(texts)
    avgdl = float(lengths.sum()) / max(n, 1) or 1.0
    out = np.zeros(size, dtype=np.float32)
    for term in dict.fromkeys(terms(query)):
        held = sorted(label for label, c in counts.items() if term in c)
        if not held:
            continue
        labels = np.array(held, dtype=np.int64)
        tfs = np.array([counts[x][term] for x in held], dtype=np.float32)
        idf = np.log(1.0 + (n - len(held) + 0.5) / (len(held) + 0.5))
        out[labels] += idf * tfs * 2.2 / (tfs + 1.2 * (0.25 + 0.75 * lengths[labels] / avgdl))
    return out


def _check(lex: LexicalIndex, texts: dict[int, str], query: str, k: int) -> None:
    scored = lex.scored(query)
    assert isinstance(scored, PrunedScores)
    want = _reference(texts, query, len(scored.lengths))
    for allowed in (None, np.arange(0, 240, 3, dtype=np.int64)):
        labels, scores = scored.top(k, allowed)
        exp_labels, exp_scores = best(want, k, allowed=allowed)
        assert labels.tolist() == exp_labels.tolist()
        assert scores.tobytes() == exp_scores.astype(np.float32).tobytes()
    probe = np.arange(-2, len(want) + 3)
    expected = np.zeros(len(probe), dtype=np.float32)
    inside = (probe >= 0) & (probe < len(want))
    expected[inside] = want[probe[inside]]
    assert scored.at(probe).tobytes() == expected.tobytes()
    assert scored.dense().tobytes() == want.tobytes()
    assert scored.at(probe).tobytes() == expected.tobytes()  # now read from the dense array


@pytest.mark.parametrize("few", [None, 3])
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 10_000), steps=ops, query=queries, k=st.integers(1, 30))
def test_the_best_k_are_those_of_every_score(
    tmp_path_factory, monkeypatch_few, few, seed, steps, query, k
):
    """``few`` 3: most queries leave the pruned path for the dense one past three memories."""
    monkeypatch_few(few)
    db = Database(tmp_path_factory.mktemp("maxscore") / "l.duckdb")
    db.migrate()
    try:
        lex = LexicalIndex(db)
        texts = dict(enumerate(_corpus(seed, 200)))
        lex.add(list(texts), list(texts.values()))
        for op, label, text in steps:
            lex = apply_lexical(lex, db, texts, op, label, text)
            lex.scored(query)  # loaded: later writes go to the delta and the removed set
        _check(lex, texts, query, k)
    finally:
        db.close()


@pytest.fixture(autouse=True)
def prune_small_stores(monkeypatch):
    """Small stores are scored densely (:data:`maxscore.PRUNE_FROM`): here they are pruned."""
    monkeypatch.setattr(maxscore, "PRUNE_FROM", 0)


@pytest.fixture
def monkeypatch_few(monkeypatch):
    def set_few(n: int | None) -> None:
        if n is not None:
            monkeypatch.setattr(maxscore.PrunedScores, "_few", lambda self: n)

    return set_few


def test_a_rare_term_settles_the_query_without_the_common_one(tmp_path):
    """The common word's postings are looked up for the rare word's memories only: the top is
    settled once the common word's bound is below the k-th score."""
    db = Database(tmp_path / "l.duckdb")
    db.migrate()
    try:
        lex = LexicalIndex(db)
        texts = {i: "server logs rotated" for i in range(5000)}
        texts.update({5000 + i: "zanzibar server" for i in range(20)})
        lex.add(list(texts), list(texts.values()))
        scored = lex.scored("zanzibar server")
        assert isinstance(scored, PrunedScores)
        labels, _ = scored.top(5)
        assert scored.read == 20  # the rare list alone
        assert set(labels.tolist()) <= set(range(5000, 5020))
        _check(lex, texts, "zanzibar server", 5)
    finally:
        db.close()
