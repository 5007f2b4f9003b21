"""A new user's first hour (issue 33): the command line through a subprocess, on real stores
and a real `localmem serve`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "localmem", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env=os.environ.copy(),
    )


def test_add_says_when_it_creates_a_store(tmp_path):
    """Item 3: a typo in --store makes a store; the user is told, once."""
    store = tmp_path / "mystoer"
    first = cli("add", "a note", "--store", str(store))
    assert first.returncode == 0, first.stderr
    assert f"created a new store at {store}" in first.stderr
    second = cli("add", "another note", "--store", str(store))
    assert second.returncode == 0 and "created a new store" not in second.stderr
    failed = cli("add", "", "--store", str(tmp_path / "typo"))  # one line, the store named
    assert failed.returncode != 0 and len(failed.stderr.strip().splitlines()) == 1
    assert "content is empty" in failed.stderr and "created a new store" in failed.stderr
    missing = cli("search", "note", "--store", str(tmp_path / "nostore"))
    assert missing.returncode != 0 and "created" not in missing.stderr


def test_tui_and_serve_take_store_as_an_option_too():
    """Item 1: `--store` is accepted wherever a store is named (parsed, not run here)."""
    from localmem.cli import build_parser
    from localmem.console import CommandError, given_store

    parser = build_parser()
    for command in ("serve", "tui", "mcp"):
        args = parser.parse_args([command, "--store", "/tmp/x"])
        assert given_store(args) == "/tmp/x", command
        args = parser.parse_args([command, "/tmp/y"])
        assert given_store(args) == "/tmp/y", command
        with pytest.raises(CommandError, match="once"):
            given_store(parser.parse_args([command, "/tmp/y", "--store", "/tmp/x"]))


@pytest.mark.slow
def test_a_served_store_serve_store_option_show_and_doctor(tmp_path):
    """Items 1, 10, 11: `serve --store`; `show` works through the server; `doctor` says the
    store is served, not damaged."""
    from test_serve import stop_server

    from localmem.discovery import find_server

    store = tmp_path / "store"
    added = cli("add", "the deploy runs on Fridays", "--store", str(store), "--json")
    assert added.returncode == 0, added.stderr
    memory_id = json.loads(added.stdout)["id"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "localmem", "serve", "--store", str(store)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        import time

        deadline = time.monotonic() + 120
        while find_server(store) is None:
            assert proc.poll() is None, proc.stderr.read()
            assert time.monotonic() < deadline, "serve did not start"
            time.sleep(0.1)
        shown = cli("show", memory_id[:6], "--store", str(store))
        assert shown.returncode == 0, shown.stderr
        assert "the deploy runs on Fridays" in shown.stdout and "kernel" not in shown.stderr
        doctor = cli("doctor", "--store", str(store))
        assert doctor.returncode == 0, doctor.stdout + doctor.stderr
        assert "BAD" not in doctor.stdout
        assert f"served by process {proc.pid}" in doctor.stdout
    finally:
        stop_server(proc)
