"""Fault trials for a store (issue 16): kill -9 at random moments of every kind of write, and
random-byte damage to every file of a store folder.

    python scripts/faults.py --trials 20 --report docs/benchmarks.md   # the full run
    python scripts/faults.py --trials 3                                # CI scale
    python scripts/faults.py --races --report docs/benchmarks.md       # issue 30: racing
                                                     # writers, racing infer, server kills

A kill trial copies a prepared store (or starts from nothing, for ``create``), runs a child
process that writes in a loop and prints what each call acknowledged (a line after the call
returned: ids and their contents, deletions), and kills it with SIGKILL after a random delay.
A damage trial overwrites random bytes (the file keeps its size) of one file of a closed store,
or of a WAL left by a killed writer.

Each trial is then checked in a fresh process: the store opens (repairing derived data), every
acknowledged memory is there with its acknowledged content (an update or deletion that was
attempted but not acknowledged may or may not have happened), dense search finds a sample of
them, and `localmem doctor` is run. Outcomes:

- ``intact``: opened, nothing lost, doctor ok (``repaired`` when opening had to repair
  something: a rebuilt or caught-up index, a creation cut short made again);
- ``detected``: damage to the source of truth (the DuckDB file, its WAL, config.json) refused
  with a typed error or reported BAD by doctor (exit 1): nothing can rebuild it, but nothing
  pretends either;
- ``LOST``: a memory acknowledged before the fault is missing or changed while doctor says ok;
- ``CRASH``: an untyped exception, or a process killed by a signal (a segfault).

Only LOST and CRASH are failures; ``detected`` is a failure for a kill trial or for damage to a
derived file (the index, its sidecar, the lock), which must always be repaired.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

KILL_OPS = ("create", "add_many", "ingest", "update", "delete", "consolidate", "evolve")
DERIVED = ("vectors.hnsw", "vectors.json", "lock")
TRUTH = ("localmem.duckdb", "localmem.duckdb.wal", "config.json")
FAILURES = ("LOST", "CRASH")

# The child: set up, print "ready", then loop over writes printing acknowledgements.
# Lines: {"try": ...} before a call, {"ack": {...}} after it returned.
CHILD = r"""
import json, sys
from localmem import Memory
from localmem.config import Config

def say(**kw):
    sys.stdout.write(json.dumps(kw) + "\n"); sys.stdout.flush()

OP, STORE, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
if OP == "create":
    say(ready=True)
    mem = Memory.open(STORE)
    item = mem.add("the first memory of a new store")
    say(ack={"present": {item.id: item.content}})
    mem.close()
    say(done=True)
    raise SystemExit
mem = Memory.open(STORE)
live = [[m.id, m.content] for m in mem.list(limit=100000)]
say(ready=True)
r = 0
while True:
    r += 1
    if OP == "add_many":
        texts = [f"batch {r} item {j}: a fact about topic {r * 7 + j}" for j in range(8)]
        items = mem.add_many(texts)
        say(ack={"present": {m.id: m.content for m in items}})
    elif OP == "ingest":
        from localmem.ingest import ingest_file
        path = f"{WORK}/round{r}.jsonl"
        lines = [f"ingested round {r} line {j} about subject {r * 13 + j}" for j in range(20)]
        with open(path, "w") as fh:
            fh.write("\n".join(json.dumps({"content": t}) for t in lines) + "\n")
        ingest_file(mem, path)
        say(ack={"contents": lines})
    elif OP == "update":
        target = live[r % len(live)]
        text = f"{target[1].split(' [')[0]} [revised {r}]"
        say(**{"try": {"update": {target[0]: text}}})
        mem.update(target[0], content=text)
        target[1] = text
        say(ack={"present": {target[0]: text}})
    elif OP == "delete":
        if r > len(live):
            say(done=True); break
        target = live[r - 1][0]
        say(**{"try": {"delete": target}})
        mem.delete(target)
        say(ack={"deleted": [target]})
    elif OP == "consolidate":
        from localmem.consolidation import consolidate
        texts = [f"user u1 said in round {r}: I like hiking in the {w} mountains"
                 for w in ("green", "high", "quiet")]
        items = mem.add_many(texts, user_id="u1", kind="message")
        consolidate(mem, user_id="u1")
        made = mem.list(user_id="u1", limit=100000, include_deleted=True)
        say(ack={"present": {m.id: m.content for m in made}})
    elif OP == "evolve":
        item = mem.add(f"round {r}: the rate limiter of service {r % 5} needs a sliding window",
                       evolve=True)
        say(ack={"present": {item.id: item.content}})
"""

# The check, in a fresh process: what opening does, what survived, what doctor says.
CHECK = r"""
import json, sys, traceback
from pathlib import Path
STORE, EXPECT = sys.argv[1], json.loads(Path(sys.argv[2]).read_text())
out = {"opened": False, "notices": [], "missing": [], "wrong": [], "undeleted": [],
       "search_misses": 0, "error": None, "typed": None}
try:
    from localmem import Memory, LocalMemError, NotFoundError
    try:
        mem = Memory.open(STORE, create=EXPECT.get("create", False))
    except LocalMemError as exc:
        out["error"], out["typed"] = str(exc), True
    else:
        out["opened"] = True
        out["notices"] = list(mem.store.notices)
        try:
            contents = {m.content for m in mem.list(limit=1000000, include_deleted=True)}
            for mid, text in EXPECT["present"].items():
                try:
                    item = mem.get(mid, include_deleted=True)
                except NotFoundError:
                    out["missing"].append(mid); continue
                if item.content != text and item.content not in EXPECT["maybe"].get(mid, []):
                    out["wrong"].append(mid)
            out["missing"] += [t for t in EXPECT["contents"] if t not in contents]
            for mid in EXPECT["deleted"]:
                try:
                    if not mem.get(mid, include_deleted=True).deleted:
                        out["undeleted"].append(mid)
                except NotFoundError:
                    out["missing"].append(mid)
            import numpy as np
            live = [m for m in mem.list(limit=200)]
            for m in live[:: max(1, len(live) // 5)][:5]:
                hits = mem.search(m.content, k=10, mode="dense").hits
                if m.id in [h.memory.id for h in hits]:
                    continue
                # near-duplicates (consolidation's rounds) may crowd it out: a miss only when
                # its own similarity beats the last hit's, i.e. the index lost its vector
                q, v = mem.embedder.embed_batch([m.content, m.text_for_embedding])
                out["search_misses"] += float(np.dot(q, v)) > hits[-1].score + 0.03
        except LocalMemError as exc:
            out["error"], out["typed"] = str(exc), True
        finally:
            mem.close()
    from localmem.cli.admin import doctor_report
    try:
        report = doctor_report(Path(STORE))
        out["doctor_ok"] = report["ok"]
        out["doctor_bad"] = [c["check"] + ": " + c["detail"] for c in report["checks"]
                             if not c["ok"]]
    except LocalMemError as exc:
        out["doctor_ok"], out["doctor_bad"] = False, [str(exc)]
except Exception as exc:
    out["error"], out["typed"] = f"{type(exc).__name__}: {exc}", False
    out["traceback"] = traceback.format_exc()[-1500:]
print(json.dumps(out))
"""


def _python(code: str, *args: str, **kwargs) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        **kwargs,
    )


def build_template(folder: Path) -> None:
    """A closed store with 40 memories (some of user u1) and a non-default config.json."""
    code = """
    import sys
    from localmem import Memory
    from localmem.config import Config
    config = Config().with_updates(store={"save_every": 64})
    with Memory.open(sys.argv[1], config=config) as mem:
        mem.add_many([f"seed memory {i} about the {w} of area {i}" for i, w in
                      enumerate(["budget", "schedule", "risk", "design"] * 8)])
        mem.add_many([f"user u1 said: my favourite {w} is number {i}" for i, w in
                      enumerate(["colour", "food", "city", "book"] * 2)],
                     user_id="u1", kind="message")
    """
    proc = _python(code, str(folder))
    proc.communicate(timeout=600)
    if proc.returncode != 0:
        raise SystemExit(f"could not build the template store in {folder}")


def expected_from(acks: list[dict], tries: list[dict], template: dict) -> dict:
    """What must be in the store after the fault: the template's memories and every ack."""
    present = dict(template)
    deleted: list[str] = []
    contents: list[str] = []
    maybe: dict[str, list[str]] = {}
    for ack in acks:
        present.update(ack.get("present", {}))
        deleted += ack.get("deleted", [])
        contents += ack.get("contents", [])
    for tried in tries:  # attempted, never acknowledged: either outcome is right
        for mid, text in tried.get("update", {}).items():
            maybe.setdefault(mid, []).append(text)
    for mid in deleted:
        present.pop(mid, None)
    last_try = tries[-1] if tries else {}
    if "delete" in last_try and last_try["delete"] not in deleted:
        present.pop(last_try["delete"], None)  # deleted or not: both are right
    return {"present": present, "deleted": deleted, "contents": contents, "maybe": maybe}


def run_child(op: str, store: Path, work: Path, delay: float) -> tuple[list, list, bool]:
    """Start a writer, let it work ``delay`` seconds after it is ready, kill -9 it."""
    proc = _python(CHILD, op, str(store), str(work))
    lines: list[str] = []
    ready = threading.Event()

    def read() -> None:  # a complete line is one the child finished printing
        for line in proc.stdout:
            if line.endswith("\n"):
                lines.append(line)
                if '"ready"' in line:
                    ready.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    killed = False
    if ready.wait(timeout=300):
        try:
            proc.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            killed = True
    else:
        proc.kill()
    proc.wait()
    reader.join(timeout=30)
    acks, tries = [], []
    for line in lines:
        msg = json.loads(line)
        if "ack" in msg:
            acks.append(msg["ack"])
        if "try" in msg:
            tries.append(msg["try"])
    return acks, tries, killed


def check(store: Path, expect: dict, work: Path) -> dict:
    """Open, compare and run doctor in a fresh process (a segfault must not end the run)."""
    spec = work / "expect.json"
    spec.write_text(json.dumps(expect))
    proc = _python(CHECK, str(store), str(spec))
    out, _ = proc.communicate(timeout=600)
    if proc.returncode != 0:
        return {"crash": f"check process ended with {proc.returncode}"}
    return json.loads(out.strip().splitlines()[-1])


def classify(result: dict, *, truth_damaged: bool) -> str:
    """intact / repaired / detected / LOST / CRASH (see the module docstring)."""
    if "crash" in result or result.get("typed") is False:
        return "CRASH"
    lost = result.get("missing") or result.get("wrong") or result.get("undeleted")
    if not result["opened"] or result.get("error"):
        return "detected" if not result.get("doctor_ok", False) else "LOST"
    if lost or result.get("search_misses"):
        return "detected" if not result.get("doctor_ok") and truth_damaged else "LOST"
    if not result.get("doctor_ok"):
        return "detected"
    return "repaired" if result["notices"] else "intact"


def template_memories(template: Path) -> dict:
    code = """
    import json, sys
    from localmem import Memory
    with Memory.open(sys.argv[1], create=False) as mem:
        print(json.dumps({m.id: m.content for m in mem.list(limit=100000)}))
    """
    proc = _python(code, str(template))
    out, _ = proc.communicate(timeout=600)
    return json.loads(out.strip().splitlines()[-1])


def damage(path: Path, rng: random.Random) -> str:
    """Overwrite random bytes of a file in place (its size stays); says where."""
    size = path.stat().st_size
    if size == 0:
        path.write_bytes(bytes(rng.getrandbits(8) for _ in range(16)))
        return "16 bytes into an empty file"
    length = min(size, rng.choice([1, 16, 512, 4096, 65536]))
    offset = rng.randrange(0, size - length + 1)
    with open(path, "r+b") as fh:
        fh.seek(offset)
        fh.write(rng.randbytes(length))
    return f"{length} bytes at {offset} of {size}"


def kill_trial(op: str, template: Path, memories: dict, work: Path, rng: random.Random) -> dict:
    store = work / "store"
    if op == "create":
        expected_base: dict = {}
        delay = rng.uniform(0.0, 1.5)
    else:
        shutil.copytree(template, store)
        expected_base = memories
        delay = rng.uniform(0.05, 4.0)
    acks, tries, killed = run_child(op, store, work, delay)
    if op == "create" and not store.exists():
        return {"op": op, "outcome": "intact", "killed": killed, "acks": 0, "note": "no folder"}
    expect = dict(expected_from(acks, tries, expected_base), create=op == "create")
    result = check(store, expect, work)
    outcome = classify(result, truth_damaged=False)
    if outcome == "detected":  # a kill must never need more than a repair of derived data
        outcome = "LOST" if result.get("missing") else "CRASH"
    return {"op": op, "outcome": outcome, "killed": killed, "acks": len(acks), "result": result}


def damage_trial(name: str, template: Path, memories: dict, work: Path, rng: random.Random) -> dict:
    store = work / "store"
    shutil.copytree(template, store)
    expect_base = memories
    if name == "localmem.duckdb.wal":  # a WAL only exists while a writer has uncommitted work
        acks, tries, _ = run_child("add_many", store, work, rng.uniform(0.3, 2.0))
        expect = expected_from(acks, tries, expect_base)
        if not (store / name).exists():
            return {"op": f"damage {name}", "outcome": "intact", "note": "no WAL was left"}
    else:
        expect = expected_from([], [], expect_base)
    where = damage(store / name, rng)
    result = check(store, expect, work)
    outcome = classify(result, truth_damaged=name in TRUTH)
    if outcome == "detected" and name in DERIVED:
        outcome = "CRASH"  # derived data must be rebuilt, never refused
    return {"op": f"damage {name}", "outcome": outcome, "where": where, "result": result}


def run(trials: int, seed: int, ops: list[str], keep: bool = False) -> list[dict]:
    rng = random.Random(seed)
    root = Path(tempfile.mkdtemp(prefix="localmem-faults-"))
    os.environ.setdefault("LOCALMEM_HOME", str(root / "home"))
    template = root / "template"
    build_template(template)
    memories = template_memories(template)
    results = []
    try:
        for op in ops:
            for t in range(trials):
                work = root / f"{op.replace(' ', '_')}-{t}"
                work.mkdir()
                if op.startswith("damage "):
                    row = damage_trial(op.split(" ", 1)[1], template, memories, work, rng)
                else:
                    row = kill_trial(op, template, memories, work, rng)
                results.append(row)
                print(
                    f"{row['op']:<28} {t + 1:>3}/{trials}  {row['outcome']:<9}"
                    f" {row.get('where', '')}",
                    flush=True,
                )
                if row["outcome"] not in FAILURES and not keep:
                    shutil.rmtree(work, ignore_errors=True)
    finally:
        if not keep and not any(r["outcome"] in FAILURES for r in results):
            shutil.rmtree(root, ignore_errors=True)
        else:
            print(f"trial folders kept in {root}", file=sys.stderr)
    return results


def summary(results: list[dict]) -> dict[str, Counter]:
    table: dict[str, Counter] = {}
    for row in results:
        table.setdefault(row["op"], Counter())[row["outcome"]] += 1
    return table


def markdown(results: list[dict], args: argparse.Namespace, seconds: float, load: str) -> str:
    cols = ["intact", "repaired", "detected", "LOST", "CRASH"]
    lines = [
        "## Faults (issue 16)",
        "",
        f"`python scripts/faults.py --trials {args.trials} --seed {args.seed}` on "
        f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC; {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}; load average at the "
        f"start {load}; {seconds / 60:.1f} minutes.",
        "",
        "| trial | n | " + " | ".join(cols) + " |",
        "|---|---|" + "---|" * len(cols),
    ]
    for op, counts in summary(results).items():
        n = sum(counts.values())
        lines.append(f"| {op} | {n} | " + " | ".join(str(counts.get(c, 0)) for c in cols) + " |")
    return "\n".join(lines) + "\n"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--trials", type=int, default=20, help="trials per kind (default 20)")
    p.add_argument("--seed", type=int, default=16)
    p.add_argument("--only", action="append", help="only these kinds (e.g. update, 'damage lock')")
    p.add_argument("--report", type=Path, help="append the table to this markdown file")
    p.add_argument("--json", type=Path, help="write every trial's result here")
    p.add_argument("--keep", action="store_true", help="keep the trial folders")
    p.add_argument("--races", action="store_true", help="the issue 30 trials (faults_races.py)")
    p.add_argument("--pairs", type=int, default=1000, help="racing pairs, each way (--races)")
    p.add_argument("--kills", type=int, default=100, help="server kills (--races)")
    p.add_argument("--threads", type=int, nargs="*", default=[2, 4, 8, 16], help="(--races)")
    p.add_argument("--rounds", type=int, default=5, help="racing infer rounds per T (--races)")
    args = p.parse_args()
    if args.races:
        return races(args)
    ops = args.only or [*KILL_OPS, *(f"damage {name}" for name in (*DERIVED, *TRUTH))]
    load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    start = time.monotonic()
    results = run(args.trials, args.seed, ops, keep=args.keep)
    text = markdown(results, args, time.monotonic() - start, load)
    print(text)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    if args.report:
        with open(args.report, "a", encoding="utf-8") as fh:
            fh.write("\n" + text)
    return 1 if any(r["outcome"] in FAILURES for r in results) else 0


def races(args: argparse.Namespace) -> int:
    """The issue 30 trials (scripts/faults_races.py); a section of the report per run."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import faults_races

    import localmem

    code = Path(localmem.__file__).resolve().parent.parent
    rev = subprocess.run(
        ["git", "-C", str(code), "log", "-1", "--format=%h %s"], capture_output=True, text=True
    ).stdout.strip()[:90]
    load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    root = Path(tempfile.mkdtemp(prefix="localmem-races-"))
    start = time.monotonic()
    try:
        results = faults_races.run(
            root,
            pairs=args.pairs,
            kill_count=args.kills,
            threads=args.threads,
            rounds=args.rounds,
            seed=args.seed,
        )
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    header = (
        f"### Racing writers and server kills (issue 30), code at `{rev}`\n\n"
        f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC; {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}; load average at the "
        f"start {load}; {(time.monotonic() - start) / 60:.1f} minutes."
    )
    command = (
        f"python scripts/faults.py --races --pairs {args.pairs} --kills {args.kills} "
        f"--threads {' '.join(map(str, args.threads))} --rounds {args.rounds} --seed {args.seed}"
    )
    text = faults_races.markdown(results, command, header)
    print(text)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    if args.report:
        with open(args.report, "a", encoding="utf-8") as fh:
            fh.write("\n" + text)
    bad = [
        r
        for r in results
        if r.get("out_of_step_total")
        or r.get("searches_raised")
        or r.get("duplicates")
        or r.get("current_after_race_max", 1) > 1
        or r.get("current_after_move_max", 1) > 1
        or r.get("without_successor")
    ]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
