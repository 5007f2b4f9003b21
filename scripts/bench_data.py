"""Shared data of the benchmarks: synthetic texts and their MiniLM vectors, cached in .bench/data.

Usage:
    python scripts/bench_data.py --n 1000000 [--backend onnx-int8] [--threads 1]

``synthetic_texts(n)`` is prefix-stable (the first 100k of a 1M run are the 100k run's texts), so
one cache of vectors serves every size. Vectors are computed with one of localmem's embedder
backends (default: the configured default), one cache folder per backend, in shards of 10k texts;
an interrupted run resumes at the first missing shard.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / ".bench" / "data"
SHARD = 10_000
SEED = 13


def texts(n: int) -> list[str]:
    """The first ``n`` synthetic texts (cached as one file per size)."""
    from lab.synthetic import synthetic_texts

    DATA.mkdir(parents=True, exist_ok=True)
    file = DATA / f"synthetic-{n}.txt"
    if not file.exists():
        tmp = file.with_suffix(".tmp")
        tmp.write_text("\n".join(synthetic_texts(n, seed=SEED)), encoding="utf-8")
        tmp.replace(file)
    return file.read_text(encoding="utf-8").split("\n")


def vectors(
    n: int, *, backend: str | None = None, threads: int | None = None, progress: bool = True
) -> np.ndarray:
    """MiniLM vectors of the first ``n`` synthetic texts, shape (n, 384), float32."""
    from localmem.config import EmbedderConfig
    from localmem.embed import make_embedder

    backend = backend or EmbedderConfig().backend
    # the fp32 cache predates the other backends and keeps its name
    suffix = "" if backend == "onnx" else f"-{backend}"
    folder = DATA / f"vectors-seed{SEED}{suffix}"
    folder.mkdir(parents=True, exist_ok=True)
    shards = (n + SHARD - 1) // SHARD
    all_texts: list[str] | None = None
    embedder = None
    parts = []
    for i in range(shards):
        file = folder / f"{i * SHARD:09d}.npy"
        if not file.exists():
            if all_texts is None:
                all_texts = texts(shards * SHARD)
                embedder = make_embedder(EmbedderConfig(backend=backend, threads=threads))
                (folder / "meta.json").write_text(
                    json.dumps({"embedder": embedder.name, "backend": backend}), encoding="utf-8"
                )
            t0 = time.perf_counter()
            vecs = embedder.embed_batch(all_texts[i * SHARD : (i + 1) * SHARD])
            np.save(file.with_suffix(".tmp.npy"), vecs)
            file.with_suffix(".tmp.npy").replace(file)
            if progress:
                rate = SHARD / (time.perf_counter() - t0)
                print(f"shard {i + 1}/{shards}: {rate:.0f} texts/s", file=sys.stderr, flush=True)
        parts.append(np.load(file, mmap_mode="r"))
    return np.concatenate(parts)[:n]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--backend", default=None, help="embedder backend (default: configured)")
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    vecs = vectors(args.n, backend=args.backend, threads=args.threads)
    print(f"{len(vecs)} vectors of {vecs.shape[1]} dims in {DATA}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
