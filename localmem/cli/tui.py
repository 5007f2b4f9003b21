"""localmem tui: the terminal UI on a store (or on the demo store)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from localmem.console import CommandError, add_store_argument, given_store


def register(sub: argparse._SubParsersAction) -> None:
    """Add the tui command."""
    p = sub.add_parser(
        "tui",
        help="the terminal UI: browse, search, add, run ingestion and experiments",
        description="Open the terminal UI. Without STORE it opens your default store, or the "
        "demo store while the default one is still empty.",
    )
    add_store_argument(
        p,
        "the store folder or a postgresql:// address (default: $LOCALMEM_HOME/default, "
        "else ~/.localmem/default)",
    )
    p.add_argument(
        "--demo",
        action="store_true",
        help="open the demo store ($LOCALMEM_HOME/demo), filled with the sample on first use",
    )
    p.set_defaults(func=cmd_tui)


def demo_store_path() -> Path:
    """Where the demo store lives (shared with `localmem demo`)."""
    from localmem.config import localmem_home  # pydantic: imported when the command runs

    return localmem_home() / "demo"


def choose_store(store: str | None, *, demo: bool) -> tuple[Path | str, bool, list[str]]:
    """Which store to open, whether to fill it with the demo sample, and what to tell the person.

    A new user (no STORE given, and the default store missing or empty) gets the demo store, so
    the first start shows a living store; the notice says how to open their own.
    """
    if demo and store:
        raise CommandError("give a STORE or --demo, not both")
    if demo:
        return demo_store_path(), True, []
    if store:
        from localmem.store.address import store_target

        return store_target(store), False, []
    from localmem.config import default_store_path

    default = default_store_path()
    if _is_empty(default):
        return (
            demo_store_path(),
            True,
            [
                f"Your store {default} is empty, so this is the demo store. "
                f"Open yours with: localmem tui {default}"
            ],
        )
    return default, False, []


def _is_empty(path: Path) -> bool:
    from localmem.memory import Memory

    # a store another process holds open (None) is not empty for our purpose
    return Memory.peek_count(path) == 0


def _tui_app() -> Any:
    """The terminal UI's app factory: a distribution of its own (``localmem-tui``), so the
    library installs without Textual; a missing one is said in one line."""
    try:
        from localmem_tui import make_app  # Textual is imported only for this command
    except ImportError as exc:
        if exc.name not in ("localmem_tui", "textual"):
            raise
        raise CommandError(
            "the terminal UI is not installed: pip install localmem-tui "
            "(from a checkout: pip install -e ./tui)"
        ) from None
    return make_app


def cmd_tui(args: argparse.Namespace) -> int:
    """localmem tui"""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise CommandError(
            "localmem tui needs a terminal; in scripts use `localmem demo`, `localmem search`"
        )
    from localmem.discovery import find_server
    from localmem.memory import Memory
    from localmem.remote import connect

    make_app = _tui_app()

    path, fill_demo, notices = choose_store(given_store(args), demo=args.demo)
    server = find_server(path) if isinstance(path, Path) else None
    if server is not None:  # an agent's `localmem serve` holds the store: watch it live
        notices.append(f"served by process {server.pid}: memories others add appear here")
        with connect(path) as memory:
            make_app(memory, fill_demo=fill_demo, notices=notices, follow_s=2.0).run()
        return 0
    with Memory.open(path) as memory:
        notices += list(memory.store.notices)
        make_app(memory, fill_demo=fill_demo, notices=notices).run()
    return 0
