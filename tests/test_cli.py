"""The localmem command: output, --json, errors as one line with a non-zero exit code."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from localmem.cli import main


@pytest.fixture
def store(tmp_path):
    return str(tmp_path / "cli-store")


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_add_search_show_history_delete(capsys, store):
    code, out, _ = run(
        capsys,
        "add",
        "The deploy runs on Fridays",
        "--store",
        store,
        "--kind",
        "fact",
        "--metadata",
        '{"team": "ops"}',
    )
    assert code == 0
    mid = out.strip()
    code, out, _ = run(capsys, "search", "when do we deploy", "--store", store, "--json")
    data = json.loads(out)
    assert data["hits"][0]["id"] == mid and data["stages"][0]["stage"] == "candidates"
    code, out, _ = run(capsys, "search", "deploy", "--store", store, "--explain")
    assert re.search(r"^candidates +hnsw\+bm25 +0 in, +\d+ out", out, re.MULTILINE), out
    assert "{" not in out and "[]" not in out  # sentences and fields, no Python reprs
    code, out, _ = run(capsys, "show", mid[:8], "--store", store)
    assert "The deploy runs on Fridays" in out and '"team": "ops"' in out
    code, out, _ = run(capsys, "delete", mid, "--store", store)
    assert code == 0 and "deleted" in out
    code, out, _ = run(capsys, "history", mid, "--store", store)
    assert "ADD" in out and "DELETE" in out
    code, out, _ = run(capsys, "restore", mid, "--store", store)
    code, out, _ = run(capsys, "list", "--store", store)
    assert mid[:8] in out
    code, out, _ = run(capsys, "stats", "--store", store, "--json")
    assert json.loads(out)["memories"] == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["add", ""], "content is empty"),
        (["add", "x", "--metadata", "{oops"], "--metadata is not JSON"),
        (["add", "x", "--event-time", "2023-01-01"], "no time zone"),
        (["search", "x", "-k", "0"], "k must be between"),
        (["show", "nope"], "no memory"),
        (["ingest", "/no/such/file.txt"], "no such file"),
        (["purge", "abc"], "--yes"),
    ],
)
def test_errors_are_one_line(capsys, store, args, message):
    if args[0] != "add":
        main(["add", "something", "--store", store])
        capsys.readouterr()
    code, _out, err = run(capsys, *args, "--store", store)
    assert code != 0
    assert message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_commands_on_a_missing_store(capsys, tmp_path):
    code, _, err = run(capsys, "search", "x", "--store", str(tmp_path / "none"))
    assert code == 1 and "no store" in err


def test_ingest_text_and_jsonl(capsys, store, tmp_path):
    doc = tmp_path / "notes.md"
    doc.write_text("# Title\n\nFirst paragraph about rate limits.\n\nSecond about caching.\n")
    lines = tmp_path / "mem.jsonl"
    lines.write_text(
        '{"content": "line one", "speaker": "Ann"}\n'
        "not json\n"
        '{"text": "line two", "kind": "fact"}\n'
        '{"content": ""}\n'
        '{"content": "bad kind", "kind": "banana"}\n'
    )
    code, out, _ = run(capsys, "ingest", str(doc), str(lines), "--store", store)
    assert code == 0
    assert "notes.md: 1 memory stored" in out
    assert "mem.jsonl: 2 memories stored, 3 lines skipped" in out
    code, out, _ = run(capsys, "search", "line one", "--store", store, "--json", "-k", "5")
    hit = next(h for h in json.loads(out)["hits"] if h["content"] == "line one")
    assert hit["kind"] == "note"


def test_ingest_refuses_binary_and_empty(capsys, store, tmp_path):
    binary = tmp_path / "blob.txt"
    binary.write_bytes(b"\x00\x01\x02 binary")
    empty = tmp_path / "empty.txt"
    empty.write_text("  \n")
    for path, message in ((binary, "binary"), (empty, "empty")):
        code, _, err = run(capsys, "ingest", str(path), "--store", store)
        assert code == 1 and message in err


def test_doctor_reports_a_healthy_store(capsys, store):
    main(["add", "x", "--store", store])
    capsys.readouterr()
    code, out, _ = run(capsys, "doctor", "--store", store, "--json")
    report = json.loads(out)
    assert code == 0 and report["ok"]
    assert {c["check"] for c in report["checks"]} >= {"embedder", "store", "vector index"}


def test_lock_message_from_a_second_process(store, open_memory):
    mem = open_memory(store)
    mem.add("held")
    proc = subprocess.run(
        [sys.executable, "-m", "localmem", "add", "y", "--store", store],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 1
    assert proc.stderr.strip().startswith("localmem: error: store")
    assert "is locked by process" in proc.stderr and "Traceback" not in proc.stderr


def test_reembed_moves_the_store(capsys, store, tmp_path):
    main(["add", "a memory to carry over", "--store", store])
    capsys.readouterr()
    code, out, _ = run(capsys, "reembed", "--model", "all-MiniLM-L6-v2", "--store", store)
    assert code == 0 and "re-embedded 1 memory:" in out
    code, out, _ = run(capsys, "search", "carry", "--store", store, "--json")
    assert json.loads(out)["hits"][0]["content"] == "a memory to carry over"
    # back to the fp32 vectors; the default config then opens the store with them
    args = ("reembed", "--model", "all-MiniLM-L6-v2", "--backend", "onnx", "--store", store)
    code, out, _ = run(capsys, *args)
    assert code == 0 and "-> all-MiniLM-L6-v2 (384-d)" in out
    code, out, _ = run(capsys, "stats", "--store", store, "--json")
    assert json.loads(out)["embedder"] == "all-MiniLM-L6-v2"
    code, _, err = run(capsys, "reembed", "--model", str(tmp_path / "nope"), "--store", store)
    assert code == 1 and "not found" in err
