"""Names a package exports but imports on first use (PEP 562), so that importing the package
for one light name does not import its heavy modules."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, where: Mapping[str, str], namespace: dict[str, Any]
) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: each name of ``where`` is imported from its
    module on first use and kept in ``namespace`` (the package's ``globals()``).

    Usage: ``__getattr__ = lazy_exports(__name__, {"Memory": "localmem.memory"}, globals())``.
    """

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    return __getattr__
