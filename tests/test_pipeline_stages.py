"""The seed-004 stages of the read pipeline on a real store: expansion, temporal, rerank.

Small synthetic conversations (two speakers, dated sessions) stored with the real MiniLM; each
stage is switched on alone and checked for what it changes and what it reports.
"""

from __future__ import annotations

import json
from datetime import date, datetime, timezone

import numpy as np
import pytest

from localmem import Config, InputError
from localmem.dates import Span
from localmem.errors import EngineUnavailableError
from localmem.retrieval.expansion import feedback_terms
from localmem.retrieval.rerank import LinearReranker, load_reranker
from localmem.retrieval.speakers import named_speakers
from localmem.retrieval.temporal import closeness, temporal_factor

UTC = timezone.utc
# (session, date, speaker, text)
TURNS = [
    (1, "2023-05-08", "Caroline", "I went to an LGBTQ support group yesterday, it was powerful."),
    (1, "2023-05-08", "Melanie", "That sounds amazing! What happened there?"),
    (1, "2023-05-08", "Caroline", "People shared their transgender stories; I felt accepted."),
    (1, "2023-05-08", "Melanie", "I am so proud of you for going."),
    (2, "2023-06-20", "Melanie", "We went camping at the lake with the kids last weekend."),
    (2, "2023-06-20", "Caroline", "Nice! Did the kids like the tent?"),
    (2, "2023-06-20", "Melanie", "They loved roasting marshmallows by the campfire."),
    (3, "2023-07-15", "Caroline", "I started painting sunsets in watercolor this month."),
    (3, "2023-07-15", "Melanie", "Pottery is my thing, I made a blue bowl in class."),
    (3, "2023-07-15", "Caroline", "Wow, nice!"),
    (4, "2023-08-02", "Melanie", "My pottery class ended; I will miss clay and the wheel."),
    (4, "2023-08-02", "Caroline", "I am reading a book about adoption agencies for my plans."),
]
NOW = datetime(2023, 9, 1, tzinfo=UTC)


@pytest.fixture
def talk(memory):
    memory.add_many(
        [
            {
                "content": f"{who}: {text}",
                "session_id": f"c1:S{s}",
                "event_time": f"{d}T14:00:00+00:00",
                "metadata": {"speaker": who, "dia_id": f"D{s}:{i}"},
            }
            for i, (s, d, who, text) in enumerate(TURNS, start=1)
        ],
        kind="message",
        user_id="c1",
    )
    return memory


def stage(result, name):
    found = [r for r in result.stages if r.stage == name]
    return found[0] if found else None


# -- pipeline: every stage named, switchable and reported ---------------------------------
def test_stages_run_in_order_and_only_when_on(talk):
    # "exact" reports itself only when a memory holds every word of the query (it does here)
    plain = talk.search("camping with the kids", k=3, temporal=False, rerank="off")
    # "relevance" always runs: every hit gets its calibrated relevance (issue 33 item 5)
    assert [r.stage for r in plain.stages] == ["candidates", "exact", "relevance"]
    default = talk.search("camping with the kids", k=3)  # the default pipeline (issue 18)
    assert [r.stage for r in default.stages] == [
        "candidates",
        "temporal",
        "rerank",
        "exact",
        "relevance",
    ]
    full = talk.search(
        "When did Melanie go camping?",
        k=3,
        expand="prf",
        temporal=True,
        rerank="model-free",
        budget_tokens=200,
        now=NOW,
    )
    names = [r.stage for r in full.stages]
    assert names == ["expand", "candidates", "temporal", "rerank", "relevance", "pack"]
    for report in full.stages:
        assert report.line().startswith(report.stage) and " ms" in report.line()
    assert "camping" in full.hits[0].memory.content


def test_prf_expansion_adds_a_bm25_query(talk):
    result = talk.search("pottery class", k=5, expand="prf", user_id="c1")
    report = stage(result, "expand")
    assert report.implementation == "model-free"
    assert report.notes["method"] == "prf" and report.notes["feedback"] >= 1
    assert stage(result, "candidates").notes["lists"] >= 2 or not report.notes["terms"]
    assert all(t not in ("pottery", "class") for t in report.notes["terms"])


def test_feedback_terms_prefer_words_the_documents_share():
    docs = ["clay bowl wheel kiln", "kiln clay glaze", "tent lake"]
    freqs = {"clay": 2, "kiln": 2, "glaze": 1, "bowl": 1, "wheel": 1, "tent": 1, "lake": 1}
    out = feedback_terms(docs, "pottery", freqs, 100, n_terms=3)
    assert [w for w, _ in out][:2] == ["clay", "kiln"] or [w for w, _ in out][:2] == [
        "kiln",
        "clay",
    ]
    assert "tent" not in {w for w, _ in out}  # said by one document only
    assert feedback_terms(docs, "clay kiln", freqs, 100, n_terms=3) == []


def test_expansion_by_engine_without_one_is_a_clear_error(talk):
    with pytest.raises(EngineUnavailableError):
        talk.search("pottery", expand="engine")
    with pytest.raises(EngineUnavailableError):
        talk.search("pottery", rerank="engine")


# -- temporal attention -------------------------------------------------------------------
def test_temporal_attention_favours_memories_that_state_a_time(talk):
    q = "When did Caroline go to the support group?"
    result = talk.search(q, k=12, temporal=True, now=NOW)
    report = stage(result, "temporal")
    assert report.notes["temporal_question"] is True and report.notes["weighted"] >= 1
    by_text = {h.memory.content: h for h in result.hits}
    said_yesterday = next(h for t, h in by_text.items() if "yesterday" in t)
    assert said_yesterday.evidence["time_stated"] == 1.0
    assert said_yesterday.evidence["temporal"] == pytest.approx(1.5)
    assert result.hits[0] is said_yesterday


def test_temporal_closeness_to_the_time_asked(talk):
    result = talk.search("What did Melanie do in June 2023?", k=12, temporal=True, now=NOW)
    report = stage(result, "temporal")
    assert report.notes["asked"] == ["June 2023 = 2023-06-01..2023-06-30"]
    close = {h.memory.metadata["dia_id"]: h.evidence["time_close"] for h in result.hits}
    assert close["D2:5"] == 1.0  # said on 20 June 2023
    assert close["D4:11"] < 0.1  # said in August


def test_temporal_stage_leaves_other_questions_alone(talk):
    off = talk.search("pottery bowl", k=5)
    on = talk.search("pottery bowl", k=5, temporal=True, now=NOW)
    assert stage(on, "temporal").notes["temporal_question"] is False
    assert [h.memory.id for h in on.hits] == [h.memory.id for h in off.hits]


def test_temporal_weights_are_pure():
    assert temporal_factor(temporal=True, states_time=True, close=0, weight=1.5, boost=1) == 1.5
    assert temporal_factor(temporal=False, states_time=True, close=0, weight=1.5, boost=1) == 1
    assert temporal_factor(temporal=True, states_time=False, close=1, weight=1.5, boost=1) == 2
    day = Span(date(2023, 5, 7), date(2023, 5, 7), "7 May 2023", "day")
    week_later = Span(date(2023, 5, 14), date(2023, 5, 14), "x", "day")
    assert closeness([day], [day]) == 1.0
    assert 0 < closeness([day], [week_later]) < 0.2
    assert closeness([day], []) == 0.0


# -- reranking ----------------------------------------------------------------------------
def test_model_free_rerank_reports_and_reorders(talk):
    result = talk.search("What did Melanie make in pottery class?", k=5, rerank="model-free")
    report = stage(result, "rerank")
    assert report.implementation == "model-free" and report.notes["scored"] == len(TURNS)
    assert all("rerank" in h.evidence for h in result.hits)
    scores = [h.score for h in result.hits]
    assert scores == sorted(scores, reverse=True)
    assert result.hits[0].memory.metadata["speaker"] == "Melanie"
    assert "pottery" in result.hits[0].memory.content.lower()


def test_rerank_speaker_evidence_moves_the_named_speaker_up(store_path, open_memory, tmp_path):
    weights = tmp_path / "w.json"
    weights.write_text(json.dumps({"weights": {"speaker": 1.0, "other_speaker": -1.0}}))
    config = Config().with_updates(search={"reranker_weights": str(weights)})
    mem = open_memory(store_path, config=config)
    mem.add_many(
        [{"content": t, "metadata": {"speaker": w}} for _, _, w, t in TURNS], kind="message"
    )
    hits = mem.search("What did Melanie say about it?", k=5, rerank="model-free").hits
    assert {h.memory.metadata["speaker"] for h in hits} == {"Melanie"}
    assert named_speakers("What did Melanie paint?", {"Melanie", "Caroline"}) == {"Melanie"}
    assert named_speakers("What happened?", {"Melanie"}) == set()


def test_linear_reranker_scores_rows():
    model = LinearReranker({"dense": 1.0, "bm25": 2.0})
    got = model.score(np.array([[1.0, 0.0], [0.0, 1.0]]))
    assert got.tolist() == [1.0, 2.0]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "not found"),
        ("{not json", "not readable"),
        ('{"weights": {"shoe_size": 1}}', "unknown features: shoe_size"),
    ],
)
def test_bad_reranker_weights_are_input_errors(tmp_path, content, message):
    path = tmp_path / "weights.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(InputError, match=message):
        load_reranker(str(path))


def test_configured_weights_are_used(store_path, open_memory, tmp_path):
    weights = tmp_path / "w.json"
    weights.write_text(json.dumps({"weights": {"length": 1.0}}))
    mem = open_memory(
        store_path, config=Config().with_updates(search={"reranker_weights": str(weights)})
    )
    mem.add_many(
        [{"content": "pottery"}, {"content": "pottery class with a long and winding story"}],
        kind="note",
    )
    hits = mem.search("pottery classes", k=2, rerank="model-free").hits
    assert hits[0].memory.content.startswith("pottery class")  # the longer one, by weight


# -- the engine paths, through the real llama.cpp runtime (tiny random-weight GGUF) ---------
@pytest.fixture
def llama_talk(store_path, open_memory, tiny_engine):
    config = Config().with_updates(search={"rerank_depth": 4, "rerank_batch": 2})
    mem = open_memory(store_path, engine=tiny_engine, config=config)
    mem.add_many([{"content": f"{w}: {t}"} for _, _, w, t in TURNS[:6]], kind="message")
    return mem


@pytest.mark.slow
def test_engine_expansion_and_rerank_through_llama_cpp(llama_talk):
    result = llama_talk.search("Where did Melanie go camping?", k=5, expand="auto", rerank="auto")
    expand, rerank = stage(result, "expand"), stage(result, "rerank")
    assert expand.implementation.startswith("llama:")
    assert expand.notes["method"] == "rewrites" and expand.notes["tokens"] > 0
    assert 0 <= len(expand.notes["rewrites"]) <= 3
    assert rerank.implementation.startswith("llama:")
    assert rerank.notes == {"scored": 4, "calls": 2, "tokens": rerank.notes["tokens"]}
    scores = [h.evidence.get("rerank") for h in result.hits]
    assert all(0 <= s <= 1 for s in scores[:4] if s is not None)
    assert len(result.hits) == 5


# -- training the model-free reranker (pure) ----------------------------------------------
def test_shipped_weights_load_and_name_known_features():
    from lab.reranker_training import DEFAULT_FEATURES

    model = load_reranker(None)
    assert model.names == DEFAULT_FEATURES


def test_fit_learns_which_feature_marks_evidence_and_holds_conversations_out():
    from lab.reranker_training import (
        Example,
        cross_validate,
        fit,
        heldout_weights,
        rank_metrics,
    )

    rng = np.random.default_rng(0)
    examples = []
    for conv in ("a", "b", "c"):
        for _ in range(20):
            x = rng.normal(size=(30, 2))
            pos = np.zeros(30, dtype=bool)
            pos[rng.choice(30, 2, replace=False)] = True
            x[pos, 0] += 2.0  # feature 0 tells evidence apart; feature 1 is noise
            examples.append(Example(conv, 1, x, pos, 2))
    beta = fit(examples)
    assert beta[0] > 1.0 and abs(beta[1]) < 0.5
    folds = heldout_weights(examples, ["signal", "noise"])
    assert set(folds) == {"a", "b", "c"} and all(w["signal"] > 1.0 for w in folds.values())
    good = rank_metrics(examples, [ex.features @ beta for ex in examples])["overall"]
    noise = rank_metrics(examples, [ex.features[:, 1] for ex in examples])["overall"]
    assert good["R@5"] > noise["R@5"] + 0.3 and good["n"] == 60
    assert cross_validate(examples)["metrics"]["overall"]["R@5"] > noise["R@5"]
    with pytest.raises(ValueError, match="two conversations"):
        heldout_weights([ex for ex in examples if ex.sample_id == "a"], ["signal", "noise"])

    # a question's weight says how much it counts: weight 0 is the same as leaving it out,
    # a weight above 1 pulls the fit towards those questions
    flipped = [Example("d", 1, ex.features[:, ::-1], ex.positive, 2, "x", 0.0) for ex in examples]
    assert np.allclose(fit(examples + flipped), beta)
    for ex in flipped:
        ex.weight = 3.0
    pulled = fit(examples + flipped)
    assert pulled[1] > 1.0 and pulled[0] < beta[0]


def test_a_config_set_after_opening_reaches_the_search(store_path, open_memory, tmp_path):
    """The LoCoMo bench swaps reranker weights on an open store (held-out weights); the
    search must read the new ones (the refactor once left them on a copy nobody read)."""
    from lab.locomo_bench import reranker_weights

    longer, shorter = tmp_path / "long.json", tmp_path / "short.json"
    longer.write_text(json.dumps({"weights": {"length": 1.0}}))
    shorter.write_text(json.dumps({"weights": {"length": -1.0}}))
    mem = open_memory(store_path)
    mem.add_many(
        [{"content": "pottery"}, {"content": "pottery class with a long and winding story"}],
        kind="note",
    )

    def first():
        return mem.search("pottery classes", k=2, rerank="model-free").hits[0].memory.content

    with reranker_weights(mem, str(longer)):
        assert first().startswith("pottery class")
    with reranker_weights(mem, str(shorter)):
        assert first() == "pottery"
    assert mem.kernel.config is mem.config
