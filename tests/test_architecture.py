"""The architecture as tests: imports run downhill, no cycles, one write rule, SQL only in the
store and the mechanisms' own data modules, no private calls across modules, small functions.

docs/architecture.md ("Layers") explains each rule; the import contracts live in pyproject.toml
(``[tool.importlinter]``) and run through import-linter.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "localmem"
#: the code held to the same rules: the library, the terminal UI (its own distribution) and the
#: lab (scripts/lab, outside the wheel)
SOURCES = (PACKAGE, ROOT / "tui" / "localmem_tui", ROOT / "scripts" / "lab")

#: the mechanisms' own data modules: the only places outside ``localmem/store`` with SQL
DATA_MODULES = {
    "attributes/rows.py",
    "consolidation/scope.py",
    "consolidation/write.py",
    "conversation/long_term.py",
    "conversation/short_term.py",
    "evolution/steps.py",
    "procedures/rows.py",
    "sessions.py",
}
#: a function may grow to this many lines, nested functions counted apart (docs/architecture.md,
#: "Functions, not files"); ruff's complexity rules (pyproject.toml) bound its branches and
#: statements, which say nothing of a long run of straight-line code
MAX_FUNCTION_LINES = 100

_SQL = re.compile(
    r"\b(SELECT\b.*\bFROM|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|CREATE\s+(TABLE|INDEX|"
    r"SEQUENCE)|ALTER\s+TABLE|DROP\s+TABLE)\b",
    re.DOTALL,
)


def _modules() -> list[Path]:
    return sorted(
        p for source in SOURCES for p in source.rglob("*.py") if "__pycache__" not in p.parts
    )


def _rel(path: Path) -> str:
    """A library module's path inside the package (``store/db.py``); others' from the top."""
    root = PACKAGE if path.is_relative_to(PACKAGE) else ROOT
    return path.relative_to(root).as_posix()


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that are docstrings."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def _strings(tree: ast.AST):
    skip = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            yield node.lineno, node.value


def test_the_import_contracts_hold():
    lint = Path(sys.executable).with_name("lint-imports")
    proc = subprocess.run(
        [str(lint), "--no-cache", "--config", str(ROOT / "pyproject.toml")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "0 broken" in proc.stdout


def test_the_contracts_cover_every_top_level_module():
    """A new top-level module or package must be given its layer."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    layered = {
        name.strip()
        for contract in config["contracts"]
        if contract["type"] == "layers"
        for layer in contract["layers"]
        for name in layer.split("|")
    }
    top = {
        f"localmem.{p.stem if p.is_file() else p.name}"
        for p in PACKAGE.iterdir()
        if (p.suffix == ".py" and p.stem not in ("__init__", "__main__"))
        or (p.is_dir() and (p / "__init__.py").exists())
    }
    assert top - layered == set()


def test_sql_lives_in_the_store_and_the_mechanisms_data_modules():
    found = []
    for path in _modules():
        rel = _rel(path)
        if rel.startswith("store/") or rel in DATA_MODULES:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found += [f"{rel}:{line}" for line, text in _strings(tree) if _SQL.search(text)]
    assert found == []


def test_the_write_rule_is_written_once():
    """Transactions and the lexical rollback belong to the store; units come from
    ``Kernel.writing()``."""
    found = []
    for path in _modules():
        rel = _rel(path)
        text = path.read_text(encoding="utf-8")
        if "lexical.rollback()" in text and rel != "store/kernel.py":
            found.append(f"{rel}: lexical.rollback()")
        if not rel.startswith("store/") and re.search(r"\.transaction\(", text):
            found.append(f"{rel}: .transaction()")
    assert found == []


_OWNERS = {"memory", "mem", "store", "kernel", "db", "lexical", "vectors"}


def test_no_private_calls_across_modules():
    """Nothing reaches into a private attribute of a Memory, a Kernel or the store from
    another module (``memory._write``, ``store._write_lock``...)."""
    found = []
    for path in _modules():
        rel = _rel(path)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute) or not node.attr.startswith("_"):
                continue
            if node.attr.startswith("__"):
                continue
            owner = node.value
            name = (
                owner.id
                if isinstance(owner, ast.Name)
                else owner.attr
                if isinstance(owner, ast.Attribute)
                else None
            )
            if name in _OWNERS:
                found.append(f"{rel}:{node.lineno}: {name}.{node.attr}")
    assert found == []


def test_functions_stay_simple():
    """ruff's per-function limits (C901 complexity, PLR0912 branches, PLR0915 statements; the
    numbers are in pyproject.toml) hold on the library, the TUI and the lab."""
    ruff = Path(sys.executable).with_name("ruff")
    proc = subprocess.run(
        [str(ruff), "check", "--select", "C901,PLR0912,PLR0915", "--output-format", "concise"]
        + [str(source) for source in SOURCES],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def test_functions_stay_short():
    found = []
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    found.append(f"{_rel(path)}:{node.lineno} {node.name}: {lines} lines")
    assert found == []


def test_the_product_names_no_issue_or_seed():
    """The product's code, help and messages say what a thing does, not which ticket or founding
    document asked for it (that history lives in git and docs/design-notes.md)."""
    pattern = re.compile(r"\b(seeds? ?0\d\d|seed-0\d\d|issues? \d+)\b", re.I)
    found = []
    for root in (PACKAGE, ROOT / "tui" / "localmem_tui"):
        for path in root.rglob("*"):
            if path.suffix not in {".py", ".sql", ".json", ".tcss", ".md"}:
                continue
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if pattern.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:80]}")
    assert not found, "\n".join(found)
