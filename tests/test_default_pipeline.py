"""The default pipeline (issue 18): search(q) with no options runs the best measured pipeline
(hybrid, temporal attention, the model-free reranker), every surface uses it, and the features
that need no metadata work on plain text."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from lab import shapes

from localmem.config import Config, SearchConfig
from localmem.retrieval.context import SearchContext
from localmem.retrieval.features import FEATURES, build_pool, feature_matrix, neighbours
from localmem.retrieval.options import SearchOptions
from localmem.retrieval.rerank import load_reranker

NOTES = Path(shapes.DATA) / "notes" / "notes.json"


def _stages(result) -> list[str]:
    return [r.stage for r in result.stages]


def test_search_with_no_options_runs_temporal_and_the_model_free_reranker(memory):
    memory.add_many(["Caroline: I went to the LGBTQ support group yesterday", "Mel: nice!"])
    result = memory.search("What did Caroline go to?")
    assert "temporal" in _stages(result) and "rerank" in _stages(result)
    rerank = next(r for r in result.stages if r.stage == "rerank")
    assert rerank.implementation == "model-free"
    assert result[0].memory.content.startswith("Caroline: I went")
    # each stage can still be switched off per search, and by the store's configuration
    plain = memory.search("What did Caroline go to?", temporal=False, rerank="off")
    assert "temporal" not in _stages(plain) and "rerank" not in _stages(plain)


def test_a_store_configured_without_them_searches_plain_hybrid(open_memory, tmp_path):
    config = Config(search=SearchConfig(temporal=False, rerank="off"))
    with open_memory(tmp_path / "s", config=config) as mem:
        mem.add("the deploy runs on fridays")
        stages = _stages(mem.search("when does the deploy run"))
    assert "rerank" not in stages and "temporal" not in stages
    assert SearchOptions.build(config.search).rerank == "off"
    assert SearchOptions.build(SearchConfig()).rerank == "model-free"


@pytest.mark.parametrize("query", ["LINE0042,  token0042x!", "line0042 token0042x"])
def test_a_near_exact_match_comes_first_with_the_default_pipeline(memory, query):
    memory.add_many([f"line{i:04d} token{i:04d}x alpha beta gamma" for i in range(200)])
    result = memory.search(query, k=3)
    assert result[0].memory.content.startswith("line0042 token0042x"), result.explain()
    assert "exact" in result[0].flags


def _pool(memory, query: str) -> tuple[SearchContext, object]:
    from localmem.retrieval.pipeline import run_stages, start

    ctx = start(memory.kernel, query, k=10)
    run_stages(ctx, memory.stages, until="rerank")
    return ctx, build_pool(ctx, ctx.ranked())


def test_plain_turns_find_their_neighbours_by_time_and_scope(memory):
    first = memory.add_many(
        ["Mel: what did you do at the weekend?", "Caroline: went to a pottery class", "Mel: wow"],
        user_id="a",
    )
    other = memory.add_many(["Jon: the pottery class was full"], user_id="b")
    _, pool = _pool(memory, "pottery class")
    prev, nxt = neighbours(pool)
    by_label = {int(x): (int(p), int(n)) for x, p, n in zip(pool.labels, prev, nxt, strict=True)}
    labels = [memory.get(m.id).label for m in first]
    assert by_label[labels[1]] == (labels[0], labels[2])
    jon = memory.get(other[0].id).label
    assert by_label[jon] == (-1, -1)  # another user's turns are not its neighbours


def test_notes_stored_in_a_row_are_not_each_others_neighbours(memory):
    """Only chat turns (a speaker, or a session) take the memories stored around them as
    context: a note stored next to another note is not its context."""
    notes = memory.add_many(
        ["the pottery class is on Tuesdays", "buy clay for the pottery class", "call the vet"],
        user_id="a",
    )
    _, pool = _pool(memory, "pottery class")
    prev, nxt = neighbours(pool)
    labels = {memory.get(m.id).label for m in notes}
    assert {int(x) for x in pool.labels} & labels
    for x, p, n in zip(pool.labels, prev, nxt, strict=True):
        if int(x) in labels:
            assert (int(p), int(n)) == (-1, -1)


def test_every_shipped_feature_has_a_value_for_every_candidate(memory):
    memory.add_many(["Caroline: I paint sunsets", "Mel: I ran a marathon in June", "a note"])
    _, pool = _pool(memory, "What does Caroline paint?")
    model = load_reranker()
    x = feature_matrix(pool, model.names)
    assert x.shape == (len(pool.labels), len(model.names)) and np.isfinite(x).all()
    assert set(model.names) <= set(FEATURES)


def test_the_shipped_weights_say_what_data_they_came_from():
    data = json.loads(Path(load_reranker().source).read_text(encoding="utf-8"))
    trained = data["trained"]
    assert trained["data"] == "locomo_dev.json" and len(trained["data_sha256"]) == 64
    assert set(trained["shapes"]) == {"locomo", "locomo-plain"}
    assert trained["pipeline"]["temporal"] is True


def test_cli_search_uses_the_default_and_can_switch_stages_off(tmp_path, capsys):
    from localmem.cli import main

    store = str(tmp_path / "cli")
    assert main(["add", "--store", store, "the deploy runs on fridays"]) == 0
    capsys.readouterr()
    assert main(["search", "--store", store, "deploy", "--explain"]) == 0
    out = capsys.readouterr().out
    assert "rerank" in out and "temporal" in out
    assert main(["search", "--store", store, "deploy", "--explain", "--no-temporal"]) == 0
    assert "temporal[" not in capsys.readouterr().out


# -- the shapes bench (pure parts) and the notes set ------------------------------------------
def test_metrics_and_guard():
    rows = [
        shapes.Scored(["a", "b", "c"], {"b"}, "g", 1.0),
        shapes.Scored(["x", "y"], {"z"}, "g", 3.0),
    ]
    m = shapes.metrics(rows)
    assert m["MRR"] == pytest.approx(0.25) and m["R@1"] == 0.0 and m["R@5"] == 0.5
    assert m["MRR@3"] == pytest.approx(0.25) and m["n"] == 2
    results = {
        "main": {"s": "MRR"},
        "results": {
            "s": {
                "dense": {"overall": {"MRR": 0.80}},
                "bm25": {"overall": {"MRR": 0.50}},
                "hybrid": {"overall": {"MRR": 0.70}},
                "default": {"overall": {"MRR": 0.785}},
            }
        },
    }
    assert shapes.guard(results, "default") == ["s: default 0.785 < best baseline 0.800 - 0.01"]
    assert shapes.guard(results, "default", slack=0.02) == []


def test_the_shipped_notes_are_the_generator_output_and_are_hard_for_bm25():
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "make_notes", Path(__file__).parents[1] / "scripts" / "make_notes.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    data = module.build()
    assert data == json.loads(NOTES.read_text(encoding="utf-8"))
    assert len(data["queries"]) >= 200
    from localmem.text import terms

    names = {t for n in module.NAMES for t in terms(n)}
    shared_with_distractor = 0
    for q in data["queries"]:
        query = set(terms(q["query"])) - names
        answer = set(terms(data["notes"][q["relevant"][0]]))
        distractor = set(terms(data["notes"][q["distractor"]]))
        shared_with_distractor += len(query & distractor) > len(query & answer)
    # most queries share more words with their distractor than with their answer
    assert shared_with_distractor >= 0.6 * len(data["queries"])


def test_the_notes_shape_stores_shuffled_and_scores_the_people_it_does_not_train_on():
    data = json.loads(NOTES.read_text(encoding="utf-8"))
    order = shapes.notes_order(len(data["notes"]))
    assert sorted(order) == list(range(len(data["notes"]))) and order == shapes.notes_order(480)
    position = {n: i for i, n in enumerate(order)}
    # an answer is no longer stored right next to its distractor (the file's layout)
    beside = sum(
        abs(position[q["relevant"][0]] - position[q["distractor"]]) == 1 for q in data["queries"]
    )
    assert beside < 0.05 * len(data["queries"])
    train, held_out = shapes.notes_split(data["queries"])
    assert not train & held_out and len(train) == len(held_out) == 15
    assert {q["person"] for q in data["queries"]} == train | held_out


def test_near_exact_means_every_word_of_a_longer_query_in_any_order(memory):
    from localmem.retrieval.exact import is_exact
    from localmem.text import words

    text = words("The rate limiter should use a sliding window, not fixed buckets.")
    assert is_exact(text, words("sliding window rate limiter"))
    assert not is_exact(text, words("window sliding"))  # two words: in order only
    assert not is_exact(text, words("sliding window token limiter"))  # a word it lacks
    memory.add_many(
        [
            "Clients hammer /search during business hours; we need per-client rate limits.",
            "The rate limiter should use a sliding window, not fixed buckets.",
            "Fixed one-minute buckets let a client send twice the limit at the boundary.",
        ]
    )
    top = memory.search("sliding window rate limiter", k=3)[0]
    assert top.memory.content.startswith("The rate limiter") and "exact" in top.flags
