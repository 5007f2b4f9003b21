"""A file is its resolved path and its text (issue 33 item 2): any spelling of one path is the
same file; a changed file replaces its chunks; a moved file is the same document.

Real stores, the real MiniLM; the command line through a subprocess, from several working
folders, and through a running `localmem serve`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from localmem import Memory
from localmem.ingest import chunk_places, ingest_file, stored_chunks

DOC = """# Deploys

We deploy on Fridays after the test suite passes.

## Rollback

To roll back, run the previous release's tag through the pipeline.
"""


@pytest.fixture
def memory(store_path):
    with Memory.open(store_path) as mem:
        yield mem


def _live_chunks(mem) -> list:
    return [m for m in mem.list(kind="chunk", limit=1000)]


def test_every_spelling_of_one_path_is_one_file(memory, tmp_path, monkeypatch):
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "deploy.md").write_text(DOC)
    (tmp_path / "link.md").symlink_to(folder / "deploy.md")
    monkeypatch.chdir(tmp_path)
    first = ingest_file(memory, "corpus/deploy.md", chunk_tokens=16)
    assert first.memories >= 2
    for spelling in (
        str(folder / "deploy.md"),
        "./corpus/deploy.md",
        "corpus/../corpus/deploy.md",
        "link.md",
    ):
        again = ingest_file(memory, spelling, chunk_tokens=16)
        assert (again.memories, again.duplicates) == (0, first.memories), spelling
    monkeypatch.chdir(folder)
    assert ingest_file(memory, "deploy.md", chunk_tokens=16).memories == 0
    chunks = _live_chunks(memory)
    assert len(chunks) == first.memories
    assert {c.metadata["source"] for c in chunks} == {str((folder / "deploy.md").resolve())}


def test_a_changed_file_replaces_its_chunks(memory, tmp_path):
    path = tmp_path / "deploy.md"
    path.write_text(DOC)
    first = ingest_file(memory, path, chunk_tokens=16)
    old_ids = {c.id for c in _live_chunks(memory)}
    path.write_text(DOC.replace("Fridays", "Tuesdays"))
    second = ingest_file(memory, path, chunk_tokens=16)
    assert second.memories >= 1 and second.replaced == first.memories
    live = _live_chunks(memory)
    assert len(live) == second.memories
    assert all("Fridays" not in c.content for c in live)
    assert any("Tuesdays" in c.content for c in live)
    gone = next(iter(old_ids - {c.id for c in live}))
    deleted = memory.history(gone)[-1]
    assert deleted.event == "DELETE" and "new version" in deleted.info["reason"]
    # chunked another way, the file is stored once, as chunked last
    third = ingest_file(memory, path, chunker="fixed", chunk_tokens=32)
    assert third.replaced == second.memories
    assert len(_live_chunks(memory)) == third.memories


def test_a_moved_file_is_the_same_document_and_a_copy_is_its_own(memory, tmp_path):
    path = tmp_path / "deploy.md"
    path.write_text(DOC)
    first = ingest_file(memory, path, chunk_tokens=16)
    ids = sorted(c.id for c in _live_chunks(memory))
    moved = tmp_path / "ops" / "deploys.md"
    moved.parent.mkdir()
    path.rename(moved)
    report = ingest_file(memory, moved, chunk_tokens=16)
    assert report.memories == 0 and report.moved_from == str(path.resolve())
    chunks = _live_chunks(memory)
    assert sorted(c.id for c in chunks) == ids  # the same memories, nothing stored twice
    assert {c.metadata["source"] for c in chunks} == {str(moved.resolve())}
    assert memory.history(ids[0])[-1].field == "metadata"
    # a copy (both paths hold the text) is a file of its own
    copy = tmp_path / "copy.md"
    copy.write_text(DOC)
    assert ingest_file(memory, copy, chunk_tokens=16).memories == first.memories
    assert len(stored_chunks(memory, source=str(moved.resolve()))) == first.memories


def test_chunk_places_give_line_and_heading():
    from localmem.chunking import TextChunk

    text = "intro line\n\n# One\n\nfirst para\n\n## Two\n\nsecond para\n"
    pieces = [TextChunk(p, -1, -1, 1) for p in ("intro line", "# One\n\nfirst para", "second para")]
    assert chunk_places(text, pieces) == [(1, None), (3, "One"), (9, "Two")]


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "localmem", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env=os.environ.copy(),
    )


@pytest.mark.slow
def test_cli_ingest_from_three_folders_and_through_a_server(tmp_path):
    from test_serve import start_server, stop_server

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "npm-ci.md").write_text(DOC)
    store = str(tmp_path / "store")
    out = _cli("ingest", "corpus/npm-ci.md", "--store", store, cwd=tmp_path)
    assert out.returncode == 0 and "1 memory stored" in out.stdout, out.stderr
    for args, cwd in (
        (("ingest", str(corpus / "npm-ci.md")), tmp_path),
        (("ingest", "./npm-ci.md"), corpus),
    ):
        again = _cli(*args, "--store", store, cwd=cwd)
        assert again.returncode == 0 and "nothing new" in again.stdout, again
    proc = start_server(Path(store), "--ingest-dir", str(corpus))  # tmp is outside home
    try:  # the server reads the absolute path the client sends: still the same file
        served = _cli("ingest", "npm-ci.md", "--store", store, "--json", cwd=corpus)
        assert served.returncode == 0, served.stderr
        assert json.loads(served.stdout)[0]["memories"] == 0
    finally:
        stop_server(proc)
    stats = json.loads(_cli("stats", "--store", store, "--json", cwd=tmp_path).stdout)
    assert stats["memories"] == 1
