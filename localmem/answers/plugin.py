"""Answering as a plugin: the ``answer`` and ``rag_answer`` tasks (no tables of its own)."""

from __future__ import annotations

from localmem.answers.tasks import answer, rag_answer
from localmem.plugin import Plugin

PLUGIN = Plugin(name="answers", tasks=(answer.SPEC, rag_answer.SPEC))
