"""What a memory mechanism declares, in one object: a :class:`Plugin`.

A mechanism (attributes, evolution, procedures, ...) is a package under ``localmem/`` whose
``PLUGIN`` says what it adds to a store: its model tasks, its background jobs, its search
stages, its tables (migrations), and the hooks that keep its tables in step when memories are
deleted, purged or changed. The facade (:class:`localmem.Memory`) composes the list in
:mod:`localmem.mechanisms`; nothing below this module knows any mechanism.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from localmem.llm.tasks import TaskSpec
from localmem.retrieval.stages import StageSpec
from localmem.store.kernel import Hooks, JobHandler, Kernel
from localmem.store.memories import JobRequest
from localmem.store.unit import Write


@dataclass(frozen=True)
class Plugin:
    """One mechanism's contributions to a store.

    Attributes:
        name: Short name (``attributes``, ``evolution``...), unique in a composition.
        tasks: Its model tasks (prompt + schema + model-free implementation): each a spec, or
            the name of the module whose ``SPEC`` it is, imported only when a task is first
            looked up (:meth:`task_specs`), so opening a store does not import them.
        jobs: Background job kinds it runs: kind -> ``handler(kernel, job)``.
        add_options: The keyword options of ``Memory.add`` it reads (``mine``, ``evolve``).
        add_jobs: ``(kernel, options) -> [(kind, payload, inline|deferred)]``: the jobs an add
            with these options asks for (``options`` maps each of ``add_options`` to a value).
        stages: Search stages it adds, each placed after a named stage.
        migrations: The package holding its migrations (``NNNN_name.sql`` / ``.py``).
        on_delete: Inside the unit that deletes or purges a memory: drop what was derived.
        before_purge: Before a purge: undo what the memory changed elsewhere.
        on_purge: Inside a purge's unit: forget the memory in its own tables.
        on_change: After a memory's text changed (``"content"``) or it came back
            (``"restore"``).
    """

    name: str
    tasks: Sequence[TaskSpec | str] = ()
    jobs: Mapping[str, JobHandler] = field(default_factory=dict)
    add_options: Sequence[str] = ()
    add_jobs: Callable[[Kernel, Mapping[str, Any]], list[JobRequest]] | None = None
    stages: Sequence[StageSpec] = ()
    migrations: str | None = None
    on_delete: Callable[[Write, str], None] | None = None
    before_purge: Callable[[Kernel, str], None] | None = None
    on_purge: Callable[[Write, str], None] | None = None
    on_change: Callable[[Kernel, str, str], None] | None = None

    def task_specs(self) -> list[TaskSpec]:
        """Its tasks' specs (a module named in :attr:`tasks` is imported here)."""
        return [task_spec(task) for task in self.tasks]


def task_spec(task: TaskSpec | str) -> TaskSpec:
    """A spec, or the ``SPEC`` of the module named."""
    if isinstance(task, TaskSpec):
        return task
    spec = getattr(importlib.import_module(task), "SPEC", None)
    if not isinstance(spec, TaskSpec):
        raise TypeError(f"module {task!r} has no task SPEC")
    return spec


def hooks_of(plugins: Sequence[Plugin]) -> Hooks:
    """The kernel hooks and job handlers of a list of plugins, in their order.

    Raises:
        ValueError: two plugins share a name or a job kind.
    """
    hooks = Hooks()
    names: set[str] = set()
    for plugin in plugins:
        if plugin.name in names:
            raise ValueError(f"two plugins are named {plugin.name!r}")
        names.add(plugin.name)
        for kind, handler in plugin.jobs.items():
            if kind in hooks.jobs:
                raise ValueError(f"job kind {kind!r} is claimed twice (plugin {plugin.name})")
            hooks.jobs[kind] = handler
        for name in ("on_delete", "before_purge", "on_purge", "on_change"):
            hook = getattr(plugin, name)
            if hook is not None:
                getattr(hooks, name).append(hook)
    return hooks


def stages_of(plugins: Sequence[Plugin]) -> list[StageSpec]:
    """Every search stage the plugins add."""
    return [stage for plugin in plugins for stage in plugin.stages]


def migrations_of(plugins: Sequence[Plugin]) -> list[str]:
    """The migration packages of the plugins."""
    return [plugin.migrations for plugin in plugins if plugin.migrations]


def add_jobs(
    plugins: Sequence[Plugin], kernel: Kernel, options: Mapping[str, Any]
) -> list[JobRequest]:
    """The background jobs an add with these options asks for.

    Raises:
        InputError: an option is set that no plugin reads (that mechanism is not composed).
    """
    from localmem.errors import InputError

    known = {name for plugin in plugins for name in plugin.add_options}
    for name, value in options.items():
        if value not in (None, False, "off") and name not in known:
            raise InputError(f"{name!r} is not available in this version of localmem")
    out: list[JobRequest] = []
    for plugin in plugins:
        if plugin.add_jobs is not None:
            wanted = {name: options.get(name) for name in plugin.add_options}
            out += plugin.add_jobs(kernel, wanted)
    return out
