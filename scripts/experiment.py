"""The lab's experiments and benchmarks, run from a checkout (they are not part of the product).

    python scripts/experiment.py NAME [options]      # --help lists the names

The seed experiments (meminsight, amem, memp, rag) and the benchmarks on public data (locomo)
live in ``scripts/lab``; each writes its results and report as it did as ``localmem
experiment NAME`` / ``localmem bench NAME`` before they left the package.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from lab.registry import BENCHMARKS, EXPERIMENTS

from localmem.cli import run_parsed
from localmem.console import Parser, store_options


def build_parser() -> argparse.ArgumentParser:
    """One subcommand per experiment and benchmark."""
    parser = Parser(prog="python scripts/experiment.py", description=__doc__.splitlines()[0])
    names = parser.add_subparsers(dest="experiment", metavar="NAME")
    names.required = True
    for name, exp in {**EXPERIMENTS, **BENCHMARKS}.items():
        ep = names.add_parser(name, parents=[store_options()], help=exp.help)
        exp.configure(ep)
        ep.set_defaults(func=exp.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one experiment; errors are one line, as on the command line."""
    return run_parsed(build_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
