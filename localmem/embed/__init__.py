"""Embedders: the interface and its backends, chosen by an explicit registry."""

from __future__ import annotations

from collections.abc import Callable

from localmem.config import EmbedderConfig
from localmem.embed.base import Embedder, normalise
from localmem.errors import InputError

__all__ = ["EMBEDDER_BACKENDS", "Embedder", "make_embedder", "normalise"]


def _sentence_transformers(config: EmbedderConfig) -> Embedder:
    from localmem.embed.sentence_transformers import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder(config)


def _onnx(config: EmbedderConfig) -> Embedder:
    import logging

    from localmem.embed.onnx import OnnxEmbedder
    from localmem.errors import ModelError

    try:
        # falls back to torch (one warning) when the graph cannot be exported or loaded
        return OnnxEmbedder(config, fallback=True)
    except ModelError as exc:  # a model folder the onnx path cannot reproduce
        logging.getLogger("localmem.embed").warning("%s; using the torch backend", exc)
        return _sentence_transformers(config.model_copy(update={"backend": "torch"}))


def _onnx_int8(config: EmbedderConfig) -> Embedder:
    from localmem.embed.onnx import OnnxEmbedder

    return OnnxEmbedder(config, variant="int8")


#: backend name (EmbedderConfig.backend) -> factory
EMBEDDER_BACKENDS: dict[str, Callable[[EmbedderConfig], Embedder]] = {
    "torch": _sentence_transformers,
    "onnx": _onnx,
    "onnx-int8": _onnx_int8,
    "openvino": _sentence_transformers,
}


def make_embedder(config: EmbedderConfig | None = None) -> Embedder:
    """The embedder a config asks for (the model loads lazily, on first use)."""
    config = config or EmbedderConfig()
    try:
        factory = EMBEDDER_BACKENDS[config.backend]
    except KeyError:
        raise InputError(
            f"unknown embedder backend {config.backend!r}; known: {', '.join(EMBEDDER_BACKENDS)}"
        ) from None
    return factory(config)
