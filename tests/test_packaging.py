"""The distribution ships every package, and the install is the one the README describes."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def test_every_data_file_of_the_package_is_shipped():
    """Files the library reads at run time (migrations, label sets, experiment data, styles)
    match a package-data pattern, so a non-editable install has them too."""
    from fnmatch import fnmatch

    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"
    ]["localmem"]
    package = ROOT / "localmem"
    data = [
        p.relative_to(package).as_posix()
        for p in package.rglob("*")
        if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts
    ]
    assert data, "the package has data files"
    unshipped = [
        f
        for f in data
        if not any(fnmatch(f, pat) or fnmatch(f, pat.removeprefix("**/")) for pat in patterns)
    ]
    assert unshipped == []


def test_torch_is_pinned_to_the_cpu_wheel():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert "torch==2.13.0" in extras["torch"]  # an extra now (tests/test_lean_core.py)


def test_the_tui_is_its_own_distribution_at_the_top_level():
    """The design card's layout: ``tui/`` beside the library, installed as ``localmem-tui``,
    and nothing of it inside the ``localmem`` package."""
    import localmem_tui

    assert Path(localmem_tui.__file__).parent == ROOT / "tui" / "localmem_tui"
    assert not (ROOT / "localmem" / "tui").exists()
    tui = tomllib.loads((ROOT / "tui" / "pyproject.toml").read_text())["project"]
    assert tui["name"] == "localmem-tui"
    assert "localmem" in tui["dependencies"]


def test_the_lab_is_outside_the_package():
    """The seed experiments and the LoCoMo harness live in scripts/lab, not in the wheel."""
    import lab

    assert Path(lab.__file__).parent == ROOT / "scripts" / "lab"
    assert not (ROOT / "localmem" / "experiments").exists()
