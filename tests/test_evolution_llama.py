"""Evolution through the real llama.cpp runtime on the tiny random-weight GGUF (plumbing only:
the tiny model's decisions are noise, so these tests check what is recorded, not what it says)."""

from __future__ import annotations

import pytest

from localmem import Config
from localmem import evolution as evo
from localmem.evolution import steps
from localmem.llm import get_task
from localmem.llm.tasks import max_output_bytes

THOUGHTS = [
    "Our public API needs rate limiting: a few clients send bursts that slow everyone down.",
    "Current rate limiter: a counter per client that resets at the top of every minute.",
    "Clients that time retries to the reset can send twice the limit across a minute boundary.",
]
NEW = "The rate limiter should use a sliding window, not fixed buckets."


def _config(**evolution) -> Config:
    spec = get_task("evolution")
    room = max_output_bytes("evolution", spec.example()) + 16  # a byte-level model's worst case
    return Config().with_updates(
        evolution={"max_output_tokens": room, "min_similarity": 0.0, **evolution}
    )


def test_evolution_runs_on_llama_cpp(store_path, open_memory, tiny_engine):
    mem = open_memory(store_path, config=_config(max_tokens_per_add=100_000), engine=tiny_engine)
    mem.add_many(THOUGHTS)
    new = mem.add(NEW, evolve=True)
    done = steps.steps_of(mem.store.db, new.id)
    assert len(done) == 3
    for s in done:
        assert s.status in (steps.UPDATED, steps.LINKED, steps.UNCHANGED)
        assert s.served_by == "llama:tiny" and s.prompt_tokens > 0 and s.completion_tokens > 0
        evolves = [e for e in mem.history(s.neighbour) if e.event == "EVOLVE"]
        assert len(evolves) == (1 if s.status == steps.UPDATED else 0)
        if evolves:
            assert evolves[0].info["served_by"] == "llama:tiny"
            assert mem.get(s.neighbour).context == evolves[0].new_value
    linked = {x.other for x in evo.links(mem, new.id)}
    assert linked == {s.neighbour for s in done if s.status in (steps.UPDATED, steps.LINKED)}


def test_token_budget_per_add_is_kept(store_path, open_memory, tiny_engine):
    spec = get_task("evolution")
    one_step = tiny_engine.count_prompt_tokens(spec.build_prompt(spec.example()))
    config = _config(max_tokens_per_add=0)
    cap = int(1.5 * (one_step + config.evolution.max_output_tokens))  # room for one step, not two
    mem = open_memory(store_path, config=_config(max_tokens_per_add=cap), engine=tiny_engine)
    mem.add_many(THOUGHTS)
    new = mem.add(NEW, evolve=True)
    done = steps.steps_of(mem.store.db, new.id)
    statuses = [s.status for s in done]
    assert statuses[0] != steps.OVER_BUDGET and steps.OVER_BUDGET in statuses, statuses
    assert sum(s.tokens for s in done) <= cap
    skipped = next(s for s in done if s.status == steps.OVER_BUDGET)
    assert skipped.tokens == 0 and str(cap) in skipped.reason


def test_experiment_judge_runs_on_llama_cpp(tiny_engine):
    from lab.amem import make_judge

    scores = make_judge(tiny_engine)("sliding window", THOUGHTS[:2])
    assert len(scores) == 2 and all(1.0 <= s <= 5.0 for s in scores)


@pytest.mark.slow
def test_experiment_with_the_tiny_model_writes_nothing(tmp_path, tiny_gguf, capsys):
    from experiment import main

    out = tmp_path / "docs"
    code = main(
        [
            "amem", "--session", "quick", "--model", str(tiny_gguf),
            "--n-ctx", "16384", "--max-output-tokens", "1200",
            "--max-tokens-per-add", "100000", "--out", str(out),
        ]
    )  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0 and not out.exists()
    assert "only proves the plumbing" in captured.err
    assert "llama:tiny" in captured.out  # the judge and evolution ran on llama.cpp
