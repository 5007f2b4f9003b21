"""localmem experiment NAME: the seed experiments (MemInsight, A-Mem, Mem^p, RAG).

Each experiment registers itself in :data:`EXPERIMENTS` as ``name: Experiment(help, configure,
run)``; ``configure`` adds its options to its own sub-parser and ``run(args)`` returns an exit
code. Keep heavy imports inside ``run`` so ``localmem --help`` stays fast.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

from localmem.cli.common import store_options


@dataclass(frozen=True)
class Experiment:
    """One runnable experiment."""

    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


#: experiment name -> Experiment (the mechanisms add theirs)
EXPERIMENTS: dict[str, Experiment] = {}


def register(sub: argparse._SubParsersAction) -> None:
    """Add `localmem experiment NAME` for every registered experiment."""
    p = sub.add_parser("experiment", help="run a seed experiment and write its results")
    names = p.add_subparsers(dest="experiment", metavar="NAME")
    names.required = True
    for name, exp in EXPERIMENTS.items():
        ep = names.add_parser(name, parents=[store_options()], help=exp.help)
        exp.configure(ep)
        ep.set_defaults(func=exp.run)


# the experiments register themselves in EXPERIMENTS on import (heavy imports wait for run())
from localmem.cli import amem as _amem  # noqa: E402, F401 - seed 001
from localmem.cli import experiment_rag as _rag  # noqa: E402, F401 - seed 003
from localmem.cli import meminsight as _meminsight  # noqa: E402, F401 - seed 000
from localmem.cli import memp as _memp  # noqa: E402, F401 - seed 002
