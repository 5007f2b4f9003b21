"""Read-only stores and private files (issue 16, items 9 and 11)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from store_helpers import TEXTS, filled, run

from localmem import Memory, StoreReadOnlyError
from localmem.store import files
from localmem.store.db import DB_FILE
from localmem.store.vectors import INDEX_FILE, SIDECAR_FILE


# -- 6. read-only stores --------------------------------------------------------------------------
def _state(folder: Path) -> dict[str, tuple[int, int]]:
    return {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.iterdir()}


def test_read_only_open_reads_and_refuses_writes(open_memory, store_path):
    ids = filled(open_memory, store_path, 30)
    (store_path / "lock").unlink()
    (store_path / INDEX_FILE).write_bytes(b"\0" * (store_path / INDEX_FILE).stat().st_size)
    before = _state(store_path)
    mem = open_memory(store_path, read_only=True)
    assert mem.store.read_only
    assert any("memory only" in n for n in mem.store.notices)
    assert mem.get(ids[3]).content == TEXTS[3]
    assert len(mem.search("risk of project 4", k=3).hits) == 3
    assert mem.stats()["memories"] == 30
    for write in (
        lambda: mem.add("a new one"),
        lambda: mem.delete(ids[0]),
        lambda: mem.update(ids[1], content="changed"),
        lambda: mem.purge(ids[2]),
    ):
        with pytest.raises(StoreReadOnlyError, match="read-only"):
            write()
    mem.close()
    assert _state(store_path) == before  # no lock file, no index save, nothing written


def test_an_unwritable_folder_opens_read_only(capsys, open_memory, store_path, monkeypatch):
    ids = filled(open_memory, store_path, 10)
    monkeypatch.setattr(files, "writable", lambda folder: False)  # as a read-only mount answers
    mem = open_memory(store_path)
    assert mem.store.read_only and mem.get(ids[0]).content == TEXTS[0]
    mem.close()
    for args in (["search", "risk"], ["show", ids[0]], ["stats"], ["doctor"]):
        code, _, err = run(capsys, *args, "--store", str(store_path))
        assert code == 0, (args, err)
    code, _, err = run(capsys, "add", "new", "--store", str(store_path))
    assert code == 1 and "read-only" in err


def test_tui_browses_and_searches_a_read_only_store(open_memory, store_path):
    from localmem_tui import make_app
    from localmem_tui.browse import BrowsePane
    from localmem_tui.search import SearchPane
    from textual.widgets import DataTable
    from tui_helpers import drive, press, type_text

    filled(open_memory, store_path, 10)
    mem = open_memory(store_path, read_only=True)

    async def scenario(pilot):
        browse = pilot.app.query_one(BrowsePane)
        assert browse.query_one("#rows", DataTable).row_count == 10
        await press(pilot, "slash")
        await type_text(pilot, "the risk of project 3")
        await press(pilot, "enter")
        hits = pilot.app.query_one(SearchPane).last.result.hits
        assert hits and hits[0].memory.content.startswith("note ")

    assert drive(make_app(mem), scenario).errors == []


def _unshare_ok() -> bool:
    try:
        return (
            subprocess.run(
                ["unshare", "-m", "sh", "-c", "mount --bind / /mnt && umount /mnt"],
                capture_output=True,
                timeout=30,
            ).returncode
            == 0
        )
    except (OSError, subprocess.SubprocessError):
        return False


@pytest.mark.skipif(not _unshare_ok(), reason="needs unshare and mount (a read-only bind mount)")
def test_cli_on_a_real_read_only_mount(open_memory, store_path, tmp_path):
    ids = filled(open_memory, store_path, 10)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    localmem = str(Path(sys.executable).parent / "localmem")
    script = " && ".join(
        [
            f"mount --bind {store_path} {mnt}",
            f"mount -o remount,bind,ro {mnt}",
            f"{localmem} search risk --store {mnt} --json > {tmp_path}/search.json",
            f"{localmem} show {ids[2]} --store {mnt} > {tmp_path}/show.txt",
            f"{localmem} stats --store {mnt} > {tmp_path}/stats.txt",
            f"{localmem} doctor --store {mnt} > {tmp_path}/doctor.txt",
            f"({localmem} add new --store {mnt} 2> {tmp_path}/add.txt; echo $? > {tmp_path}/rc)",
        ]
    )
    proc = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads((tmp_path / "search.json").read_text())["hits"]
    assert TEXTS[2] in (tmp_path / "show.txt").read_text()
    assert "(read-only)" in (tmp_path / "doctor.txt").read_text()
    assert (tmp_path / "rc").read_text().strip() == "1"
    assert "read-only" in (tmp_path / "add.txt").read_text()


# -- 7. private files -----------------------------------------------------------------------------
def test_store_folder_and_files_are_private_whatever_the_umask(embedder, store_path):
    from localmem.config import Config

    old = os.umask(0o022)
    try:
        config = Config().with_updates(search={"rrf_k": 30})  # a config that differs: it is saved
        mem = Memory.open(store_path, embedder=embedder, config=config)
        mem.add_many(TEXTS[:20])
        assert (store_path / (DB_FILE + ".wal")).exists()
        modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in store_path.iterdir()}
        mem.close()
        modes.update({p.name: stat.S_IMODE(p.stat().st_mode) for p in store_path.iterdir()})
    finally:
        os.umask(old)
    assert stat.S_IMODE(store_path.stat().st_mode) == 0o700
    assert set(modes) >= {DB_FILE, DB_FILE + ".wal", INDEX_FILE, SIDECAR_FILE, "lock"}
    assert "config.json" in modes
    assert {name: mode for name, mode in modes.items() if mode != 0o600} == {}
