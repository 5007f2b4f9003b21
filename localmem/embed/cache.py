"""Where the embedder's ONNX graphs are kept between runs, and how a kept one is trusted.

A graph exported from a model folder (or the built-in one, assembled) lives in a folder of
its own under :func:`cache_root`, named after the model and a key of what it was made from
(:func:`fingerprint`). The folder's ``manifest.json`` records each file's size when it was
written, so a missing or truncated file is seen (:func:`valid`) and made again; a lock keeps
two processes from making the same folder at once (:func:`file_lock`).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from localmem.config import EmbedderConfig, localmem_home

#: bump when the exported graph changes shape or meaning: older cached exports are then ignored
EXPORT_FORMAT = 1
MANIFEST = "manifest.json"


def replace_folder(folder: Path, make: Callable[[Path], dict[str, Any]]) -> None:
    """Make a cache folder anew: ``make(tmp)`` writes its files into a temporary sibling and
    returns the manifest's fields (with ``files``: name -> size); the manifest is written and
    the folder swapped in whole, so a reader never sees half of it."""
    tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}-"))
    try:
        manifest = {"format": EXPORT_FORMAT, **make(tmp)}
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2), encoding="utf-8")
        if folder.exists():
            shutil.rmtree(folder)
        os.replace(tmp, folder)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def cache_root(config: EmbedderConfig) -> Path:
    """Where exported graphs live: ``embedder.cache_dir``, ``$LOCALMEM_EMBED_CACHE`` or home."""
    if config.cache_dir:
        return Path(config.cache_dir).expanduser()
    env = os.environ.get("LOCALMEM_EMBED_CACHE")
    return Path(env).expanduser() if env else localmem_home() / "models" / "embed"


def fingerprint(path: Path) -> str:
    """Identifies a model folder's weights and settings cheaply (sizes and times, no hashing of
    the weights): a changed model gets a fresh export."""
    h = hashlib.sha256(f"{EXPORT_FORMAT}|{path.resolve()}".encode())
    for name in sorted(p.name for p in path.iterdir() if p.is_file()):
        stat = (path / name).stat()
        h.update(f"|{name}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return h.hexdigest()[:16]


def valid(folder: Path, *names: str) -> bool:
    """Each file exists with the size the manifest recorded when it was written."""
    manifest = read_json(folder / MANIFEST, default={})
    files = manifest.get("files", {}) if manifest.get("format") == EXPORT_FORMAT else {}
    try:
        return all(
            files.get(n) is not None and (folder / n).stat().st_size == files[n] for n in names
        )
    except OSError:
        return False


@contextmanager
def file_lock(path: Path):
    """An exclusive lock between processes exporting the same model (POSIX; else no lock)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    with open(path, "a+") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def read_json(path: Path, *, default: Any) -> Any:
    """A JSON file's value, or ``default`` when it is missing or unreadable."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return default


def write_json(path: Path, data: Any) -> None:
    """Write ``data`` as JSON through a temporary file and a rename."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2), encoding="utf-8")
    os.replace(tmp, path)


def slug(name: str) -> str:
    """``name`` as a folder name."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name).strip("._") or "model"
