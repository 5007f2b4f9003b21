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


# -- issue 30 item 3: a supersession's successor after a kill -9 ---------------------------------
_SUPERSEDE_THEN_DIE = """
import os, signal, json
from localmem import Memory
mem = Memory.open(STORE)
items = {m.content: m for m in mem.list(limit=100)}
# a rewrite of a row (a new text: a new embedding, a list column), then a supersession
mem.update(items["note 1 about the budget"].id, content="note 1 about the revised budget")
(applied,) = mem.infer("I live in Rome", user_id="ann", speaker="Ann")
noted = items["note 2 about the budget"].id
mem.update(noted, metadata={"checked": True})  # NULL -> a value, without a new embedding
print(json.dumps({"event": applied.event, "old": applied.target.id, "new": applied.memory.id,
                  "noted": noted}))
os.kill(os.getpid(), signal.SIGKILL)  # acknowledged; no checkpoint, the WAL holds it
"""


def test_an_acknowledged_supersession_keeps_its_successor_after_kill_9(open_memory, store_path):
    """DuckDB 2.0.1's WAL replay loses an in-place NULL -> text update after a transaction
    that rewrote a row (scripts/duckdb_wal_update.py): the supersession's ``valid_to`` came
    back, its ``superseded_by`` did not. Read here with plain DuckDB (no repair of ours), the
    successor is there: localmem's write rewrites the row."""
    import json

    import duckdb

    mem = open_memory(store_path)
    mem.add_many(
        [
            {"content": f"note {i} about the budget", "metadata": {"i": i} if i % 2 else None}
            for i in range(20)
        ]
    )  # metadata holds values among NULLs once checkpointed, as superseded_by below
    mem.add("Ann lives in Paris", user_id="ann")
    # a supersession before: superseded_by holds values among NULLs once checkpointed
    mem.add("Bo lives in Lima", user_id="bo")
    mem.infer("I live in Oslo", user_id="bo", speaker="Bo")
    mem.close()  # checkpointed: the rows are in blocks, the WAL is empty
    proc = _child(_SUPERSEDE_THEN_DIE, store_path, stdout=subprocess.PIPE, text=True)
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == -signal.SIGKILL
    acked = json.loads(out.strip().splitlines()[-1])
    assert acked["event"] == "INVALIDATE"
    con = duckdb.connect(str(store_path / "localmem.duckdb"), read_only=True)  # replays the WAL
    row = con.execute(
        "SELECT valid_to IS NOT NULL, superseded_by FROM memories WHERE id = ?", [acked["old"]]
    ).fetchone()
    (meta,) = con.execute("SELECT metadata FROM memories WHERE id = ?", [acked["noted"]]).fetchone()
    con.close()
    assert row == (True, acked["new"])  # was (True, None)
    assert json.loads(meta) == {"checked": True}  # was None


def test_a_lost_successor_is_put_back_from_the_history_on_open_and_by_doctor(
    open_memory, store_path, capsys
):
    import duckdb
    from store_helpers import run

    mem = open_memory(store_path)
    mem.add("Ann lives in Paris", user_id="ann")
    (applied,) = mem.infer("I live in Rome", user_id="ann", speaker="Ann")
    old, new = applied.target.id, applied.memory.id
    mem.close()

    def lose() -> None:  # the state DuckDB's replay left: valid_to set, no successor
        con = duckdb.connect(str(store_path / "localmem.duckdb"))
        con.execute("UPDATE memories SET superseded_by = NULL WHERE id = ?", [old])
        con.close()

    lose()
    seen = open_memory(store_path, read_only=True)  # nothing mended, the check sees it
    assert seen.store.check()["successors_lost"] == 1 and seen.get(old).superseded_by is None
    seen.close()
    if os.geteuid() != 0:  # (root writes a read-only folder anyway)
        os.chmod(store_path, 0o500)  # read-only: nothing can be mended, doctor says so
        try:
            code, out, _ = run(capsys, "doctor", "--store", str(store_path))
        finally:
            os.chmod(store_path, 0o700)
        assert code == 1 and "BAD  supersessions" in out and "1 superseded" in out, out
    code, out, _ = run(capsys, "doctor", "--store", str(store_path))
    assert code == 0 and "put back from their history" in out, out
    mem = open_memory(store_path)
    assert mem.get(old).superseded_by == new
    mem.close()
    lose()
    mem = open_memory(store_path)  # opening mends it too
    assert any("successor" in n for n in mem.store.notices), mem.store.notices
    assert mem.get(old).superseded_by == new


def test_lost_metadata_is_found_by_doctor_and_put_back_by_repair(open_memory, store_path, capsys):
    import duckdb
    from store_helpers import run

    mem = open_memory(store_path)
    item = mem.add("a note that gets metadata later")
    mem.update(item.id, metadata={"checked": True})
    mem.close()
    con = duckdb.connect(str(store_path / "localmem.duckdb"))  # what the replay left
    con.execute("UPDATE memories SET metadata = NULL WHERE id = ?", [item.id])
    con.close()
    code, out, _ = run(capsys, "doctor", "--store", str(store_path))
    assert code == 1 and "BAD  metadata" in out and "1 memories" in out, out
    code, out, _ = run(capsys, "doctor", "--store", str(store_path), "--repair")
    assert code == 0 and "metadata: 1 put back" in out, out
    mem = open_memory(store_path)
    assert mem.get(item.id).metadata == {"checked": True}
