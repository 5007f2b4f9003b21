"""Abstraction, reflection and the memp agent loop through the real llama.cpp runtime.

The model is the tiny random-weight test GGUF: its JSON is valid but its text is noise. So the
tests check the plumbing and the guards: whatever it answers is either stored as a procedure
served by llama.cpp, or rejected with nothing stored; never half of each.
"""

from __future__ import annotations

import json

import pytest

from localmem import Config
from localmem.errors import SchemaError

THOUGHTS = [
    "Reproduce with a request that has user=null: 500 confirmed.",
    "Add a null check and return 400 with a clear message.",
    "Write a regression test for the null user; it passes.",
]


@pytest.fixture
def llama_memory(store_path, open_memory, tiny_engine):
    config = Config().with_updates(procedures={"max_tokens": 2048})
    return open_memory(store_path, engine=tiny_engine, config=config)


def test_abstraction_goes_through_llama_cpp(llama_memory):
    mem = llama_memory
    s = mem.start_session("Debug: API returns 500 error when user field is null")
    for t in THOUGHTS:
        mem.add_thought(s.id, t)
    before = mem.count()
    try:
        done = mem.complete_session(s.id, "success", abstract=True)
    except SchemaError as exc:  # noise without two usable steps: rejected, nothing stored
        assert "llama:" in str(exc) and "nothing was stored" in str(exc)
        assert mem.get_session(s.id).status == "open"
        assert mem.procedures.list(status=None) == [] and mem.count() == before
    else:
        proc = mem.procedures.get(done.metadata["procedure_id"])
        assert proc.served_by.startswith("llama:") and 2 <= len(proc.steps) <= 8
        assert mem.count() == before + 1
        assert mem.procedures.history(proc.id)[0].info["tokens"] > 0


def test_reflection_goes_through_llama_cpp(llama_memory):
    mem = llama_memory
    proc = mem.procedures.add(
        "An API endpoint fails with a 500 error on a missing field",
        ["Reproduce the error", "Read the stack trace", "Validate the input"],
        task_type="debugging",
    )
    trace = ["Reproduced it.", "The error came from the middleware, not the handler."]
    try:
        result = mem.procedures.record(proc.id, False, trace, task="Debug: email missing")
    except SchemaError as exc:  # an unusable revision: the use is not recorded either
        assert "llama:" in str(exc) and "not recorded" in str(exc)
        after = mem.procedures.get(proc.id)
        assert after.use_count == 0 and after.version == 1
        assert [e.event for e in mem.procedures.history(proc.id)] == ["CREATE"]
    else:
        assert result.revised and result.served_by.startswith("llama:")
        assert result.procedure.version == 2 and len(mem.procedures.versions(proc.id)) == 2
    # without a trace or a note there is nothing to reflect on: model-free, never the engine
    plain = mem.procedures.record(proc.id, False)
    assert plain.served_by == "model-free" and plain.revised


@pytest.mark.slow
def test_memp_plumbing_run_with_the_tiny_gguf(capsys, tmp_path, tiny_gguf, monkeypatch, embedder):
    from experiment import main

    monkeypatch.setattr("localmem.memory.make_embedder", lambda config=None: embedder)
    out_md = tmp_path / "memp.md"
    code = main(
        [
            "memp",
            "--model",
            str(tiny_gguf),
            "--pairs",
            "null-field",
            "--levels",
            "hybrid",
            "--abstraction",
            "model-free",
            "--max-steps",
            "2",
            "--thought-chars",
            "40",
            "--answer-chars",
            "80",
            "--max-tokens",
            "600",
            "--out",
            str(out_md),
        ]
    )
    _, err = capsys.readouterr()
    assert code == 0, err
    text = out_md.read_text()
    assert text.count("**PLUMBING RUN.**") == 2  # at the top and over the agent numbers
    data = json.loads(out_md.with_suffix(".json").read_text())
    assert data["plumbing"] and data["engine"].startswith("llama:")
    runs = data["agent"]["runs"]
    conditions = [r["condition"] for r in runs]
    assert conditions[:3] == ["baseline", "hybrid", "retrieved"]
    assert all(r["engine"].startswith("llama:") and r["tokens"] > 0 for r in runs)
    assert all(1 <= r["steps"] <= 2 for r in runs if not r["error"])
    baseline, hybrid = runs[0], runs[1]
    assert not baseline["injected"] and hybrid["injected"]
    assert hybrid["prompt_tokens"] > baseline["prompt_tokens"]  # the procedure is in the prompt
    # a noise answer fails the rule, so the reflection variation runs on a revised copy
    if not hybrid["success"]:
        assert conditions[-1] == "reflected" and runs[-1]["version"] == 2
