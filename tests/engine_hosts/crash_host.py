"""A real model host (real llama.cpp, the real protocol) that dies in the middle of a request
when the prompt asks it to: ``[[host:SIGILL]]``, ``[[host:SIGSEGV]]``, ``[[host:abort]]`` (a
GGML_ASSERT calls abort()), ``[[host:hang]]`` (never answers), ``[[host:grow]]`` (takes memory
until it is stopped). Real signals, raised by the process on itself.

Run it instead of ``python -m localmem.llm.host`` through ``LOCALMEM_ENGINE_HOST_COMMAND`` or a
supervisor's ``command``.
"""

from __future__ import annotations

import os
import re
import signal
import sys
import time

from localmem.llm.host.child import OPS, main

MARK = re.compile(r"\[\[host:(\w+)\]\]")


def misbehave(what: str) -> None:
    """Die, hang or grow, for real."""
    if what == "abort":
        os.abort()
    if what == "hang":
        time.sleep(3600)
    if what == "grow":
        hoard = []
        while True:  # about 100 MB a second, every page touched
            hoard.append(b"x" * 10_000_000)
            time.sleep(0.1)
    os.kill(os.getpid(), getattr(signal, what))
    time.sleep(10)  # the signal arrives before this ends


def handle(engine, op: str, kwargs: dict):
    """The real host's answer, unless the prompt of a generation asks for a death."""
    if op == "complete":
        text = " ".join(m.render() for m in kwargs["messages"])
        found = MARK.search(text)
        if found:
            misbehave(found.group(1))
    return OPS[op](engine, **kwargs)


if __name__ == "__main__":
    sys.exit(main(handle=handle))
