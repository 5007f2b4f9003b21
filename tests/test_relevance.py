"""A hit's relevance (issue 33 item 5): bounded, calibrated, the same on every pipeline, and the
floor an agent sets. Real stores and the real MiniLM."""

from __future__ import annotations

import json

import pytest

from localmem.errors import InputError
from localmem.retrieval.relevance import (
    CALIBRATION_FILE,
    DEFAULT_MIN_RELEVANCE,
    SIGNALS,
    load_calibration,
)

NOTES = [
    "The deploy pipeline runs every Friday after the test suite passes.",
    "To roll back a release, run the previous tag through the pipeline again.",
    "Ann's cat is called Miso and sleeps on the radiator.",
    "npm ci installs exactly what package-lock.json says; npm install may update it.",
    "Use `npm outdated` to see which packages have newer versions.",
]


@pytest.fixture
def notes(memory):
    memory.add_many(NOTES, kind="note")
    return memory


def test_the_shipped_calibration_is_fitted():
    data = json.loads(CALIBRATION_FILE.read_text(encoding="utf-8"))
    for name in ("reranked", "plain"):
        weights = data["models"][name]["weights"]
        assert weights and set(weights) <= set(SIGNALS)
        assert weights["cosine"] > 0  # closer in meaning: more likely relevant
    assert 0 < DEFAULT_MIN_RELEVANCE < 1


@pytest.mark.parametrize(
    "options",
    [{}, {"rerank": "off"}, {"mode": "dense"}, {"mode": "lexical"}, {"temporal": False}],
)
def test_every_hit_has_a_relevance_between_0_and_1(notes, options):
    result = notes.search("which packages are out of date", k=5, **options)
    assert result.hits
    assert all(h.relevance is not None and 0 <= h.relevance <= 1 for h in result.hits)


def test_the_right_note_is_more_relevant_than_an_unrelated_one(notes):
    hits = {h.memory.content: h.relevance for h in notes.search("how do we roll back", k=5).hits}
    assert hits[NOTES[1]] > hits[NOTES[2]]


def test_the_floor_leaves_out_the_hits_below_it(notes):
    every = notes.search("how do we roll back a release", k=5)
    floor = sorted(h.relevance for h in every.hits)[len(every.hits) // 2]
    kept = notes.search("how do we roll back a release", k=5, min_relevance=floor)
    assert [h.memory.id for h in kept.hits] == [
        h.memory.id for h in every.hits if h.relevance >= floor
    ]
    assert notes.search("how do we roll back", k=5, min_relevance=1.0).hits == []
    report = next(r for r in kept.stages if r.stage == "relevance")
    assert report.notes["floor"] == floor and report.notes["below_floor"] >= 1
    for bad in (-0.1, 1.5, "high", True):
        with pytest.raises(InputError, match="min_relevance"):
            notes.search("roll back", min_relevance=bad)


def test_a_bad_calibration_file_is_a_clear_error(tmp_path):
    missing = tmp_path / "nope.json"
    with pytest.raises(InputError, match="not found"):
        load_calibration(str(missing))
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    with pytest.raises(InputError, match="not readable"):
        load_calibration(str(broken))
    odd = tmp_path / "odd.json"
    model = {"weights": {"moon_phase": 1.0}, "bias": 0.0}
    odd.write_text(json.dumps({"models": {"reranked": model, "plain": model}}))
    with pytest.raises(InputError, match="unknown signals"):
        load_calibration(str(odd))


def test_the_calibration_is_a_logistic_model():
    model = load_calibration(None)
    low = model.relevance({"cosine": 0.0}, reranked=False)
    high = model.relevance({"cosine": 0.9}, reranked=False)
    assert 0 < low < high < 1
