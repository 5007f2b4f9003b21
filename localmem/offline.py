"""Keeping the dependencies offline and their files inside localmem's own folders.

localmem sends nothing anywhere and writes only inside a store and ``LOCALMEM_HOME``; some of
the libraries it runs on do otherwise unless told:

- onnxruntime (1.2x and later) starts a telemetry client at import that writes a device id and
  an event database to ``~/.cache/Microsoft/DeveloperTools/.onnxruntime`` and a session file to
  the temp folder; ``ORT_DISABLE_TELEMETRY`` read at import is the only switch that stops all of
  it (``onnxruntime.disable_telemetry_events()`` comes too late: the files are already written);
- the Hugging Face libraries ask the hub for files and report usage unless told they are
  offline;
- torch's exporter keeps an inductor cache in ``$TMPDIR/torchinductor_<user>``, and
  onnxruntime's quantiser works in a temp folder of its own.

:func:`quiet_dependencies` sets the switches before any of those libraries is imported
(``localmem/__init__.py`` calls it, so importing localmem is enough); :func:`private_temp` sends
the one-time export's temp files into a folder of localmem's that it removes afterwards.
A variable the user has set is left as it is.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

#: environment switches read by the dependencies at import (or first use)
OFFLINE_ENV = {
    "ORT_DISABLE_TELEMETRY": "1",  # onnxruntime: no device id, no event store, no uploads
    "HF_HUB_OFFLINE": "1",  # models come from local folders only
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "HF_HUB_DISABLE_IMPLICIT_TOKEN": "1",
    "TOKENIZERS_PARALLELISM": "false",  # no fork warnings from the tokenizers' thread pool
}


def quiet_dependencies() -> None:
    """Set every switch of :data:`OFFLINE_ENV` the user has not set already."""
    for name, value in OFFLINE_ENV.items():
        os.environ.setdefault(name, value)


@contextmanager
def private_temp(parent: Path) -> Iterator[Path]:
    """Run a block with the temp folder (and torch's inductor cache) inside ``parent``.

    For the one-time model export only: ``tempfile.tempdir`` is process-wide, so this is not
    for code that runs beside other threads' temp files for long.
    """
    parent.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(dir=parent, prefix=".tmp-"))
    saved_dir = tempfile.tempdir
    saved_env = {k: os.environ.get(k) for k in ("TMPDIR", "TORCHINDUCTOR_CACHE_DIR")}
    tempfile.tempdir = str(folder)
    os.environ["TMPDIR"] = str(folder)
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(folder / "inductor")
    try:
        yield folder
    finally:
        tempfile.tempdir = saved_dir
        for name, value in saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        shutil.rmtree(folder, ignore_errors=True)
