"""python scripts/experiment.py locomo PATH: the LoCoMo benchmark (listed in lab.registry)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lab.command import Experiment
from localmem.console import CommandError, to_jsonable


def configure(p: argparse.ArgumentParser) -> None:
    """The options of `python scripts/experiment.py locomo`."""
    p.add_argument("path", help="a LoCoMo-shaped JSON file (the public locomo10.json layout)")
    p.add_argument(
        "--configs",
        nargs="+",
        metavar="NAME",
        help="retrieval configurations to compare (default: all; see --list-configs)",
    )
    p.add_argument("--list-configs", action="store_true", help="print the configurations")
    p.add_argument("--conversations", nargs="+", metavar="ID", help="only these sample ids")
    p.add_argument("--limit", type=int, help="at most this many questions per conversation")
    p.add_argument("--budget-tokens", type=int, help="pack the hits into this many tokens")
    p.add_argument(
        "--heldout-reranker",
        action="store_true",
        help="rank each conversation with model-free reranker weights fitted on the other "
        "conversations of the file (leave-one-conversation-out), not the shipped ones",
    )
    p.add_argument(
        "--plain",
        action="store_true",
        help="store the turns as plain text ('Speaker: words'), without session, time or "
        "speaker fields: what a user who calls add(text) gets",
    )
    p.add_argument("--model", help="an instruct GGUF: also answer and judge (F1, BLEU-1, judge)")
    p.add_argument(
        "--answers",
        action="store_true",
        help="answer and judge even without --model (model-free extractive answers)",
    )
    p.add_argument("--answer-config", default="everything", help="retrieval for the answers")
    p.add_argument("--answer-k", type=int, default=10, help="memories shown to the answerer")
    p.add_argument("--n-ctx", type=int, default=4096, help="model context window")
    p.add_argument("--out", type=Path, help="folder for locomo.json and locomo.png")
    p.add_argument("--docs", type=Path, help="markdown file to write the results section into")
    p.add_argument("--section", default="locomo", help="name of that section (default: locomo)")


def run(args: argparse.Namespace) -> int:
    """Run the benchmark; print the tables, write JSON / PNG / markdown when asked."""
    from lab import locomo_bench as bench
    from lab import locomo_report as report
    from lab.answers import answer_questions, summarize_answers
    from lab.locomo import load_locomo
    from localmem.config import Config
    from localmem.memory import Memory
    from localmem.store.address import StoreAddress

    if args.list_configs:
        for cfg in bench.CONFIGS.values():
            print(f"{cfg.name:12s} {cfg.description}  {cfg.options}")
        return 0
    for name in ("limit", "budget_tokens", "answer_k"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise CommandError(f"--{name.replace('_', '-')} must be 1 or more")
    configs = bench.pick_configs(args.configs)
    answer_config = bench.pick_configs([args.answer_config])[0]
    convs = _conversations(args, load_locomo(args.path))
    config = Config().with_updates(engine=_engine_config(args))

    def say(message: str) -> None:
        print(f"locomo: {message}", file=sys.stderr)

    load_before = _load()
    with tempfile.TemporaryDirectory(prefix="localmem-locomo-") as tmp:
        # --store may name a PostgreSQL database: the same pipeline on the other backend
        folder = StoreAddress.parse(args.store) if args.store else Path(tmp) / "store"
        with Memory.open(folder, config=config) as memory:
            results = bench.run_retrieval(
                memory,
                convs,
                configs,
                limit=args.limit,
                budget_tokens=args.budget_tokens,
                heldout=Path(tmp) / "reranker" if args.heldout_reranker else None,
                progress=say,
                plain=args.plain,
            )
            text = report.retrieval_markdown(results)
            if args.model or args.answers:
                rows = []
                held = results["reranker_files"]  # held-out weights when asked for
                for conv in convs:
                    with bench.reranker_weights(memory, held.get(conv.sample_id)):
                        rows += answer_questions(
                            memory,
                            conv,
                            answer_config.options,
                            k=args.answer_k,
                            limit=args.limit,
                            now=bench.asked_at(conv),
                        )
                    say(f"answers: {conv.sample_id} done")
                summary = summarize_answers(rows)
                served = sorted({r.served_by for r in rows})
                results["answers"] = {"summary": summary, "served_by": served, "rows": rows}
                text += "\n\n" + report.answers_markdown(summary, ", ".join(served))
    command = _command(args)
    text += (
        f"\n\nLoad average (1 min) at the start {load_before} and the end {_load()}: the "
        "machine is shared, so latency is noisy; compare configurations within one run."
    )
    _write(args, results, text, command, say)
    return 0


def _conversations(args: argparse.Namespace, convs: list[Any]) -> list[Any]:
    """The conversations ``--conversations`` names (all without it)."""
    if not args.conversations:
        return convs
    known = {c.sample_id for c in convs}
    missing = [c for c in args.conversations if c not in known]
    if missing:
        raise CommandError(f"no conversation {', '.join(missing)} in {args.path}")
    return [c for c in convs if c.sample_id in set(args.conversations)]


def _engine_config(args: argparse.Namespace) -> dict[str, Any]:
    """The engine ``--model`` names (a GGUF through llama.cpp), or none."""
    if not args.model:
        return {"kind": "none"}
    if not Path(args.model).is_file():
        raise CommandError(f"no such model file: {args.model}")
    return {"kind": "llama", "model_path": str(Path(args.model).resolve()), "n_ctx": args.n_ctx}


def _write(
    args: argparse.Namespace,
    results: dict[str, Any],
    text: str,
    command: str,
    say: Callable[[str], None],
) -> None:
    """The results where the options send them: JSON and a plot (``--out``), a section of
    ``--docs``, and stdout (the tables, or the summaries as JSON with ``--json``)."""
    from lab import locomo_report as report
    from lab.report import provenance, write_section

    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "locomo.json").write_text(
            json.dumps(to_jsonable(results), indent=2, ensure_ascii=False) + "\n",
            encoding="utf-8",
        )
        report.plot(results, str(args.out / "locomo.png"))
        say(f"wrote {args.out / 'locomo.json'} and {args.out / 'locomo.png'}")
    if args.docs:
        title = "## LoCoMo benchmark: `python scripts/experiment.py locomo` (issue 8)"
        write_section(args.docs, args.section, f"{title}\n\n{provenance(command)}\n\n{text}")
        say(f"wrote section {args.section!r} of {args.docs}")
    if args.json:
        print(json.dumps(to_jsonable(results["summaries"]), indent=2))
    else:
        print(text)


def _load() -> str:
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except OSError:  # not every platform has one
        return "unknown"


def _command(args: argparse.Namespace) -> str:
    parts = ["python scripts/experiment.py locomo", str(args.path)]
    for flag in ("configs", "conversations"):
        value = getattr(args, flag)
        if value:
            parts.append(f"--{flag} {' '.join(value)}")
    for flag in ("limit", "budget_tokens", "model", "out", "docs"):
        value = getattr(args, flag)
        if value is not None:
            parts.append(f"--{flag.replace('_', '-')} {value}")
    if args.answers or args.model:
        parts.append(f"--answer-config {args.answer_config}")
    if args.section != "locomo":
        parts.append(f"--section {args.section}")
    for flag in ("heldout_reranker", "answers"):
        if getattr(args, flag):
            parts.append(f"--{flag.replace('_', '-')}")
    return " ".join(parts)


EXPERIMENT = Experiment(
    help="LoCoMo: evidence recall per retrieval configuration, answers with a model "
    "(without --store, in a temporary store)",
    configure=configure,
    run=run,
)
