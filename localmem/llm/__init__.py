"""The model engine: every model task goes through one interface.

- :class:`Engine` (``base``): ``generate_json(messages, schema)`` -> a validated object,
  ``generate_text``, ``count_tokens``; every call reports tokens and seconds.
- :class:`HostEngine` (``host``): a local GGUF through llama.cpp in a supervised child process
  (what :func:`make_engine` builds: a native crash there is a typed error, not a dead caller);
  :class:`LlamaEngine` (``llama``): the same in process (what the host runs);
  :class:`HttpEngine` (``http``): an OpenAI-compatible server.
- :func:`make_engine` (``registry``): the engine the config asks for, or None (model-free).
- :func:`run_task` (``tasks``): run a registered task (prompt + schema, or its model-free
  implementation); prompts live in ``localmem/llm/prompts/``.

``llama_cpp`` is imported only in the model host (and the CPU probe), never here.
"""

from __future__ import annotations

from localmem.llm.base import Engine, Generation, Message, Usage
from localmem.llm.registry import ENGINES, describe_engines, make_engine
from localmem.llm.tasks import TaskContext, TaskResult, TaskSpec, all_tasks, get_task, run_task

__all__ = [
    "ENGINES",
    "Engine",
    "Generation",
    "Message",
    "TaskContext",
    "TaskResult",
    "TaskSpec",
    "Usage",
    "all_tasks",
    "describe_engines",
    "get_task",
    "make_engine",
    "run_task",
]
