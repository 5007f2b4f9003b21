"""Count what issue 31 (items 3-5) changes: types and the size of functions.

Usage:
    python scripts/type_surface.py [--json] [--before CHECKOUT --docs docs/benchmarks.md]

For the checkout at ``ROOT`` (and with ``--before``, a checkout of the code before, e.g.
``git archive ddab686 | tar -x -C DIR``) it counts: the operations the public API declares
(``localmem.api.operations()``), ``Any`` in annotations in localmem/store and in
localmem/store/kernel.py, the errors mypy finds under this checkout's ``[tool.mypy]``
(the same configuration for both, so the counts compare; once with the list of modules whose
errors go unreported switched off, once as the suite runs it), the findings of ruff's complexity
rules as this checkout configures them, and the longest functions (lines, nested ones
separately). With ``--docs`` both columns go to the ``type-surface`` section of that file.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
SOURCES = ("localmem", "tui/localmem_tui", "scripts/lab")
START, END = "<!-- BEGIN type-surface -->", "<!-- END type-surface -->"


def _any_annotations(path: Path) -> int:
    """``Any`` written in the annotations of a file (arguments, returns, variables)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    notes: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
            notes += [a.annotation for a in every if a is not None and a.annotation is not None]
            if node.returns is not None:
                notes.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            notes.append(node.annotation)
    count = 0
    for note in notes:
        text = note.value if isinstance(note, ast.Constant) else ast.unparse(note)
        count += len(re.findall(r"\bAny\b", str(text)))
    return count


def _functions(root: Path) -> list[tuple[int, str]]:
    """(lines, where) of every function of the library, the TUI and the lab."""
    out = []
    for source in SOURCES:
        for path in sorted((root / source).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    lines = (node.end_lineno or node.lineno) - node.lineno + 1
                    where = f"{path.relative_to(root).as_posix()}:{node.name}"
                    out.append((lines, where))
    return sorted(out, reverse=True)


def _without_debt(config: Path, into: Path) -> Path:
    """This checkout's pyproject.toml without the list of modules whose errors are not
    reported (the debt, if it still has one): every error mypy finds, not only those the
    suite fails on."""
    text = config.read_text(encoding="utf-8")
    start = text.find("[[tool.mypy.overrides]]\n# the debt")
    if start < 0:  # the list is gone (2026-11-26): the configuration as it is
        return config
    end = text.index("ignore_errors = true\n", start) + len("ignore_errors = true\n")
    out = into / "pyproject.toml"
    out.write_text(text[:start] + text[end:], encoding="utf-8")
    return out


def _mypy(root: Path, config: Path) -> tuple[int, float]:
    """Errors mypy reports on ``root``'s package under ``config``, and the seconds it took
    (no cache: a cold run, as CI's first)."""
    started = time.perf_counter()
    proc = subprocess.run(
        [
            str(BIN / "mypy"),
            "--config-file",
            str(config),
            "--no-incremental",
            "--cache-dir",
            os.devnull,
            "-p",
            "localmem",
        ],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, "MYPYPATH": str(root)},
    )
    took = time.perf_counter() - started
    return sum(1 for line in proc.stdout.splitlines() if ": error:" in line), took


def _ruff(root: Path) -> int:
    """Findings of the complexity rules this checkout configures, on ``root``."""
    proc = subprocess.run(
        [
            str(BIN / "ruff"),
            "check",
            "--config",
            str(ROOT / "pyproject.toml"),
            "--select",
            "C901,PLR0912,PLR0915",
            "--output-format",
            "concise",
            *SOURCES,
        ],
        cwd=root,
        capture_output=True,
        text=True,
    )
    return sum(1 for line in proc.stdout.splitlines() if re.search(r": (C901|PLR09)", line))


def _declared(root: Path) -> int:
    code = "from localmem.api import operations; print(len(operations()))"
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(root)},
    )
    return int(proc.stdout.strip()) if proc.returncode == 0 else 0


def count(root: Path) -> dict[str, object]:
    """Every count for the checkout at ``root``."""
    store = root / "localmem" / "store"
    with tempfile.TemporaryDirectory() as tmp:
        found, _ = _mypy(root, _without_debt(ROOT / "pyproject.toml", Path(tmp)))
    reported, seconds = _mypy(root, ROOT / "pyproject.toml")
    longest = _functions(root)
    return {
        "operations declared": _declared(root),
        "Any in annotations, localmem/store": sum(_any_annotations(p) for p in store.rglob("*.py")),
        "Any in annotations, store/kernel.py": _any_annotations(store / "kernel.py"),
        "mypy errors found (this [tool.mypy], debt list off)": found,
        "mypy errors reported (what the suite fails on)": reported,
        "mypy seconds (cold, no cache)": round(seconds),
        "ruff complexity findings (this config)": _ruff(root),
        "functions over 100 lines (the suite's limit now)": sum(1 for n, _ in longest if n > 100),
        "functions over 80 lines": sum(1 for n, _ in longest if n > 80),
        "longest": longest[:8],
    }


def _table(before: dict[str, object], after: dict[str, object]) -> str:
    rows = ["| | before | after |", "|---|---|---|"]
    rows += [f"| {key} | {before[key]} | {after[key]} |" for key in after if key != "longest"]
    rows += ["", "Longest functions (lines), before and after:", ""]
    rows += ["| before | after |", "|---|---|"]
    for (bl, bw), (al, aw) in zip(before["longest"], after["longest"], strict=False):  # type: ignore[call-overload]
        rows.append(f"| {bl} `{bw}` | {al} `{aw}` |")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path)
    parser.add_argument("--docs", type=Path)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    after = count(ROOT)
    before = count(args.before) if args.before else None
    if args.json or not args.docs:
        print(json.dumps({"before": before, "after": after}, indent=2))
    if args.docs and before is not None:
        load = os.getloadavg()
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        section = "\n".join(
            [
                START,
                "- command: `python scripts/type_surface.py --before CHECKOUT "
                "--docs docs/benchmarks.md`",
                f"- date: {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC; commit {commit} "
                f"(uncommitted changes included); load {load[0]:.1f} on 2 cores",
                "",
                _table(before, after),
                END,
            ]
        )
        text = args.docs.read_text(encoding="utf-8")
        if START in text:
            head, rest = text.split(START, 1)
            text = head + section + rest.split(END, 1)[1]
        else:
            title = "## Types and the size of functions (issue 31, items 3-5)"
            text = text.rstrip("\n") + f"\n\n{title}\n\n{section}\n"
        args.docs.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
