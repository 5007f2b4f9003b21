"""Exporting a local sentence-transformers model to ONNX, once, from its packaged weights.

This is the only part of the ONNX backend that needs torch and transformers; it runs at first use
(or after the cached export was found damaged) and never again. The exported graph includes the
pooling step, so it maps token ids straight to sentence vectors (normalised afterwards in numpy).
The result is checked against the torch model before it is kept: an export whose vectors differ
from the original is refused rather than cached.
"""

from __future__ import annotations

import inspect
import logging
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from localmem.errors import ModelError
from localmem.extras import missing

log = logging.getLogger("localmem.embed")

#: cosine every check sentence must reach against the torch model for an export to be kept
MIN_EXPORT_COSINE = 0.9999
OPSET = 17
_CHECK_TEXTS = (
    "Caroline went to a support group on 7 May 2023.",
    "The rate limiter should use a sliding window; the cache layer times out under load.",
    "ok",
)


def export_model(source: Path, target: Path, *, pooling: str, max_tokens: int) -> float:
    """Write ``source`` (a sentence-transformers folder) as an ONNX graph to ``target``.

    Args:
        source: the model folder (config.json and weights of a transformers encoder).
        target: the ``.onnx`` file to write.
        pooling: "mean" or "cls", as the model's pooling module says.
        max_tokens: longest input; the check compares texts under this truncation.

    Returns:
        The lowest cosine between the exported and the torch vectors on the check sentences.

    Raises:
        ModelError: torch or transformers are missing (the ``torch`` extra), the export fails,
            or its vectors differ.
    """
    try:
        import torch
        import transformers
        from transformers import AutoModel
    except ImportError:
        raise missing(f"exporting the embedding model {source} to ONNX", "torch") from None
    transformers.logging.disable_progress_bar()
    transformers.logging.set_verbosity_error()
    try:
        encoder = AutoModel.from_pretrained(str(source), local_files_only=True).eval()
    except Exception as exc:  # transformers raises many kinds for a bad folder
        raise ModelError(f"cannot load {source} for the ONNX export: {exc}") from None
    uses_types = "token_type_ids" in inspect.signature(encoder.forward).parameters
    wrapper = _pooled(encoder, pooling=pooling, uses_types=uses_types)
    names = ["input_ids", "attention_mask", *(["token_type_ids"] if uses_types else [])]
    sample = tuple(torch.ones((2, 8), dtype=torch.long) for _ in names)
    axes = {name: {0: "batch", 1: "tokens"} for name in names}
    axes["sentence_embedding"] = {0: "batch"}
    try:
        with torch.no_grad(), _quiet():
            torch.onnx.export(
                wrapper,
                sample,
                str(target),
                dynamo=False,  # the TorchScript exporter needs no onnxscript and is exact here
                input_names=names,
                output_names=["sentence_embedding"],
                dynamic_axes=axes,
                opset_version=OPSET,
            )
    except Exception as exc:
        raise ModelError(f"ONNX export of {source} failed: {exc}") from None
    return _check(target, source, wrapper, names, max_tokens)


def _pooled(encoder, *, pooling: str, uses_types: bool):
    import torch

    class Pooled(torch.nn.Module):
        """The encoder followed by the model's pooling, so the graph returns sentence vectors."""

        def __init__(self) -> None:
            super().__init__()
            self.encoder = encoder

        def forward(self, input_ids, attention_mask, token_type_ids=None):
            kwargs = {"input_ids": input_ids, "attention_mask": attention_mask}
            if uses_types:
                kwargs["token_type_ids"] = token_type_ids
            hidden = self.encoder(**kwargs).last_hidden_state
            if pooling == "cls":
                return hidden[:, 0]
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)

    return Pooled().eval()


def _check(target: Path, source: Path, wrapper, names: list[str], max_tokens: int) -> float:
    """Lowest cosine between the ONNX graph and the torch module on a few sentences."""
    import onnxruntime as ort
    import torch
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(source / "tokenizer.json"))
    tok.enable_truncation(max_tokens)
    tok.enable_padding(pad_id=tok.token_to_id("[PAD]") or 0)
    enc = tok.encode_batch(list(_CHECK_TEXTS))
    ids = np.array([e.ids for e in enc], dtype=np.int64)
    feeds = {
        "input_ids": ids,
        "attention_mask": np.array([e.attention_mask for e in enc], dtype=np.int64),
        "token_type_ids": np.array([e.type_ids for e in enc], dtype=np.int64),
    }
    feeds = {name: feeds[name] for name in names}
    session = ort.InferenceSession(str(target), providers=["CPUExecutionProvider"])
    got = session.run(None, feeds)[0]
    with torch.no_grad():
        want = wrapper(*(torch.from_numpy(feeds[n]) for n in names)).numpy()
    got = got / np.linalg.norm(got, axis=1, keepdims=True)
    want = want / np.linalg.norm(want, axis=1, keepdims=True)
    cosine = float((got * want).sum(axis=1).min())
    if cosine < MIN_EXPORT_COSINE:
        raise ModelError(
            f"the ONNX export of {source} does not reproduce the model (cosine {cosine:.5f})"
        )
    return cosine


def quantize_int8(source: Path, target: Path) -> None:
    """Dynamic int8 quantisation of the weights of an exported graph (activations stay float).

    Raises:
        ModelError: the ``onnx`` package (needed by onnxruntime's quantiser, in the ``torch``
            extra) is missing, or the quantiser fails.
    """
    try:
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError:
        raise missing("quantising an exported embedding model to int8", "torch") from None
    try:
        with _quiet(), _root_log_quiet():
            quantize_dynamic(
                str(source), str(target), weight_type=QuantType.QInt8, per_channel=True
            )
    except Exception as exc:
        raise ModelError(f"int8 quantisation of {source} failed: {exc}") from None


@contextmanager
def _quiet() -> Iterator[None]:
    """Silence the exporters' warnings (tracer notes); errors still raise."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@contextmanager
def _root_log_quiet() -> Iterator[None]:
    """The quantiser logs advice ("consider pre-processing") through ``logging.warning``, which
    would also configure the root logger as a side effect; the user asked for neither."""
    root = logging.getLogger()
    level, guard = root.level, logging.NullHandler()
    root.addHandler(guard)  # a root with a handler is not configured by logging.warning
    root.setLevel(logging.ERROR)
    try:
        yield
    finally:
        root.setLevel(level)
        root.removeHandler(guard)
