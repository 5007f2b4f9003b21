"""Properties of the model-free update decision (:mod:`localmem.infer.conflict`) over inputs no
dev set has: random short texts (chat, questions, numbers, emoji, several sentences, very
long), speakers, and vectors of the shipped reader's dimension aimed at its slots so that pairs
reach every gate. Reading a pair's evidence never raises; the chain's verdicts are the chain's
decision on that evidence.

``LOCALMEM_CONFLICT_BASE=<commit>`` also checks that ``verdicts`` decides as that commit's
``localmem/infer/conflict.py`` did (a refactor's check: the review of the Evidence refactor ran
it against a32c7d7, its parent)."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lab.at_commit import module_at  # scripts/ is on the tests' path (pyproject)

from localmem.infer import conflict
from localmem.infer.reading import Reader, shipped

READER: Reader = shipped()
WORDS = "I we she he they Ann Bob Tom's sister my our lives live moved to in Berlin Paris".split()  # noqa: SIM905
WORDS += "no longer don't anymore stopped quit retired broke up with married owns runs".split()  # noqa: SIM905
WORDS += "on version 3.12 2 3 dogs cats favourite colour is blue red the a service".split()  # noqa: SIM905
WORDS += "PostgreSQL 12 15 ticket PAY-412 works at Google now still teaching ? ! . ,".split()  # noqa: SIM905
WORDS += "😀 🎉 and but since last week monday passed pager Bjorn Aroha default".split()  # noqa: SIM905
WORDS += "branch master main".split()  # noqa: SIM905
_words = st.lists(st.sampled_from(WORDS) | st.text(min_size=1, max_size=8), max_size=14).map(
    " ".join
)
_sentences = st.lists(_words.map(lambda t: t[:1].upper() + t[1:]), min_size=1, max_size=4)
TEXTS = (
    _words
    | st.tuples(_sentences, st.sampled_from([". ", "? ", "! ", " ", "\n"])).map(
        lambda t: t[1].join(t[0])
    )
    | st.sampled_from(
        [
            "",
            " ",
            "?",
            "...",
            "😀🎉",
            "42",
            "3.12 15",
            "I",
            "Ann:",
            "Ann: I moved to Oslo. (the week before 3 May 2024)",
            "x" * 5000,
            "word " * 2000,
        ]
    )
    | st.text(max_size=60)
)
SPEAKERS = st.none() | st.sampled_from(["Ann", "Bob", "Tom", "Caroline", ""])


def _unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v)).astype(np.float32)


def _vector(seed: int, slot: int, pull: float) -> np.ndarray:
    """A random unit vector, pulled toward one slot's weights (slot -1: not pulled)."""
    v = np.random.default_rng(seed).standard_normal(READER.dim) / np.sqrt(READER.dim)
    if slot >= 0:
        w = READER.slot_w[slot % len(READER.slots)]
        v = v + pull * w / np.linalg.norm(w)
    return _unit(v)


VECTORS = st.builds(_vector, st.integers(0, 2**32 - 1), st.integers(-1, 40), st.floats(0, 4))


@st.composite
def pairs(draw) -> tuple[str, np.ndarray, list[tuple[str, np.ndarray]], dict]:
    """A new fact, its vector, up to five stored memories (some with vectors near the fact's,
    so that the confidence can clear its bar), and the speaker arguments."""
    fact, vector = draw(TEXTS), draw(VECTORS)
    memories = []
    for _ in range(draw(st.integers(0, 5))):
        text = draw(TEXTS)
        if draw(st.booleans()):
            noise = _vector(draw(st.integers(0, 2**32 - 1)), -1, 0.0)
            vec = _unit(vector + draw(st.floats(0, 2)) * noise)
        else:
            vec = draw(VECTORS)
        memories.append((text, vec))
    kw: dict = {"speaker": draw(SPEAKERS)}
    if draw(st.booleans()):
        kw["speakers"] = [draw(SPEAKERS) for _ in memories]
    return fact, vector, memories, kw


def _verdicts(module, fact, vector, memories, kw) -> list:
    READER._cache.clear()  # each example's vectors are read, not an earlier example's
    found = module.verdicts(READER, fact, vector, memories, **kw)
    return [v if isinstance(v, str) else (v.index, v.confidence, v.reason) for v in found]


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(pairs())
def test_the_evidence_is_read_of_any_pair_and_the_chain_decides_from_it(case) -> None:
    fact, vector, memories, kw = case
    READER._cache.clear()
    found = conflict.evidences(READER, fact, vector, memories, **kw)
    verdicts = _verdicts(conflict, fact, vector, memories, kw)
    if found is None:
        assert verdicts == ["none"] * len(memories)
        return
    assert len(found) == len(memories)
    for e in found:
        assert e.sentences > conflict.MAX_SENTENCES or e.read
        assert e.subject and e.aspect if e.read else not e.subject
    chained = [conflict.chain(e, i) for i, e in enumerate(found)]
    expected = [v if isinstance(v, str) else (v.index, v.confidence, v.reason) for v in chained]
    assert verdicts == expected


SENTENCES = [
    "Ann lives in Plymouth.",
    "Ann moved to Truro last month.",
    "Ann: I don't live in Plymouth anymore.",
    "Is Ann still in Plymouth?",
    "Ann's brother lives in Exeter.",
    "We have 2 cats.",
    "We have 3 cats now!",
    "42",
    "😀🎉",
    "Thanks, Ann!",
    "The billing service runs on PostgreSQL 12. It is slow. Nobody likes it.",
    "",
]


def _every_other(embedder):
    """Each of :data:`SENTENCES` as a new fact, with its vector, against all the others."""
    vectors = embedder.embed_batch(SENTENCES)
    for a, (fact, vector) in enumerate(zip(SENTENCES, vectors, strict=True)):
        others = zip(SENTENCES, vectors, strict=True)
        yield fact, vector, [(t, v) for b, (t, v) in enumerate(others) if b != a]


def test_real_sentences_with_the_real_embedder(embedder) -> None:
    """Every ordered pair of a few real sentences: the evidence reads, the chain decides from it,
    and the ones that should end do."""
    for fact, vector, memories in _every_other(embedder):
        found = conflict.evidences(READER, fact, vector, memories)
        verdicts = conflict.verdicts(READER, fact, vector, memories)
        if found is None:
            assert verdicts == ["none"] * len(memories)
        else:
            assert verdicts == [conflict.chain(e, i) for i, e in enumerate(found)]
    new, old = "Ann moved to Truro last month.", "Ann lives in Plymouth."
    vecs = embedder.embed_batch([new, old])
    assert conflict.endings(READER, new, vecs[0], [(old, vecs[1])])


BASE = os.environ.get("LOCALMEM_CONFLICT_BASE")


@pytest.mark.skipif(not BASE, reason="LOCALMEM_CONFLICT_BASE names no commit to compare with")
@settings(max_examples=2000, deadline=None, suppress_health_check=list(HealthCheck))
@given(pairs())
def test_verdicts_are_the_base_commits(case) -> None:
    assert BASE
    base = module_at(BASE, "localmem/infer/conflict.py")
    fact, vector, memories, kw = case
    assert _verdicts(conflict, fact, vector, memories, kw) == _verdicts(
        base, fact, vector, memories, kw
    )


def test_the_chain_stops_at_the_first_check_it_fails(embedder, monkeypatch) -> None:
    """On the add path (the chain deciding) a pair's later checks are not computed once one
    fails, as before the evidence was a record; evidences() still computes every check."""
    new = "Ann moved to Truro last month."
    memories = ["We have 2 cats.", "Ann's brother lives in Exeter.", "Ann lives in Plymouth."]
    vectors = embedder.embed_batch([new, *memories])
    pairs = list(zip(memories, vectors[1:], strict=True))
    whole = conflict.evidences(READER, new, vectors[0], pairs)
    assert whole is not None
    first = [conflict.failed_gates(e)[:1] for e in whole]
    assert first[0] and first[0][0] in ("same-slot", "old-ending", "subject", "aspect")
    assert first[1] and first[1][0] in ("same-slot", "old-ending", "subject", "aspect")
    assert first[2] == []
    calls = []
    how_kind = conflict._how_kind
    monkeypatch.setattr(conflict, "_how_kind", lambda *a: calls.append(a[1].words) or how_kind(*a))
    found = conflict.verdicts(READER, new, vectors[0], pairs)
    assert found[:2] == [f[0] for f in first[:2]] and isinstance(found[2], conflict.Ending)
    assert len(calls) == 1  # the value check ran for the pair that passed the checks before it
    calls.clear()
    conflict.evidences(READER, new, vectors[0], pairs)
    assert len(calls) == 3


@pytest.mark.skipif(not BASE, reason="LOCALMEM_CONFLICT_BASE names no commit to compare with")
def test_real_sentences_decide_as_the_base_commit(embedder) -> None:
    assert BASE
    base = module_at(BASE, "localmem/infer/conflict.py")
    for fact, vector, memories in _every_other(embedder):
        assert _verdicts(conflict, fact, vector, memories, {}) == _verdicts(
            base, fact, vector, memories, {}
        )
