"""The localmem terminal UI (Textual), shipped as ``localmem_tui``.

``make_app(memory)`` builds the app for an open store; ``localmem tui [STORE]`` runs it.
"""

from __future__ import annotations

from localmem_tui.app import LocalMemApp, make_app

__all__ = ["LocalMemApp", "make_app"]
