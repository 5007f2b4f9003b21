"""Benchmark the model engine per task: latency, tokens, tokens/s, and the engine's own overhead.

With no ``--model``, a tiny random-weight GGUF is built in a temporary folder: its numbers
measure the plumbing (prompt rendering, token counting for the context fit, grammar sampling,
validation), not a model. Pass ``--model PATH`` to measure any real GGUF the same way.

Each task's example input (``TaskSpec.example``) is run ``--repeats`` times after one warm-up
call (which also loads the model; its time is reported as "load + first call").

Usage::

    python scripts/bench_engine.py                       # tiny model -> section "engine"
    python scripts/bench_engine.py --model models/qwen2.5-1.5b-instruct-q4_k_m.gguf
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _tiny_model(folder: Path) -> Path:
    spec = importlib.util.spec_from_file_location(
        "make_tiny_gguf", ROOT / "scripts" / "make_tiny_gguf.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build_tiny_gguf(folder / "tiny.gguf")


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def bench_task(name: str, engine, *, repeats: int, tiny: bool) -> dict:
    """Run one task ``repeats`` times; return its measurements (or the error it raised)."""
    from localmem.errors import LocalMemError
    from localmem.llm.tasks import get_task, max_output_bytes, run_task

    spec = get_task(name)
    inputs = spec.example()
    # The tiny model may use the whole grammar bound; a real model gets the task's budget.
    limit = max_output_bytes(name, inputs) + 8 if tiny else None
    walls, gens, prompt, completion, attempts = [], [], [], [], []
    try:
        run_task(name, inputs, engine=engine, max_tokens=limit)  # warm-up: caches, grammar
        for _ in range(repeats):
            engine.forget_prompt_cache()  # time the whole prompt, as for a new question
            start = time.perf_counter()
            result = run_task(name, inputs, engine=engine, max_tokens=limit)
            walls.append(time.perf_counter() - start)
            gens.append(result.usage.seconds)
            prompt.append(result.usage.prompt_tokens)
            completion.append(result.usage.completion_tokens)
            attempts.append(result.attempts)
    except LocalMemError as exc:
        return {"task": name, "error": str(exc)}
    return {
        "task": name,
        "wall_p50_ms": 1000 * statistics.median(walls),
        "wall_p95_ms": 1000 * _percentile(walls, 0.95),
        "overhead_ms": 1000 * statistics.median(w - g for w, g in zip(walls, gens, strict=True)),
        "prompt_tokens": statistics.median(prompt),
        "completion_tokens": statistics.median(completion),
        "tokens_per_s": sum(completion) / sum(gens) if sum(gens) else 0.0,
        "retries": sum(a - 1 for a in attempts),
    }


def bench_model_free(repeats: int) -> list[dict]:
    """Time the model-free implementations on the same example inputs (no embedder)."""
    from localmem.llm.tasks import all_tasks, run_task

    rows = []
    for spec in all_tasks():
        if spec.model_free is None:
            continue
        inputs = spec.example()
        walls = []
        for _ in range(repeats):
            start = time.perf_counter()
            run_task(spec.name, inputs, engine=None)
            walls.append(time.perf_counter() - start)
        rows.append({"task": spec.name, "wall_p50_ms": 1000 * statistics.median(walls)})
    return rows


def _load_average() -> str:
    try:
        return f"{os.getloadavg()[0]:.1f}"
    except OSError:  # not available on this platform
        return "n/a"


def to_markdown(
    model_desc: dict,
    load_s: float,
    rows: list[dict],
    free: list[dict],
    *,
    tiny: bool,
    command: str,
    load_avg: tuple[str, str] = ("n/a", "n/a"),
) -> str:
    """The benchmark's section of docs/benchmarks.md."""
    from localmem.experiments.report import provenance

    lines = ["## Engine: per-task latency and throughput", "", provenance(command), ""]
    if tiny:
        lines += [
            "Model: the tiny random-weight test GGUF (2 layers, 64 dims, byte vocabulary). "
            "**These are plumbing numbers**: they measure the engine's own work (chat template, "
            "token counting for the context fit, grammar-constrained sampling, validation), "
            "not a model's speed or quality. Outputs are random strings up to the grammar's "
            "bounds, so completion lengths say nothing about a real model. No instruct GGUF "
            "was available on this machine; run the script with `--model FILE` for real numbers.",
            "",
        ]
    else:
        lines += [
            f"Model: `{model_desc.get('path')}` ({model_desc.get('architecture')}, "
            f"{model_desc.get('quantization')}, context {model_desc.get('context_window')}).",
            "",
        ]
    lines += [
        f"Load + first call: {load_s:.2f} s. Columns are medians over the repeats, each with "
        "the whole prompt evaluated (llama.cpp's prompt cache is cleared before every call); "
        "overhead is wall time minus llama.cpp's time (rendering, token counting for the "
        "context fit, validation); tok/s is completion tokens per second of llama.cpp time "
        "(prompt evaluation included). "
        f"1-minute load average at start / end: {load_avg[0]} / {load_avg[1]} on "
        f"{os.cpu_count()} CPUs (a shared machine: expect noise).",
        "",
        "| task | wall p50 ms | wall p95 ms | overhead ms | prompt tok | completion tok | "
        "tok/s | retries |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['task']} | error: {r['error'][:80]} | | | | | | |")
            continue
        lines.append(
            f"| {r['task']} | {r['wall_p50_ms']:.0f} | {r['wall_p95_ms']:.0f} | "
            f"{r['overhead_ms']:.1f} | {r['prompt_tokens']:.0f} | {r['completion_tokens']:.0f} | "
            f"{r['tokens_per_s']:.0f} | {r['retries']} |"
        )
    if free:
        lines += [
            "",
            "Model-free implementations on the same inputs (no embedder): "
            + ", ".join(f"{r['task']} {r['wall_p50_ms']:.2f} ms" for r in free)
            + ".",
        ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, help="a GGUF to measure (default: the tiny model)")
    parser.add_argument("--repeats", type=int, default=5, help="timed calls per task")
    parser.add_argument("--n-ctx", type=int, default=None, help="context (default: 16384 tiny)")
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp CPU threads")
    parser.add_argument("--tasks", help="comma-separated task names (default: all)")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks.md")
    parser.add_argument("--section", help="section name (default: engine, or engine-<model>)")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)

    sys.path.insert(0, str(ROOT))
    from localmem.experiments.report import write_section
    from localmem.llm.llama import LlamaEngine
    from localmem.llm.tasks import all_tasks

    tiny = args.model is None
    with tempfile.TemporaryDirectory() as tmp:
        path = _tiny_model(Path(tmp)) if tiny else args.model
        n_ctx = args.n_ctx or (16384 if tiny else 4096)
        load_start = _load_average()
        engine = LlamaEngine(path, n_ctx=n_ctx, n_threads=args.threads)
        names = args.tasks.split(",") if args.tasks else [s.name for s in all_tasks()]
        start = time.perf_counter()
        engine.generate_text([{"role": "user", "content": "hello"}], max_tokens=1)
        load_s = time.perf_counter() - start
        rows = []
        for name in names:
            rows.append(bench_task(name, engine, repeats=args.repeats, tiny=tiny))
            print(rows[-1], file=sys.stderr)
        free = bench_model_free(args.repeats)
        command = "python scripts/bench_engine.py " + " ".join(argv or sys.argv[1:])
        markdown = to_markdown(
            engine.describe(),
            load_s,
            rows,
            free,
            tiny=tiny,
            command=command.strip(),
            load_avg=(load_start, _load_average()),
        )
    print(markdown)
    if not args.no_write:
        section = args.section or ("engine" if tiny else f"engine-{Path(path).stem.lower()}")
        write_section(args.out, section, markdown)
        print(f"wrote section {section!r} of {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
