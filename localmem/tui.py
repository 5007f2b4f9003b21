"""Deprecated: the terminal UI is its own distribution since localmem 0.2.0.

``pip install localmem-tui`` (from a checkout: ``pip install -e ./tui``), then
``from localmem_tui import make_app``. The old imports below still work, with a warning.
"""

from __future__ import annotations

from localmem._deprecated import Moved, moved_names

_INSTALL = "pip install localmem-tui"

__getattr__ = moved_names(
    __name__,
    {
        "make_app": Moved("localmem_tui:make_app", "0.2.0", "0.3.0", install=_INSTALL),
        "LocalMemApp": Moved("localmem_tui:LocalMemApp", "0.2.0", "0.3.0", install=_INSTALL),
    },
)
