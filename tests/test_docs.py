"""The docs say what the code does: generated pages are current, the architecture's lists match
the code, links resolve, and the README's Python tour runs."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
ARCHITECTURE = (DOCS / "architecture.md").read_text(encoding="utf-8")
sys.path.insert(0, str(ROOT / "scripts"))

import gen_docs  # noqa: E402  (scripts/ is not a package)


def _listed(marker: str) -> list[str]:
    """The first back-quoted name of each line between <!-- marker --> and <!-- /marker -->."""
    block = ARCHITECTURE.split(f"<!-- {marker} -->")[1].split(f"<!-- /{marker} -->")[0]
    return [m.group(1) for m in re.finditer(r"^(?:- |\| )`([^`]+)`", block, re.M)]


@pytest.mark.parametrize("page", ["cli", "api"])
def test_generated_pages_are_current(page, monkeypatch):
    path, make = {"cli": (gen_docs.CLI_PAGE, gen_docs.cli_page)}.get(
        page, (gen_docs.API_PAGE, gen_docs.api_page)
    )
    monkeypatch.setenv("COLUMNS", gen_docs.WIDTH)
    assert path.read_text(encoding="utf-8") == make(), (
        f"{path.name} is out of date: run python scripts/gen_docs.py"
    )


def test_the_migrations_listed_are_the_migrations():
    files = {p.name.split(".")[0] for p in (ROOT / "localmem").rglob("*.sql")}
    assert sorted(_listed("migrations")) == sorted(files)


def test_the_mechanisms_listed_are_the_built_in_plugins():
    from localmem.mechanisms import BUILTIN

    assert _listed("mechanisms") == [p.name for p in BUILTIN]


def test_the_stages_listed_are_the_core_stages():
    from localmem.retrieval.pipeline import CORE_STAGES

    assert _listed("stages") == [s.name for s in CORE_STAGES]


def test_the_engines_listed_are_the_registered_engines():
    from localmem.llm.registry import ENGINES

    assert sorted(_listed("engines")) == sorted(ENGINES.names())


def test_every_module_of_the_package_is_on_the_map():
    tree = ARCHITECTURE.split("```")[1]
    named = set(re.findall(r"[\w.]+/?", tree))
    missing = []
    for child in (ROOT / "localmem").iterdir():
        if child.name.startswith("__") or child.name == "py.typed":
            continue
        name = child.name + "/" if child.is_dir() else child.name
        if name not in named:
            missing.append(name)
    assert not missing, f"docs/architecture.md's map lacks {missing}"


def test_relative_links_resolve():
    broken = []
    for page in [ROOT / "README.md", *DOCS.glob("*.md")]:
        text = page.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if "://" in target:
                continue
            if not (page.parent / target).exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert not broken


def test_the_readme_python_tour_runs(tmp_path, capsys):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    code = re.search(r"```python\n(.*?)```", readme, re.S).group(1)
    exec(code.replace('"~/notes"', repr(str(tmp_path / "notes"))), {})
    assert "The deploy runs on Fridays" in capsys.readouterr().out.splitlines()[0]
    from localmem import Memory

    with Memory.open(tmp_path / "notes") as mem:
        ana = {m.content: m.valid_to for m in mem.list(user_id="ana")}
    assert ana["I moved to Berlin"] is None
    assert ana["I live in Paris"] is not None  # ended in time, kept
