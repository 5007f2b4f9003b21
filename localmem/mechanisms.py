"""The mechanisms a store is composed of, in the order their hooks and search stages apply.

Adding a mechanism is adding its package (with a ``plugin.py`` that declares its ``PLUGIN``)
and one line in :data:`BUILTIN`; see docs/architecture.md, "Adding a mechanism". Importing
this module also registers every built-in model task by name (``localmem doctor`` and the
engine benchmark list them); their modules are imported when the registry is first read.
"""

from __future__ import annotations

from localmem.answers.plugin import PLUGIN as ANSWERS
from localmem.attributes.plugin import PLUGIN as ATTRIBUTES
from localmem.consolidation.plugin import PLUGIN as CONSOLIDATION
from localmem.conversation.plugin import PLUGIN as CONVERSATION
from localmem.evolution.plugin import PLUGIN as EVOLUTION
from localmem.infer.plugin import PLUGIN as INFER
from localmem.llm.tasks import TaskSpec, get_task, register, register_later
from localmem.plugin import Plugin, task_spec
from localmem.procedures.plugin import PLUGIN as PROCEDURES

#: every built-in mechanism; attributes' stage runs after candidates, evolution's after temporal
BUILTIN: tuple[Plugin, ...] = (
    ATTRIBUTES,  # MemInsight
    EVOLUTION,  # A-Mem
    PROCEDURES,  # Mem^p
    CONVERSATION,  # agent memory with RAG
    CONSOLIDATION,  # hierarchical consolidation
    ANSWERS,  # answer prompts
    INFER,  # extraction and reconciliation on add
)

#: the model tasks of retrieval itself (query expansion and reranking), by module
RETRIEVAL_TASKS: tuple[str, ...] = (
    "localmem.retrieval.tasks.expand_query",
    "localmem.retrieval.tasks.rerank",
)


def register_tasks(specs: tuple[TaskSpec, ...]) -> None:
    """Register tasks by name (again importing this module registers nothing twice)."""
    for spec in specs:
        try:
            known = get_task(spec.name)
        except Exception:  # not registered yet
            register(spec)
        else:
            if known is not spec:
                raise ValueError(f"two tasks are named {spec.name!r}")


def builtin_tasks() -> list[TaskSpec]:
    """Every built-in task: retrieval's and each mechanism's (their modules imported now)."""
    return [
        *(task_spec(name) for name in RETRIEVAL_TASKS),
        *(spec for plugin in BUILTIN for spec in plugin.task_specs()),
    ]


# the task modules are imported when the registry is first read (a model task run by name,
# ``localmem doctor``), not with every store: a one-shot search never needs them
register_later(builtin_tasks)
