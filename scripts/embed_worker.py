"""One variant of the embedding benchmark, in its own process (see scripts/bench_embed.py).

Usage (by bench_embed.py): <python> scripts/embed_worker.py VARIANT JOB.json RESULT.json

Loads the variant (timed from a cold process), embeds the corpus in batches of 256 (throughput,
two timed rounds after a warm-up), embeds each query alone (latency), and saves the vectors of
the corpus and of the queries for the recall and cosine comparison. The network is refused and
counted (the guard of peer_worker.py). ``st-*`` variants run sentence-transformers' own ONNX /
OpenVINO backends (optimum) and need the venv bench_embed.py --setup creates.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np
from peer_worker import ATTEMPTS, rss_mb  # importing it installs the network guard


def localmem_variant(spec: dict, model_path: str, cache: Path):
    """A localmem embedder: backend torch / onnx / onnx-int8, optional threads, sorting."""
    from localmem.config import EmbedderConfig
    from localmem.embed import make_embedder

    config = EmbedderConfig(backend=spec["backend"], threads=spec.get("threads"))
    embedder = make_embedder(config)
    if spec.get("unsorted"):
        embedder.sort_by_length = False
    embedder.embed_batch(["load the model"])
    return embedder.embed_batch


def st_variant(spec: dict, model_path: str, cache: Path):
    """sentence-transformers with backend onnx / openvino (optimum), exported once into cache."""
    import torch
    from sentence_transformers import SentenceTransformer

    if spec.get("threads"):
        torch.set_num_threads(spec["threads"])
    backend, kind = spec["backend"], spec.get("kind", "plain")
    folder = cache / f"st-{backend}-{kind}"
    file_name = {
        ("onnx", "plain"): "onnx/model.onnx",
        ("onnx", "O3"): "onnx/model_O3.onnx",
        ("onnx", "int8"): "onnx/model_qint8_avx512_vnni.onnx",
        ("openvino", "plain"): "openvino/openvino_model.xml",
        ("openvino", "int8"): "openvino/openvino_model.xml",
    }[(backend, kind)]
    if not (folder / file_name).exists():
        base = SentenceTransformer(model_path, device="cpu", backend=backend)
        base.save_pretrained(str(folder))
        if kind == "O3":
            from sentence_transformers import export_optimized_onnx_model

            export_optimized_onnx_model(base, "O3", str(folder))
        elif kind == "int8" and backend == "onnx":
            from sentence_transformers import export_dynamic_quantized_onnx_model

            export_dynamic_quantized_onnx_model(base, "avx512_vnni", str(folder))
        elif kind == "int8":
            from optimum.intel import OVModelForFeatureExtraction, OVWeightQuantizationConfig

            ov = OVModelForFeatureExtraction.from_pretrained(
                str(folder), quantization_config=OVWeightQuantizationConfig(bits=8)
            )
            ov.save_pretrained(str(folder / "openvino"))
            (folder / "openvino" / "config.json").unlink(missing_ok=True)
        del base
    model = SentenceTransformer(
        str(folder), device="cpu", backend=backend, model_kwargs={"file_name": file_name}
    )

    def embed(texts):
        vecs = model.encode(list(texts), batch_size=64, convert_to_numpy=True)
        return vecs / np.linalg.norm(vecs, axis=1, keepdims=True)

    embed(["load the model"])
    return embed


def main() -> int:
    variant, job_file, out_file = sys.argv[1:4]
    job = json.loads(Path(job_file).read_text(encoding="utf-8"))
    spec = job["spec"]
    out: dict = {"variant": variant, "spec": spec}
    try:
        t0 = time.perf_counter()
        make = st_variant if spec["runner"] == "st" else localmem_variant
        embed = make(spec, job["model_path"], Path(job["cache"]))
        out["load_s"] = time.perf_counter() - t0
        corpus, queries = job["corpus"], job["queries"]
        rates = []
        vectors = None
        for _ in range(job["rounds"]):
            t0 = time.perf_counter()
            parts = [embed(corpus[i : i + 256]) for i in range(0, len(corpus), 256)]
            rates.append(len(corpus) / (time.perf_counter() - t0))
            vectors = np.concatenate(parts)
        out["items_per_s"] = rates
        lat, qvecs = [], []
        for q in queries:
            t0 = time.perf_counter()
            qvecs.append(embed([q])[0])
            lat.append((time.perf_counter() - t0) * 1000)
        out["query_ms"] = lat
        np.save(job["vectors_out"], np.asarray(vectors, dtype=np.float32))
        np.save(job["queries_out"], np.asarray(qvecs, dtype=np.float32))
        out["status"] = "ok"
    except Exception as exc:  # reported to the orchestrator, which shows it
        import traceback

        out.update(status="error", error=f"{type(exc).__name__}: {exc}"[:500])
        out["traceback"] = traceback.format_exc()[-3000:]
    out.update(peak_rss_mb=rss_mb(), network_attempts=len(ATTEMPTS), loadavg=os.getloadavg())
    Path(out_file).write_text(json.dumps(out), encoding="utf-8")
    return 0 if out["status"] == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
