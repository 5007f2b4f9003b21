"""Leaving the process at once after a one-shot read (``search``, ``show``, ``list``).

Once such a command has printed its answer and closed the store, what is left of the process is
the interpreter's teardown: onnxruntime, pyarrow, DuckDB and numpy's OpenBLAS stop their thread
pools and free their globals, 0.1-0.3 s on a 2-core machine for nothing anyone waits on
(docs/benchmarks.md, "CLI start-up without a server"). :func:`quick_exit` does what the teardown
does that matters, then ends the process: it waits for nothing only when no other thread is
alive, runs the ``atexit`` handlers (logging's flush, the model host's stop, temporary folders'
removal), and flushes stdout and stderr; otherwise it exits the usual way.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import NoReturn

#: the commands that only read and print (their store is closed when they return)
ONE_SHOT_READS = frozenset({"search", "show", "list"})


def quick_exit(code: int) -> NoReturn:
    """End the process with ``code``, skipping the interpreter's teardown when it is safe."""
    if any(t is not threading.main_thread() and t.is_alive() for t in threading.enumerate()):
        sys.exit(code)  # a thread still running is joined (or left, if a daemon) as usual
    atexit._run_exitfuncs()  # what the interpreter would run first at exit
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (BrokenPipeError, ValueError):  # `localmem search ... | head`; a closed stream
        pass
    os._exit(code)
