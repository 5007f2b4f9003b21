"""Every example of docs/integrations.md runs as written: the Python blocks in a fresh store
each, the console block through the real `localmem` command."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "integrations.md"
BLOCK = re.compile(r"```(python|console)\n(.*?)```", re.DOTALL)


def _blocks(kind: str) -> list[str]:
    return [code for lang, code in BLOCK.findall(DOC.read_text(encoding="utf-8")) if lang == kind]


def test_the_doc_has_its_examples():
    assert len(_blocks("python")) == 3 and len(_blocks("console")) == 1
    for code in _blocks("python"):
        assert len(code.strip().splitlines()) <= 30  # short enough to read at a glance


@pytest.mark.parametrize("code", _blocks("python"), ids=["langgraph", "langchain", "mem0"])
def test_a_python_example_runs(code, capsys):
    exec(compile(code, str(DOC), "exec"), {"__name__": "__doc_example__"})


def test_the_console_example_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mem0-memories.json").write_text(
        json.dumps({"results": [{"memory": "Likes cricket", "user_id": "alex"}]})
    )
    for line in _blocks("console")[0].strip().splitlines():
        args = shlex.split(line)
        assert args[0] == "localmem"
        run = subprocess.run(
            [sys.executable, "-m", "localmem", *args[1:]], capture_output=True, text=True
        )
        assert run.returncode == 0, (line, run.stderr)
    from localmem import Memory

    with Memory.open(tmp_path / "restored") as restored:
        assert {m.content for m in restored.list()} == {"Alice likes green tea", "Likes cricket"}
