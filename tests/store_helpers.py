"""What the store reliability tests share: sample texts, a CLI runner, a filled store."""

from __future__ import annotations

from pathlib import Path

from localmem.cli import main

TEXTS = [f"note {i}: the {w} of project {i % 7}" for i, w in enumerate(["plan", "risk"] * 60)]


def run(capsys, *args):
    """Run the CLI in-process: (exit code, stdout, stderr)."""
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def filled(open_memory, path: Path, n: int = 120) -> list[str]:
    """A closed store at ``path`` holding the first ``n`` TEXTS; their ids."""
    mem = open_memory(path)
    ids = [m.id for m in mem.add_many(TEXTS[:n])]
    mem.close()
    return ids
