"""Deprecation warnings for API that moved or was renamed: one pattern for every module.

A name that moved keeps working for a release or two, with a :class:`DeprecationWarning`
that says where it went; then it goes (the CHANGELOG's "Upgrading" section lists both dates)::

    # in the module the name used to live in (see localmem/tui.py)
    from localmem._deprecated import Moved, moved_names

    __getattr__ = moved_names(
        __name__,
        {"make_app": Moved("localmem_tui:make_app", since="0.2.0", removed_in="0.3.0")},
    )

A renamed keyword argument::

    @renamed_arguments({"top_k": "k"}, since="0.2.0", removed_in="0.3.0")
    def search(query, *, k=5): ...

Python shows a DeprecationWarning when it is raised from ``__main__`` or a test, and hides it
elsewhere unless warnings are turned on (``python -W default``, pytest shows them).
"""

from __future__ import annotations

import functools
import importlib
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Moved:
    """Where a name went (``"package.module:attribute"``), since and until which version the
    old name works, and what to install when the new home is another distribution."""

    target: str
    since: str
    removed_in: str
    install: str | None = None


def warn(old: str, new: str, *, since: str, removed_in: str, stacklevel: int = 3) -> None:
    """Warn that ``old`` is deprecated in favour of ``new`` (the caller's caller is blamed)."""
    warnings.warn(
        f"{old} is deprecated since localmem {since} and goes in {removed_in}: use {new}",
        DeprecationWarning,
        stacklevel=stacklevel,
    )


def moved_names(module: str, moved: Mapping[str, Moved]) -> Callable[[str], Any]:
    """A module-level ``__getattr__`` that serves the names in ``moved`` from their new home."""

    def __getattr__(name: str) -> Any:
        where = moved.get(name)
        if where is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        target_module, _, attribute = where.target.partition(":")
        new = f"{target_module}.{attribute}" if attribute else target_module
        warn(f"{module}.{name}", new, since=where.since, removed_in=where.removed_in)
        try:
            value = importlib.import_module(target_module)
        except ImportError:
            hint = f" ({where.install})" if where.install else ""
            raise ImportError(f"{module}.{name} moved to {new}, not installed{hint}") from None
        return getattr(value, attribute) if attribute else value

    return __getattr__


def renamed_arguments(
    renames: Mapping[str, str], *, since: str, removed_in: str
) -> Callable[[F], F]:
    """A decorator that accepts the old names of renamed keyword arguments, with a warning.

    Passing both the old and the new name is a ``TypeError``, as for any argument given twice.
    """

    def decorate(function: F) -> F:
        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            for old, new in renames.items():
                if old in kwargs:
                    if new in kwargs:
                        raise TypeError(f"{function.__qualname__}() got both {old}= and {new}=")
                    warn(
                        f"{function.__qualname__}({old}=...)",
                        f"{new}=",
                        since=since,
                        removed_in=removed_in,
                    )
                    kwargs[new] = kwargs.pop(old)
            return function(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate
