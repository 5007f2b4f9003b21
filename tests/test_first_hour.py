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


def _parsers(parser, name="localmem"):
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                yield from _parsers(sub, f"{name} {sub_name}")
            return
    yield name, parser


def test_every_command_and_option_has_a_help_line():
    """Item 8: a description for every command, a help line for every option and argument,
    no internal labels."""
    from localmem.cli import build_parser

    missing = []
    for name, parser in _parsers(build_parser()):
        if not parser.description:
            missing.append(f"{name}: no description")
        for action in parser._actions:
            if action.dest != "help" and not action.help:
                missing.append(f"{name} {(action.option_strings or [action.dest])[0]}")
        text = parser.format_help()
        assert "seed 00" not in text and "MemInsight stage" not in text, name
    assert not missing, missing


def test_demo_help_names_its_own_default_store():
    out = cli("demo", "--help").stdout
    assert "--store PATH  the store folder (default: $LOCALMEM_HOME/demo)" in out


def test_counts_agree_with_their_nouns():
    """Item 7: '1 live memory', never '1 live memories'."""
    from localmem.console import counted

    assert counted(1, "live memory") == "1 live memory"
    assert counted(2, "live memory") == "2 live memories"
    assert counted(1, "procedure") == "1 procedure" and counted(0, "thought") == "0 thoughts"
    assert counted(3, "day") == "3 days"


def test_search_shows_relevance_and_where_each_hit_came_from(tmp_path):
    """Item 5: two chunks with the same boilerplate, from two files, are told apart."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    boiler = "# Setup\n\nRun the installer, then restart the service and check the logs.\n"
    (corpus / "alpha.md").write_text(boiler)
    (corpus / "beta.md").write_text(boiler)
    store = str(tmp_path / "store")
    assert (
        cli(
            "ingest", str(corpus / "alpha.md"), str(corpus / "beta.md"), "--store", store
        ).returncode
        == 0
    )
    found = cli("search", "restart the service", "--store", store)
    assert found.returncode == 0, found.stderr
    assert "alpha.md:1 (Setup)" in found.stdout and "beta.md:1 (Setup)" in found.stdout
    first = found.stdout.splitlines()[0].split()
    assert first[0] == "1." and 0 <= float(first[1]) <= 1  # the relevance, not a raw score
    data = json.loads(cli("search", "restart the service", "--store", store, "--json").stdout)
    assert all(0 <= h["relevance"] <= 1 and "score" in h for h in data["hits"])
    explained = cli("search", "restart the service", "--store", store, "--explain").stdout
    assert "{" not in explained and "score" in explained


NPM = """# npm ci versus npm install

The main differences between using `npm install` and `npm ci` are:

- `npm ci` needs a package-lock.json and installs exactly what it says.
- `npm ci` deletes node_modules before it installs.
- `npm install` may update the lock file.

Use `npm ci` in continuous integration because it is reproducible.
"""


def test_an_extract_keeps_the_list_its_sentence_opens():
    """Item 9: 'the differences are:' comes with its list, and nothing ends mid-word."""
    from localmem.answers.extractive import extract_answer, whole

    got = extract_answer(
        "what are the main differences between npm install and npm ci",
        [(NPM, None)],
        not_found="not found",
    )
    assert got.answer.startswith("The main differences") and got.answer.count("\n- ") == 3
    assert "continuous integration" not in got.answer  # the list ends where the items do
    long = "First sentence here. " + "word " * 100
    assert whole(long, 60) == "First sentence here."
    assert whole("word " * 100, 42).endswith("word…")


def test_cli_ask_without_a_model_says_it_is_extractive(tmp_path):
    doc = tmp_path / "npm-ci.md"
    doc.write_text(NPM)
    store = str(tmp_path / "store")
    assert cli("ingest", str(doc), "--store", store).returncode == 0
    asked = cli(
        "ask", "what are the main differences between npm install and npm ci", "--store", store
    )
    assert asked.returncode == 0, asked.stderr
    assert asked.stdout.startswith("(extractive:")
    assert "- `npm install` may update the lock file." in asked.stdout


@pytest.mark.slow
def test_the_readme_postgresql_example_runs():
    """Item 17: the README's pgserver block, run as written (its folder made unique; the
    install line skipped: the test environment has both)."""
    import re
    import shutil
    import tempfile

    readme = (Path(__file__).parent.parent / "docs" / "postgres.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- pg-example -->\n```bash\n(.*?)```", readme, re.DOTALL).group(1)
    # not under pytest's 0700 folders: pgserver runs postgres as its own user when we are root
    folder = tempfile.mkdtemp(prefix="localmem-readme-pg-")
    script = block.replace("/tmp/localmem-pg", folder)
    script = "\n".join(line for line in script.splitlines() if not line.startswith("pip "))
    env = os.environ.copy()
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    try:
        done = subprocess.run(
            ["bash", "-e", "-c", script],
            capture_output=True,
            text=True,
            timeout=600,
            env=env,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        assert "The deploy runs on Fridays" in done.stdout
    finally:
        subprocess.run(
            [
                sys.executable,
                "-c",
                f"import pgserver; pgserver.get_server({folder!r}, cleanup_mode='stop').cleanup()",
            ],
            capture_output=True,
            timeout=120,
        )
        shutil.rmtree(folder, ignore_errors=True)
