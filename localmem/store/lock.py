"""One writer per store: an advisory lock on ``<store>/lock`` that names its holder."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import time
from pathlib import Path

from localmem.errors import StoreError, StoreLockedError

try:  # POSIX; on other systems DuckDB's own file lock still keeps a second writer out
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

LOCK_FILE = "lock"
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class StoreLock:
    """An exclusive lock held for as long as a store is open for writing.

    The operating system drops the lock when the process dies, so a crash never leaves a stale
    lock behind; the pid written into the file only serves the error message.
    """

    def __init__(self, folder: Path, *, timeout_s: float = 0.0) -> None:
        self.path = folder / LOCK_FILE
        self.timeout_s = timeout_s
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock or raise :class:`StoreLockedError` naming the process that holds it.

        Raises:
            StoreError: ``lock`` is a symbolic link, a folder or anything but a regular file
                (the lock file is truncated when taken: following a link would empty its target).
        """
        fd = self._open()
        if fcntl is None:  # pragma: no cover
            self._fd = fd
            return
        deadline = time.monotonic() + self.timeout_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    os.close(fd)
                    raise
                if time.monotonic() >= deadline:
                    pid = _read_pid(fd)
                    os.close(fd)
                    raise StoreLockedError(str(self.path.parent), pid) from None
                time.sleep(0.05)
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        self._fd = fd

    def _open(self) -> int:
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | _NOFOLLOW | os.O_NONBLOCK, 0o600)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise StoreError(
                    f"{self.path} is a symbolic link; remove it (localmem will not "
                    "write through a link)"
                ) from None
            if exc.errno == errno.EISDIR:
                raise StoreError(f"{self.path} is a folder, not a lock file; remove it") from None
            raise StoreError(f"cannot open the lock file {self.path}: {exc.strerror}") from None
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # a FIFO or a device named `lock`
            os.close(fd)
            raise StoreError(f"{self.path} is not a regular file; remove it")
        if st.st_nlink > 1:  # a hard link to another file: taking the lock would empty it
            os.close(fd)
            raise StoreError(f"{self.path} is a hard link to another file; remove it")
        with contextlib.suppress(OSError):  # a lock file from before stores were private
            os.fchmod(fd, 0o600)
        return fd

    def release(self) -> None:
        """Give the lock back (closing the file releases it)."""
        if self._fd is not None:
            try:
                os.ftruncate(self._fd, 0)
            finally:
                os.close(self._fd)
                self._fd = None

    @property
    def held(self) -> bool:
        """Whether this object holds the lock now."""
        return self._fd is not None


def _read_pid(fd: int) -> int | None:
    try:
        raw = os.pread(fd, 32, 0).decode().strip()
        return int(raw) if raw else None
    except (OSError, ValueError):
        return None
