"""What the commands share: store options, opening a memory, output in text or JSON."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from localmem.wire import encode as to_jsonable


class CommandError(Exception):
    """A usage problem the command itself found (a bad combination of arguments)."""


def fail(message: str, *, code: int = 1) -> int:
    """Print one error line and return the exit code."""
    first = message.strip().splitlines()[0] if message.strip() else "failed"
    print(f"localmem: error: {first}", file=sys.stderr)
    return code


def store_options() -> argparse.ArgumentParser:
    """A parent parser giving every command ``--store`` and ``--json``."""
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument(
        "--store",
        metavar="PATH",
        default=None,
        help="the store folder (default: $LOCALMEM_HOME/default, else ~/.localmem/default)",
    )
    parent.add_argument("--json", action="store_true", help="print JSON for scripts")
    return parent


def store_path(args: argparse.Namespace) -> Path:
    """The store the command works on."""
    from localmem.config import default_store_path  # pydantic: imported when a command runs

    return Path(args.store).expanduser() if args.store else default_store_path()


def open_memory(args: argparse.Namespace, *, create: bool = True):
    """The store named by ``--store``: a client of its server when ``localmem serve`` holds it,
    else the store itself (the Memory import is deferred: it is heavy)."""
    path = store_path(args)
    if (path / "serve.json").exists():  # cheap test first: most stores are not served
        from localmem.remote import connect, find_server

        if find_server(path) is not None:
            return connect(path)
    from localmem.memory import Memory

    memory = Memory.open(path, create=create)
    for notice in memory.store.notices:
        print(f"localmem: {notice}", file=sys.stderr)
    return memory


def print_json(value: Any) -> None:
    """Print a value as indented JSON."""
    print(json.dumps(to_jsonable(value), indent=2, ensure_ascii=False))


def short(text: str, width: int = 100) -> str:
    """One line of at most ``width`` characters."""
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def read_content(value: str) -> str:
    """A text argument, where ``-`` means standard input."""
    if value != "-":
        return value
    data = sys.stdin.buffer.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CommandError(f"standard input is not UTF-8 (byte {exc.start})") from None


#: extra receivers of every Progress update as (label, done, total): the TUI draws its own bar
#: while it runs a command in a worker
PROGRESS_LISTENERS: list[Callable[[str, int, int], None]] = []


class Progress:
    """A one-line progress bar on stderr (silent when stderr is not a terminal)."""

    def __init__(self, label: str, *, enabled: bool | None = None) -> None:
        self.label = label
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self._last = -1

    def __call__(self, done: int, total: int) -> None:
        for listener in list(PROGRESS_LISTENERS):
            listener(self.label, done, total)
        if not self.enabled or total <= 0:
            return
        pct = int(100 * done / total)
        if pct == self._last and done != total:
            return
        self._last = pct
        filled = pct * 30 // 100
        bar = "#" * filled + "-" * (30 - filled)
        end = "\n" if done >= total else ""
        print(f"\r{self.label} [{bar}] {done}/{total} {pct}%", end=end, file=sys.stderr, flush=True)
