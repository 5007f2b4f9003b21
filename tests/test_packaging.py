"""The distribution ships every package, and the install is the one the README describes."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def _package_folders() -> set[str]:
    found = set()
    for init in (ROOT / "localmem").rglob("__init__.py"):
        rel = init.parent.relative_to(ROOT)
        found.add(".".join(rel.parts))
    for init in (ROOT / "tui").rglob("__init__.py"):
        rel = init.parent.relative_to(ROOT / "tui")
        found.add(".".join(("localmem", "tui", *rel.parts)))
    return found


def test_every_package_is_listed_in_pyproject():
    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    assert _package_folders() <= listed, sorted(_package_folders() - listed)


def test_torch_is_pinned_to_the_cpu_wheel():
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert "torch==2.13.0" in deps


def test_tui_imports_as_localmem_tui():
    import localmem.tui

    assert Path(localmem.tui.__file__).parent == ROOT / "tui"
