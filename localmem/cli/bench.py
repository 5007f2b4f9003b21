"""localmem bench NAME: benchmarks on public data (LoCoMo, ...).

The benchmarks are listed in :data:`localmem.experiments.registry.BENCHMARKS`.
"""

from __future__ import annotations

import argparse

from localmem.console import store_options


def register(sub: argparse._SubParsersAction) -> None:
    """Add `localmem bench NAME` for every benchmark."""
    from localmem.experiments.registry import BENCHMARKS

    p = sub.add_parser("bench", help="run a benchmark on public data")
    names = p.add_subparsers(dest="benchmark", metavar="NAME")
    names.required = True
    for name, bench in BENCHMARKS.items():
        bp = names.add_parser(name, parents=[store_options()], help=bench.help)
        bench.configure(bp)
        bp.set_defaults(func=bench.run)
