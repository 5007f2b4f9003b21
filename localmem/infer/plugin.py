"""Inference on add as a plugin: the ``reconcile`` task.

The ``facts`` task it extracts with is the conversation mechanism's. The add itself is the
facade's (``Memory.add(..., infer=True)``), since inference changes what an add writes rather
than queueing work after it; time validity is the core's (migration 0080).
"""

from __future__ import annotations

from localmem.plugin import Plugin

PLUGIN = Plugin(name="infer", tasks=("localmem.infer.task",))
