"""Store-side reliability (issue 16): a cut-short creation, damaged derived files, the lock file,
a damaged database, read-only stores and private permissions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pytest
from store_helpers import filled, run

from localmem import StoreError
from localmem.store import files
from localmem.store.db import DB_FILE
from localmem.store.store import Store
from localmem.store.vectors import INDEX_FILE, SIDECAR_FILE


# -- 1. a kill during creation ------------------------------------------------------------------
def test_empty_duckdb_file_is_initialised_again(capsys, tmp_path):
    # the reproduction: DuckDB made the file, the first migration never committed
    store = tmp_path / "x"
    store.mkdir()
    duckdb.connect(str(store / DB_FILE)).close()
    code, _, err = run(capsys, "add", "--store", str(store), "hi")
    assert code == 0, err
    assert "cut short" in err
    code, out, err = run(capsys, "search", "--store", str(store), "hi", "--json")
    assert code == 0 and json.loads(out)["hits"][0]["content"] == "hi"


def test_doctor_repairs_a_cut_short_creation(capsys, tmp_path):
    store = tmp_path / "x"
    store.mkdir()
    con = duckdb.connect(str(store / DB_FILE))
    con.execute("CREATE TABLE schema_migrations (name VARCHAR PRIMARY KEY, applied_at TIMESTAMP)")
    con.close()
    code, out, err = run(capsys, "doctor", "--store", str(store))
    assert code == 0, out + err
    assert "cut short" in out
    code, out, err = run(capsys, "add", "--store", str(store), "after the repair")
    assert code == 0, err
    assert "cut short" not in err


@pytest.mark.parametrize("size", [0, 100, 4096])
def test_database_file_torn_before_its_headers_is_made_again(capsys, tmp_path, size):
    store = tmp_path / "x"
    store.mkdir()
    duckdb.connect(str(tmp_path / "ref.duckdb")).close()
    (store / DB_FILE).write_bytes((tmp_path / "ref.duckdb").read_bytes()[:size])
    code, _, err = run(capsys, "add", "--store", str(store), "hi")
    assert code == 0, err


def test_a_foreign_duckdb_file_is_never_taken_over(open_memory, tmp_path):
    for i, ddl in enumerate(
        [
            "CREATE TABLE customers AS SELECT 1 AS id",  # someone's data
            "CREATE TABLE customers (id INT)",  # someone's (empty) table
            "CREATE VIEW v AS SELECT 42 AS answer",
        ]
    ):
        store = tmp_path / f"foreign{i}"
        store.mkdir()
        con = duckdb.connect(str(store / DB_FILE))
        con.execute(ddl)
        con.close()
        with pytest.raises(StoreError, match="not a localmem store"):
            open_memory(store)
        con = duckdb.connect(str(store / DB_FILE), read_only=True)
        assert con.execute("SELECT count(*) FROM duckdb_tables()").fetchone()[0] <= 1
        con.close()


def test_a_meta_table_without_the_dimension_is_a_typed_error(tmp_path):
    """A store whose meta table names its embedding model but lost the dimension (an edited or
    damaged file) is a StoreError that says so, not a TypeError from int(None)."""
    folder = tmp_path / "s"
    Store.open(folder, model="m", dim=8).close()
    con = duckdb.connect(str(folder / DB_FILE))
    con.execute("DELETE FROM meta WHERE key = 'embed_dim'")
    con.close()
    with pytest.raises(StoreError, match="no dimension"):
        Store.open(folder, model="m", dim=8)


# -- 2, 3. derived files --------------------------------------------------------------------------
_SEARCH_CHILD = """
import json, sys
from localmem import Memory
with Memory.open(STORE) as m:
    hits = m.search("the risk of project 3", k=5, mode="dense")
    print(json.dumps({"notices": m.store.notices, "n": len(hits.hits)}))
"""


def _search_in_child(store: Path) -> subprocess.CompletedProcess:
    # a child process: on a damaged index hnswlib may crash the interpreter outright
    code = textwrap.dedent(_SEARCH_CHILD).replace("STORE", repr(str(store)))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("offset", [200, 40_000, "middle"])
def test_same_size_damage_to_the_index_is_caught_before_hnswlib_reads_it(
    open_memory, store_path, offset
):
    filled(open_memory, store_path)
    path = store_path / INDEX_FILE
    size = path.stat().st_size
    start = size // 2 if offset == "middle" else offset
    with open(path, "r+b") as fh:
        fh.seek(start)
        fh.write(os.urandom(min(65536, size - start)))
    assert path.stat().st_size == size
    proc = _search_in_child(store_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert any("checksum" in n for n in result["notices"]), result
    assert result["n"] == 5
    mem = open_memory(store_path)
    assert not mem.store.notices  # the rebuilt index was saved with a good checksum


@pytest.mark.parametrize(
    "text",
    [
        "[1,2,3]",
        '"a string"',
        "null",
        "42",
        '{"dim": "384", "bytes": 1, "crc32": 1, "deleted": []}',
        '{"dim": 384, "bytes": 1, "crc32": 1, "deleted": 5}',
        "[" * 100_000,
        "\udcff",
    ],
    ids=["list", "string", "null", "number", "dim-text", "deleted-number", "deep", "not-utf8"],
)
def test_a_sidecar_that_is_not_a_good_object_means_a_rebuild(open_memory, store_path, text):
    filled(open_memory, store_path, 20)
    (store_path / SIDECAR_FILE).write_bytes(text.encode("utf-8", "surrogateescape"))
    mem = open_memory(store_path)
    assert any("rebuilding" in n for n in mem.store.notices)
    assert mem.store.vectors.live_count == 20
    assert len(mem.search("risk of project 2", k=3, mode="dense").hits) == 3


def test_a_changed_number_in_the_sidecar_is_seen(open_memory, store_path):
    filled(open_memory, store_path, 20)
    side = json.loads((store_path / SIDECAR_FILE).read_text())
    side["vec_seq"] += 1000  # would hide every later change from the catch-up
    (store_path / SIDECAR_FILE).write_text(json.dumps(side))
    mem = open_memory(store_path)
    assert any("sidecar damaged" in n for n in mem.store.notices)


# -- 4. the lock file ---------------------------------------------------------------------------
def test_lock_symlink_is_refused_and_its_target_untouched(open_memory, store_path, tmp_path):
    filled(open_memory, store_path, 3)
    victim = tmp_path / "victim"
    victim.write_text("precious")
    (store_path / "lock").unlink()
    (store_path / "lock").symlink_to(victim)
    with pytest.raises(StoreError, match="symbolic link"):
        open_memory(store_path)
    assert victim.read_text() == "precious"


def test_lock_hard_link_is_refused_and_its_target_untouched(open_memory, store_path):
    filled(open_memory, store_path, 3)
    victim = store_path.parent / "victim"
    victim.write_text("precious")
    (store_path / "lock").unlink()
    os.link(victim, store_path / "lock")
    with pytest.raises(StoreError, match="hard link"):
        open_memory(store_path)
    assert victim.read_text() == "precious"


@pytest.mark.parametrize("kind", ["dir", "fifo"])
def test_lock_that_is_not_a_file_is_a_typed_error(capsys, open_memory, store_path, kind):
    filled(open_memory, store_path, 3)
    (store_path / "lock").unlink()
    if kind == "dir":
        (store_path / "lock").mkdir()
    else:
        os.mkfifo(store_path / "lock")
    with pytest.raises(StoreError, match="lock"):
        open_memory(store_path)
    code, _, err = run(capsys, "stats", "--store", str(store_path))
    assert code == 1 and err.startswith("localmem: error:") and "Traceback" not in err


# -- 5. a damaged database -----------------------------------------------------------------------
def _damage_column(path: Path, table: str, column: str) -> None:
    """Overwrite the middle of a DuckDB block holding ``table.column`` with random bytes."""
    con = duckdb.connect(str(path), read_only=True)
    blocks = con.execute(
        f"SELECT DISTINCT block_id FROM pragma_storage_info('{table}') "
        "WHERE column_name = ? AND block_id >= 0",
        [column],
    ).fetchall()
    con.close()
    assert blocks, "the column is stored in no block (checkpoint first)"
    with open(path, "r+b") as fh:
        for (block,) in blocks:
            fh.seek(files.DUCKDB_HEADER_BYTES + block * 262144 + 1000)
            fh.write(os.urandom(4096))


def test_damaged_database_block_gives_a_typed_error_and_doctor_says_bad(
    capsys, open_memory, store_path
):
    filled(open_memory, store_path)  # closing checkpoints: the rows are in blocks now
    _damage_column(store_path / DB_FILE, "memories", "content")
    code, out, err = run(capsys, "search", "--store", str(store_path), "risk", "--mode", "lexical")
    assert code == 1 and "damaged" in err and "unexpected" not in err, err
    mem = open_memory(store_path)
    with pytest.raises(StoreError, match="damaged"):
        mem.search("the risk", k=3, mode="lexical")
    mem.close()
    code, out, err = run(capsys, "doctor", "--store", str(store_path))
    assert code == 1, out
    assert "BAD  database" in out


def test_doctor_finds_damage_in_any_block_of_the_database(open_memory, store_path, tmp_path):
    """Index blocks are read only when a query uses the index: doctor must still see them."""
    import shutil

    from localmem.cli.admin import doctor_report

    filled(open_memory, store_path, 40)
    size = (store_path / DB_FILE).stat().st_size
    blocks = (size - files.DUCKDB_HEADER_BYTES) // 262144
    assert blocks >= 8
    for block in range(blocks):
        copy = tmp_path / f"copy{block}"
        shutil.copytree(store_path, copy)
        with open(copy / DB_FILE, "r+b") as fh:
            fh.seek(files.DUCKDB_HEADER_BYTES + block * 262144 + 1000)
            fh.write(os.urandom(4096))
        report = doctor_report(copy)
        assert not report["ok"], f"damage in block {block} went unseen"
        shutil.rmtree(copy)


def test_doctor_is_bad_when_the_config_names_another_embedder(capsys, open_memory, store_path):
    filled(open_memory, store_path, 3)
    (store_path / "config.json").write_text(json.dumps({"embedder": {"backend": "torch"}}))
    code, out, _ = run(capsys, "search", "--store", str(store_path), "risk")
    assert code == 1  # search refuses the store with this config ...
    code, out, _ = run(capsys, "doctor", "--store", str(store_path))
    assert code == 1 and "BAD  embedder match" in out  # ... and doctor says so


# -- 8. the fault script at a small scale ----------------------------------------------------------
def _faults_script():
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "scripts" / "faults.py"
    spec = importlib.util.spec_from_file_location("faults", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_a_few_fault_trials_lose_nothing(tmp_path):
    import random

    faults = _faults_script()
    template = tmp_path / "template"
    faults.build_template(template)
    memories = faults.template_memories(template)
    rng = random.Random(16)
    outcomes = []
    for i, op in enumerate(["create", "add_many", "update", "delete", "evolve"]):
        work = tmp_path / f"kill-{i}"
        work.mkdir()
        outcomes.append(faults.kill_trial(op, template, memories, work, rng))
    for i, name in enumerate(["vectors.hnsw", "vectors.json", "localmem.duckdb"]):
        work = tmp_path / f"damage-{i}"
        work.mkdir()
        outcomes.append(faults.damage_trial(name, template, memories, work, rng))
    bad = [o for o in outcomes if o["outcome"] in faults.FAILURES]
    assert bad == [], json.dumps(bad, indent=1)[:3000]
    assert all(o["outcome"] in ("intact", "repaired") for o in outcomes[:-1]), outcomes


def test_a_store_that_cannot_be_created_is_a_typed_error(capsys, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    code, _, err = run(capsys, "add", "x", "--store", str(blocker / "store"))
    assert code == 1 and "cannot create the store folder" in err
