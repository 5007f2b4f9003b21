"""`localmem session` and `localmem procedures` from the command line, and the memp experiment
without a model (retrieval only)."""

from __future__ import annotations

import json

import pytest
from experiment import main as experiment_main

from localmem.cli import main


@pytest.fixture(autouse=True)
def shared_embedder(monkeypatch, embedder):
    """The CLI opens its own stores; give them the session's MiniLM instead of loading it again."""
    monkeypatch.setattr("localmem.memory.make_embedder", lambda config=None: embedder)


@pytest.fixture
def store(tmp_path):
    return str(tmp_path / "cli-store")


def run(capsys, *args):
    # "experiment" is the lab's command (scripts/experiment.py)
    code = experiment_main(list(args[1:])) if args[0] == "experiment" else main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_session_to_procedure_and_back(capsys, store):
    s = ["--store", store]
    code, out, _ = run(capsys, "session", "start", "Debug: API returns 500 when user is null", *s)
    sid = out.strip()
    assert code == 0 and sid.startswith("s_")
    for thought in (
        "Reproduce with a request that has user=null.",
        "Add a null check and return 400.",
        "Write a regression test for the null user.",
    ):
        code, out, _ = run(capsys, "session", "thought", sid, thought, *s)
        assert code == 0
    code, out, _ = run(capsys, "session", "complete", sid, "--abstract", "--json", *s)
    data = json.loads(out)
    pid = data["procedure"]["id"]
    assert data["session"]["status"] == "completed" and data["procedure"]["level"] == "hybrid"
    code, out, _ = run(capsys, "procedures", "list", *s)
    assert pid in out and "debugging" in out and "unused" in out
    code, out, _ = run(
        capsys, "procedures", "find", "Debug: API returns 500 when email is missing", *s
    )
    assert pid in out and "type match" in out
    code, out, _ = run(capsys, "procedures", "find", "Plan the office party", *s)
    assert "no procedure reaches the threshold 0.70" in out
    code, out, _ = run(capsys, "procedures", "show", pid[:6], "--render", *s)
    assert out.startswith("You have a procedure") and "1. Reproduce" in out
    code, out, _ = run(
        capsys, "procedures", "record", pid, "--failure", "--note", "wrong layer", *s
    )
    assert "revised to version 2 by model-free" in out
    code, out, _ = run(capsys, "procedures", "retire", pid, *s)
    assert code == 0 and f"retired {pid}" in out
    code, out, _ = run(capsys, "procedures", "list", "--status", "retired", *s)
    assert pid in out and "[retired]" in out
    code, out, _ = run(capsys, "procedures", "restore", pid, *s)
    assert f"restored {pid}" in out
    code, out, _ = run(capsys, "procedures", "show", pid, *s)
    assert "version 2" in out and "caution: wrong layer" in out and "RESTORE" in out
    # the trigger memory names its procedure in `localmem show`
    trigger = json.loads(run(capsys, "procedures", "show", pid, "--json", *s)[1])
    code, out, _ = run(capsys, "show", trigger["procedure"]["memory_id"], *s)
    assert f"procedure: {pid}" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["procedures", "show", "p_nope"], "no procedure"),
        (["procedures", "find", "  "], "task is empty"),
        (["procedures", "record", "p_nope", "--success"], "no procedure"),
        (["session", "complete", "s_nope", "--abstract"], "no session"),
    ],
)
def test_errors_are_one_line(capsys, store, args, message):
    main(["session", "start", "something", "--store", store])
    capsys.readouterr()
    code, _, err = run(capsys, *args, "--store", store)
    assert code == 1 and message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_abstracting_an_empty_session_is_refused(capsys, store):
    sid = run(capsys, "session", "start", "Debug: nothing yet", "--store", store)[1].strip()
    code, _, err = run(capsys, "session", "complete", sid, "--abstract", "--store", store)
    assert code == 1 and "has no thoughts" in err
    code, out, _ = run(capsys, "session", "show", sid, "--store", store)
    assert "(open)" in out


def test_memp_without_a_model_measures_retrieval_only(capsys, tmp_path):
    out_md = tmp_path / "memp.md"
    code, _, err = run(
        capsys,
        "experiment",
        "memp",
        "--pairs",
        "null-field",
        "rate-limiter",
        "--levels",
        "hybrid",
        "--out",
        str(out_md),
    )
    assert code == 0, err
    text = out_md.read_text()
    assert "engine (agent, abstraction, reflection): none (model-free only)" in text
    assert "Not measured: no model" in text and "PLUMBING" not in text
    data = json.loads(out_md.with_suffix(".json").read_text())
    assert data["agent"] is None and data["engine"] is None
    rows = {r["pair"]: r for r in data["retrieval"]["per_pair"]}
    assert rows["null-field"]["rank"] == 1 and rows["rate-limiter"]["rank"] == 1
    assert {p["served_by"] for p in data["procedures"]} == {"model-free"}
    code, _, err = run(capsys, "experiment", "memp", "--pairs", "nope", "--out", str(out_md))
    assert code == 1 and "unknown task pair" in err
