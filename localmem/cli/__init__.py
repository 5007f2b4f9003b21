"""The ``localmem`` command.

Each command group lives in its own module with a ``register(subparsers)`` function and is listed
in :data:`COMMANDS`. Errors reach a person as one line on stderr and a non-zero exit code.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from localmem.cli import (
    admin,
    agent,
    attributes,
    consolidate,
    demo,
    evolution,
    experiment,
    forget,
    ingest,
    mcp,
    memories,
    migrate,
    models,
    procedures,
    search,
    serve,
    sessions,
    transfer,
    tui,
)
from localmem.cli.quick_exit import ONE_SHOT_READS, quick_exit
from localmem.console import CREATED, CommandError, Parser, created_notice, fail
from localmem.errors import LocalMemError

#: command modules, in the order their commands appear in --help
COMMANDS = [
    memories,
    search,
    attributes,
    ingest,
    sessions,
    procedures,
    consolidate,
    agent,
    evolution,
    admin,
    migrate,
    transfer,
    forget,
    models,
    experiment,
    demo,
    tui,
    serve,
    mcp,
]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every registered command."""
    parser = Parser(
        prog="localmem",
        description="A fully local memory system for LLM agents. Nothing leaves this machine.",
    )
    from localmem import __version__

    parser.add_argument("--version", action="version", version=f"localmem {__version__}")
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="show the model engine's own log (llama.cpp's messages) on stderr instead of "
        "only in LOCALMEM_HOME/logs/engine.log",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for module in COMMANDS:
        module.register(sub)
    _describe(sub)
    return parser


def _describe(sub: argparse._SubParsersAction) -> None:
    """A command's `--help` opens with its one-line help when it has no longer description."""
    helps = {a.dest: a.help for a in sub._choices_actions}
    for name, parser in sub.choices.items():
        line = helps.get(name)
        if not parser.description and line:
            parser.description = line[0].upper() + line[1:] + "."
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                _describe(action)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    return run_parsed(build_parser().parse_args(argv))


def run_parsed(args: argparse.Namespace) -> int:
    """Run a parsed command (``args.func``): errors become one line and an exit code."""
    if getattr(args, "verbose", False):
        os.environ["LOCALMEM_ENGINE_LOG"] = "stderr"  # read by the model host's supervisor
    CREATED.clear()
    try:
        code = int(args.func(args) or 0)
    except (LocalMemError, CommandError) as exc:
        made = created_notice()  # a typo in --store is seen even when the command failed
        return fail(f"{exc} ({made})" if made else str(exc))
    except KeyboardInterrupt:
        return fail("interrupted", code=130)
    except BrokenPipeError:  # `localmem search ... | head`
        return 0
    except Exception as exc:  # a bug: still one line, with a way to see more
        if os.environ.get("LOCALMEM_DEBUG"):
            raise
        return fail(
            f"unexpected {type(exc).__name__}: {exc} (set LOCALMEM_DEBUG=1 for the traceback)"
        )
    if made := created_notice():
        print(f"localmem: {made}", file=sys.stderr)
    return code


def entry() -> None:  # pragma: no cover - console script wrapper
    args = build_parser().parse_args()
    code = run_parsed(args)
    if args.command in ONE_SHOT_READS:
        quick_exit(code)  # the native libraries' teardown is not worth waiting for
    sys.exit(code)
