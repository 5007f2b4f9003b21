"""localmem experiment NAME: the seed experiments (MemInsight, A-Mem, Mem^p, RAG).

The experiments themselves, with their options, are listed in
:data:`localmem.experiments.registry.EXPERIMENTS`.
"""

from __future__ import annotations

import argparse

from localmem.console import store_options


def register(sub: argparse._SubParsersAction) -> None:
    """Add `localmem experiment NAME` for every experiment."""
    from localmem.experiments.registry import EXPERIMENTS

    p = sub.add_parser("experiment", help="run a seed experiment and write its results")
    names = p.add_subparsers(dest="experiment", metavar="NAME")
    names.required = True
    for name, exp in EXPERIMENTS.items():
        ep = names.add_parser(name, parents=[store_options()], help=exp.help)
        exp.configure(ep)
        ep.set_defaults(func=exp.run)
