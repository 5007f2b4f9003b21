"""Where localmem keeps its stores by default: standard library only, so a command that only
needs a store's folder (to find its server) does not import the configuration's pydantic."""

from __future__ import annotations

import os
from pathlib import Path


def localmem_home() -> Path:
    """Where stores and models live by default: ``$LOCALMEM_HOME``, else ``~/.localmem``."""
    env = os.environ.get("LOCALMEM_HOME")
    return Path(env).expanduser() if env else Path.home() / ".localmem"


def default_store_path() -> Path:
    """The store used when none is named."""
    return localmem_home() / "default"
