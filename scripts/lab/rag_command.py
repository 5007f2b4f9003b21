"""`python scripts/experiment.py rag`: seed 003's experiments A-D on the agentmemory data."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from lab.command import Experiment
from localmem.console import CommandError, print_json, to_jsonable

HEADER = """# RAG agent memory: experiments A-D (seed 003)

Seed 003 ran a RAG agent with short- and long-term memory over 14 Wikipedia articles and 18
questions, with OpenAI embeddings and GPT-4o. Here the same configurations run on the local
stack: our chunkers (token counts from the embedder's tokenizer), MiniLM embeddings in hnswlib,
the agent of `localmem/agent.py`, and whatever answer engine was available. Every configuration
appears three times: the published numbers, ours on the exact published chunks (relevance by
gold chunk id: the retrieval numbers compare directly), and ours on our own chunks (relevance by
overlap with the gold chunks: a retrieved chunk is relevant when it and a gold chunk share at
least half of the shorter one).
"""


def configure(p: argparse.ArgumentParser) -> None:
    """Options of the rag experiment."""
    p.add_argument("--data", required=True, metavar="PATH", help="the agentmemory data folder")
    p.add_argument(
        "--out", default="rag-experiment", metavar="DIR", help="results.json, report.md, plots"
    )
    p.add_argument(
        "--report",
        metavar="PATH",
        help="also write the markdown report here, with its plots and summary.json (aggregates "
        "only, no question or answer text) in a folder beside it named after it",
    )
    p.add_argument("--k", type=int, default=3, help="chunks retrieved per question (Hit@k, MRR)")
    p.add_argument(
        "--experiments", default="A,B,C,D", help="which experiments, comma-separated (A-D)"
    )
    p.add_argument(
        "--chunks",
        default="ours,published",
        help="ours (our chunkers), published (the exact published chunks), or both",
    )
    p.add_argument(
        "--second-model",
        metavar="PATH",
        help="a local sentence-transformers folder for experiment C's second embedding model",
    )
    p.add_argument(
        "--answers",
        choices=("auto", "model-free", "none"),
        default="auto",
        help="auto: a GGUF if one is configured or found, else the model-free extractive "
        "answer; none: retrieval only",
    )
    p.add_argument("--model", metavar="GGUF", help="the GGUF that answers (implies a model)")
    p.add_argument(
        "--stm",
        choices=("per-question", "shared"),
        default="per-question",
        help="a fresh conversation per question, or one for all of them",
    )
    p.add_argument("--keep-stores", action="store_true", help="keep the stores under DIR/stores")


def _engine(args: argparse.Namespace):
    from localmem.config import EngineConfig
    from localmem.llm import make_engine

    if args.model:
        return make_engine(EngineConfig(kind="llama", model_path=args.model))
    if args.answers == "auto":
        return make_engine(EngineConfig())
    return None


def run(args: argparse.Namespace) -> int:
    """Run the experiments, then write results.json, the report and the plots."""
    from lab.rag_experiment import run_experiment
    from lab.rag_report import markdown, write_plots
    from lab.report import provenance, write_section

    if args.k < 1:
        raise CommandError("--k must be at least 1")
    if args.answers == "none" and args.model:
        raise CommandError("--model makes no sense with --answers none")
    data = Path(args.data).expanduser()
    if not data.is_dir():
        raise CommandError(f"no data folder at {data}")
    out = Path(args.out).expanduser()
    engine = _engine(args) if args.answers != "none" else None
    say = (lambda line: None) if args.json else (lambda line: print(line, file=sys.stderr))
    say(f"answers by {engine.name if engine else 'model-free' if args.answers != 'none' else '-'}")
    load_before = _load()
    command = "python scripts/experiment.py rag " + " ".join(
        sys.argv[2:] if len(sys.argv) > 2 else []
    )
    started = provenance(command.strip())  # the commit and date the run started from
    results = run_experiment(
        data,
        work=out / "stores",
        k=args.k,
        experiments=[e.strip().upper() for e in args.experiments.split(",") if e.strip()],
        sources=[s.strip() for s in args.chunks.split(",") if s.strip()],
        second_model=args.second_model,
        engine=engine,
        answers=args.answers != "none",
        stm=args.stm,
        progress=say,
    )
    if not args.keep_stores:
        shutil.rmtree(out / "stores", ignore_errors=True)
    results["provenance"] = started
    results["answer_engine"] = engine.name if engine else None
    results["settings"]["load_average"] = {"start": load_before, "end": _load()}
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(
        json.dumps(to_jsonable(results), indent=1) + "\n", encoding="utf-8"
    )
    plots = write_plots(results, out)
    body = (
        HEADER
        + "\n"
        + notes(results)
        + "\n"
        + markdown(results, provenance=results["provenance"], image_dir=".")
    )
    (out / "report.md").write_text(body, encoding="utf-8")
    if args.report:
        report = Path(args.report).expanduser()
        assets = report.with_suffix("")
        assets.mkdir(parents=True, exist_ok=True)
        for png in plots:
            shutil.copyfile(png, assets / png.name)
        (assets / "summary.json").write_text(
            json.dumps(to_jsonable(aggregates(results)), indent=1) + "\n", encoding="utf-8"
        )
        if not report.exists():  # text outside the generated section is kept on later runs
            report.write_text(HEADER, encoding="utf-8")
        write_section(
            report,
            "rag-results",
            notes(results)
            + "\n\n"
            + markdown(results, provenance=results["provenance"], image_dir=assets.name),
        )
    if args.json:
        print_json({"out": out, "plots": plots, "settings": results["settings"]})
    else:
        print(f"results in {out / 'results.json'}, report {out / 'report.md'}, {len(plots)} plots")
    return 0


def notes(results: dict) -> str:
    """What produced which number, and what to keep in mind when comparing."""
    s = results["settings"]
    engine = results.get("answer_engine")
    if not s["answers"]:
        answers = (
            "No answers were generated (`--answers none`): similarity is empty and latency is "
            "the search alone."
        )
    elif engine:
        answers = f"Answers by `{engine}` through llama.cpp; similarity is MiniLM cosine."
    else:
        answers = (
            "**No GGUF model was available, so answers are the model-free extractive answer** "
            "(the best-supported sentence of the retrieved chunks). Its similarity to the "
            "reference is a floor for an extractive system, not comparable to GPT-4o's "
            "generated answers; latency is retrieval + extraction + memory updates on the CPU."
        )
    second = (
        f"Experiment C's second model: `{s['second_model']}`."
        if s.get("second_model")
        else "Experiment C's second column is **skipped**: no second local "
        "sentence-transformers model exists on this machine (`--second-model PATH`)."
    )
    return "\n".join(
        [
            "## How to read these numbers",
            "",
            f"- Retrieval: top {s['k']} chunks by dense similarity (MiniLM, the seed used dense "
            "search too). Hit@k and MRR need no model.",
            f"- {answers}",
            "- Tokens are counted with the MiniLM WordPiece tokenizer (the seed counted "
            "cl100k tokens); without a GGUF the prompt tokens are those of the prompt that "
            "would be sent. Local cost is tokens and seconds, not dollars.",
            "- MiniLM reads at most 256 word pieces: a 1024-token chunk is embedded by its "
            "beginning only (the seed's OpenAI model read all of it).",
            f"- {second}",
            f"- Short-term memory: `{s['stm']}` conversation; long-term memory grows over the "
            f"{s['questions']} questions of a configuration.",
            "- Similarity is the cosine of MiniLM embeddings of the answer and the reference "
            "answer (the seed's own similarity model is not named; sentence-transformers is "
            "in its requirements).",
            "- Timings are from a shared 2-core machine (1-minute load average "
            f"{_loads(s)} at start / end): compare ratios within one run, not with the seed.",
        ]
    )


def _load() -> float | None:
    import os

    try:
        return round(os.getloadavg()[0], 1)
    except (OSError, AttributeError):
        return None


def _loads(settings: dict) -> str:
    load = settings.get("load_average") or {}
    return f"{load.get('start', '?')} / {load.get('end', '?')}"


def aggregates(results: dict) -> dict:
    """The results without per-question details (no question, chunk or answer text)."""
    keep = ("config", "experiment", "label", "chunks", "embedder", "n_chunks")
    return {
        "provenance": results.get("provenance"),
        "answer_engine": results.get("answer_engine"),
        "settings": results["settings"],
        "runs": [
            {
                **{k: r[k] for k in keep},
                "mean_chunk_tokens": r["mean_chunk_tokens"],
                "summary": r["summary"],
                "skipped": r["skipped"],
                "same_as": r.get("same_as"),
            }
            for r in results["runs"]
        ],
        "published": results["published"],
    }


EXPERIMENT = Experiment(
    help="seed 003: RAG agent memory experiments A-D (chunking, embeddings, STM/LTM)",
    configure=configure,
    run=run,
)
