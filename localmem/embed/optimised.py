"""The embedder's ONNX graph as onnxruntime optimises it, kept beside the graph.

onnxruntime rewrites a graph (fusions, constant folding) each time it loads one; for the
MiniLM graphs that is most of a session's start, paid by every one-shot ``localmem search``.
The first load therefore saves the optimised graph (``optimized_model_filepath``) next to the
graph it came from, in the embedder's cache folder (under ``$LOCALMEM_HOME``), and later loads
read that one. It is derived data: written to a temporary name and renamed (owner-only), with
a sidecar saying which onnxruntime made it from which graph; a missing, truncated or unreadable
one, or one made by another onnxruntime version, is made again from the graph. When it cannot be
written (a read-only folder), the graph is simply optimised at each load, as before.

It is saved at onnxruntime's ``extended`` level, the last one that onnxruntime documents as
independent of the hardware (the ``all`` level adds layout changes for the CPU at hand, which
apply to convolutions, not to these graphs); the session still loads it at the ``all`` level,
so what runs is what a session of the original graph runs.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from localmem.atomic import write_private

log = logging.getLogger("localmem.embed")

#: bump when what is saved changes meaning: older optimised graphs are then made again
FORMAT = 1


def optimised_path(graph: Path) -> Path:
    """Where the optimised copy of ``graph`` is kept (beside it: the weights file of an
    assembled graph is found by a path relative to the graph)."""
    return graph.with_name(f"{graph.stem}.optimised.onnx")


def _identity(graph: Path, ort_version: str) -> dict[str, Any]:
    """What an optimised graph was made from: the graph (size, time) and onnxruntime."""
    stat = graph.stat()
    return {
        "format": FORMAT,
        "onnxruntime": ort_version,
        "source": graph.name,
        "source_size": stat.st_size,
        "source_mtime_ns": stat.st_mtime_ns,
    }


def _sidecar(optimised: Path) -> Path:
    return optimised.with_name(optimised.name + ".json")


def _usable(graph: Path, optimised: Path, ort_version: str) -> bool:
    """The optimised graph is there, whole, and made by this onnxruntime from this graph."""
    try:
        meta = json.loads(_sidecar(optimised).read_text(encoding="utf-8"))
        size = optimised.stat().st_size
        wanted = _identity(graph, ort_version)
    except (OSError, ValueError):
        return False
    return (
        isinstance(meta, dict)
        and meta.get("size") == size
        and all(meta.get(k) == v for k, v in wanted.items())
    )


def _discard(optimised: Path) -> None:
    for path in (_sidecar(optimised), optimised):
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)


def load_session(graph: Path, make_options: Callable[[], Any]) -> Any:
    """An onnxruntime session of ``graph``, through its optimised copy.

    ``make_options()`` returns fresh ``SessionOptions`` (threads, logging, ``all`` level). The
    copy is loaded when usable; else the graph is optimised, the copy saved for the next time,
    and the session of the graph returned.

    Raises:
        whatever onnxruntime raises for an unreadable ``graph`` (the caller handles it).
    """
    import onnxruntime as ort

    optimised = optimised_path(graph)
    if _usable(graph, optimised, ort.__version__):
        try:
            return _session(ort, optimised, make_options())
        except Exception as exc:  # onnxruntime raises its own kinds for a damaged file
            log.warning("optimised ONNX graph %s unreadable (%s); making it again", optimised, exc)
            _discard(optimised)
    return _save_and_load(ort, graph, optimised, make_options)


def _save_and_load(ort: Any, graph: Path, optimised: Path, make_options: Callable[[], Any]) -> Any:
    """Optimise ``graph`` into a temporary file beside it, then rename it into place."""
    _sweep(optimised)
    tmp = optimised.with_name(f".{optimised.name}.{os.getpid()}.tmp")
    try:
        # the extended level, saved without the session: the session below is the graph's own
        options = make_options()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        options.optimized_model_filepath = str(tmp)
        _session(ort, graph, options)
        os.chmod(tmp, 0o600)
        identity = _identity(graph, ort.__version__)
        os.replace(tmp, optimised)
        meta = {**identity, "size": optimised.stat().st_size}
        write_private(_sidecar(optimised), json.dumps(meta, indent=2) + "\n")
    except Exception as exc:  # a read-only folder, a full disk: optimise at each load instead
        log.debug("cannot keep the optimised ONNX graph %s: %s", optimised, exc)
        tmp.unlink(missing_ok=True)
        return _session(ort, graph, make_options())
    try:
        return _session(ort, optimised, make_options())
    except Exception as exc:
        log.warning("optimised ONNX graph %s unreadable (%s); using the graph", optimised, exc)
        _discard(optimised)
        return _session(ort, graph, make_options())


def _sweep(optimised: Path) -> None:
    """Remove what a process killed while writing left behind (its pid is in the name)."""
    # imported here: this runs only when a graph is optimised, and discovery brings http.client
    from localmem.discovery import pid_alive

    for stale in optimised.parent.glob(f".{optimised.name}.*.tmp"):
        pid = stale.name.rsplit(".", 2)[-2]
        if pid.isdigit() and not pid_alive(int(pid)):
            with contextlib.suppress(OSError):
                stale.unlink()


def _session(ort: Any, file: Path, options: Any) -> Any:
    return ort.InferenceSession(str(file), options, providers=["CPUExecutionProvider"])
