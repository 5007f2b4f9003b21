"""`localmem bench locomo` on a tiny LoCoMo-shaped file built here (never the real data).

Two conversations in the public layout, with the dataset's quirks: a turn with no text, a photo
shared with a caption only, a question with no evidence, an adversarial question, an evidence
string holding two ids. The real MiniLM (the shared fixture) embeds everything.
"""

from __future__ import annotations

import json

import pytest
from experiment import main
from lab.answers import bleu1, f1_score, is_refusal
from lab.locomo import load_locomo, split_evidence

SESSIONS = {
    "conv-a": (
        ("Ann", "Bob"),
        [
            (
                "1:56 pm on 8 May, 2023",
                [
                    ("Ann", "I adopted a golden retriever puppy named Max yesterday!"),
                    ("Bob", "Congrats! How is Max settling in?"),
                    ("Ann", "He chews every shoe in the house."),
                    ("Bob", ""),  # a turn with no text
                ],
            ),
            (
                "10:00 am on 2 June, 2023",
                [
                    ("Bob", "I ran my first marathon in Boston last Sunday."),
                    ("Ann", "Amazing, what was your time?"),
                    ("Bob", "Four hours and ten minutes, my knees hurt."),
                    ("Ann", "", "a photo of a dog on a beach"),  # caption only
                ],
            ),
        ],
        [
            ("What is the name of Ann's puppy?", "Max", ["D1:1"], 4),
            ("When did Ann adopt the puppy?", "7 May 2023", ["D1:1"], 2),
            ("Where did Bob run a marathon and how did it go?", "Boston", ["D2:1; D2:3"], 1),
            ("What does Max chew?", "shoes", [], 4),  # no evidence: skipped, counted
            ("What is Bob's cat called?", None, ["D2:1"], 5),
        ],
    ),
    "conv-b": (
        ("Cleo", "Dan"),
        [
            (
                "9:00 am on 1 March, 2023",
                [
                    ("Cleo", "I started learning the cello in January."),
                    ("Dan", "I am repainting my kitchen blue this weekend."),
                    ("Cleo", "My cello teacher says my bowing improved."),
                ],
            ),
            (
                "6:30 pm on 20 March, 2023",
                [
                    ("Dan", "The kitchen is finally blue, it took two days."),
                    ("Cleo", "I played my first cello recital yesterday."),
                ],
            ),
        ],
        [
            ("What instrument does Cleo play?", "cello", ["D1:1"], 4),
            ("What colour did Dan paint his kitchen?", "blue", ["D1:2", "D2:1"], 1),
            ("When was Cleo's first recital?", "19 March 2023", ["D2:2"], 2),
        ],
    ),
}


def locomo_sample(sample_id, speakers, sessions, questions):
    conv = {"speaker_a": speakers[0], "speaker_b": speakers[1]}
    for s, (when, turns) in enumerate(sessions, start=1):
        conv[f"session_{s}_date_time"] = when
        rows = []
        for t, turn in enumerate(turns, start=1):
            row = {"speaker": turn[0], "dia_id": f"D{s}:{t}", "text": turn[1]}
            if len(turn) > 2:
                row["blip_caption"] = turn[2]
            rows.append(row)
        conv[f"session_{s}"] = rows
    qa = []
    for q, a, ev, cat in questions:
        item = {"question": q, "evidence": ev, "category": cat}
        item["answer" if cat != 5 else "adversarial_answer"] = a or "Tom"
        qa.append(item)
    # the dataset's own annotations: retrieval must never read them
    notes = {"session_1": ["SECRET ANNOTATION"]}
    return {
        "sample_id": sample_id,
        "conversation": conv,
        "qa": qa,
        "event_summary": notes,
        "observation": notes,
        "session_summary": notes,
    }


@pytest.fixture
def locomo_file(tmp_path):
    data = [locomo_sample(sid, *rest) for sid, rest in SESSIONS.items()]
    path = tmp_path / "tiny_locomo.json"
    path.write_text(json.dumps(data))
    return path


@pytest.fixture
def shared_embedder(monkeypatch, embedder):
    """The CLI opens its own store: give it the session's MiniLM instead of loading another."""
    import localmem.memory

    monkeypatch.setattr(localmem.memory, "make_embedder", lambda *a, **kw: embedder)
    return embedder


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_loader_reads_turns_captions_and_quirks(locomo_file):
    a, b = load_locomo(locomo_file)
    assert a.sample_id == "conv-a" and a.speakers == ("Ann", "Bob")
    assert a.skipped == {"turn without text": 1}
    assert [t.dia_id for t in a.turns][-1] == "D2:4"
    assert a.turns[-1].content == "Ann: [shares a photo: a photo of a dog on a beach]"
    assert a.turns[0].when.isoformat().startswith("2023-05-08T13:56")
    assert a.questions[2].evidence == ("D2:1", "D2:3")
    assert len(b.turns) == 5 and not b.skipped
    assert all("SECRET" not in t.content for t in a.turns + b.turns)
    assert split_evidence(["D1:2 ", "D3:4;D5:6", "junk"]) == ("D1:2", "D3:4", "D5:6")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"not": "a list"}', "expected a list of samples"),
        ("[1, 2]", "no 'conversation' object"),
        ("not json at all", "is not a JSON file"),
    ],
)
def test_not_locomo_is_one_line_and_exit_1(capsys, tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    code, out, err = run(capsys, "locomo", path, "--store", tmp_path / "s")
    assert code == 1 and out == ""
    assert message in err and len(err.strip().splitlines()) == 1


def test_a_broken_sample_is_skipped_and_counted(tmp_path, locomo_file):
    data = json.loads(locomo_file.read_text())
    data[0]["qa"].append({"question": "Odd?", "answer": "x", "evidence": [], "category": "9"})
    data.append({"sample_id": "junk", "conversation": {"speaker_a": "X"}})
    data.append({"sample_id": "junk2", "conversation": {"session_1": 5}, "qa": [{"x": 1}]})
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps(data))
    convs = load_locomo(path)
    assert [c.sample_id for c in convs] == ["conv-a", "conv-b"]
    assert convs[0].skipped["sample not LoCoMo-shaped"] == 2
    assert convs[0].skipped["question without a known category"] == 1
    assert "no turns" in convs[0].problems[0]


@pytest.mark.slow
def test_bench_compares_configs_and_writes_json_plot_and_docs(
    capsys, tmp_path, locomo_file, shared_embedder
):
    out_dir, docs = tmp_path / "out", tmp_path / "bench.md"
    docs.write_text("# Benchmarks\n")
    code, out, err = run(
        capsys,
        "locomo",
        locomo_file,
        "--store",
        tmp_path / "store",
        "--configs",
        "dense",
        "bm25",
        "hybrid",
        "+rerank",
        "everything",
        "--heldout-reranker",
        "--budget-tokens",
        "60",
        "--answers",
        "--answer-config",
        "hybrid",
        "--out",
        out_dir,
        "--docs",
        docs,
    )
    assert code == 0, err
    assert "conv-a: skipped 1 x turn without text" in err
    assert "conv-a: skipped 1 x question without evidence" in err
    data = json.loads((out_dir / "locomo.json").read_text())
    assert list(data["summaries"]) == ["dense", "bm25", "hybrid", "+rerank", "everything"]
    assert data["totals"]["questions"] == 6  # categories 1-4 with evidence
    assert data["totals"]["skipped"] == {"turn without text": 1, "question without evidence": 1}
    assert data["reranker"].startswith("held out")
    overall = data["summaries"]["hybrid"]["overall"]
    for key in ("R@1", "R@5", "R@10", "R@20", "hit@1", "hit@10", "MRR", "p95_ms"):
        assert 0 <= overall[key] <= (1 if not key.endswith("ms") else 1e6)
    assert set(data["summaries"]["hybrid"]) == {"1", "2", "4", "overall"}
    # six turns or fewer per conversation: everything is found by rank 20
    assert overall["R@20"] == 1.0
    assert data["summaries"]["everything"]["overall"]["tokens_mean"] <= 60 + 40
    stages = data["summaries"]["everything"]["overall"]["stage_p50_ms"]
    assert {"expand", "filter", "candidates", "temporal", "rerank", "pack"} <= set(stages)
    assert (out_dir / "locomo.png").read_bytes()[:4] == b"\x89PNG"
    text = docs.read_text()
    assert "<!-- BEGIN locomo -->" in text and "python scripts/experiment.py locomo" in text
    assert "| everything |" in text and "1 multi-hop" in text
    assert "| everything |" in out
    # model-free answers, labelled as such; category 5 apart as refusals
    assert "### Answers (model-free" in out and "correct refusals" in out
    assert data["answers"]["summary"]["5"]["n"] == 1


def test_heldout_needs_two_conversations(capsys, tmp_path, locomo_file, shared_embedder):
    code, _, err = run(
        capsys,
        "locomo",
        locomo_file,
        "--store",
        tmp_path / "store",
        "--conversations",
        "conv-a",
        "--configs",
        "+rerank",
        "--heldout-reranker",
    )
    assert code == 1 and "at least two conversations" in err


def test_answer_metrics():
    assert f1_score("Max the dog", "Max") == pytest.approx(2 * (1 / 2) * 1 / (1 / 2 + 1))
    assert f1_score("", "") == 1.0 and f1_score("x", "") == 0.0
    assert bleu1("Boston", "Boston") == 1.0
    assert 0 < bleu1("Boston", "in Boston marathon") < 1  # brevity penalty
    assert is_refusal("That is not mentioned in the conversation")
    assert not is_refusal("Max")


@pytest.mark.slow
def test_answers_with_a_gguf_go_through_llama_cpp(
    capsys, tmp_path, locomo_file, tiny_gguf, shared_embedder
):
    """Plumbing only: the tiny random-weight model's answers are noise, never results."""
    code, out, err = run(
        capsys,
        "locomo",
        locomo_file,
        "--store",
        tmp_path / "store",
        "--conversations",
        "conv-b",
        "--configs",
        "hybrid",
        "--answer-config",
        "hybrid",
        "--limit",
        "1",
        "--model",
        tiny_gguf,
        "--n-ctx",
        "8192",
        "--out",
        tmp_path / "out",
    )
    assert code == 0, err
    data = json.loads((tmp_path / "out" / "locomo.json").read_text())
    answers = data["answers"]
    assert answers["served_by"] and answers["served_by"][0].startswith("llama:")
    assert answers["summary"]["overall"]["n"] == 1
    assert "### Answers (llama:" in out


def test_the_old_commands_say_where_the_lab_went(capsys):
    """`localmem experiment` and `localmem bench` left the product: one line says where."""
    from localmem.cli import main as localmem_main

    for command in (["experiment", "amem"], ["bench", "locomo", "x.json"]):
        assert localmem_main(command) == 1
        err = capsys.readouterr().err
        assert "python scripts/experiment.py NAME" in err and len(err.splitlines()) == 1
