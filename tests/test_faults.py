"""Crashes, damaged files and second processes: every committed memory survives."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from localmem import Memory, StoreError, StoreLockedError
from localmem.embed.base import Embedder
from localmem.store.vectors import INDEX_FILE, SIDECAR_FILE


def _child(code: str, store: Path, **kwargs) -> subprocess.Popen:
    script = textwrap.dedent(code).replace("STORE", repr(str(store)))
    return subprocess.Popen([sys.executable, "-c", script], **kwargs)


def _all_found(mem: Memory) -> None:
    rows = mem.store.db.fetchall("SELECT id, content FROM memories WHERE NOT deleted")
    assert mem.store.vectors.live_count == len(rows)
    for mid, content in rows[:: max(1, len(rows) // 25)]:
        hits = mem.search(content, k=3, mode="dense")
        assert mid in [h.memory.id for h in hits], content


def test_missing_index_is_rebuilt(open_memory, store_path):
    mem = open_memory(store_path)
    mem.add_many([f"memory number {i} about subject {i}" for i in range(40)])
    mem.close()
    (store_path / INDEX_FILE).unlink()
    mem = open_memory(store_path)
    assert any("rebuilding" in n for n in mem.store.notices)
    _all_found(mem)


def test_truncated_index_is_rebuilt(open_memory, store_path):
    mem = open_memory(store_path)
    mem.add_many([f"memory number {i} about subject {i}" for i in range(40)])
    mem.close()
    data = (store_path / INDEX_FILE).read_bytes()
    (store_path / INDEX_FILE).write_bytes(data[: len(data) // 3])
    mem = open_memory(store_path)
    assert any("unusable" in n for n in mem.store.notices)
    _all_found(mem)


def test_garbage_sidecar_is_rebuilt(open_memory, store_path):
    mem = open_memory(store_path)
    mem.add("one memory")
    mem.close()
    (store_path / SIDECAR_FILE).write_text("{not json")
    mem = open_memory(store_path)
    assert mem.store.notices and mem.store.vectors.live_count == 1


def test_crash_between_commit_and_index_save(open_memory, store_path, embedder):
    mem = open_memory(store_path)
    mem.add_many([f"saved before the crash {i}" for i in range(10)])
    mem.close()  # the index is saved here with these 10
    proc = _child(
        """
        import os
        from localmem import Memory
        m = Memory.open(STORE)
        items = m.add_many([f"committed but never saved {i}" for i in range(20)])
        m.update(items[0].id, content="an updated text the old index never saw")
        m.delete(items[1].id)
        os._exit(0)  # dies without saving the vector index
        """,
        store_path,
    )
    assert proc.wait(timeout=300) == 0
    mem = open_memory(store_path)
    assert any("caught up" in n or "repaired" in n for n in mem.store.notices)
    assert mem.count() == 29
    _all_found(mem)
    hit = mem.search("an updated text the old index never saw", k=1, mode="dense").hits[0]
    assert hit.memory.content == "an updated text the old index never saw"


@pytest.mark.slow
def test_killed_while_writing(open_memory, store_path):
    proc = _child(
        """
        import sys
        from localmem import Memory
        m = Memory.open(STORE)
        i = 0
        while True:
            m.add_many([f"write {i} {j} in a loop" for j in range(8)])
            i += 1
            if i == 2:
                print("ready", flush=True)
        """,
        store_path,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(1.0)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    mem = open_memory(store_path)
    assert mem.count() >= 16 and mem.count() % 8 == 0  # whole batches or nothing
    _all_found(mem)
    check = mem.store.check()
    assert check["vectors_in_step"] and check["lexical_in_step"]


def test_second_process_gets_a_clear_lock_error(open_memory, store_path):
    mem = open_memory(store_path)
    mem.add("held by this process")
    proc = _child(
        """
        from localmem import Memory, StoreLockedError
        try:
            Memory.open(STORE)
        except StoreLockedError as e:
            print(e)
        """,
        store_path,
        stdout=subprocess.PIPE,
        text=True,
    )
    out, _ = proc.communicate(timeout=120)
    assert f"locked by process {os.getpid()}" in out
    mem.close()
    again = open_memory(store_path)  # released on close
    assert again.count() == 1


def test_lock_is_released_when_the_holder_dies(open_memory, store_path):
    proc = _child(
        """
        import os
        from localmem import Memory
        m = Memory.open(STORE)
        m.add("from a process that dies")
        os._exit(1)
        """,
        store_path,
    )
    proc.wait(timeout=300)
    assert open_memory(store_path).count() == 1


def test_lock_timeout_is_reported_in_process(store_path, embedder):
    first = Memory.open(store_path, embedder=embedder)
    try:
        with pytest.raises(StoreLockedError, match="locked by process"):
            Memory.open(store_path, embedder=embedder)
    finally:
        first.close()


def test_folder_that_is_not_a_store(tmp_path, embedder):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "thesis.tex").write_text("precious")
    with pytest.raises(StoreError, match="not a localmem store"):
        Memory.open(folder, embedder=embedder)
    assert (folder / "thesis.tex").read_text() == "precious"
    afile = tmp_path / "afile"
    afile.write_text("x")
    with pytest.raises(StoreError, match="is a file"):
        Memory.open(afile, embedder=embedder)
    with pytest.raises(StoreError, match="no store"):
        Memory.open(tmp_path / "nothing", embedder=embedder, create=False)


def test_corrupt_database_file(tmp_path, embedder):
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "localmem.duckdb").write_bytes(os.urandom(8192))
    with pytest.raises(StoreError):
        Memory.open(folder, embedder=embedder)


class _OtherModel(Embedder):
    name = "some-other-model"

    @property
    def dim(self) -> int:
        return 8

    def embed_batch(self, texts):
        return np.ones((len(texts), 8), dtype=np.float32) / np.sqrt(8)


def test_store_refuses_another_embedding_model(open_memory, store_path):
    mem = open_memory(store_path)
    mem.add("made with MiniLM")
    mem.close()
    with pytest.raises(StoreError, match="reembed"):
        Memory.open(store_path, embedder=_OtherModel())
