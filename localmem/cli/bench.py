"""localmem bench NAME: benchmarks on public data (LoCoMo, ...).

Each benchmark registers itself in :data:`BENCHMARKS` (same shape as experiments).
"""

from __future__ import annotations

import argparse

from localmem.cli.common import store_options
from localmem.cli.experiment import Experiment

#: benchmark name -> Experiment(help, configure, run)
BENCHMARKS: dict[str, Experiment] = {}


def register(sub: argparse._SubParsersAction) -> None:
    """Add `localmem bench NAME` for every registered benchmark."""
    p = sub.add_parser("bench", help="run a benchmark on public data")
    names = p.add_subparsers(dest="benchmark", metavar="NAME")
    names.required = True
    for name, bench in BENCHMARKS.items():
        bp = names.add_parser(name, parents=[store_options()], help=bench.help)
        bench.configure(bp)
        bp.set_defaults(func=bench.run)


# the benchmarks register themselves on import (their heavy imports wait for run())
from localmem.cli import locomo as _locomo  # noqa: E402, F401
