"""The CLI starts light (issue 34): through a running server, `localmem search/add/show` import
none of the store's heavy dependencies, and `localmem --help` imports none of them either.

Each command runs in a fresh interpreter (a real child process, a real `localmem serve` on a
real store) that reports which heavy modules ended up in ``sys.modules``. Not a timing test:
the time is measured by scripts/bench_cli_start.py.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from test_serve import start_server, stop_server

pytestmark = pytest.mark.slow

#: what a served command must not import: the store's, the embedder's and the config's
HEAVY = ("numpy", "duckdb", "onnxruntime", "pyarrow", "hnswlib", "pydantic", "llama_cpp")

#: runs the CLI in this child and prints its exit code, output and the heavy modules imported
CHILD = """
import contextlib, io, json, sys
out = io.StringIO()
with contextlib.redirect_stdout(out):
    from localmem.cli import main
    try:
        code = main(sys.argv[1:])
    except SystemExit as exc:  # --help
        code = exc.code
heavy = sorted(m for m in HEAVY_NAMES if m in sys.modules)
print(json.dumps({"code": code, "out": out.getvalue(), "heavy": heavy}))
""".replace("HEAVY_NAMES", repr(HEAVY))


def cli(*argv: str) -> dict:
    """One `localmem` command in a fresh interpreter: its exit code, output, heavy imports."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD, *argv], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_help_imports_nothing_heavy():
    result = cli("--help")
    assert result["code"] == 0 and "search" in result["out"]
    assert result["heavy"] == []


def test_served_commands_import_nothing_heavy(tmp_path):
    store = tmp_path / "store"
    # mined in process first (mining is not served), so that `show` has attributes to decode
    first = cli(
        "add",
        "Caroline went to a support group on 7 May 2023",
        "--mine",
        "inline",
        "--store",
        str(store),
    )
    assert first["code"] == 0, first
    first_id = first["out"].strip()
    proc = start_server(store)
    try:
        added = cli(
            "add",
            "Caroline went to the support group again in June",
            "--evolve",
            "--store",
            str(store),
        )
        assert added["code"] == 0, added
        memory_id = added["out"].strip()
        assert len(memory_id) == 16
        assert added["heavy"] == []

        found = cli("search", "support group", "--store", str(store), "--json")
        assert found["code"] == 0, found
        hits = json.loads(found["out"])["hits"]
        assert {h["id"] for h in hits} == {first_id, memory_id}  # answered by the server's store
        assert found["heavy"] == []

        shown = cli("show", first_id[:8], "--store", str(store))
        assert shown["code"] == 0, shown
        assert first_id in shown["out"] and "support group" in shown["out"]
        assert "mined by" in shown["out"]  # its attributes, decoded here
        assert f"<- {memory_id[:8]}" in shown["out"]  # the link evolution made
        assert shown["heavy"] == []
    finally:
        stop_server(proc)


def test_without_a_server_the_store_is_opened_in_process(tmp_path):
    """The light path is only for served stores: without a server the CLI opens the store
    itself (and so imports what it needs)."""
    store = tmp_path / "store"
    added = cli("add", "The deploy runs on Fridays", "--store", str(store))
    assert added["code"] == 0, added
    found = cli("search", "deploy", "--store", str(store), "--json")
    assert json.loads(found["out"])["hits"][0]["id"] == added["out"].strip()
    assert "duckdb" in found["heavy"]
