"""Input reliability (issue 16): reruns of one import, and files ingest must refuse quickly.

Usage:
    python scripts/bench_input.py [--reruns 5] [--lines 3000] [--mb 16]
        [--compare /path/to/another/checkout] [--out docs/benchmarks.md]

Everything runs the real ``localmem`` command in subprocesses, so ``--compare`` can run the same
cases against another checkout (its folder goes first on PYTHONPATH; e.g. an export of main)
side by side, on the same machine in the same run. Cases:

- *reruns*: one JSONL file of ``--lines`` lines drawn with repetition from a pool of texts, so
  it holds fewer distinct lines, ingested ``--reruns`` times into one store; the rows after
  each run.
- *paragraph*: a ``--mb`` MB text file that is one paragraph: seconds until ingest gives up.
- */dev/zero* (address space capped at 4 GiB, so the old behaviour fails instead of filling
  the RAM) and a FIFO nobody writes to: seconds until ingest returns, and what it says.

Writes the ``input`` section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lab.report import provenance, write_section

ROOT = Path(__file__).resolve().parent.parent


def _cap() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (4 * 2**30, 4 * 2**30))


def localmem(checkout: Path | None, args: list[str], home: Path, timeout: float) -> dict:
    """Run one command; its exit code, seconds, first stderr line (or the timeout)."""
    env = {**os.environ, "LOCALMEM_HOME": str(home)}
    if checkout is not None:
        env["PYTHONPATH"] = str(checkout)
    started = time.perf_counter()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "localmem", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            preexec_fn=_cap,
            cwd=home.parent,  # not this checkout: `python -m` puts the cwd first on sys.path
        )
    except subprocess.TimeoutExpired:
        return {"code": None, "s": time.perf_counter() - started, "said": f"> {timeout:.0f} s"}
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    return {
        "code": proc.returncode,
        "s": time.perf_counter() - started,
        "said": _short(lines[-1], home.parent) if lines else "",
        "out": proc.stdout,
    }


def _short(line: str, work: Path) -> str:
    """An error line without the temporary folder's name."""
    line = line.replace(str(work.parent) + "/", "").replace("localmem: error: ", "")
    return line if len(line) <= 100 else line[:99] + "…"


def reruns(checkout: Path | None, work: Path, path: Path, n: int) -> list[int]:
    store = work / "reruns"
    rows = []
    for _ in range(n):
        localmem(checkout, ["ingest", str(path), "--store", str(store)], work / "home", 900)
        stats = localmem(checkout, ["stats", "--json", "--store", str(store)], work / "home", 300)
        rows.append(json.loads(stats["out"])["memories"])
    return rows


def refusals(checkout: Path | None, work: Path, big: Path, timeout: float) -> dict[str, dict]:
    fifo = work / "pipe.txt"
    if not fifo.exists():
        os.mkfifo(fifo)
    cases = {"paragraph": big, "/dev/zero": Path("/dev/zero"), "FIFO": fifo}
    home, store = work / "home", work / "refusals"
    localmem(checkout, ["add", "warm up", "--store", str(store)], home, 300)  # ONNX export once
    return {
        name: localmem(checkout, ["ingest", str(path), "--store", str(store)], home, timeout)
        for name, path in cases.items()
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reruns", type=int, default=5)
    parser.add_argument("--lines", type=int, default=3000)
    parser.add_argument("--pool", type=int, default=2400, help="texts the lines are drawn from")
    parser.add_argument("--mb", type=int, default=16)
    parser.add_argument("--timeout", type=float, default=300, help="seconds per refusal case")
    parser.add_argument("--compare", type=Path, help="another checkout to run side by side")
    parser.add_argument("--label", help="the other checkout's column (default: its folder)")
    parser.add_argument("--out", default=str(ROOT / "docs" / "benchmarks.md"))
    args = parser.parse_args()

    rng = random.Random(16)
    pool = [
        f"line{i:04d} token{i:04d}x about the {rng.choice(['cache', 'deploy'])}"
        for i in range(args.pool)
    ]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        jsonl = work / "import.jsonl"
        lines = [rng.choice(pool) for _ in range(args.lines)]
        jsonl.write_text("".join(json.dumps({"content": t}) + "\n" for t in lines))
        big = work / "one-paragraph.txt"
        words = " ".join(f"word{rng.randint(0, 999)}" for _ in range(args.mb * 2**20 // 8))
        big.write_text(words[: args.mb * 2**20])
        checkouts = {"this branch": None}
        if args.compare:
            checkouts[args.label or f"`{args.compare.name}`"] = args.compare.resolve()
        results = {}
        for label, checkout in checkouts.items():
            sub = work / label.strip("`").replace(" ", "-")
            sub.mkdir()
            load = os.getloadavg()[0]
            results[label] = {
                "rows": reruns(checkout, sub, jsonl, args.reruns),
                "refusals": refusals(checkout, sub, big, args.timeout),
                "load": load,
            }
            print(label, results[label], file=sys.stderr, flush=True)

    head = "| case | " + " | ".join(results) + " |"
    rule = "|---" * (len(results) + 1) + "|"
    rows_line = (
        "| rows after each run | "
        + " | ".join(", ".join(f"{n:,}" for n in r["rows"]) for r in results.values())
        + " |"
    )
    refusal_lines = []
    for case in ("paragraph", "/dev/zero", "FIFO"):
        cells = []
        for r in results.values():
            got = r["refusals"][case]
            code = "timeout" if got["code"] is None else f"exit {got['code']}"
            cells.append(f"{got['s']:.1f} s, {code}: {got['said'].replace('|', '/')}")
        refusal_lines.append(f"| ingest {case} | " + " | ".join(cells) + " |")
    loads = ", ".join(f"{label} {r['load']:.1f}" for label, r in results.items())
    md = f"""## Input reliability (issue 16)

{provenance(" ".join(["python", *sys.argv]))}
- load (1-minute average when each column started): {loads}

One JSONL file of {args.lines:,} lines ({len(set(lines)):,} distinct) ingested {args.reruns}
times into one store with `localmem ingest`; then `localmem ingest` of a {args.mb} MB
one-paragraph text file, of `/dev/zero` (address space capped at 4 GiB) and of a FIFO nobody
writes to (each stopped after {args.timeout:.0f} s). Every number is a real `localmem`
process, started fresh (its start-up, about 1-2 s, is included).

{head}
{rule}
{rows_line}
{chr(10).join(refusal_lines)}
"""
    write_section(Path(args.out), "input", md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
