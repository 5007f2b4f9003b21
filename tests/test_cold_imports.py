"""What a one-shot search in a fresh process leaves unimported (not a timing test): the
mechanisms' model tasks, inference, pyarrow.compute and the stop-words package; and the task
registry still lists every task once read."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from localmem import Memory

ROOT = Path(__file__).resolve().parent.parent

# (the attributes task is not among them: the attributes search stage asks its miner, whose
# module imports the task's)
LEFT_FOR_LATER = [
    "localmem.evolution.task",
    "localmem.consolidation.task",
    "localmem.consolidation.run",
    "localmem.conversation.tasks.facts",
    "localmem.conversation.long_term",
    "localmem.procedures.tasks.procedure",
    "localmem.procedures.store",
    "localmem.answers.tasks.answer",
    "localmem.infer.task",
    "localmem.infer.plan",
    "localmem.retrieval.tasks.rerank",
    "pyarrow.compute",
    "stop_words",
]


def test_a_search_leaves_the_tasks_and_their_helpers_unimported(tmp_path: Path, embedder):
    store = tmp_path / "store"
    with Memory.open(store, embedder=embedder) as mem:
        mem.add_many(["Caroline went to the support group on 7 May 2023."], infer=False)
    code = textwrap.dedent(
        f"""
        import json, sys
        from localmem import Memory
        with Memory.open({str(store)!r}, create=False) as mem:
            assert mem.search("support group", k=3)
        loaded = [m for m in {LEFT_FOR_LATER!r} if m in sys.modules]
        from localmem.llm.tasks import all_tasks
        print(json.dumps({{"loaded": loaded, "tasks": [t.name for t in all_tasks()]}}))
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["loaded"] == []
    assert {"attributes", "evolution", "consolidate", "facts", "entities", "procedure"} <= set(
        out["tasks"]
    )
    assert {"reflection", "answer", "rag_answer", "reconcile", "expand_query", "rerank"} <= set(
        out["tasks"]
    )
