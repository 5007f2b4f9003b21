"""A DuckDB defect, reproduced without localmem (issue 30 item 3): after a crash, replaying the
WAL loses an UPDATE that set a VARCHAR from NULL to a value.

    python scripts/duckdb_wal_update.py          # prints the DuckDB version and each case

What it takes, all of it (each case below leaves one ingredient out, and the value survives):

1. a table with an index (``CREATE INDEX``; a PRIMARY KEY alone is not enough);
2. a VARCHAR (or JSON) column that a checkpoint wrote with some NULLs among values (DuckDB
   stores it DICT_FSST with an "Empty Validity" segment: the NULLs live in the dictionary);
3. a committed transaction that rewrites a row of that table (an UPDATE of a list column or of
   an indexed column, which DuckDB does as delete + insert);
4. a later committed transaction that updates that VARCHAR of another checkpointed row in
   place, from NULL to a value;
5. the process dies before a checkpoint (kill -9), and the database is opened again: the WAL
   is replayed and the value reads NULL. Other columns of the same UPDATE (a TIMESTAMP) keep
   their new value. A value -> value update survives, as does a NULL -> value update that
   itself rewrites the row (it also sets the list column).

In localmem this was ``superseded_by`` (and ``metadata``) of ``memories``: a kill -9 after an
acknowledged supersession left ``valid_to`` set and ``superseded_by`` NULL (12 of 187 with
server kills). The SQL of each case is printed so that it can be filed upstream as is.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import duckdb

SETUP = [
    "CREATE TABLE t (id INTEGER, l INTEGER[], s VARCHAR)",
    # half the rows hold a value, half NULL: s is stored DICT_FSST with "Empty Validity"
    "INSERT INTO t SELECT i, [i], CASE WHEN i < 5 THEN 'value ' || i END FROM range(10) r(i)",
    "CREATE INDEX t_id ON t (id)",
]
REWRITE = "UPDATE t SET l = [0] WHERE id = 0"  # a list column: delete + insert
SET_NULL_TO_VALUE = "UPDATE t SET s = 'written' WHERE id = 9"  # row 9 held NULL
CHECK = "SELECT s FROM t WHERE id = 9"

CASES = {
    "the defect: rewrite, then NULL -> value": (SETUP, [REWRITE, SET_NULL_TO_VALUE]),
    "no index": ([SETUP[0], SETUP[1]], [REWRITE, SET_NULL_TO_VALUE]),
    "no earlier rewrite": (SETUP, [SET_NULL_TO_VALUE]),
    "both in one transaction": (SETUP, ["BEGIN", REWRITE, SET_NULL_TO_VALUE, "COMMIT"]),
    "the update rewrites its row too": (
        SETUP,
        [REWRITE, "UPDATE t SET s = 'written', l = l WHERE id = 9"],
    ),
    "an indexed column rewritten instead": (
        SETUP,
        ["UPDATE t SET id = 100 WHERE id = 0", SET_NULL_TO_VALUE],
    ),
}

# the writer: runs the statements, prints what it reads, dies without a checkpoint (kill -9)
WRITER = """
import duckdb, json, os, signal, sys
con = duckdb.connect(sys.argv[1])
for statement in json.loads(sys.argv[2]):
    con.execute(statement)
print(con.execute(sys.argv[3]).fetchall(), flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def run_case(folder: Path, setup: list[str], writes: list[str]) -> tuple[str, list]:
    """What the writer read before it was killed, and what a fresh open reads."""
    import json

    path = folder / "t.duckdb"
    con = duckdb.connect(str(path))
    for statement in setup:
        con.execute(statement)
    con.execute("CHECKPOINT")
    con.close()
    proc = subprocess.run(
        [sys.executable, "-c", WRITER, str(path), json.dumps(writes), CHECK],
        capture_output=True,
        text=True,
    )
    before = proc.stdout.strip()
    con = duckdb.connect(str(path), read_only=True)  # replays the WAL
    after = con.execute(CHECK).fetchall()
    con.close()
    return before, after


def main() -> int:
    print(f"duckdb {duckdb.__version__}, Python {sys.version.split()[0]}, {sys.platform}")
    print("setup (then CHECKPOINT, then a new process runs the writes and is killed -9):")
    for statement in SETUP:
        print(f"  {statement};")
    lost = False
    for name, (setup, writes) in CASES.items():
        with tempfile.TemporaryDirectory() as tmp:
            before, after = run_case(Path(tmp), setup, writes)
        gone = after == [(None,)]
        lost |= name.startswith("the defect") and gone
        print(f"\n{name}: {'LOST' if gone else 'kept'}")
        for statement in writes:
            print(f"  {statement};")
        print(f"  read before the kill: {before}; after reopening: {after}")
    return 0 if lost else 1  # 1: this DuckDB no longer has the defect


if __name__ == "__main__":
    sys.exit(main())
