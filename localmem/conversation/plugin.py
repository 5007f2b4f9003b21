"""The conversation memory as a plugin: the ``entities`` and ``facts`` tasks and the
short- and long-term tables."""

from __future__ import annotations

from localmem.plugin import Plugin

PLUGIN = Plugin(
    name="conversation",
    tasks=("localmem.conversation.tasks.entities", "localmem.conversation.tasks.facts"),
    migrations="localmem.conversation.migrations",
)
