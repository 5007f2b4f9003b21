"""Which files the server reads for a client (``ingest_file``), and reading them.

A client of ``localmem serve`` holds the store's token, which is the server user's own secret,
so the server could read whatever that user can. It reads less: only files under the folders
named when it was started (``localmem serve --ingest-dir DIR``, repeatable), by default the
home folder, and never a hidden one (a part of the path below the folder starting with ``.``:
``~/.ssh``, ``~/.aws``, ``~/.localmem``, dotfiles). ``--no-ingest`` reads none. The path is
resolved first (links followed), so a link in a named folder pointing outside it, or into a
hidden part, is refused too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from localmem.errors import InputError
from localmem.ingest import ingest_file

if TYPE_CHECKING:
    from localmem.memory import Memory
    from localmem.types import IngestReport


def default_roots() -> tuple[Path, ...]:
    """The folders a server reads files from when none are named: the home folder."""
    return (Path.home(),)


def allowed(path: str | Path, roots: Sequence[Path]) -> Path:
    """``path`` resolved, when it lies under one of ``roots`` with no hidden part below it.

    Raises:
        InputError: it does not, it does not exist, or the server reads no files at all.
    """
    if not roots:
        raise InputError(
            "this server reads no files (started with --no-ingest); ingest in process, or "
            "start it with --ingest-dir DIR"
        )
    given = Path(path)
    if not given.is_absolute():
        raise InputError(f"the server reads absolute paths only, not {str(path)!r}")
    try:
        resolved = given.resolve(strict=True)
    except FileNotFoundError:
        raise InputError(f"no such file: {path}") from None
    except (OSError, RuntimeError) as exc:
        raise InputError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
    for root in roots:
        root = root.expanduser().resolve()
        if resolved.is_relative_to(root):
            hidden = [p for p in resolved.relative_to(root).parts if p.startswith(".")]
            if hidden:
                raise InputError(
                    f"the server does not read hidden files or folders ({hidden[0]} in {path})"
                )
            return resolved
    named = ", ".join(str(r) for r in roots)
    raise InputError(
        f"the server reads files only under {named}, and {path} is not there "
        "(`localmem serve --ingest-dir DIR` names the folders it may read)"
    )


def confined_ingest(memory: Memory, roots: Sequence[Path]) -> Callable[..., IngestReport]:
    """``ingest_file`` for clients: the file checked against ``roots`` before it is read."""

    def ingest(path: str, **options: Any) -> IngestReport:
        return ingest_file(memory, allowed(path, roots), **options)

    return ingest
