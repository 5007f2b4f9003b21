"""Ids by a unique prefix (issue 33 item 4): too short is said as such, not as "no memory";
an ambiguous prefix says how many match. Real stores; the CLI through a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from localmem.errors import InputError, NotFoundError
from localmem.store.prefix import MIN_PREFIX, find_rows


def test_a_short_prefix_is_refused_as_too_short(memory):
    item = memory.add("the build cache lives in ~/.cache/build", kind="note")
    assert memory.get(item.id[:MIN_PREFIX]).id == item.id
    with pytest.raises(InputError, match=r"too short.*at least 4"):
        memory.get(item.id[:3])
    with pytest.raises(NotFoundError):
        memory.get("zzzz")


def test_an_ambiguous_prefix_says_how_many_match(memory):
    db = memory.kernel.db
    db.execute("CREATE TABLE things (id VARCHAR)")
    db.execute("INSERT INTO things VALUES ('abcd01'), ('abcd02'), ('abcd03'), ('abce04')")
    select = "SELECT id FROM things"
    assert find_rows(db, select, "abce", what="thing") == [("abce04",)]
    assert find_rows(db, select, "abcd02", what="thing") == [("abcd02",)]
    with pytest.raises(InputError, match="matches 3 things"):
        find_rows(db, select, "abcd", what="thing")


def test_sessions_take_the_same_rule(memory):
    session = memory.start_session("debug a 500")
    assert memory.get_session(session.id[:6]).id == session.id
    with pytest.raises(InputError, match="too short"):
        memory.get_session(session.id[:3])


def test_cli_show_with_three_characters_says_too_short(tmp_path):
    store = str(tmp_path / "store")
    env = os.environ.copy()

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "localmem", *args, "--store", store],
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
        )

    added = cli("add", "a note about caches", "--json")
    assert added.returncode == 0, added.stderr
    memory_id = json.loads(added.stdout)["id"]
    short = cli("show", memory_id[:3])
    assert short.returncode != 0
    assert "at least 4" in short.stderr and "Traceback" not in short.stderr
    assert "no memory" not in short.stderr
    assert cli("show", memory_id[:4]).returncode == 0
    assert "at least 4 characters" in cli("show", "--help").stdout
