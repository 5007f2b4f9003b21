"""The type checker as a test: mypy over the package, as pyproject.toml configures it
(``[tool.mypy]``: strict on the kernel, the store, the facade and the declared public API; basic
elsewhere; no module is exempt). CI runs the suite, so CI checks
types. A cold run takes about a minute on two shared cores (docs/benchmarks.md), hence ``slow``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_mypy_finds_no_errors(tmp_path: Path):
    mypy = Path(sys.executable).with_name("mypy")
    proc = subprocess.run(
        # a cache of this run's own: a stale shared one never hides an error
        [str(mypy), "--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
