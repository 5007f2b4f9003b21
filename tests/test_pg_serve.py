"""Several `localmem serve` processes on one PostgreSQL database (as on several machines:
each has its own LOCALMEM_HOME): writes through either land, searches through either see
them, and the background jobs of both run once each."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from localmem.discovery import find_server
from localmem.remote import connect
from localmem.store.postgres.store import local_folder

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


def _serve(url: str, home) -> tuple[subprocess.Popen, Path]:
    env = dict(os.environ, LOCALMEM_HOME=str(home))
    proc = subprocess.Popen(
        [sys.executable, "-m", "localmem", "serve", url],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    folder = home / "postgres" / local_folder(url).name
    deadline = time.monotonic() + 120
    while find_server(folder) is None:
        if proc.poll() is not None:
            raise AssertionError(f"serve exited: {proc.stderr.read()[-2000:]}")
        assert time.monotonic() < deadline, "serve did not start"
        time.sleep(0.1)
    return proc, folder


def _stop(proc: subprocess.Popen) -> str:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    return proc.stderr.read()


def test_two_servers_on_one_database(pg_url, tmp_path):
    servers = [_serve(pg_url, tmp_path / f"machine{i}") for i in range(2)]
    try:
        a, b = (connect(folder) for _, folder in servers)
        from_a = [a.add(f"server A note {i}: the backup runs at {i} am").id for i in range(5)]
        from_b = [b.add(f"server B note {i}: the deploy window is day {i}").id for i in range(5)]
        b.add("evolving through server B about the backup", evolve=True)
        assert a.search("deploy window", k=1)[0].memory.id in from_b
        assert b.search("backup runs", k=1)[0].memory.id in from_a
        assert a.get(from_b[0]).content.startswith("server B")
        assert a.stats()["memories"] == b.stats()["memories"] == 11
        # the evolve job is taken by one worker and done once
        deadline = time.monotonic() + 60
        while a.stats()["jobs_pending"] and time.monotonic() < deadline:
            time.sleep(0.2)
        assert a.stats()["jobs_pending"] == 0
        # the servers' job workers put the new vectors in the HNSW index while they run
        with psycopg.connect(pg_url, autocommit=True) as con:
            pending = "SELECT count(*) FROM memories WHERE vector_pending"
            while con.execute(pending).fetchone()[0] and time.monotonic() < deadline + 60:
                time.sleep(0.2)
            assert con.execute(pending).fetchone()[0] == 0
    finally:
        logs = [_stop(proc) for proc, _ in servers]
    for log in logs:
        assert "Traceback" not in log, log
        assert "serving postgresql://" in log


def test_a_second_server_from_the_same_home_is_refused(pg_url, tmp_path):
    """Two servers of one database from one LOCALMEM_HOME would share one discovery file (the
    second taking it over, the first's clients losing it when either stops): refused, one line."""
    proc, folder = _serve(pg_url, tmp_path / "home")
    try:
        env = dict(os.environ, LOCALMEM_HOME=str(tmp_path / "home"))
        second = subprocess.run(
            [sys.executable, "-m", "localmem", "serve", pg_url],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert second.returncode != 0
        lines = second.stderr.strip().splitlines()
        assert len(lines) == 1 and "already served by process" in lines[0], second.stderr
        assert find_server(folder).pid == proc.pid  # the first still serves and is found
    finally:
        _stop(proc)


def test_two_servers_started_together_from_one_home_leave_one(pg_url, tmp_path):
    """Issue 30 item 10: started at the same moment, both passed the check for a running
    server and ran, sharing one discovery file that stopping either deleted. Now the local
    folder's lock lets one run; the other says so in one line, and the survivor stays found."""
    env = dict(os.environ, LOCALMEM_HOME=str(tmp_path / "home"))
    folder = tmp_path / "home" / "postgres" / local_folder(pg_url).name
    for _ in range(3):
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "localmem", "serve", pg_url],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(2)
        ]
        deadline = time.monotonic() + 120
        while find_server(folder) is None or all(p.poll() is None for p in procs):
            assert time.monotonic() < deadline, "no server started, or both still run"
            time.sleep(0.2)
        running = [p for p in procs if p.poll() is None]
        refused = [p for p in procs if p.poll() is not None]
        assert len(running) == 1 and len(refused) == 1
        lines = refused[0].stderr.read().strip().splitlines()
        assert len(lines) == 1 and "already served by" in lines[0], lines
        assert find_server(folder).pid == running[0].pid
        _stop(running[0])
        assert find_server(folder) is None
