"""The model engine: every model task goes through one interface.

- :class:`Engine` (``base``): ``generate_json(messages, schema)`` -> a validated object,
  ``generate_text``, ``count_tokens``; every call reports tokens and seconds.
- :class:`LlamaEngine` (``llama``): a local GGUF through llama.cpp; :class:`HttpEngine`
  (``http``): an OpenAI-compatible server.
- :func:`make_engine` (``registry``): the engine the config asks for, or None (model-free).
- :func:`run_task` (``tasks``): run a registered task (prompt + schema, or its model-free
  implementation); prompts live in ``localmem/llm/prompts/``.

Heavy imports (llama_cpp) happen only when a model is loaded.
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
