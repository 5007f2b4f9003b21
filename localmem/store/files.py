"""The store folder on disk: which files belong to it, who may read them, whether it is writable.

Memories are private: the folder is made owner-only (0700) and every file in it 0600, whatever
the process umask (files DuckDB makes, such as its WAL, are made private after each write by
:class:`~localmem.store.db.Database`). A store on a read-only folder or filesystem (a mounted
archive) is opened read-only: no lock file, no index save, DuckDB in read-only mode.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from localmem.errors import StoreError
from localmem.store.db import DB_FILE
from localmem.store.lock import LOCK_FILE
from localmem.store.vectors import INDEX_FILE, SIDECAR_FILE

CONFIG_NAME = "config.json"  # localmem.config.CONFIG_FILE (config is below the store; no import)
STORE_FILES = frozenset(
    {DB_FILE, DB_FILE + ".wal", INDEX_FILE, SIDECAR_FILE, LOCK_FILE, CONFIG_NAME}
)
#: DuckDB writes three 4 KiB headers before anything else: a file smaller than that was cut off
#: while DuckDB was creating it and can hold no table of anyone's
DUCKDB_HEADER_BYTES = 12288


def writable(folder: Path) -> bool:
    """Whether this process may create and change files in ``folder``.

    ``os.access`` answers for the real filesystem too: on a read-only mount it is False even
    for root (who otherwise ignores permission bits). A module function so tests can stand in
    for a read-only folder without a mount.
    """
    return os.access(folder, os.W_OK | os.X_OK)


def make_folder(folder: Path) -> None:
    """Create the store folder (and missing parents) and make it owner-only."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a read-only filesystem, no permission
        raise StoreError(f"cannot create the store folder {folder}: {exc.strerror}") from None
    make_private(folder)


def make_private(folder: Path) -> None:
    """Owner-only permissions on the folder and on every store file in it (a store made before
    stores were private, or files another tool made with the umask). Links are left alone."""
    try:
        if stat.S_IMODE(folder.stat().st_mode) != 0o700:
            os.chmod(folder, 0o700)
        for name in STORE_FILES:
            path = folder / name
            try:
                st = path.lstat()
            except FileNotFoundError:
                continue
            if stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) != 0o600:
                os.chmod(path, 0o600)
    except OSError:  # not ours to change (another owner): the store still works
        pass


def check_new_folder(folder: Path) -> None:
    """Refuse to make a store in a folder that holds other things than a store's files."""
    stray = [p.name for p in folder.iterdir()] if folder.exists() else []
    if [name for name in stray if name not in STORE_FILES]:
        raise StoreError(
            f"{folder} is not a localmem store (it holds other files: "
            f"{', '.join(sorted(stray)[:3])})"
        )


def discard_torn_database(folder: Path) -> bool:
    """Remove a database file cut off before DuckDB finished its headers (and its WAL, which
    DuckDB could never apply without them); returns whether there was one. A longer file is
    never touched here: only DuckDB can say what it holds."""
    path = folder / DB_FILE
    try:
        st = path.lstat()
    except OSError:  # none there (or the folder is not a folder: refused later)
        return False
    if not stat.S_ISREG(st.st_mode) or st.st_size >= DUCKDB_HEADER_BYTES:
        return False
    with open(path, "rb") as fh:
        head = fh.read(DUCKDB_HEADER_BYTES)
    if len(head) >= 12 and head[8:12] != b"DUCK" and head.strip(b"\0"):
        return False  # some other file that happens to be small: not a torn DuckDB file
    path.unlink()
    Path(str(path) + ".wal").unlink(missing_ok=True)
    return True


def peek_count(folder: str | Path) -> int | None:
    """How many memories a store folder holds, read without opening the store (no lock taken,
    DuckDB read-only): 0 for a folder without a store, None when the file cannot be read now
    (another process has it open for writing, or it is not a store)."""
    import duckdb

    path = Path(folder).expanduser() / DB_FILE
    if not path.exists():
        return 0
    try:
        con = duckdb.connect(str(path), read_only=True)
    except duckdb.Error:
        return None
    try:
        return int(con.execute("SELECT count(*) FROM memories").fetchall()[0][0])
    except duckdb.Error:
        return None
    finally:
        con.close()
