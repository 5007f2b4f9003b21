"""What the commands share: store options, opening a memory, output in text or JSON."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from localmem.wire import encode as to_jsonable


class CommandError(Exception):
    """A usage problem the command itself found (a bad combination of arguments)."""


def printable(text: str) -> str:
    """Text any stream can write: a lone surrogate (from argv bytes that are not UTF-8) becomes
    its escape instead of failing the write."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def fail(message: str, *, code: int = 1) -> int:
    """Print one error line and return the exit code."""
    first = message.strip().splitlines()[0] if message.strip() else "failed"
    print(printable(f"localmem: error: {first}"), file=sys.stderr)
    return code


class Parser(argparse.ArgumentParser):
    """argparse, whose usage errors can name an argument holding a lone surrogate."""

    def error(self, message: str) -> NoReturn:
        super().error(printable(message))


def _at_least(minimum: int, text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"must be {minimum} or more, not {value}")
    return value


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    return _at_least(1, text)


def non_negative_int(text: str) -> int:
    """An argparse type: a whole number of at least 0."""
    return _at_least(0, text)


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


def add_store_argument(parser: argparse.ArgumentParser, help: str) -> None:
    """A command on one store takes it as ``STORE`` or as ``--store PATH`` (like every other
    command); :func:`given_store` reads whichever was given."""
    parser.add_argument("store", nargs="?", metavar="STORE", help=help)
    parser.add_argument(
        "--store", dest="store_option", metavar="PATH", help="the same, as an option"
    )


def given_store(args: argparse.Namespace) -> str | None:
    """The store named by ``STORE`` or ``--store`` (None: the default one)."""
    if args.store is not None and args.store_option is not None:
        raise CommandError("give the store once: STORE or --store")
    return args.store if args.store is not None else args.store_option


def store_path(args: argparse.Namespace) -> Path | str:
    """The store the command works on: a folder, or a ``postgresql://`` address as given."""
    from localmem.home import default_store_path  # not localmem.config: pydantic is slow
    from localmem.store.address import store_target

    if args.store is not None and not args.store.strip():  # "--store $UNSET" is a mistake
        raise CommandError("the store path is empty; name a folder or leave --store out")
    if args.store is None:
        return default_store_path()
    return store_target(args.store)


#: stores this command created (the command line says so when it ends, with its error if any)
CREATED: list[Path] = []


def created_notice() -> str | None:
    """'created a new store at ...' for the stores this command created, else None."""
    return f"created a new store at {', '.join(map(str, CREATED))}" if CREATED else None


def open_memory(args: argparse.Namespace, *, create: bool = True):
    """The store named by ``--store``: a client of its server when ``localmem serve`` holds it,
    else the store itself (the Memory import is deferred: it is heavy)."""
    path = store_path(args)
    # cheap test first: most stores are not served (a PostgreSQL store is opened directly:
    # its database serves any number of processes)
    if isinstance(path, Path) and (path / "serve.json").exists():
        from localmem.discovery import find_server
        from localmem.remote import connect

        if find_server(path) is not None:
            return connect(path)
    from localmem.memory import Memory

    # a typo in --store would otherwise make a store silently: say so when one is made
    new = isinstance(path, Path) and create and not (path / "localmem.duckdb").exists()
    memory = Memory.open(path, create=create)
    if new and isinstance(path, Path):  # (``new`` holds only for a folder)
        CREATED.append(path)
    for notice in memory.store.notices:
        print(f"localmem: {notice}", file=sys.stderr)
    return memory


def plural(n: int, one: str, many: str) -> str:
    """``one`` for 1, else ``many`` ("1 memory", "2 memories")."""
    return one if n == 1 else many


def counted(n: int, one: str, many: str | None = None) -> str:
    """``n`` and the noun that agrees with it: "1 memory", "2 memories", "1 live memory"
    (``many`` defaults to ``one`` + "s", "y" -> "ies" after a consonant)."""
    if many is None:
        many = one[:-1] + "ies" if one.endswith("y") and one[-2:-1] not in "aeiou" else one + "s"
    return f"{n} {plural(n, one, many)}"


def print_json(value: Any) -> None:
    """Print a value as indented JSON."""
    print(json.dumps(to_jsonable(value), indent=2, ensure_ascii=False))


def short(text: str, width: int = 100) -> str:
    """One line of at most ``width`` characters."""
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def json_option(value: str | None, option: str) -> Any:
    """The JSON value of an option such as ``--metadata`` (None when not given)."""
    if value is None:
        return None
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise CommandError(f"{option} is not JSON: {exc.msg}") from None
    except RecursionError:  # [[[[... thousands deep
        raise CommandError(f"{option} nests too deeply") from None
    except ValueError as exc:  # a number of more than 4,300 digits
        raise CommandError(f"{option} is not usable JSON: {exc}") from None


def read_content(value: str) -> str:
    """A text argument, where ``-`` means standard input."""
    if value != "-":
        return value
    try:
        data = sys.stdin.buffer.read()
    except (OSError, ValueError, AttributeError) as exc:  # closed, or not a byte stream
        raise CommandError(f"cannot read standard input: {exc}") from None
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
