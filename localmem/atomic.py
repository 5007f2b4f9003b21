"""Writing a small file so that only its owner can read it, all at once, never through a link.

The store's sidecar, a store's ``config.json`` and the server's discovery and token files are
written this way: to ``NAME.tmp`` first, which is removed before it is created exclusively
(``O_EXCL`` with ``O_NOFOLLOW``: a link left in its place is neither followed nor written
through), with mode 0600 whatever the umask, then renamed over ``NAME``.
"""

from __future__ import annotations

import os
from pathlib import Path

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def write_private(path: str | os.PathLike[str], text: str, *, fsync: bool = False) -> None:
    """Replace ``path`` with ``text`` (UTF-8), owner-only; ``fsync`` makes it durable first."""
    tmp = Path(str(path) + ".tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
        if fsync:
            fh.flush()
            os.fsync(fh.fileno())
    os.replace(tmp, path)
