"""A one-shot read leaves the process without the interpreter's teardown, losing nothing: its
whole output, its exit code, the atexit handlers, and a thread still running."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from localmem import Memory

ROOT = Path(__file__).resolve().parent.parent


def run(args: list[str], **kwargs) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    streams = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, **kwargs}
    return subprocess.run([sys.executable, *args], text=True, env=env, timeout=300, **streams)


@pytest.fixture
def store(tmp_path: Path, embedder) -> Path:
    path = tmp_path / "store"
    with Memory.open(path, embedder=embedder) as mem:
        mem.add_many(
            [f"Caroline went to the support group, visit number {i}." for i in range(60)],
            mine="off",
            evolve=False,
            infer=False,
        )
    return path


def test_a_search_prints_everything_and_exits_zero(store: Path, tmp_path: Path):
    out = tmp_path / "out.json"
    argv = ["search", "support group", "--store", str(store), "-k", "50", "--json"]
    with out.open("w") as fh:  # a file, not a terminal: stdout is block-buffered
        proc = run(["-m", "localmem", *argv], stdout=fh)
    assert proc.returncode == 0, proc.stderr
    text = out.read_text()
    assert len(text) > 8192  # more than one buffer: its last part was flushed at exit
    assert json.loads(text)["hits"]  # whole: it parses


def test_a_failed_read_keeps_its_exit_code_and_message(tmp_path: Path):
    proc = run(["-m", "localmem", "show", "abcd1234", "--store", str(tmp_path / "none")])
    assert proc.returncode != 0
    assert proc.stderr.startswith("localmem:") and "Traceback" not in proc.stderr


def test_atexit_handlers_run_and_buffered_output_is_flushed():
    code = textwrap.dedent(
        """
        import atexit, sys
        from localmem.cli.quick_exit import quick_exit
        atexit.register(lambda: print("atexit ran", file=sys.stderr))
        sys.stdout.write("x" * 100000)  # more than a buffer, the last part still buffered
        quick_exit(3)
        """
    )
    proc = run(["-c", code])
    assert proc.returncode == 3
    assert proc.stdout == "x" * 100000
    assert proc.stderr == "atexit ran\n"


def test_a_running_thread_is_waited_for(tmp_path: Path):
    done = tmp_path / "done"
    code = textwrap.dedent(
        f"""
        import threading, time
        from pathlib import Path
        from localmem.cli.quick_exit import quick_exit
        def work():
            time.sleep(0.5)
            Path({str(done)!r}).write_text("done")
        threading.Thread(target=work).start()
        quick_exit(0)
        """
    )
    proc = run(["-c", code])
    assert proc.returncode == 0, proc.stderr
    assert done.read_text() == "done"


def test_a_closed_pipe_is_not_an_error(store: Path):
    cmd = f"{sys.executable} -m localmem search 'support group' --store {store} -k 50 | head -c 10"
    proc = subprocess.run(
        ["bash", "-o", "pipefail", "-c", cmd],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        timeout=300,
    )
    assert "Traceback" not in proc.stderr
    assert len(proc.stdout) == 10
