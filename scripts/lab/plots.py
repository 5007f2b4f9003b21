"""Plots are optional: matplotlib comes with ``pip install -e '.[experiments]'`` (and the test
extra). Without it an experiment writes its numbers and reports, and says which picture it
left out."""

from __future__ import annotations

import sys
from typing import Any


def pyplot() -> Any | None:
    """matplotlib's pyplot on the Agg backend (no display), or None when it is not installed."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def skipped(what: str) -> None:
    """Say (on stderr) that a picture was left out, and how to get it."""
    print(
        f"localmem: {what} not drawn: matplotlib is not installed "
        "(pip install -e '.[experiments]')",
        file=sys.stderr,
    )
