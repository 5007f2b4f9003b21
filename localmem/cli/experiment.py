"""localmem experiment / bench: moved to the lab (``python scripts/experiment.py NAME``).

The seed experiments and the benchmarks on public data are research tools, not part of the
product, so they left the package for ``scripts/lab`` in a checkout. The commands stay as
signposts for a while, so a script that calls them learns where they went.
"""

from __future__ import annotations

import argparse

from localmem.console import CommandError

MOVED = (
    "`localmem {command}` moved to the lab: from a checkout of localmem, run "
    "`python scripts/experiment.py NAME` (python scripts/experiment.py --help lists them)"
)


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `experiment` and `bench` signposts."""
    for command in ("experiment", "bench"):
        p = sub.add_parser(
            command,
            help="moved: python scripts/experiment.py NAME, from a checkout",
            description=MOVED.format(command=command),
        )
        p.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
        p.set_defaults(func=_moved, moved=command)


def _moved(args: argparse.Namespace) -> int:
    raise CommandError(MOVED.format(command=args.moved))
