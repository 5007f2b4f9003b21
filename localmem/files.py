"""Reading input files safely: regular files only, size checked before any byte is read."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from localmem.errors import InputError

#: the largest file ingest reads (64 MiB; ``max_bytes=`` / ``--max-mb`` raise it): a file is
#: read whole, so the limit bounds memory; /dev/zero and FIFOs are refused before any read
MAX_FILE_BYTES = 64 * 1024 * 1024


def read_file_bytes(path: Path, *, max_bytes: int = MAX_FILE_BYTES) -> tuple[bytes, Path]:
    """The bytes of a regular file and the resolved path they were read from.

    The type and size are checked on the open descriptor before anything is read: a folder, a
    FIFO (opened non-blocking, so it cannot hang), a device (``/dev/zero``) or a socket is
    refused, and so is a file larger than ``max_bytes``.
    """
    try:
        resolved = path.resolve(strict=True)
    except FileNotFoundError:
        raise InputError(f"no such file: {path}") from None
    except (OSError, RuntimeError) as exc:  # a symlink loop, a permission on the way
        raise InputError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        fd = os.open(resolved, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise InputError(f"{path} is a folder; name a file")
        if not stat.S_ISREG(info.st_mode):
            raise InputError(f"{path} is not a regular file ({_file_type(info.st_mode)}); refused")
        if info.st_size > max_bytes:
            raise InputError(
                f"{path} has {info.st_size:,} bytes, more than the limit of {max_bytes:,}"
            )
        with os.fdopen(os.dup(fd), "rb") as handle:
            raw = handle.read(max_bytes + 1)
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from None
    finally:
        os.close(fd)
    if len(raw) > max_bytes:  # it grew while we read
        raise InputError(f"{path} has more than the limit of {max_bytes:,} bytes")
    return raw, resolved


def _file_type(mode: int) -> str:
    """What kind of non-regular file a mode says."""
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a plain file"


def read_text_file(path: Path, *, max_bytes: int = MAX_FILE_BYTES) -> str:
    """A regular file's text; binary, non-UTF-8 or too large files are refused clearly."""
    raw, _ = read_file_bytes(path, max_bytes=max_bytes)
    return decode_text(path, raw)


def decode_text(path: Path, raw: bytes) -> str:
    """A file's bytes as text (UTF-8, a BOM dropped); binary and other encodings refused."""
    if b"\x00" in raw[:8192]:
        raise InputError(f"{path} looks like a binary file, not text")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path} is not UTF-8 text (bad byte at offset {exc.start})") from None
