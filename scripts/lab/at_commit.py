"""A module of this repository as it was at another commit, imported beside today's (to check
that a refactor decides as before, or to time the two side by side)."""

from __future__ import annotations

import functools
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


@functools.cache
def module_at(commit: str, path: str) -> ModuleType:
    """The module at ``path`` (``localmem/infer/conflict.py``) as ``commit`` had it, imported
    under its own name; what it imports is today's."""
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{commit}:{path}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    name = f"{Path(path).stem}_at_{commit}"
    module = ModuleType(name)
    module.__file__ = f"{commit}:{path}"
    sys.modules[name] = module  # a dataclass looks its module up while it is made
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    return module
