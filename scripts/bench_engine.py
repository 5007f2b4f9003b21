"""Benchmark the model engine per task: latency, tokens, tokens/s, and the engine's own overhead.

With no ``--model``, a tiny random-weight GGUF is built in a temporary folder: its numbers
measure the plumbing (prompt rendering, token counting for the context fit, grammar sampling,
validation), not a model. Pass ``--model PATH`` to measure any real GGUF the same way.

Each task's example input (``TaskSpec.example``) is run ``--repeats`` times after one warm-up
call (which also loads the model; its time is reported as "load + first call").

With ``--model``, three more measurements (issue 17):

- grammar overhead per task: the constrained output's generation time against unconstrained
  generation of exactly as many tokens from the same (cached) prompt, in the same run;
- ``--data N``: the ``attributes`` task over the first N texts of the shipped MemInsight
  experiment data (thoughts, then queries), prompt cache warm as when mining a store:
  valid-first-time and retry rates, p50/p95;
- ``--mine N``: ``localmem mine --miner engine`` (a new process, as a user runs it) on a fresh
  store holding the first N thoughts of the MemInsight sessions; its wall time.

``--host`` (issue 29) compares the model host with the in-process engine in one run, on the
model given (section ``engine-host``): per-task p50 side by side (interleaved, prompt cache
cold and warm), resident memory of a process holding a store with each, and of ``localmem
serve`` + its host, mining ``--mine N`` MemInsight memories each way (each in a new process),
a hung request's timeout against the configured value, and the fresh host after it.

Usage::

    python scripts/bench_engine.py                       # tiny model -> section "engine"
    python scripts/bench_engine.py --model models/qwen2.5-1.5b-instruct-q4_k_m.gguf
    python scripts/bench_engine.py --model gemma.gguf --data 110 --mine 30 --section engine-real
    python scripts/bench_engine.py --model gemma.gguf --host --mine 30 --threads 1
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from lab.stats import percentile  # noqa: E402


def _tiny_model(folder: Path) -> Path:
    spec = importlib.util.spec_from_file_location(
        "make_tiny_gguf", ROOT / "scripts" / "make_tiny_gguf.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build_tiny_gguf(folder / "tiny.gguf")


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
        "wall_p50_ms": 1000 * percentile(walls, 50),
        "wall_p95_ms": 1000 * percentile(walls, 95),
        "overhead_ms": 1000 * statistics.median(w - g for w, g in zip(walls, gens, strict=True)),
        "prompt_tokens": statistics.median(prompt),
        "completion_tokens": statistics.median(completion),
        "tokens_per_s": sum(completion) / sum(gens) if sum(gens) else 0.0,
        "retries": sum(a - 1 for a in attempts),
        "valid_first": sum(a == 1 for a in attempts) / len(attempts),
        "calls": len(attempts),
    }


def bench_overhead(name: str, engine, *, repeats: int) -> dict:
    """Generation time of the task's constrained output over unconstrained generation of the
    same number of tokens, from the same prompt (cached for both: generation only)."""
    from localmem.llm.grammar import grammar_for_model
    from localmem.llm.tasks import get_task, task_schema

    spec = get_task(name)
    inputs = spec.example()
    limit = spec.max_tokens or engine.max_tokens
    fit = engine.fit(spec.build_prompt(inputs), max_tokens=limit)
    shown = sum(m.memory_count for m in fit.messages)
    grammar = grammar_for_model(task_schema(spec, inputs, shown=shown))
    engine.decode(fit.messages, max_tokens=limit, grammar=grammar)  # warm: prompt cached
    constrained, free, lengths = [], [], []
    for _ in range(repeats):
        c = engine.decode(fit.messages, max_tokens=limit, grammar=grammar)
        n = len(c.tokens)
        u = engine.decode(fit.messages, max_tokens=n, stop_on_eog=False)
        constrained.append(c.seconds - c.prompt_seconds)
        free.append(u.seconds - u.prompt_seconds)
        lengths.append(n)
    c_med, u_med = statistics.median(constrained), statistics.median(free)
    return {
        "task": name,
        "tokens": statistics.median(lengths),
        "constrained_s": c_med,
        "free_s": u_med,
        "ratio": c_med / u_med if u_med else float("nan"),
    }


def meminsight_texts() -> tuple[list[str], list[str]]:
    """The thoughts and the queries of the shipped MemInsight sessions."""
    path = ROOT / "scripts" / "lab" / "data" / "meminsight" / "sessions.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    thoughts = [t for s in data["sessions"] for t in s["thoughts"]]
    queries = [q["text"] for s in data["sessions"] for q in s["queries"]]
    return thoughts, queries


def bench_data(engine, n: int) -> dict:
    """The attributes task over the first ``n`` MemInsight texts, as mining runs it."""
    from localmem.errors import SchemaError
    from localmem.llm.tasks import run_task

    thoughts, queries = meminsight_texts()
    items = [(t, False) for t in thoughts] + [(q, True) for q in queries]
    walls, attempts, failed, completion = [], [], 0, []
    for text, is_query in items[:n]:
        start = time.perf_counter()
        try:
            result = run_task("attributes", {"text": text, "is_query": is_query}, engine=engine)
        except SchemaError:
            failed += 1
            continue
        finally:
            walls.append(time.perf_counter() - start)
        attempts.append(result.attempts)
        completion.append(result.usage.completion_tokens)
    calls = len(walls)
    return {
        "calls": calls,
        "valid_first": sum(a == 1 for a in attempts) / calls,
        "retried": sum(a > 1 for a in attempts) / calls,
        "failed": failed,
        "p50_s": percentile(walls, 50),
        "p95_s": percentile(walls, 95),
        "completion_tokens": statistics.median(completion) if completion else 0,
    }


def bench_mine(model: Path, n: int, threads: int | None) -> dict:
    """Wall time of ``localmem mine`` on a fresh store of ``n`` MemInsight thoughts."""
    from localmem import Memory
    from localmem.config import Config

    thoughts, _ = meminsight_texts()
    engine = {"model_path": str(model.resolve()), "kind": "llama"}
    if threads:
        engine["n_threads"] = threads
    config = Config().with_updates(engine=engine, attributes={"miner": "engine"})
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store"
        with Memory.open(store, config=config) as mem:
            for text in thoughts[:n]:
                mem.add(text, kind="thought", mine="off")
        exe = Path(sys.executable).with_name("localmem")  # the console script of this venv
        cli = [str(exe), "mine", "--store", str(store), "--json"]
        start = time.perf_counter()
        proc = subprocess.run([*cli, "--miner", "engine"], capture_output=True, text=True)
        wall = time.perf_counter() - start
    if proc.returncode != 0:
        return {"memories": n, "error": (proc.stderr or proc.stdout).strip()[-300:]}
    return {"memories": n, "wall_s": wall, "report": proc.stdout.strip()[-300:]}


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
    extra: dict | None = None,
) -> str:
    """The benchmark's section of docs/benchmarks.md."""
    from lab.report import provenance

    title = (
        "Engine: per-task latency and throughput" if tiny else "Engine on a real GGUF (issue 17)"
    )
    lines = [f"## {title}", "", provenance(command), ""]
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
            f"{model_desc.get('quantization')}, context {model_desc.get('context_window')}; "
            f"chat template: {model_desc.get('chat_template')}"
            f"{'; a base model' if model_desc.get('base_model') else ''}).",
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
        "tok/s | valid 1st | retries |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['task']} | error: {r['error'][:80]} | | | | | | | |")
            continue
        lines.append(
            f"| {r['task']} | {r['wall_p50_ms']:.0f} | {r['wall_p95_ms']:.0f} | "
            f"{r['overhead_ms']:.1f} | {r['prompt_tokens']:.0f} | {r['completion_tokens']:.0f} | "
            f"{r['tokens_per_s']:.0f} | {r['valid_first']:.0%} | {r['retries']} |"
        )
    lines += real_model_lines(extra or {})
    if free:
        lines += [
            "",
            "Model-free implementations on the same inputs (no embedder): "
            + ", ".join(f"{r['task']} {r['wall_p50_ms']:.2f} ms" for r in free)
            + ".",
        ]
    return "\n".join(lines)


def real_model_lines(extra: dict) -> list[str]:
    """Grammar overhead, the data run and the mine run, as markdown (what was measured)."""
    lines: list[str] = []
    if extra.get("overhead"):
        lines += [
            "",
            "Grammar overhead: generation time (prompt cached, so generation only) of the "
            "task's constrained output against unconstrained generation of exactly as many "
            "tokens from the same prompt, alternated in the same run; medians.",
            "",
            "| task | tokens | constrained s | unconstrained s | ratio |",
            "|---|---:|---:|---:|---:|",
        ]
        for r in extra["overhead"]:
            lines.append(
                f"| {r['task']} | {r['tokens']:.0f} | {r['constrained_s']:.2f} | "
                f"{r['free_s']:.2f} | {r['ratio']:.2f} |"
            )
        ratios = [r["ratio"] for r in extra["overhead"]]
        lines += ["", f"Median ratio over the tasks: {statistics.median(ratios):.2f}."]
    if extra.get("data"):
        d = extra["data"]
        lines += [
            "",
            f"`attributes` on the shipped MemInsight data ({d['calls']} texts: thoughts, then "
            "queries; prompt cache warm, as when mining a store): valid first time "
            f"{d['valid_first']:.1%}, retried {d['retried']:.1%}, failed after the retry "
            f"{d['failed']}; p50 {d['p50_s']:.2f} s, p95 {d['p95_s']:.2f} s per text; median "
            f"{d['completion_tokens']:.0f} completion tokens.",
        ]
    if extra.get("mine"):
        m = extra["mine"]
        if "error" in m:
            lines += ["", f"`localmem mine` of {m['memories']} memories failed: {m['error']}"]
        else:
            lines += [
                "",
                f"`localmem mine --miner engine` on a fresh store of the first {m['memories']} "
                "MemInsight thoughts, as a new process (embedder and model load included): "
                f"{m['wall_s']:.1f} s wall.",
            ]
    return lines


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
    parser.add_argument("--data", type=int, default=0, help="attributes on N MemInsight texts")
    parser.add_argument("--mine", type=int, default=0, help="time `localmem mine` of N thoughts")
    parser.add_argument("--no-overhead", action="store_true", help="skip the grammar overhead")
    parser.add_argument("--host", action="store_true", help="the model host vs in process")
    parser.add_argument("--hang-timeout", type=float, default=10.0, help="seconds (--host)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)  # one side, in a fresh process
    parser.add_argument("--side", choices=("in-process", "host"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(host_worker(args)))
        return 0
    if args.host:
        return bench_host_main(args, argv)

    sys.path.insert(0, str(ROOT / "scripts"))
    from lab.report import write_section

    import localmem.mechanisms  # noqa: F401 - registers every task
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
        extra: dict = {}
        if not tiny:
            if not args.no_overhead:
                extra["overhead"] = [bench_overhead(n, engine, repeats=args.repeats) for n in names]
                print(extra["overhead"], file=sys.stderr)
            if args.data:
                extra["data"] = bench_data(engine, args.data)
                print(extra["data"], file=sys.stderr)
            if args.mine:
                extra["mine"] = bench_mine(Path(path), args.mine, args.threads)
                print(extra["mine"], file=sys.stderr)
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
            extra=extra,
        )
    print(markdown)
    if not args.no_write:
        section = args.section or ("engine" if tiny else f"engine-{Path(path).stem.lower()}")
        write_section(args.out, section, markdown)
        print(f"wrote section {section!r} of {args.out}", file=sys.stderr)
    return 0


# -- the model host against the in-process engine (issue 29) ---------------------------------
def _engines(path: Path, threads: int | None):
    """The in-process engine (loaded as the CPU probe decides) and the host engine."""
    from localmem.llm.host import HostEngine, probe
    from localmem.llm.llama import LlamaEngine

    verdict = probe.probe(str(path), n_threads=threads)
    if not verdict.usable:
        raise SystemExit(f"llama.cpp cannot run {path} here: {verdict.detail}")
    inproc = LlamaEngine(
        path, n_ctx=4096, n_threads=threads, extra_buffer_types=verdict.extra_buffer_types
    )
    return verdict, inproc, HostEngine(path, n_ctx=4096, n_threads=threads)


def host_vs_in_process(names, inproc, host, *, repeats: int) -> list[dict]:
    """Per task: p50 wall of run_task with each engine, interleaved, prompt cache cold (forgotten
    before each call) and warm (the same call again)."""
    from localmem.llm.tasks import get_task, run_task

    rows = []
    for name in names:
        spec = get_task(name)
        inputs = spec.example()
        times: dict[tuple[str, str], list[float]] = {}
        for engine in (inproc, host):  # warm-up: load, grammar checks
            run_task(spec, inputs, engine=engine)
        for r in range(repeats):
            pair = (inproc, host) if r % 2 == 0 else (host, inproc)
            for engine in pair:
                side = "host" if engine is host else "in-process"
                engine.forget_prompt_cache()
                for cache in ("cold", "warm"):
                    start = time.perf_counter()
                    result = run_task(spec, inputs, engine=engine)
                    wall = time.perf_counter() - start
                    times.setdefault((side, cache), []).append(wall)
                    # outside the decoding loop: fit, template, tokens, validation, and for
                    # the host its requests (what the host adds, free of the model's noise)
                    times.setdefault((side, "outside"), []).append(wall - result.usage.seconds)
        row = {"task": name}
        row["outside_ms"] = {
            side: 1000 * statistics.median(times[(side, "outside")])
            for side in ("in-process", "host")
        }
        for cache in ("cold", "warm"):
            a = statistics.median(times[("in-process", cache)])
            b = statistics.median(times[("host", cache)])
            row[cache] = {"in_process_ms": 1000 * a, "host_ms": 1000 * b, "ratio": b / a}
        rows.append(row)
        print(row, file=sys.stderr)
    return rows


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def host_worker(args) -> dict:
    """One side in a fresh process: ``rss`` (open a store, mine one memory, measure) or
    ``mine`` (mine ``--mine`` MemInsight thoughts, timed, model load included)."""
    import localmem.mechanisms  # noqa: F401
    from localmem import Memory
    from localmem.attributes import mine_pending, queue_mining
    from localmem.config import Config
    from localmem.llm.host import HostEngine
    from localmem.llm.host import probe as cpu_probe
    from localmem.llm.llama import LlamaEngine

    path = Path(args.model)
    key = cpu_probe.fingerprint(str(path))
    verdict = cpu_probe.remembered(key) or cpu_probe.probe(str(path), n_threads=args.threads)
    cpu_probe.remember(key, verdict)
    config = Config().with_updates(attributes={"miner": "engine"})
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        if args.side == "host":
            engine = HostEngine(path, n_ctx=4096, n_threads=args.threads)
        else:
            engine = LlamaEngine(
                path,
                n_ctx=4096,
                n_threads=args.threads,
                extra_buffer_types=verdict.extra_buffer_types,
            )
        with Memory.open(Path(tmp) / "store", config=config, engine=engine) as mem:
            thoughts, _ = meminsight_texts()
            n = args.mine if args.worker == "mine" else 1
            for text in thoughts[:n]:
                mem.add(text, kind="thought", mine="off")
            report = mine_pending(mem, queue_mining(mem, miner="engine"))
            wall = time.perf_counter() - start
            own = _rss_mb(os.getpid())
            host = [_rss_mb(c) for c in _children(os.getpid())]
    return {"side": args.side, "wall_s": wall, "report": report, "rss_mb": own, "host_mb": host}


def _worker(path: Path, kind: str, side: str, args) -> dict:
    cmd = [sys.executable, __file__, "--worker", kind, "--side", side, "--model", str(path)]
    cmd += ["--mine", str(args.mine or 30)]
    if args.threads:
        cmd += ["--threads", str(args.threads)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def serve_rss(path: Path, threads: int | None) -> dict:
    """RSS of `localmem serve` and of its model host after one memory mined through it."""
    from localmem import Memory, connect
    from localmem.config import Config
    from localmem.discovery import find_server

    engine = {"model_path": str(path.resolve())}
    if threads:
        engine["n_threads"] = threads
    config = Config().with_updates(engine=engine, attributes={"miner": "engine"})
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store"
        with Memory.open(store, config=config):
            pass
        proc = subprocess.Popen(
            [sys.executable, "-m", "localmem", "serve", str(store)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            while find_server(store) is None:
                time.sleep(0.2)
            with connect(store) as client:
                client.add("The orders cache expires hourly.", mine="inline")
            children = _children(proc.pid)
            return {"serve_mb": _rss_mb(proc.pid), "host_mb": [_rss_mb(c) for c in children]}
        finally:
            proc.terminate()
            proc.wait()


def hung_request(path: Path, timeout_s: float, threads: int | None) -> dict:
    """A host that never answers: when the caller's timeout fires, and the next call."""
    from localmem.errors import EngineTimeoutError
    from localmem.llm.host import HostEngine

    crash_host = [sys.executable, str(ROOT / "tests" / "engine_hosts" / "crash_host.py")]
    engine = HostEngine(
        path, n_ctx=1024, n_threads=threads, timeout_s=timeout_s, command=crash_host
    )
    engine.generate_text([{"role": "user", "content": "hi"}], max_tokens=2)  # started, loaded
    first = engine.supervisor.pid
    start = time.perf_counter()
    try:
        engine.generate_text([{"role": "user", "content": "[[host:hang]]"}], max_tokens=2)
    except EngineTimeoutError:
        fired = time.perf_counter() - start
    else:
        raise SystemExit("the hung request answered")
    start = time.perf_counter()
    engine.generate_text([{"role": "user", "content": "hi"}], max_tokens=2)
    after = time.perf_counter() - start
    return {
        "timeout_s": timeout_s,
        "fired_s": fired,
        "error": fired / timeout_s - 1,
        "next_s": after,
        "fresh_host": engine.supervisor.pid not in (None, first),
    }


def bench_host_main(args, argv) -> int:
    """``--host``: every measurement of the section ``engine-host``."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from lab.report import provenance, write_section

    import localmem.mechanisms  # noqa: F401
    from localmem.llm.tasks import all_tasks

    if args.model is None:
        raise SystemExit("--host needs --model (the real GGUF)")
    path = args.model.resolve()
    load_start = _load_average()
    names = args.tasks.split(",") if args.tasks else [s.name for s in all_tasks()]
    verdict, inproc, host = _engines(path, args.threads)
    rows = host_vs_in_process(names, inproc, host, repeats=args.repeats)
    del inproc, host
    # a first run makes what a fresh home lacks (the embedder's ONNX export loads torch once:
    # measured first, one side would carry it)
    _worker(path, "rss", "host", args)
    rss = {side: _worker(path, "rss", side, args) for side in ("in-process", "host")}
    served = serve_rss(path, args.threads)
    print(rss, served, file=sys.stderr)
    mining = {}
    if args.mine:
        for side in ("in-process", "host", "in-process", "host"):  # twice each, interleaved
            mining.setdefault(side, []).append(_worker(path, "mine", side, args))
        print(mining, file=sys.stderr)
    hang = hung_request(path, args.hang_timeout, args.threads)
    print(hang, file=sys.stderr)
    command = "python scripts/bench_engine.py " + " ".join(argv or sys.argv[1:])
    lines = [
        "## Engine: the model host against the in-process engine (issue 29)",
        "",
        provenance(command.strip()),
        "",
        f"Model: `{path.name}`; threads: {args.threads or 'default'}; load average at start "
        f"{load_start}, at end {_load_average()} (2 cores shared with other work). CPU probe on "
        f"this machine: **{verdict.status}** ({verdict.detail}; {verdict.seconds:.1f} s).",
        "",
        "Per task, p50 wall of `run_task` over "
        f"{args.repeats} calls per engine, the two engines interleaved in one process; cold: "
        "the prompt cache forgotten before the call; warm: the same call again.",
        "",
        "| task | cold in-process ms | cold host ms | ratio | warm in-process ms | "
        "warm host ms | ratio | outside decoding, in-process ms | outside decoding, host ms |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        c, w, o = r["cold"], r["warm"], r["outside_ms"]
        lines.append(
            f"| {r['task']} | {c['in_process_ms']:.0f} | {c['host_ms']:.0f} | "
            f"{c['ratio']:.3f} | {w['in_process_ms']:.0f} | {w['host_ms']:.0f} | "
            f"{w['ratio']:.3f} | {o['in-process']:.1f} | {o['host']:.1f} |"
        )
    cold = statistics.median(r["cold"]["ratio"] for r in rows)
    warm = statistics.median(r["warm"]["ratio"] for r in rows)
    lines += [
        "",
        f"Median ratio host / in-process over the tasks: cold {cold:.3f}, warm {warm:.3f}. "
        "Outside decoding: the call's wall time minus the decoding loop's own time (measured "
        "where the model runs): the fit, the template, tokenizing, validation, and for the "
        "host its requests; the model's time is not in it, so load on the machine moves it "
        "far less than the walls.",
        "",
        "Resident memory (VmRSS) after opening a store and mining one memory with the engine "
        "(each side in a fresh process):",
        "",
        "| | process MB | model host MB | total MB |",
        "|---|---:|---:|---:|",
    ]
    for side, got in rss.items():
        hosted = sum(got["host_mb"])
        lines.append(
            f"| {side} | {got['rss_mb']:.0f} | {hosted:.0f} | {got['rss_mb'] + hosted:.0f} |"
        )
    lines.append(
        f"| `localmem serve` + host | {served['serve_mb']:.0f} | "
        f"{sum(served['host_mb']):.0f} | {served['serve_mb'] + sum(served['host_mb']):.0f} |"
    )
    if mining:
        lines += [
            "",
            f"Mining {args.mine} MemInsight thoughts with `miner = engine` (a fresh process "
            "each, model load and host start included; two runs per side, interleaved):",
            "",
            "| side | wall s (runs) | done | failed |",
            "|---|---|---:|---:|",
        ]
        for side, runs in mining.items():
            walls = ", ".join(f"{r['wall_s']:.1f}" for r in runs)
            lines.append(
                f"| {side} | {walls} | {runs[-1]['report']['done']} | "
                f"{runs[-1]['report']['failed']} |"
            )
    lines += [
        "",
        f"A hung request (the test crash host, `[[host:hang]]`): timeout {hang['timeout_s']:g} s, "
        f"fired after {hang['fired_s']:.2f} s ({100 * hang['error']:+.1f}%); the next request "
        f"was served by a fresh host: {hang['fresh_host']}, in {hang['next_s']:.2f} s (host "
        "start and model load included).",
    ]
    markdown = "\n".join(lines)
    print(markdown)
    if not args.no_write:
        write_section(args.out, args.section or "engine-host", markdown)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
