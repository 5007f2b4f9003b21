"""Racing writers and server kills (issue 30), run by ``scripts/faults.py --races``.

Three trials, each on real parts (a DuckDB file, hnswlib, MiniLM, `localmem serve` processes):

- **pairs**: two writers change one memory at once (every pair of update, delete, restore and
  purge, on a live or a deleted memory), in process (two threads of one ``Memory``) and served
  (two ``Memory.connect`` clients of one server). After each pair a default search runs; at the
  end, and again after a restart, every BM25 document, posting and vector is compared with the
  table. Counted: index entries out of step, searches that raised, untyped errors.
- **infer**: T threads (2..16) say where one person lives, then one more fact moves them;
  and T threads each say the same five facts. Counted: current homes after the race and after
  the move (1 is right), stored duplicates (0 is right).
- **kills**: an infer + update load (a new text for a note, a move of a person whose home
  is in a checkpointed row, new metadata for a note) through ``localmem serve`` or in a child
  process, and that process killed with SIGKILL at a random moment; the store is read back
  with plain DuckDB (what the WAL replay alone gives), then opened and checked by ``doctor``,
  and read back again. Counted: acknowledged supersessions whose memory lacks the successor
  the client was told, acknowledged metadata updates that are gone.

To measure an older checkout, run from inside it with ``PYTHONPATH`` naming it (``cd OLD &&
PYTHONPATH=OLD python NEW/scripts/faults.py --races``): children run ``python -c`` and ``-m``,
which put the working folder first on the path. The trials use only the public API and SQL.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

from lab.served import start_server, stop_server

OPS = ("update", "delete", "restore", "purge")
CITIES = [
    "Paris", "Rome", "Berlin", "Oslo", "Lima", "Quito", "Cairo", "Dakar",
    "Tokyo", "Seoul", "Delhi", "Dhaka", "Lagos", "Accra", "Hanoi", "Manila",
]  # fmt: skip
FACTS = [
    "I play the cello",
    "My sister is called Maria",
    "I am allergic to peanuts",
    "I drive a red bicycle",
    "My dog is named Rex",
]


def out_of_step(db_path: Path) -> dict[str, int]:
    """Index entries that disagree with the table, from a closed store's files: the tables
    with plain DuckDB, the vector index with hnswlib and its sidecar."""
    import duckdb
    import hnswlib

    con = duckdb.connect(str(db_path / "localmem.duckdb"), read_only=True)
    live = {
        r[0]
        for r in con.execute(
            "SELECT label FROM memories WHERE NOT deleted AND embedding IS NOT NULL"
        ).fetchall()
    }
    docs = {r[0] for r in con.execute("SELECT label FROM lex_docs").fetchall()}
    posted = {r[0] for r in con.execute("SELECT DISTINCT label FROM lex_postings").fetchall()}
    dim = int(con.execute("SELECT value FROM meta WHERE key = 'embed_dim'").fetchone()[0])
    con.close()
    sidecar = json.loads((db_path / "vectors.json").read_text())
    index = hnswlib.Index(space="ip", dim=dim)
    index.load_index(str(db_path / "vectors.hnsw"), max_elements=0)
    in_index = set(index.get_ids_list()) - set(sidecar["deleted"])
    return {
        "lexical docs of dead memories": len(docs - live),
        "postings of dead memories": len(posted - live),
        "live memories without a doc": len(live - docs),
        "vectors of dead memories": len(in_index - live),
        "live memories without a vector": len(live - in_index),
    }


def race(*calls):
    """Run the calls at once (a barrier lines them up); what each returned or raised."""
    barrier = threading.Barrier(len(calls))
    results: list = [None] * len(calls)

    def run(i, call):
        barrier.wait()
        try:
            results[i] = call()
        except BaseException as exc:
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def _call(mem, op: str, memory_id: str, n: int):
    if op == "update":
        return lambda: mem.update(memory_id, content=f"revised text {n} about bananas and figs")
    return lambda: getattr(mem, op)(memory_id)


# -- pairs ------------------------------------------------------------------------------------
def racing_pairs(root: Path, n: int, *, served: bool, seed: int) -> dict:
    """``n`` racing pairs on fresh memories of one store; the counts of the module docstring."""
    from localmem import LocalMemError, Memory

    rng = random.Random(seed)
    store = root / ("pairs-served" if served else "pairs")
    with Memory.open(store) as mem:
        mem.add_many([f"background note {i} about pears and plums" for i in range(50)])
        items = mem.add_many([f"memory {i} about apples and bananas" for i in range(n)])
        start_deleted = [rng.random() < 0.3 for _ in range(n)]
        for item, deleted in zip(items, start_deleted, strict=True):
            if deleted:
                mem.delete(item.id)
    proc = start_server(store) if served else None
    if served:
        from localmem.remote import connect

        writers = [connect(store), connect(store)]
    else:
        writers = [Memory.open(store)] * 2
    outcomes: Counter = Counter()
    raised: list[str] = []
    began = time.monotonic()
    try:
        for i, item in enumerate(items):
            first, second = OPS[i % 4], OPS[(i // 4) % 4]
            results = race(
                _call(writers[0], first, item.id, 2 * i),
                _call(writers[1], second, item.id, 2 * i + 1),
            )
            for r in results:
                if isinstance(r, LocalMemError):
                    outcomes[type(r).__name__] += 1
                elif isinstance(r, BaseException):
                    outcomes["untyped"] += 1
                    raised.append(f"{type(r).__name__}: {r}")
                else:
                    outcomes["ok"] += 1
            try:
                writers[0].search("bananas and figs", k=5)
            except BaseException as exc:
                outcomes["search raised"] += 1
                raised.append(f"search: {type(exc).__name__}: {exc}")
    finally:
        seconds = time.monotonic() - began
        if served:
            stop_server(proc)
        else:
            writers[0].close()
    after = out_of_step(store)
    with Memory.open(store) as mem:  # a restart: what opening repairs, and a search
        notices = list(mem.store.notices)
        try:
            mem.search("bananas and figs", k=5)
        except BaseException as exc:
            outcomes["search raised after restart"] += 1
            raised.append(f"search after restart: {type(exc).__name__}: {exc}")
    reopened = out_of_step(store)
    return {
        "trial": "pairs served" if served else "pairs in process",
        "pairs": n,
        "outcomes": dict(outcomes),
        "out_of_step": after,
        "out_of_step_total": sum(after.values()),
        "out_of_step_after_restart": sum(reopened.values()),
        "searches_raised": outcomes["search raised"] + outcomes["search raised after restart"],
        "notices_on_restart": notices,
        "raised": raised[:5],
        "seconds": round(seconds, 1),
    }


# -- infer ------------------------------------------------------------------------------------
def _homes(mem, user: str) -> list[str]:
    items = mem.list(user_id=user, limit=10000)
    return [m.content for m in items if m.valid_to is None and "lives in" in m.content]


def racing_infer(root: Path, threads: int, rounds: int) -> dict:
    """``rounds`` races of ``threads`` inferences, contradicting and identical."""
    from localmem import Memory

    store = root / f"infer-{threads}"
    after_race, after_move, duplicates, failed = [], [], 0, 0
    began = time.monotonic()
    with Memory.open(store) as mem:
        for r in range(rounds):
            user = f"person{r}"
            name = f"Person{r}"
            results = race(
                *(
                    (lambda c=c, u=user, n=name: mem.infer(f"I live in {c}", user_id=u, speaker=n))
                    for c in CITIES[:threads]
                )
            )
            failed += sum(isinstance(x, BaseException) for x in results)
            after_race.append(len(_homes(mem, user)))
            mem.infer("I live in Zurich", user_id=user, speaker=name)
            after_move.append(len(_homes(mem, user)))
            said = f"said{r}"
            results = race(
                *(
                    (lambda u=said: [mem.infer(f, user_id=u, speaker="Bo") for f in FACTS])
                    for _ in range(threads)
                )
            )
            failed += sum(isinstance(x, BaseException) for x in results)
            stored = Counter(m.content for m in mem.list(user_id=said, limit=10000))
            duplicates += sum(c - 1 for c in stored.values())
    return {
        "trial": f"infer T={threads}",
        "threads": threads,
        "rounds": rounds,
        "current_after_race_max": max(after_race),
        "current_after_move_max": max(after_move),
        "duplicates": duplicates,
        "failed_calls": failed,
        "seconds": round(time.monotonic() - began, 1),
    }


# -- kills ------------------------------------------------------------------------------------
USERS = 60


def kill_template(root: Path) -> Path:
    """A closed (checkpointed) store: notes (half with metadata), the homes of :data:`USERS`
    people, half of them moved once, so ``superseded_by`` and ``metadata`` hold values among
    NULLs (what the DuckDB defect needs) and every person has a current home in a checkpointed
    row for the load to end."""
    from localmem import Memory

    template = root / "kill-template"
    with Memory.open(template) as mem:
        mem.add_many(
            [
                {"content": f"note {i} about the budget of area {i}", "metadata": {"area": i}}
                if i % 2
                else f"note {i} about the budget of area {i}"
                for i in range(40)
            ]
        )
        for u in range(USERS):
            for city in CITIES[: 1 + u % 2]:
                mem.infer(f"I live in {city}", user_id=f"u{u}", speaker=f"Person{u}")
    return template


def _load(writer, rng: random.Random, ack) -> None:
    """Update notes and move people through ``writer`` (a ``Memory`` or a client) until it
    fails (its server or process died); each acknowledged call is passed to ``ack``:
    ``ack("move", old, new)`` for a supersession, ``ack("meta", note, round)``."""
    notes = [m.id for m in writer.list(limit=200) if m.content.startswith("note")]
    people = list(range(USERS))
    rng.shuffle(people)
    r = 0
    while True:
        r += 1
        u = people[r % USERS]
        try:
            # a new text rewrites its row (a new embedding), then a move ends a home
            writer.update(rng.choice(notes), content=f"note about the budget, revised {r}")
            for a in writer.infer(
                f"I live in {rng.choice(CITIES)}", user_id=f"u{u}", speaker=f"Person{u}"
            ):
                if a.event == "INVALIDATE" and a.target is not None:
                    ack("move", a.target.id, a.memory.id)
            note = rng.choice(notes)
            writer.update(note, metadata={"round": r})
            ack("meta", note, r)
        except Exception:  # the server died mid-call: nothing more is acknowledged
            return


# the in-process load: a child that writes and prints each acknowledgement, until killed
LOAD = """
import json, random, sys
sys.path.insert(0, sys.argv[3])
import faults_races
from localmem import Memory
mem = Memory.open(sys.argv[1])
print(json.dumps(["ready"]), flush=True)
faults_races._load(mem, random.Random(int(sys.argv[2])),
                   lambda *a: print(json.dumps(a), flush=True))
"""


def kill_trial(root: Path, template: Path, trial: int, rng: random.Random, served: bool) -> dict:
    """One kill: copy the template, load it (through a server, or in a child process), kill -9
    the process that holds the store, read it back with plain DuckDB, then open it and run
    doctor, and read it back again."""
    import duckdb

    from localmem.cli.admin import doctor_report

    store = root / f"kill-{trial}"
    shutil.rmtree(store, ignore_errors=True)
    shutil.copytree(template, store)
    acks: list = []
    if served:
        from localmem.remote import connect

        proc = start_server(store)
        seed = rng.randrange(2**31)
        loader = threading.Thread(
            target=lambda: _load(connect(store), random.Random(seed), lambda *a: acks.append(a)),
            daemon=True,
        )
    else:
        here = str(Path(__file__).resolve().parent)
        proc = subprocess.Popen(
            [sys.executable, "-c", LOAD, str(store), str(rng.randrange(2**31)), here],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert json.loads(proc.stdout.readline()) == ["ready"]

        def read() -> None:
            for line in proc.stdout:
                if line.endswith("\n"):  # a complete line: the call returned before it
                    acks.append(tuple(json.loads(line)))

        loader = threading.Thread(target=read, daemon=True)
    loader.start()
    time.sleep(rng.uniform(1.0, 8.0))
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    loader.join(timeout=60)
    moves = [(a[1], a[2]) for a in acks if a[0] == "move"]
    metadata = {a[1]: a[2] for a in acks if a[0] == "meta"}
    con = duckdb.connect(str(store / "localmem.duckdb"), read_only=True)  # the WAL replayed
    raw, raw_meta = _without_successor(con, moves), _metadata_lost(con, metadata)
    con.close()
    report = doctor_report(store)  # opens (repairs) and checks
    con = duckdb.connect(str(store / "localmem.duckdb"), read_only=True)
    after, after_meta = _without_successor(con, moves), _metadata_lost(con, metadata)
    con.close()
    shutil.rmtree(store, ignore_errors=True)
    return {
        "acked": len(moves),
        "raw": raw,
        "after": after,
        "metadata_acked": len(metadata),
        "metadata_lost": after_meta,
        "raw_metadata_lost": raw_meta,
        "doctor_ok": report["ok"],
    }


def _without_successor(con, moves: list[tuple[str, str]]) -> int:
    lost = 0
    for old, new in moves:
        row = con.execute(
            "SELECT valid_to IS NOT NULL, superseded_by FROM memories WHERE id = ?", [old]
        ).fetchone()
        lost += row != (True, new)
    return lost


def _metadata_lost(con, acked: dict[str, int]) -> int:
    """Notes whose metadata is older than the last round acknowledged for them (the last
    update sent may or may not have landed: only a later round is also right)."""
    lost = 0
    for note, r in acked.items():
        (meta,) = con.execute("SELECT metadata FROM memories WHERE id = ?", [note]).fetchone()
        lost += meta is None or json.loads(meta).get("round", -1) < r
    return lost


def kills(root: Path, n: int, seed: int, *, served: bool) -> dict:
    """``n`` kill trials (:func:`kill_trial`), summed."""
    rng = random.Random(seed)
    template = kill_template(root)
    rows = []
    began = time.monotonic()
    for t in range(n):
        row = kill_trial(root, template, t, rng, served)
        rows.append(row)
        print(
            f"kill {t + 1:>3}/{n}: {row['acked']} supersessions acknowledged, "
            f"{row['raw']} without successor after replay, {row['after']} after reopen + doctor;"
            f" metadata {row['raw_metadata_lost']} / {row['metadata_lost']} of "
            f"{row['metadata_acked']} lost",
            flush=True,
        )
    return {
        "trial": "server kills" if served else "process kills",
        "kills": n,
        "acked": sum(r["acked"] for r in rows),
        "raw_without_successor": sum(r["raw"] for r in rows),
        "without_successor": sum(r["after"] for r in rows),
        "metadata_acked": sum(r["metadata_acked"] for r in rows),
        "raw_metadata_lost": sum(r["raw_metadata_lost"] for r in rows),
        "metadata_lost": sum(r["metadata_lost"] for r in rows),
        "doctor_bad": sum(not r["doctor_ok"] for r in rows),
        "seconds": round(time.monotonic() - began, 1),
    }


def run(root: Path, *, pairs: int, kill_count: int, threads: list[int], rounds: int, seed: int):
    """Every trial; one result dict each (printed as it ends)."""
    os.environ.setdefault("LOCALMEM_HOME", str(root / "home"))
    results = []
    for served in (False, True):
        if pairs:
            results.append(racing_pairs(root, pairs, served=served, seed=seed))
            print(json.dumps(results[-1]), flush=True)
    for t in threads:
        results.append(racing_infer(root, t, rounds))
        print(json.dumps(results[-1]), flush=True)
    for served in (True, False):
        if kill_count:
            results.append(kills(root, kill_count, seed, served=served))
            print(json.dumps(results[-1]), flush=True)
    return results


def markdown(results: list[dict], command: str, header: str) -> str:
    """The section of docs/benchmarks.md for one run."""
    lines = [header, "", f"`{command}`", ""]
    pairs = [r for r in results if r["trial"].startswith("pairs")]
    if pairs:
        lines += [
            "| racing pairs | n | index entries out of step (after / after restart) | "
            "searches that raised | untyped errors | typed errors | s |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in pairs:
            typed = sum(v for k, v in r["outcomes"].items() if k not in ("ok", "untyped"))
            typed -= r["searches_raised"]
            lines.append(
                f"| {r['trial']} | {r['pairs']} | {r['out_of_step_total']} / "
                f"{r['out_of_step_after_restart']} | {r['searches_raised']} | "
                f"{r['outcomes'].get('untyped', 0)} | {typed} | {r['seconds']} |"
            )
        lines.append("")
    infers = [r for r in results if r["trial"].startswith("infer")]
    if infers:
        lines += [
            "| racing infer | rounds | most current homes after the race | after a later move "
            "| duplicates of identical facts | failed calls | s |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in infers:
            lines.append(
                f"| T={r['threads']} | {r['rounds']} | {r['current_after_race_max']} | "
                f"{r['current_after_move_max']} | {r['duplicates']} | {r['failed_calls']} | "
                f"{r['seconds']} |"
            )
        lines.append("")
    kill_rows = [r for r in results if r["trial"].endswith("kills")]
    if kill_rows:
        lines += [
            "| kill -9 of | n | acknowledged supersessions | without their successor after the "
            "WAL replay (plain DuckDB) | after reopen + doctor | acknowledged metadata updates "
            "| lost after the replay / after reopen | doctor BAD | s |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for r in kill_rows:
            lines.append(
                f"| {'a server' if r['trial'] == 'server kills' else 'a writing process'} | "
                f"{r['kills']} | {r['acked']} | {r['raw_without_successor']} | "
                f"{r['without_successor']} | {r['metadata_acked']} | {r['raw_metadata_lost']} / "
                f"{r['metadata_lost']} | {r['doctor_bad']} | {r['seconds']} |"
            )
        lines.append("")
    return "\n".join(lines)
