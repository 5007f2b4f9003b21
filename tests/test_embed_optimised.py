"""The embedder's optimised ONNX graph, kept between runs: the same vectors as the graph
optimised at each load, made again when missing, damaged or from another onnxruntime, and
written only beside the graph (owner-only)."""

from __future__ import annotations

import json
import random
import stat
from pathlib import Path

import numpy as np
import pytest

from localmem.config import EmbedderConfig
from localmem.embed import onnx, optimised
from localmem.embed.onnx import OnnxEmbedder

WORDS = (
    "Caroline Melanie support group painting camping beach concert guitar pottery adoption "
    "school museum garden bakery marathon went visited talked loved planned finished May June "
    "2023 the a of to and in on for with at by"
)


def texts(n: int = 300) -> list[str]:
    rng, words = random.Random(7), WORDS.split()
    return [" ".join(rng.choice(words) for _ in range(rng.randint(1, 40))) for _ in range(n)]


def files_under(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*") if p.is_file()}


def embedder_in(cache: Path, **config) -> OnnxEmbedder:
    """The default (built-in int8) embedder, its graphs kept in ``cache``."""
    emb = OnnxEmbedder(EmbedderConfig(cache_dir=str(cache), **config), variant="int8")
    emb.embed_batch(["warm up"])
    return emb


def kept(emb: OnnxEmbedder) -> tuple[Path, Path]:
    """The optimised graph and its sidecar."""
    assert emb.model_file is not None
    path = optimised.optimised_path(emb.model_file)
    return path, path.with_name(path.name + ".json")


def test_the_kept_graph_gives_the_same_vectors(tmp_path, monkeypatch):
    sample = texts()
    kept_first = embedder_in(tmp_path / "a")  # makes the optimised graph
    kept_again = embedder_in(tmp_path / "a")  # loads it
    assert kept(kept_again)[0].exists()
    with monkeypatch.context() as patch:
        patch.setattr(onnx, "load_session", _plain_session)
        before = embedder_in(tmp_path / "b")
    assert not kept(before)[0].exists()
    want = before.embed_batch(sample)
    for emb in (kept_first, kept_again):
        got = emb.embed_batch(sample)
        assert np.abs(got - want).max() <= 1e-6
    # one at a time too (int8 activations are quantised per batch: same batches compared)
    for text in sample[:20]:
        assert np.abs(kept_again.embed_query(text) - before.embed_query(text)).max() <= 1e-6


def _plain_session(graph: Path, make_options):
    """A session as made before the optimised graph was kept: optimised at each load."""
    import onnxruntime as ort

    return ort.InferenceSession(str(graph), make_options(), providers=["CPUExecutionProvider"])


def test_written_only_beside_the_graph_and_owner_only(tmp_path):
    cache = tmp_path / "cache"
    emb = embedder_in(cache)
    graph, sidecar = kept(emb)
    assert graph.parent == emb.model_file.parent and cache in graph.parents
    assert files_under(tmp_path) <= files_under(cache)  # nothing outside the cache
    assert not [p for p in files_under(cache) if p.name.endswith(".tmp")]
    for path in (graph, sidecar):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    meta = json.loads(sidecar.read_text())
    assert meta["size"] == graph.stat().st_size
    assert meta["source"] == emb.model_file.name


def test_a_missing_graph_is_made_again(tmp_path):
    emb = embedder_in(tmp_path)
    graph, _ = kept(emb)
    want = emb.embed_batch(texts(50))
    graph.unlink()
    again = embedder_in(tmp_path)
    assert graph.exists()
    assert np.abs(again.embed_batch(texts(50)) - want).max() <= 1e-6


def test_a_truncated_graph_is_made_again(tmp_path):
    emb = embedder_in(tmp_path)
    graph, _ = kept(emb)
    size = graph.stat().st_size
    graph.write_bytes(graph.read_bytes()[: size // 2])
    embedder_in(tmp_path)
    assert graph.stat().st_size == size


def test_a_corrupt_graph_of_the_right_size_is_made_again(tmp_path, caplog):
    emb = embedder_in(tmp_path)
    graph, _ = kept(emb)
    want = emb.embed_batch(texts(50))
    good = graph.read_bytes()
    graph.write_bytes(b"\x07" * len(good))  # the sidecar's size still matches
    again = embedder_in(tmp_path)
    assert "unreadable" in caplog.text
    assert graph.read_bytes() == good
    assert np.abs(again.embed_batch(texts(50)) - want).max() <= 1e-6


@pytest.mark.parametrize(
    "field, value",
    [("onnxruntime", "0.0.1"), ("source_size", 1), ("format", 0), ("size", None)],
)
def test_a_graph_from_another_onnxruntime_or_graph_is_made_again(tmp_path, field, value):
    emb = embedder_in(tmp_path)
    graph, sidecar = kept(emb)
    meta = json.loads(sidecar.read_text())
    meta[field] = value
    sidecar.write_text(json.dumps(meta))
    stale = graph.stat().st_mtime_ns
    embedder_in(tmp_path)
    assert graph.stat().st_mtime_ns != stale  # written anew
    fresh = json.loads(sidecar.read_text())
    assert fresh[field] != value
    assert fresh["format"] == optimised.FORMAT and fresh["size"] == graph.stat().st_size


def test_an_unwritable_folder_still_gives_the_same_vectors(tmp_path):
    emb = embedder_in(tmp_path)
    graph, sidecar = kept(emb)
    want = emb.embed_batch(texts(50))
    graph.unlink()
    sidecar.unlink()
    folder = graph.parent
    folder.chmod(0o500)
    try:
        again = embedder_in(tmp_path)
        assert np.abs(again.embed_batch(texts(50)) - want).max() <= 1e-6
        if not graph.exists():  # root may write anyway; otherwise nothing was kept
            assert not [p for p in folder.iterdir() if p.name.startswith(".")]
    finally:
        folder.chmod(0o700)


def test_tokens_are_counted_whole_by_the_loaded_tokenizer(embedder):
    # the loaded (truncating) tokenizer counts through its overflowing pieces; a tokenizer
    # that does not truncate, as count_tokens loaded before, is the reference
    from tokenizers import Tokenizer

    whole = Tokenizer.from_file(str(embedder.path / "tokenizer.json"))
    whole.no_padding()
    whole.no_truncation()
    rng = random.Random(3)
    pieces = [*WORDS.split(), "ü", "東京", "antidisestablishmentarianism", "...", "it's"]
    for n in [0, 1, 255, 256, 257, 511, 512, 513, 3000, *range(2, 1200, 37)]:
        text = " ".join(rng.choice(pieces) for _ in range(n))
        want = len(whole.encode(text, add_special_tokens=False).ids)
        assert embedder.count_tokens(text) == want, n


def test_what_a_killed_writer_left_is_swept(tmp_path):
    import subprocess
    import sys

    emb = embedder_in(tmp_path)
    graph, _ = kept(emb)
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    left = graph.with_name(f".{graph.name}.{int(dead.stdout)}.tmp")
    left.write_bytes(b"half a graph")
    graph.unlink()
    embedder_in(tmp_path)
    assert graph.exists() and not left.exists()
