"""The conversation memory as a plugin: the ``entities`` and ``facts`` tasks and the
short- and long-term tables."""

from __future__ import annotations

from localmem.conversation.tasks import entities, facts
from localmem.plugin import Plugin

PLUGIN = Plugin(
    name="conversation",
    tasks=(entities.SPEC, facts.SPEC),
    migrations="localmem.conversation.migrations",
)
