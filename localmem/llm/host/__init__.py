"""The model host: llama.cpp in a supervised child process, never in the process that holds a
store, serves clients or draws the TUI.

- :class:`HostEngine` (``engine``): the :class:`~localmem.llm.base.Engine` the mechanisms call;
- ``supervisor``: starts the child, times its calls, turns its death into a typed error,
  restarts it with back-off, marks it unhealthy after repeated failures;
- ``child``: the child's own side (``python -m localmem.llm.host``);
- ``probe``: does llama.cpp run this GGUF on this CPU, and with which setting;
- ``deaths``: what a signal most likely means here, and the fix.

Why a child process: a native crash in llama.cpp (SIGILL from an instruction the CPU advertises
but the VM does not grant, a segfault, a failed GGML_ASSERT, the out-of-memory killer) ends the
process it happens in; only in a child can it become an error the rest of localmem handles.
"""

from __future__ import annotations

from localmem.llm.host.engine import HostEngine

__all__ = ["HostEngine"]
