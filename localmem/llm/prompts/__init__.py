"""Every model task's prompt, beside its schema, versioned; importing this registers them all.

One module per task. Each defines its input and output models, ``build_prompt``, ``VERSION``
and ``SPEC`` (a :class:`~localmem.llm.tasks.TaskSpec`). To add a task: write its module and
add it to ``_MODULES`` below.
"""

from __future__ import annotations

from localmem.llm.prompts import (
    answer,
    attributes,
    consolidate,
    entities,
    evolution,
    expand_query,
    facts,
    judge,
    procedure,
    rag_answer,
    reflection,
    rerank,
)
from localmem.llm.tasks import register

_MODULES = (
    attributes,
    evolution,
    procedure,
    reflection,
    expand_query,
    rerank,
    answer,
    rag_answer,
    judge,
    facts,
    entities,
    consolidate,
)

for _module in _MODULES:
    register(_module.SPEC)
