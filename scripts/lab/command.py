"""What a runnable experiment or benchmark is to the command line and the TUI's Run pane."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Experiment:
    """One runnable experiment (or benchmark): ``configure`` adds its options to a parser,
    ``run(args)`` runs it and returns an exit code. Heavy imports wait for ``run``, so
    ``localmem --help`` stays fast."""

    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
