"""Answering as a plugin: the ``answer`` and ``rag_answer`` tasks (no tables of its own)."""

from __future__ import annotations

from localmem.plugin import Plugin

PLUGIN = Plugin(
    name="answers", tasks=("localmem.answers.tasks.answer", "localmem.answers.tasks.rag_answer")
)
