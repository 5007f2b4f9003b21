"""python scripts/experiment.py memp: the Mem^p protocol of seed 002 (see lab.registry)."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from lab.command import Experiment
from localmem.console import CommandError, to_jsonable

DEFAULT_OUT = Path("docs/experiments/memp.md")


def configure(p: argparse.ArgumentParser) -> None:
    """The options of `python scripts/experiment.py memp`."""
    p.add_argument("--model", help="an instruct GGUF: runs the agent (without it: retrieval only)")
    p.add_argument("--pairs", nargs="+", metavar="ID", help="only these task pairs")
    p.add_argument(
        "--levels", nargs="+", choices=("concrete", "abstract", "hybrid"), help="abstraction levels"
    )
    p.add_argument(
        "--abstraction",
        choices=("auto", "model", "model-free"),
        default="auto",
        help="who writes and revises procedures (auto: the model when --model is given)",
    )
    p.add_argument("--runs", type=int, default=1, help="attempts per condition (default 1)")
    p.add_argument("--max-steps", type=int, default=8, help="most thoughts per attempt")
    p.add_argument("--max-tokens", type=int, default=768, help="most tokens per model call")
    p.add_argument("--thought-chars", type=int, default=400, help="longest thought (grammar)")
    p.add_argument("--answer-chars", type=int, default=1500, help="longest answer (grammar)")
    p.add_argument("--n-ctx", type=int, default=4096, help="model context window")
    p.add_argument("--temperature", type=float, default=0.0)
    p.add_argument("--threshold", type=float, help="find() threshold (default from config)")
    p.add_argument("--no-reflection", action="store_true", help="skip the reflection variation")
    p.add_argument(
        "--plumbing",
        action="store_true",
        help="label the agent numbers as a plumbing run (automatic for the tiny test model)",
    )
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="markdown report (+ .json)")


def run(args: argparse.Namespace) -> int:
    """Run the experiment and write the report."""
    from lab.memp import MempSettings, run_memp
    from lab.memp_agent import Bounds
    from lab.memp_report import markdown
    from lab.memp_tasks import load_pairs
    from lab.report import provenance
    from localmem.config import Config
    from localmem.memory import Memory

    for name in ("runs", "max_steps", "max_tokens", "thought_chars", "answer_chars"):
        if getattr(args, name) < 1:
            raise CommandError(f"--{name.replace('_', '-')} must be 1 or more")
    pairs = load_pairs(args.pairs)
    levels = tuple(args.levels or ("concrete", "abstract", "hybrid"))
    settings = MempSettings(
        levels=levels,
        retrieval_level="hybrid" if "hybrid" in levels else levels[-1],
        runs=args.runs,
        max_steps=args.max_steps,
        max_tokens=args.max_tokens,
        bounds=Bounds(args.thought_chars, args.answer_chars),
        reflection=not args.no_reflection,
    )
    engine_cfg = {"kind": "none"}
    if args.model:
        if not Path(args.model).is_file():
            raise CommandError(f"no such model file: {args.model}")
        engine_cfg = {
            "kind": "llama",
            "model_path": str(Path(args.model).resolve()),
            "n_ctx": args.n_ctx,
            "temperature": args.temperature,
            "max_tokens": args.max_tokens,
        }
    # keep every procedure in play during the runs
    procedures = {"retire_after_uses": 1_000_000, "implementation": args.abstraction}
    if args.threshold is not None:
        procedures["threshold"] = args.threshold
    config = Config().with_updates(engine=engine_cfg, procedures=procedures)
    with tempfile.TemporaryDirectory(prefix="localmem-memp-") as tmp:
        folder = Path(args.store) if args.store else Path(tmp) / "store"
        with Memory.open(folder, config=config) as memory:
            engine = memory.engine if args.model else None
            results = run_memp(
                memory,
                pairs,
                settings,
                engine=engine,
                progress=lambda msg: print(f"memp: {msg}", file=sys.stderr),
            )
    plumbing = args.plumbing or "tiny" in (results["engine"] or "").lower()
    results["plumbing"] = plumbing
    text = markdown(results, provenance=provenance(_command(args)), plumbing=plumbing)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    args.out.with_suffix(".json").write_text(
        json.dumps(to_jsonable(results), indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    if args.json:
        print(json.dumps(to_jsonable(results), indent=2, ensure_ascii=False))
    else:
        print(f"wrote {args.out} and {args.out.with_suffix('.json')}")
    return 0


def _command(args: argparse.Namespace) -> str:
    """The command line that reproduces this run (defaults left out)."""
    parts = ["python scripts/experiment.py memp"]
    if args.model:
        parts.append(f"--model {args.model}")
    for flag, value in (("--pairs", args.pairs), ("--levels", args.levels)):
        if value:
            parts.append(f"{flag} {' '.join(value)}")
    defaults = {
        "runs": 1,
        "max_steps": 8,
        "max_tokens": 768,
        "thought_chars": 400,
        "answer_chars": 1500,
        "n_ctx": 4096,
        "temperature": 0.0,
        "threshold": None,
    }
    for name, default in defaults.items():
        value = getattr(args, name)
        if value != default:
            parts.append(f"--{name.replace('_', '-')} {value}")
    if args.abstraction != "auto":
        parts.append(f"--abstraction {args.abstraction}")
    if args.no_reflection:
        parts.append("--no-reflection")
    if args.out != DEFAULT_OUT:
        parts.append(f"--out {args.out}")
    return " ".join(parts)


EXPERIMENT = Experiment(
    help="Mem^p (seed 002): procedures from task A helping an agent with task B",
    configure=configure,
    run=run,
)
