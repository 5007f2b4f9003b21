"""`localmem experiment rag` on a small agentmemory-shaped folder the test writes itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from experiment import main
from lab.agentmemory import (
    Span,
    hit_rate,
    load_corpus,
    load_published_chunks,
    reciprocal_rank,
    relevant_by_overlap,
)
from lab.rag_experiment import QuestionRun, summarize

from localmem.errors import InputError

ARTICLES = {
    "Blood Falls": (
        "Blood Falls is an outflow of iron-rich saltwater from Taylor Glacier in Antarctica. "
        "The water turns red because the iron oxidises when it meets the air.\n\n"
        "Microbes live in the brine below the glacier without light or oxygen. They breathe "
        "iron and sulfate instead."
    ),
    "Lake Nyos": (
        "Lake Nyos is a crater lake in Cameroon, high on the flank of an inactive volcano.\n\n"
        "In 1986 a limnic eruption released a cloud of carbon dioxide that suffocated people "
        "and livestock in nearby villages. Degassing pipes now vent the gas slowly."
    ),
}
QUESTIONS = [
    ("Why is the water of Blood Falls red?", "Iron in the brine oxidises in air.", "Blood Falls"),
    ("What happened at Lake Nyos in 1986?", "A carbon dioxide cloud killed people.", "Lake Nyos"),
]


def _published_chunks(text: str) -> list[str]:
    return [p for p in text.split("\n\n") if p.strip()]


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """A tiny folder laid out like the agentmemory data (corpus, questions, chunks, results)."""
    folder = tmp_path / "agentmemory"
    (folder / "corpus").mkdir(parents=True)
    for title, text in ARTICLES.items():
        (folder / "corpus" / f"{title.replace(' ', '_')}.json").write_text(
            json.dumps({"title": title, "url": "", "content": text})
        )
    gold: dict[str, dict[str, list[str]]] = {q: {} for q, _, _ in QUESTIONS}
    for chunking in ("fixed_256", "fixed_1024", "recursive_512"):
        lines, n = [], 0
        for title, text in ARTICLES.items():
            for i, piece in enumerate(_published_chunks(text)):
                lines.append(json.dumps({"id": f"chunk_{n}", "title": title, "text": piece}))
                for q, _, gold_title in QUESTIONS:
                    if gold_title == title and i == (0 if "red" in q else 1):
                        gold[q][chunking] = [f"chunk_{n}"]
                n += 1
        (folder / f"chunks_{chunking}.jsonl").write_text("\n".join(lines) + "\n")
    (folder / "evaluation_dataset.json").write_text(
        json.dumps(
            [
                {
                    "question": q,
                    "reference_answer": a,
                    "gold_articles": [t],
                    "gold_chunk_ids": gold[q],
                }
                for q, a, t in QUESTIONS
            ]
        )
    )
    metrics = {
        "retrieval": {"hit_rate_mean": 0.5, "mrr_mean": 0.5},
        "answer_quality": {"semantic_similarity_mean": 0.8},
        "latency": {"p50": 5.0, "p95": 9.0},
        "cost": {"tokens_in_total": 100, "tokens_out_total": 10, "estimated_total_usd": 0.1},
    }
    names = [
        "exp_a_small_fixed",
        "exp_a_large_fixed",
        "exp_b_small_fixed",
        "exp_b_recursive",
        "exp_c_small",
        "exp_c_large",
        "exp_d_stm_only",
        "exp_d_stm_ltm",
    ]
    (folder / "published_results.json").write_text(
        json.dumps(
            [
                {
                    "config_name": n,
                    "embedding_config": {"model": "text-embedding-3-small"},
                    "aggregated_metrics": metrics,
                }
                for n in names
            ]
        )
    )
    return folder


@pytest.fixture
def shared_minilm(embedder, monkeypatch):
    """The CLI loads MiniLM itself; hand it the session's already loaded one (the same model)."""
    import localmem.embed

    monkeypatch.setattr(localmem.embed, "make_embedder", lambda config=None: embedder)
    return embedder


def test_relevance_and_metrics_are_pure() -> None:
    gold = [Span("A", 100, 200)]
    assert relevant_by_overlap(Span("A", 120, 180), gold)  # inside the gold chunk
    assert relevant_by_overlap(Span("A", 50, 1000), gold)  # holds the whole gold chunk
    assert not relevant_by_overlap(Span("A", 180, 400), gold)  # shares 20 of 100
    assert not relevant_by_overlap(Span("B", 100, 200), gold)  # another article
    flags = [False, True, False]
    assert hit_rate(flags, 3) == 1.0 and hit_rate(flags, 1) == 0.0
    assert reciprocal_rank(flags, 3) == 0.5 and reciprocal_rank(flags, 1) == 0.0
    runs = [
        QuestionRun("q1", [], 1.0, 1.0, 1.0, seconds=1.0),
        QuestionRun("q2", [], 0.0, 0.0, 1.0, seconds=3.0),
    ]
    s = summarize(runs)
    assert s["hit_rate"] == 0.5 and s["mrr"] == 0.5 and s["latency_p50_s"] == 2.0
    assert s["similarity"] is None and s["tokens_in_total"] is None  # nothing was answered


def test_published_chunks_are_located(data: Path) -> None:
    articles = load_corpus(data)
    chunks = load_published_chunks(data, "fixed_256", articles)
    by_title = {a.title: a.content for a in articles}
    for c in chunks:
        assert by_title[c.title][c.span.start : c.span.end] == c.text
    with pytest.raises(InputError, match="missing"):
        load_published_chunks(data, "semantic_64", articles)
    with pytest.raises(InputError, match="agentmemory"):
        load_corpus(data / "nowhere")


@pytest.mark.slow
def test_cli_retrieval_only_writes_results_report_and_plots(
    data: Path, tmp_path: Path, shared_minilm
) -> None:
    out, report = tmp_path / "out", tmp_path / "docs" / "rag.md"
    code = main(
        ["rag", "--data", str(data), "--out", str(out), "--report", str(report),
         "--experiments", "A,C", "--answers", "none", "--k", "2"]
    )  # fmt: skip
    assert code == 0
    results = json.loads((out / "results.json").read_text())
    runs = {(r["config"], r["chunks"]): r for r in results["runs"]}
    pub = runs[("exp_a_small_fixed", "published")]["summary"]
    assert pub["hit_rate"] == 1.0 and pub["questions"] == 2  # the gold chunk is easy to find
    ours = runs[("exp_a_small_fixed", "ours")]
    assert ours["summary"]["hit_rate"] == 1.0 and ours["n_chunks"] >= 2
    assert "second local sentence-transformers model" in runs[("exp_c_large", "ours")]["skipped"]
    reused = runs[("exp_c_small", "published")]  # the same setup as A's small fixed: run once
    assert reused["same_as"] == "exp_a_small_fixed" and reused["summary"] == pub
    text = report.read_text()
    assert "published (OpenAI emb. + GPT-4o)" in text and "Hit@2" in text
    assert "skipped" in text and "- command:" in text and "(= A. Small Fixed (256))" in text
    assets = tmp_path / "docs" / "rag"
    assert {p.name for p in assets.glob("*.png")} == {
        "exp_a_chunk_size.png",
        "exp_c_embedding.png",
        "summary_table.png",
    }
    summary = (assets / "summary.json").read_text()
    assert "Blood Falls is an outflow" not in summary and QUESTIONS[0][0] not in summary
    assert "(rag/exp_a_chunk_size.png)" in text
    assert not (out / "stores").exists()


@pytest.mark.slow
def test_cli_with_model_free_answers_runs_the_agent(
    data: Path, tmp_path: Path, shared_minilm
) -> None:
    out = tmp_path / "out"
    code = main(
        ["rag", "--data", str(data), "--out", str(out), "--experiments", "D",
         "--chunks", "published", "--answers", "model-free"]
    )  # fmt: skip
    assert code == 0
    results = json.loads((out / "results.json").read_text())
    by_config = {r["config"]: r for r in results["runs"]}
    ltm = by_config["exp_d_stm_ltm"]["summary"]
    stm_only = by_config["exp_d_stm_only"]["summary"]
    assert ltm["served_by"] == ["model-free"] and 0 < ltm["similarity"] <= 1
    assert ltm["tokens_in_total"] > stm_only["tokens_in_total"]  # LTM facts fill the prompt
    assert "oxidises" in by_config["exp_d_stm_ltm"]["questions"][0]["answer"]
    assert "No GGUF model was available" in (out / "report.md").read_text()


def test_cli_bad_arguments(data: Path, tmp_path: Path, capsys) -> None:
    assert main(["rag", "--data", str(tmp_path / "none")]) == 1
    assert "no data folder" in capsys.readouterr().err
    args = ["rag", "--data", str(data), "--out", str(tmp_path / "o")]
    assert main([*args, "--experiments", "E", "--answers", "none"]) == 1
    assert "unknown experiment" in capsys.readouterr().err
