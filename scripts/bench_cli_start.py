"""How fast the ``localmem`` command starts (issue 34, item 4): before and after, side by side.

Usage:
    python scripts/bench_cli_start.py --before /tmp/cs-before [--after .] [--runs 7]
        [--stores /work/bench-stores/cli] [--size 10000] [--docs docs/benchmarks.md]

``--before`` and ``--after`` are two checkouts of the repository (``git worktree add
/tmp/cs-before ddab686``); each command runs as a fresh process of this interpreter with
``PYTHONPATH`` set to one of them (from a neutral folder, so neither tree leaks in through the
current directory), and so with the same installed dependencies. Three commands, each timed as a
whole process (wall time from spawn to exit, peak RSS from the child's own rusage):

- ``localmem --help``;
- ``localmem search QUERY --store STORE`` while ``localmem serve STORE`` (of ``--after``) holds
  the store: the CLI only sends a request;
- the same search with no server: the CLI opens the store itself;
- ``localmem show ID`` through the server (it failed there before: its sections needed the
  store in process).

Both trees are byte-compiled first (``compileall``), as an installed package is. Runs alternate
before/after, so the machine's load drifts over both alike; the figures are the
median and the fastest of ``--runs``. A separate ``python -X importtime`` run of each command
says which heavy modules (numpy, DuckDB, onnxruntime, pyarrow, pydantic, hnswlib) it imported.

The store (``--size`` memories, built once with ``--after``'s code and kept in ``--stores``,
outside the repository): texts made of random words from a fixed vocabulary (seeded), each a
sentence of 8-20 words with a name and a date, embedded by the store's default embedder.
Results go to the ``cli-start`` section of ``--docs`` with the machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

HEAVY = ("numpy", "duckdb", "onnxruntime", "pyarrow", "pydantic", "hnswlib", "llama_cpp")
QUERY = "when did Caroline go to the support group"

#: the vocabulary of the store's texts (split where used)
NAMES = "Caroline Melanie Jon Gina John Maria Tim Audrey Andrew Nate Joanna Deborah"
WORDS = (
    "support group painting camping beach concert guitar pottery adoption school museum garden "
    "bakery marathon hiking novel piano recipe puppy vacation wedding birthday office project "
    "deadline meeting doctor family friends weekend morning evening library market river city "
    "mountain train flight hotel coffee dinner lunch photo sunset festival workshop class"
)
VERBS = "went visited talked loved planned finished started joined painted found"


def texts(size: int, seed: int = 0) -> list[str]:
    """``size`` random-ish sentences: a name, a verb, 6-18 random words and a date."""
    rng = random.Random(seed)
    names, vocabulary, verbs = NAMES.split(), WORDS.split(), VERBS.split()
    out = []
    for _ in range(size):
        words = " ".join(rng.choice(vocabulary) for _ in range(rng.randint(6, 18)))
        day = f"{rng.randint(1, 28)} {rng.choice(('May', 'June', 'July'))} 2023"
        out.append(f"{rng.choice(names)} {rng.choice(verbs)} {words} on {day}.")
    return out


BUILD = """
import sys
from localmem import Memory
path, size = sys.argv[1], int(sys.argv[2])
sys.path.insert(0, sys.argv[3])
from bench_cli_start import texts
with Memory.open(path) as mem:
    mem.add_many(texts(size), batch_size=500, mine="off", evolve=False, infer=False)
    print(mem.count(), "memories", file=sys.stderr)
"""


def build_store(python: str, after: Path, store: Path, size: int) -> None:
    """The benchmark's store, once (kept between runs)."""
    done = store / "bench-built"  # written last: a build cut short is rebuilt
    if done.exists():
        return
    shutil.rmtree(store, ignore_errors=True)
    print(f"building {size} memories in {store} (once)...", file=sys.stderr)
    store.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["nice", "-n", "15", python, "-c", BUILD, str(store), str(size), str(ROOT / "scripts")],
        env=env_for(after),
        check=True,
    )
    done.write_text(f"{size}\n", encoding="utf-8")


def env_for(tree: Path) -> dict[str, str]:
    """The environment of a command run from ``tree``'s code."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    env.pop("LOCALMEM_DEBUG", None)
    return env


def run_once(python: str, tree: Path, argv: list[str], cwd: str) -> tuple[float, float, float]:
    """One whole process: (wall seconds, peak RSS in MB, CPU seconds: user + system).

    The CPU time says what the process itself cost, which the machine's load moves far less
    than the wall time (a loaded machine makes a process wait for a core, not work more)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [python, "-m", "localmem", *argv],
        env=env_for(tree),
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}): {err.strip()}")
    return wall, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime  # KB on Linux


def heavy_imports(python: str, tree: Path, argv: list[str], cwd: str) -> tuple[list[str], float]:
    """The heavy modules a command imports and the cumulative import time of everything it
    imported (``-X importtime``, seconds)."""
    out = subprocess.run(
        [python, "-X", "importtime", "-m", "localmem", *argv],
        env=env_for(tree),
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    found, total = set(), 0.0
    for line in out.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = line.split("|")
        if name.strip() in HEAVY:
            found.add(name.strip())
        if name.startswith(" ") and not name.startswith("  ") and cumulative.strip().isdigit():
            total += int(cumulative) / 1e6  # a top-level import (one space of indent)
    return sorted(found), total


#: where an in-process search's time goes, step by step, in one child process (each import
#: counts only what the steps before it did not already import)
STEPS = """
import importlib, json, sys, time
modules = ["localmem.cli", "numpy", "pyarrow", "duckdb", "localmem.config", "hnswlib",
           "localmem.store.memories", "localmem.retrieval.pipeline", "localmem.mechanisms",
           "localmem.memory", "onnxruntime"]
marks, last = {}, time.perf_counter()
def mark(name):
    global last
    now = time.perf_counter()
    marks[name], last = now - last, now
for name in modules:
    importlib.import_module(name)
    mark("import " + name)
from localmem.memory import Memory
mem = Memory.open(sys.argv[1], create=False)
mark("Memory.open")
mem.embedder.embed_query("warm up")
mark("embedder load (first query)")
mem.search(sys.argv[2], k=5)
mark("first search")
mem.search(sys.argv[2] + " again", k=5)
mark("second search")
mem.close()
print(json.dumps(marks))
"""


def breakdown(python: str, tree: Path, store: Path, runs: int, cwd: str) -> dict[str, list]:
    """Each step's seconds over ``runs`` child processes (see :data:`STEPS`)."""
    steps: dict[str, list] = {}
    for _ in range(runs):
        out = subprocess.run(
            [python, "-c", STEPS, str(store), QUERY],
            env=env_for(tree),
            cwd=cwd,
            capture_output=True,
            text=True,
            check=True,
        )
        for name, seconds in json.loads(out.stdout.strip().splitlines()[-1]).items():
            steps.setdefault(name, []).append(seconds)
    return steps


def start_server(python: str, tree: Path, store: Path, cwd: str) -> subprocess.Popen:
    """``localmem serve STORE``, once it answers (its discovery file is written)."""
    server = subprocess.Popen(
        [python, "-m", "localmem", "serve", str(store)],
        env=env_for(tree),
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = server.stderr.readline() if server.stderr else ""
    if "serving" not in line:
        server.kill()
        raise SystemExit(f"localmem serve did not start: {line.strip()}")
    return server


def measure(args: argparse.Namespace) -> dict[str, dict[str, list]]:
    """Every (case, side): wall times, peak RSS, heavy modules, import time; and "steps":
    where an in-process search spends its time."""
    python, store = args.python, args.stores / f"store-{args.size}"
    build_store(python, args.after, store, args.size)
    sides = {"before": args.before.resolve(), "after": args.after.resolve()}
    search = ["search", QUERY, "--store", str(store), "-k", "5"]
    for tree in sides.values():  # as an installed package is: byte-compiled (pip does so), even
        # where PYTHONDONTWRITEBYTECODE keeps a run from writing its .pyc files
        subprocess.run([python, "-m", "compileall", "-q", str(tree / "localmem")], check=True)
    results: dict[str, dict[str, list]] = {}
    with tempfile.TemporaryDirectory() as cwd:
        os.environ["LOCALMEM_HOME"] = str(Path(cwd) / "home")  # no user's stores touched

        def rounds(case: str, argv: list[str]) -> None:
            used = dict(sides)
            for name, tree in sides.items():
                try:
                    run_once(python, tree, argv, cwd)  # warm the page cache first
                except SystemExit as exc:  # the old `show` fails through a server
                    results[f"{case}|{name}"] = {"failed": [str(exc).splitlines()[0]]}
                    del used[name]
            for _ in range(args.runs):
                for name, tree in used.items():
                    wall, rss, cpu = run_once(python, tree, argv, cwd)
                    row = results.setdefault(f"{case}|{name}", {"wall": [], "rss": [], "cpu": []})
                    row["wall"].append(wall)
                    row["rss"].append(rss)
                    row["cpu"].append(cpu)
            for name, tree in used.items():
                heavy, total = heavy_imports(python, tree, argv, cwd)
                results[f"{case}|{name}"]["heavy"] = heavy
                results[f"{case}|{name}"]["imports"] = [total]

        results["steps"] = breakdown(python, sides["after"], store, args.runs, cwd)
        rounds("localmem --help", ["--help"])
        rounds("search, no server (10k store)", search)
        listed = subprocess.run(
            [python, "-m", "localmem", "list", "--store", str(store), "--limit", "1", "--json"],
            env=env_for(sides["after"]),
            cwd=cwd,
            capture_output=True,
            text=True,
            check=True,
        )
        shown = json.loads(listed.stdout)[0]["id"][:8]
        server = start_server(python, sides["after"], store, cwd)
        try:
            rounds("search through `localmem serve`", search)
            rounds("show through `localmem serve`", ["show", shown, "--store", str(store)])
        finally:
            server.terminate()
            server.wait(timeout=60)
    return results


def report(results: dict[str, dict[str, list]], args: argparse.Namespace, load: str) -> str:
    """The markdown section."""
    from lab.report import provenance

    lines = [
        "## CLI start-up: before and after (issue 34, item 4)",
        "",
        provenance(
            f"python scripts/bench_cli_start.py --before {args.before} --after {args.after} "
            f"--runs {args.runs} --size {args.size} --stores {args.stores}"
        ),
        f"- load (`uptime` before / after the run): {load}",
        f"- store: {args.size} random-word sentences (seeded; see the script), default "
        "embedder, built once outside the repository; the server is `--after`'s in both columns",
        f"- each figure: one whole `python -m localmem ...` process, median (fastest) of "
        f"{args.runs} alternated runs, both trees byte-compiled first; heavy = which of "
        f"{', '.join(HEAVY)} it imported "
        "(`-X importtime`); imports = the sum of its top-level imports' cumulative time; "
        "CPU s = the process's user + system time (what it cost, whatever the load)",
        "",
        "| command | side | wall s, median (min) | CPU s, median (min) | peak RSS MB | imports s "
        "| heavy modules |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    cases = list(dict.fromkeys(key.split("|")[0] for key in results if "|" in key))
    for case in cases:
        failed = False
        for side in ("before", "after"):
            row = results[f"{case}|{side}"]
            if "failed" in row:
                lines.append(f"| {case} | {side} | {row['failed'][0]} | | | | |")
                failed = True
                continue
            wall, rss, cpu = row["wall"], row["rss"], row["cpu"]
            lines.append(
                f"| {case} | {side} | {statistics.median(wall):.3f} ({min(wall):.3f}) | "
                f"{statistics.median(cpu):.3f} ({min(cpu):.3f}) | "
                f"{statistics.median(rss):.0f} | {row['imports'][0]:.3f} | "
                f"{', '.join(row['heavy']) or 'none'} |"
            )
        if failed:
            continue
        ratios = [
            statistics.median(results[f"{case}|after"][key])
            / statistics.median(results[f"{case}|before"][key])
            for key in ("wall", "cpu")
        ]
        lines.append(f"| {case} | after / before | {ratios[0]:.2f} | {ratios[1]:.2f} | | | |")
    steps = results["steps"]
    lines += [
        "",
        f"Where a search without a server spends its time (`--after`, one process, median "
        f"(min) of {args.runs}; each import counts only what the rows above did not import):",
        "",
        "| step | s, median (min) |",
        "|---|---:|",
    ]
    for name, seconds in steps.items():
        lines.append(f"| {name} | {statistics.median(seconds):.3f} ({min(seconds):.3f}) |")
    total = [sum(run) for run in zip(*steps.values(), strict=True)]
    lines.append(f"| total | {statistics.median(total):.3f} ({min(total):.3f}) |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, required=True, help="checkout of the old code")
    ap.add_argument("--after", type=Path, default=ROOT, help="checkout of the new code")
    ap.add_argument("--python", default=sys.executable, help="interpreter (with the deps)")
    ap.add_argument("--stores", type=Path, default=Path("/work/bench-stores/cli"))
    ap.add_argument("--size", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--docs", type=Path, default=ROOT / "docs" / "benchmarks.md")
    args = ap.parse_args()
    if shutil.which("uptime") is None:
        raise SystemExit("needs uptime (procps) to state the load")
    uptime = ["uptime"]
    load_before = subprocess.run(uptime, capture_output=True, text=True).stdout.strip()
    results = measure(args)
    load_after = subprocess.run(uptime, capture_output=True, text=True).stdout.strip()
    text = report(results, args, f"`{load_before}` / `{load_after}`")
    print(text)
    from lab.report import write_section

    write_section(args.docs, "cli-start", text)


if __name__ == "__main__":
    main()
