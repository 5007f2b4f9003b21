"""`localmem experiment amem`: shipped sessions, metrics, the runner, LoCoMo and the command."""

from __future__ import annotations

import json

import pytest
from experiment import main
from lab import amem, amem_report
from lab.amem import LabelledQuery, pair_found, relevance_at, surfaced

from localmem import InputError, Memory


def test_shipped_sessions_are_valid_and_long_enough():
    sessions = amem.shipped_sessions()
    assert sessions[0].name == "quick" and sessions[0].insight == len(sessions[0].thoughts)
    longer = [s for s in sessions if s.protocol == "session"]
    assert len(longer) >= 3 and all(len(s.thoughts) >= 20 for s in longer)
    assert all(sum(q.needs is not None for q in s.queries) >= 3 for s in longer)
    with pytest.raises(InputError, match="unknown session"):
        amem.shipped_sessions(["nope"])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["queries"][0]["relevance"].update({"99": 5}), "does not exist"),
        (lambda d: d["queries"][0]["relevance"].update({"1": 7}), "outside 1-5"),
        (lambda d: d.pop("thoughts"), "thoughts"),
        (lambda d: d.update(protocol="other"), "unknown protocol"),
    ],
)
def test_bad_session_files_are_input_errors(change, message):
    data = {
        "name": "x",
        "title": "x",
        "thoughts": ["a", "b"],
        "queries": [{"query": "q", "relevance": {"1": 5}}],
    }
    change(data)
    with pytest.raises(InputError, match=message):
        amem.parse_session(data, "x.json")


def test_metrics():
    q = LabelledQuery("q", {1: 5, 2: 4, 3: 2}, (1, 3))
    assert relevance_at([1, 2, 9], q) == pytest.approx((5 + 4 + 1) / 3)
    assert relevance_at([1], q) == pytest.approx((5 + 1 + 1) / 3)  # missing hits count 1
    assert surfaced([2, 1, 7], [1, 5, 6], q) == [2]
    assert pair_found([3, 8, 1], (1, 3), 3) and not pair_found([3, 8, 1], (1, 3), 2)


def test_quick_protocol_end_to_end(tmp_path, embedder):
    def make_memory(path, **evolution):
        return Memory.open(path, embedder=embedder)

    quick = amem.shipped_sessions(["quick"])[0]
    run = amem.run_session(make_memory, quick, tmp_path, k=5)
    assert set(run.conditions) == {"baseline", "evolved", "evolved+links"}
    assert run.evolved_adds == 1 and run.served_by == ["model-free"] and run.model_tokens == 0
    assert all(r and r[0] == 6 for r in run.conditions["baseline"].ranked)  # the insight first
    summary = amem_report.summarize_session(run, k=5)
    ev = summary["evolution"]
    assert sum(ev["steps"].values()) == 3 and 0 <= ev["updated_share"] <= 1
    rows = amem_report.criteria([summary])
    assert {r["result"] for r in rows} <= {"PASS", "FAIL"} and len(rows) == 4
    token_row = next(r for r in rows if "Token" in r["criterion"])
    assert token_row["result"] == "PASS" and "model-free" in token_row["evidence"]
    text = amem_report.sessions_markdown([summary], k=5)
    assert "| quick | evolved |" in text


def _tiny_locomo(path):
    turns = [
        ("Caroline", "I adopted a puppy named Biscuit last week."),
        ("Melanie", "Biscuit sounds adorable! What breed is Biscuit?"),
        ("Caroline", "Biscuit is a beagle, and he loves the park by the lake."),
        ("Melanie", "I started pottery classes on Tuesdays."),
        ("Caroline", "We walk Biscuit around the lake park every morning."),
        ("Melanie", "My pottery teacher showed me how to glaze bowls."),
    ]
    session = [{"speaker": s, "dia_id": f"D1:{i}", "text": t} for i, (s, t) in enumerate(turns, 1)]
    data = [
        {
            "sample_id": "tiny-1",
            "conversation": {
                "speaker_a": "Caroline",
                "speaker_b": "Melanie",
                "session_1": session,
                "session_1_date_time": "1:56 pm on 8 May, 2023",
            },
            "qa": [
                {
                    "question": "What breed is Caroline's dog?",
                    "answer": "beagle",
                    "evidence": ["D1:3"],
                    "category": 4,
                },
                {
                    "question": "Where does Caroline walk her puppy?",
                    "answer": "lake park",
                    "evidence": ["D1:1", "D1:5"],
                    "category": 1,
                },
            ],
        }
    ]
    path.write_text(json.dumps(data))
    return path


@pytest.mark.slow
def test_locomo_part_on_a_tiny_conversation(tmp_path, embedder):
    from lab.amem_locomo import CONFIGS, run_locomo

    from localmem.config import Config

    def make_memory(path, **evolution):
        config = Config().with_updates(evolution=evolution) if evolution else Config()
        return Memory.open(path, config=config, embedder=embedder)

    result = run_locomo(_tiny_locomo(tmp_path / "tiny.json"), make_memory, tmp_path / "w", k=5)
    assert set(result["summaries"]) == set(CONFIGS) and result["questions"] == 2
    costs = result["evolution"]
    assert set(costs) == {"tiny-1/evolved", "tiny-1/links-only"}
    assert costs["tiny-1/evolved"]["memories"] == 6
    assert "updated" not in costs["tiny-1/links-only"]["steps"]  # links only: no context rewrites
    for summary in result["summaries"].values():
        assert 0.0 <= summary["overall"]["R@5"] <= 1.0


@pytest.mark.slow
def test_the_command_runs_and_writes_its_files(tmp_path, capsys):
    out = tmp_path / "docs"
    code = main(["amem", "--session", "quick", "--model-free", "--out", str(out), "-k", "3"])
    assert code == 0
    text = (out / "amem.md").read_text()
    assert "<!-- BEGIN amem-sessions -->" in text and "| quick | baseline |" in text
    assert "command: `localmem experiment amem --session quick -k 3 --model-free`" in text
    data = json.loads((out / "amem.json").read_text())
    assert data["sessions"]["runs"][0]["session"] == "quick" and data["criteria"]
    assert main(["amem", "--no-sessions"]) == 1
    assert "nothing to run" in capsys.readouterr().err
