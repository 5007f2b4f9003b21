"""`localmem tui`: which store it opens, its refusal without a terminal, a real start in a pty."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from localmem.cli import main
from localmem.cli.tui import choose_store
from localmem.console import CommandError

ROOT = Path(__file__).resolve().parents[1]


def test_a_new_user_gets_the_demo_store(isolated_home):
    path, fill, notices = choose_store(None, demo=False)
    assert path == isolated_home / "demo" and fill
    assert "localmem tui" in notices[0] and str(isolated_home / "default") in notices[0]


def test_a_named_store_or_a_filled_default_store_is_opened_as_it_is(isolated_home, open_memory):
    named = isolated_home / "notes"
    assert choose_store(str(named), demo=False) == (named, False, [])
    default = isolated_home / "default"
    open_memory(default).close()
    assert choose_store(None, demo=False)[0] == isolated_home / "demo"  # created, still empty
    mem = open_memory(default)
    mem.add("The deploy runs on Fridays", kind="fact")
    mem.close()
    assert choose_store(None, demo=False) == (default, False, [])


def test_demo_and_a_store_together_is_refused():
    with pytest.raises(CommandError, match="not both"):
        choose_store("somewhere", demo=True)


def test_without_a_terminal_it_says_so_in_one_line(capsys):
    assert main(["tui", "--demo"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "needs a terminal" in err[0] and "localmem demo" in err[0]


def test_the_stylesheet_ships_with_the_package():
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    from importlib.resources import files

    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "**/*.tcss" in data["tool"]["setuptools"]["package-data"]["localmem"]
    assert files("localmem_tui").joinpath("localmem.tcss").is_file()


@pytest.mark.slow
def test_it_starts_in_a_real_terminal_and_quits_on_q(tmp_path, isolated_home):
    """The real entry point in a pseudo-terminal: draws the demo store, then q quits."""
    import pty

    leader, follower = pty.openpty()
    env = {**os.environ, "TERM": "xterm-256color"}
    proc = subprocess.Popen(  # Textual draws on stderr: all three go to the terminal
        [sys.executable, "-m", "localmem", "tui", "--demo"],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env=env,
        cwd=tmp_path,
    )
    os.close(follower)
    seen = b""
    deadline = time.monotonic() + 240
    try:
        while b"Speed up the orders" not in seen:  # a session title of the demo store
            assert time.monotonic() < deadline, seen[-2000:]
            ready, _, _ = select.select([leader], [], [], 1.0)
            if ready:
                seen += os.read(leader, 65536)
        os.write(leader, b"q")
        deadline = time.monotonic() + 60
        while proc.poll() is None:
            assert time.monotonic() < deadline, "q did not quit"
            if select.select([leader], [], [], 0.5)[0]:
                try:
                    os.read(leader, 65536)
                except OSError:
                    break
        assert proc.wait(timeout=30) == 0, seen[-2000:]
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(leader)
    assert (isolated_home / "demo" / "localmem.duckdb").exists()
