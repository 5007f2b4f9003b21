"""A small reader for GGUF file headers: enough to list and verify a model without loading it.

GGUF (llama.cpp's model format) starts with ``GGUF``, a version, the number of tensors and of
metadata entries; then the metadata (typed key/value pairs), then one descriptor per tensor
(name, shape, type, offset), then the aligned tensor data. Reading the descriptors tells how
long the file must be, so a truncated download is caught here instead of inside llama.cpp.

No dependency on the ``gguf`` package (tests use it to cross-check this reader).
"""

from __future__ import annotations

import math
import mmap
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localmem.errors import ModelError

MAGIC = b"GGUF"
DEFAULT_ALIGNMENT = 32

# Metadata value types: id -> struct format (scalars); 8 = string, 9 = array.
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q"}
_SCALARS |= {11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9

# ggml tensor types: id -> (elements per block, bytes per block).
GGML_BLOCKS: dict[int, tuple[int, int]] = {
    0: (1, 4),  # F32
    1: (1, 2),  # F16
    2: (32, 18),  # Q4_0
    3: (32, 20),  # Q4_1
    6: (32, 22),  # Q5_0
    7: (32, 24),  # Q5_1
    8: (32, 34),  # Q8_0
    9: (32, 40),  # Q8_1
    10: (256, 84),  # Q2_K
    11: (256, 110),  # Q3_K
    12: (256, 144),  # Q4_K
    13: (256, 176),  # Q5_K
    14: (256, 210),  # Q6_K
    15: (256, 292),  # Q8_K
    16: (256, 66),  # IQ2_XXS
    17: (256, 74),  # IQ2_XS
    18: (256, 98),  # IQ3_XXS
    19: (256, 50),  # IQ1_S
    20: (32, 18),  # IQ4_NL
    21: (256, 110),  # IQ3_S
    22: (256, 82),  # IQ2_S
    23: (256, 136),  # IQ4_XS
    24: (1, 1),  # I8
    25: (1, 2),  # I16
    26: (1, 4),  # I32
    27: (1, 8),  # I64
    28: (1, 8),  # F64
    29: (256, 56),  # IQ1_M
    30: (1, 2),  # BF16
    34: (256, 54),  # TQ1_0
    35: (256, 66),  # TQ2_0
    39: (32, 17),  # MXFP4
}

# general.file_type -> the usual name of the quantisation.
FILE_TYPES = {
    0: "F32",
    1: "F16",
    2: "Q4_0",
    3: "Q4_1",
    7: "Q8_0",
    8: "Q5_0",
    9: "Q5_1",
    10: "Q2_K",
    11: "Q3_K_S",
    12: "Q3_K_M",
    13: "Q3_K_L",
    14: "Q4_K_S",
    15: "Q4_K_M",
    16: "Q5_K_S",
    17: "Q5_K_M",
    18: "Q6_K",
    19: "IQ2_XXS",
    20: "IQ2_XS",
    21: "Q2_K_S",
    22: "IQ3_XS",
    23: "IQ3_XXS",
    24: "IQ1_S",
    25: "IQ4_NL",
    26: "IQ3_S",
    27: "IQ3_M",
    28: "IQ2_S",
    29: "IQ2_M",
    30: "IQ4_XS",
    31: "IQ1_M",
    32: "BF16",
}

# Sanity limits: a header claiming more than this is corrupt, not a big model.
_MAX_TENSORS = 1_000_000
_MAX_KV = 100_000
_MAX_DIMS = 8
_MAX_STRING = 64 * 1024 * 1024


@dataclass(frozen=True)
class GGUFInfo:
    """What the header of a GGUF file says, after checking that the file is complete."""

    path: Path
    size_bytes: int
    version: int
    tensor_count: int
    parameter_count: int
    metadata: dict[str, Any] = field(repr=False)
    unverified_tensors: int = 0

    @property
    def architecture(self) -> str:
        """``general.architecture``, e.g. ``llama``, ``qwen2``, ``phi3``."""
        return str(self.metadata.get("general.architecture", "unknown"))

    @property
    def name(self) -> str:
        """``general.name``, else the file name without ``.gguf``."""
        return str(self.metadata.get("general.name") or self.path.stem)

    @property
    def context_length(self) -> int | None:
        """The context the model was trained for (``<arch>.context_length``)."""
        value = self.metadata.get(f"{self.architecture}.context_length")
        return int(value) if value is not None else None

    @property
    def chat_template(self) -> str | None:
        """The Jinja chat template the model was published with, if any."""
        value = self.metadata.get("tokenizer.chat_template")
        return value if isinstance(value, str) and value.strip() else None

    @property
    def quantization(self) -> str:
        """The quantisation named by ``general.file_type`` (``Q4_K_M``, ``F16``, ...)."""
        ft = self.metadata.get("general.file_type")
        if ft is None:
            return "unknown"
        return FILE_TYPES.get(int(ft), f"type {ft}")

    @property
    def vocab_size(self) -> int | None:
        """Number of tokens in the vocabulary."""
        value = self.metadata.get("tokenizer.ggml.tokens")
        return int(value) if value is not None else None


class _Reader:
    """Little-endian reads from a buffer, failing clearly at the end of the data."""

    def __init__(self, buf: Any, size: int) -> None:
        self.buf, self.size, self.pos = buf, size, 0

    def need(self, n: int) -> None:
        if self.pos + n > self.size:
            raise _Truncated(self.pos + n)

    def scalar(self, fmt: str) -> Any:
        n = struct.calcsize(fmt)
        self.need(n)
        (value,) = struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += n
        return value

    def string(self) -> str:
        n = self.scalar("<Q")
        if n > _MAX_STRING:
            raise _Corrupt(f"a string of {n} bytes at offset {self.pos}")
        self.need(n)
        raw = bytes(self.buf[self.pos : self.pos + n])
        self.pos += n
        return raw.decode("utf-8", errors="replace")

    def skip_string(self) -> None:
        n = self.scalar("<Q")
        if n > _MAX_STRING:
            raise _Corrupt(f"a string of {n} bytes at offset {self.pos}")
        self.need(n)
        self.pos += n

    def value(self, kind: int) -> Any:
        """A metadata value; arrays come back as their length (their items are skipped)."""
        if kind in _SCALARS:
            return self.scalar(_SCALARS[kind])
        if kind == _STRING:
            return self.string()
        if kind == _ARRAY:
            item_kind, count = self.scalar("<I"), self.scalar("<Q")
            if item_kind in _SCALARS:
                n = struct.calcsize(_SCALARS[item_kind]) * count
                self.need(n)
                self.pos += n
            elif item_kind == _STRING:
                for _ in range(count):
                    self.skip_string()
            elif item_kind == _ARRAY:
                for _ in range(count):
                    self.value(_ARRAY)
            else:
                raise _Corrupt(f"unknown array item type {item_kind}")
            return count
        raise _Corrupt(f"unknown metadata value type {kind}")


class _Truncated(Exception):
    def __init__(self, needed: int) -> None:
        self.needed = needed


class _Corrupt(Exception):
    pass


def read_gguf(path: str | Path) -> GGUFInfo:
    """Read and verify the header of a GGUF file.

    Checks the magic, the version, every metadata entry and tensor descriptor, and that the file
    is long enough for the tensor data the header describes.

    Raises:
        ModelError: The file is missing, not a GGUF, an unsupported version, corrupt or
            truncated; one sentence that says which.
    """
    path = Path(path).expanduser()
    if not path.exists():
        raise ModelError(f"model file not found: {path}")
    if not path.is_file():
        raise ModelError(f"not a file: {path}")
    size = path.stat().st_size
    if size < 24:
        raise ModelError(f"{path}: not a GGUF file ({size} bytes, too short for a header)")
    with path.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        magic = bytes(buf[:4])
        if magic != MAGIC:
            raise ModelError(f"{path}: not a GGUF file (starts with {magic!r}, not b'GGUF')")
        try:
            return _parse(path, buf, size)
        except _Truncated as exc:
            raise ModelError(
                f"{path}: truncated GGUF file: it should hold at least {exc.needed:,} bytes but "
                f"has {size:,} (an interrupted download?)"
            ) from None
        except _Corrupt as exc:
            raise ModelError(f"{path}: corrupt GGUF header: {exc}") from None


def _parse(path: Path, buf: Any, size: int) -> GGUFInfo:
    r = _Reader(buf, size)
    r.pos = 4
    version = r.scalar("<I")
    if version == 1:
        raise ModelError(f"{path}: GGUF version 1 is too old for llama.cpp; convert it again")
    if version not in (2, 3):
        # A big-endian file reads as a huge little-endian version number.
        raise ModelError(f"{path}: unsupported GGUF version {version} (big-endian or corrupt?)")
    n_tensors, n_kv = r.scalar("<Q"), r.scalar("<Q")
    if n_tensors > _MAX_TENSORS or n_kv > _MAX_KV:
        raise _Corrupt(f"it claims {n_tensors} tensors and {n_kv} metadata entries")

    metadata: dict[str, Any] = {}
    for _ in range(n_kv):
        key = r.string()
        metadata[key] = r.value(r.scalar("<I"))

    alignment = int(metadata.get("general.alignment", DEFAULT_ALIGNMENT))
    if alignment <= 0 or alignment & (alignment - 1):
        raise _Corrupt(f"alignment {alignment} is not a power of two")

    end, params, unverified = 0, 0, 0
    for _ in range(n_tensors):
        name = r.string()
        n_dims = r.scalar("<I")
        if n_dims > _MAX_DIMS:
            raise _Corrupt(f"tensor {name} has {n_dims} dimensions")
        dims = [r.scalar("<Q") for _ in range(n_dims)]
        kind, offset = r.scalar("<I"), r.scalar("<Q")
        elements = math.prod(dims)
        params += elements
        block = GGML_BLOCKS.get(kind)
        if block is None:  # a type newer than this table: check what can be checked
            unverified += 1
            end = max(end, offset)
            continue
        per_block, block_bytes = block
        if elements % per_block:
            raise _Corrupt(f"tensor {name} has {elements} elements, not whole blocks")
        end = max(end, offset + elements // per_block * block_bytes)

    data_start = -(-r.pos // alignment) * alignment
    if n_tensors and data_start + end > size:
        raise _Truncated(data_start + end)
    return GGUFInfo(
        path=path,
        size_bytes=size,
        version=version,
        tensor_count=n_tensors,
        parameter_count=params,
        metadata=metadata,
        unverified_tensors=unverified,
    )
