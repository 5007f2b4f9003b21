"""Ingest reads only regular files of a bounded size, says what it read, skips a bad line
without losing the file, and a rerun adds nothing (issue 16, items 6-8, 10 and the chunk sizes).
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from localmem.cli import main
from localmem.errors import InputError
from localmem.ingest import ingest_file


def _cli(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def _jsonl(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# -- item 8: idempotent re-ingest, dedupe on add ------------------------------------------------
def test_reingesting_jsonl_adds_nothing(memory, tmp_path):
    lines = [json.dumps({"content": f"line {i % 7}", "user_id": "u1"}) for i in range(20)]
    path = _jsonl(tmp_path / "chat.jsonl", lines)
    first = ingest_file(memory, path)
    assert first.memories == 7 and first.duplicates == 13  # repeats inside the file too
    for _ in range(3):
        again = ingest_file(memory, path)
        assert again.memories == 0 and again.duplicates == 20 and again.skipped == 20
    assert memory.count() == 7
    assert sorted(m.content for m in memory.list()) == [f"line {i}" for i in range(7)]
    forced = ingest_file(memory, path, allow_duplicates=True)
    assert forced.memories == 20 and memory.count() == 27


def test_dedupe_rule_is_text_kind_scope_and_time(memory):
    first = memory.add("hello", user_id="u1", dedupe=True)
    assert memory.add("hello", user_id="u1", dedupe=True).id == first.id
    # another scope, kind or event time is another memory
    others = [
        memory.add("hello", user_id="u2", dedupe=True),
        memory.add("hello", user_id="u1", session_id="s1", dedupe=True),
        memory.add("hello", user_id="u1", kind="fact", dedupe=True),
        memory.add("hello", user_id="u1", event_time="2024-01-01T00:00:00+00:00", dedupe=True),
    ]
    assert len({o.id for o in others} | {first.id}) == 5
    same_time = memory.add(
        "hello", user_id="u1", event_time="2024-01-01T02:00:00+02:00", dedupe=True
    )
    assert same_time.id == others[-1].id  # the same instant in another offset
    # without dedupe the same text is stored again; a deleted memory is not a duplicate
    again = memory.add("hello", user_id="u1")
    assert again.id != first.id
    memory.delete(first.id)
    memory.delete(again.id)
    assert memory.add("hello", user_id="u1", dedupe=True).id not in (first.id, again.id)
    assert memory.count() == 5
    stored = memory.add_many(["hello", "hello", "new"], user_id="u9", dedupe=True)
    assert [m.content for m in stored] == ["hello", "new"]
    assert memory.add_many(["hello", "new"], user_id="u9", dedupe=True) == []


def test_cli_ingest_twice_reports_duplicates(capsys, tmp_path):
    store = tmp_path / "s"
    path = _jsonl(tmp_path / "a.jsonl", [json.dumps({"content": f"fact {i}"}) for i in range(5)])
    code, out, _ = _cli(capsys, "ingest", path, "--store", store)
    assert code == 0 and "5 memories stored" in out
    code, out, _ = _cli(capsys, "ingest", path, "--store", store)
    assert code == 0 and "nothing new: all 5 already stored" in out
    code, out, _ = _cli(capsys, "ingest", path, "--store", store, "--allow-duplicates")
    assert code == 0 and "5 memories stored" in out
    code, out, _ = _cli(capsys, "add", "fact 1", "--kind", "note", "--dedupe", "--store", store)
    code, out2, _ = _cli(capsys, "stats", "--store", store, "--json")
    assert json.loads(out2)["memories"] == 10


# -- item 6: one bad line is skipped and counted ------------------------------------------------
def test_a_bad_jsonl_line_is_skipped_not_fatal(memory, tmp_path):
    path = tmp_path / "mixed.jsonl"
    path.write_text(
        '{"content": "good one"}\n'
        '{"content": "lone \\ud800 surrogate"}\n'
        '{"content": "bad meta", "metadata": {"k": "\\udc00"}}\n'
        '{"content": "huge number", "n": ' + "9" * 5000 + "}\n"
        '{"content": "deep", "x": ' + "[" * 5000 + "]" * 5000 + "}\n"
        '{"content": "good two", "speaker": "Ann"}\n',
        encoding="utf-8",
    )
    report = ingest_file(memory, path)
    assert report.memories == 2 and report.skipped == 4
    assert any("line 2" in e and "surrogate" in e for e in report.errors)
    assert sorted(m.content for m in memory.list()) == ["good one", "good two"]


# -- items 7 and 10: file types, sizes, links ---------------------------------------------------
def _unblock(fifo: Path, after: float) -> threading.Timer:
    """Open the FIFO's write end later, so a regression that blocks on it fails, not hangs."""

    def writer() -> None:
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))

    timer = threading.Timer(after, writer)
    timer.start()
    return timer


def test_non_regular_files_are_refused(memory, tmp_path):
    with pytest.raises(InputError, match="folder"):
        ingest_file(memory, tmp_path)
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    timer = _unblock(fifo, after=5)
    started = time.monotonic()
    with pytest.raises(InputError, match="FIFO"):
        ingest_file(memory, fifo)  # no writer: a blocking open would hang here
    assert time.monotonic() - started < 4
    timer.cancel()
    link = tmp_path / "null.txt"
    link.symlink_to("/dev/null")  # a device behind a text name (/dev/zero: see below)
    with pytest.raises(InputError, match="not a regular file"):
        ingest_file(memory, link)
    loop = tmp_path / "loop.txt"
    loop.symlink_to(loop)
    with pytest.raises(InputError, match="cannot read"):
        ingest_file(memory, loop)
    assert memory.count() == 0


def test_size_is_checked_before_reading(memory, tmp_path):
    big = tmp_path / "big.txt"
    with big.open("wb") as f:
        f.truncate(3 * 1024 * 1024)  # sparse: checked by size, never read
    with pytest.raises(InputError, match="more than the limit of 1,048,576"):
        ingest_file(memory, big, max_bytes=1024 * 1024)


def test_a_huge_paragraph_is_refused_before_tokenising(memory, tmp_path, monkeypatch):
    import localmem.ingest as ingest

    def no_tokenizer(_):
        raise AssertionError("tokenised a paragraph that was too long anyway")

    monkeypatch.setattr(ingest, "tokenizer_for", no_tokenizer)
    path = tmp_path / "one.txt"
    path.write_text("word " * 400_000)  # 2 MB, one paragraph
    started = time.monotonic()
    with pytest.raises(InputError, match="paragraph of 1,999,999 characters"):
        ingest_file(memory, path)
    assert time.monotonic() - started < 5


def test_a_link_is_read_and_named(capsys, tmp_path):
    target = tmp_path / "real" / "secret.md"
    target.parent.mkdir()
    target.write_text("The target text of the link.\n")
    link = tmp_path / "notes.txt"
    link.symlink_to(target)
    store = tmp_path / "s"
    code, out, _ = _cli(capsys, "ingest", link, "--store", store)
    assert code == 0
    assert f"{link}: a link; read {target.resolve()}" in out
    code, out, _ = _cli(capsys, "ingest", target, "--store", store, "--json")
    assert json.loads(out)[0]["resolved"] is None


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--chunk-tokens", "0"], "--chunk-tokens: must be 1 or more"),
        (["--chunk-tokens", "-5"], "--chunk-tokens: must be 1 or more"),
        (["--overlap-tokens", "-1"], "--overlap-tokens: must be 0 or more"),
        (["--max-mb", "0"], "--max-mb: must be 1 or more"),
    ],
)
def test_cli_ingest_sizes_are_refused_by_argparse(capsys, tmp_path, args, message):
    doc = tmp_path / "d.md"
    doc.write_text("Some text.\n")
    with pytest.raises(SystemExit) as info:
        main(["ingest", str(doc), "--store", str(tmp_path / "s"), *args])
    assert info.value.code == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--chunk-tokens", "64", "--overlap-tokens", "64"], "must be smaller than the chunk"),
        (["--session", "nosuchsession"], "no session with id"),
    ],
)
def test_cli_ingest_options_are_one_line_errors(capsys, tmp_path, args, message):
    doc = tmp_path / "d.md"
    doc.write_text("Some text.\n")
    code, _, err = _cli(capsys, "ingest", doc, "--store", tmp_path / "s", *args)
    assert code == 1 and message in err and err.count("\n") == 1, err


@pytest.mark.parametrize(("size", "overlap"), [(0, 0), (-5, 0), (10, -1), (10, 10), (10, 11)])
def test_library_ingest_checks_chunk_sizes(memory, tmp_path, size, overlap):
    doc = tmp_path / "d.md"
    doc.write_text("Some text.\n")
    with pytest.raises(InputError, match="chunk"):
        ingest_file(memory, doc, chunk_tokens=size, overlap_tokens=overlap)


def _memory_cap() -> None:
    """In the child: 6 GiB of address space, so a regression fails instead of eating the RAM."""
    resource.setrlimit(resource.RLIMIT_AS, (6 * 2**30, 6 * 2**30))


def test_cli_ingest_of_dev_zero_in_a_subprocess(tmp_path):
    """The real command on /dev/zero: one line, exit 1, quickly (it ran out of memory)."""
    env = {**os.environ, "LOCALMEM_HOME": str(tmp_path / "home")}
    proc = subprocess.run(
        [sys.executable, "-m", "localmem", "ingest", "/dev/zero", "--store", str(tmp_path / "s")],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        preexec_fn=_memory_cap,
    )
    assert proc.returncode == 1
    # one line; the store it made is named (issue 33 item 3: a typo in --store is seen)
    assert proc.stderr.strip().splitlines() == [
        "localmem: error: /dev/zero is not a regular file (a character device); refused "
        f"(created a new store at {tmp_path / 's'})"
    ]
