"""What checking the vector index's checksum costs when a store opens (issue 16).

    python scripts/bench_checksum.py --n 100000 --repeat 5

Builds an hnswlib index of ``n`` random unit vectors (384-d, the store's settings), saves it as
a store does (which records its CRC-32 in the sidecar), then times, side by side and
interleaved, reading it back: the CRC-32 alone, blake2b alone (the alternative), hnswlib's own
load, and ``VectorIndex.load`` (checksum + load) as a store's opening does. The file is in the
page cache (a store opened twice in a row); a cold read costs the disk's time in both.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import tempfile
import time
from pathlib import Path

import hnswlib
import numpy as np

from localmem.store.vectors import INDEX_FILE, VectorIndex, file_checksum


def _blake2b(path: Path) -> str:
    h = hashlib.blake2b()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=100_000)
    p.add_argument("--dim", type=int, default=384)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--keep", type=Path, help="keep the index in this folder; reuse it next time")
    args = p.parse_args()
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((args.n, args.dim), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / INDEX_FILE
        t = time.perf_counter()
        if not path.exists():
            index = VectorIndex(args.dim)
            index.add(np.arange(args.n), vectors)
            index.save(path, {"vec_seq": args.n})
        build = time.perf_counter() - t
        size = path.stat().st_size
        timings: dict[str, list[float]] = {
            "crc32": [],
            "blake2b": [],
            "hnswlib load": [],
            "VectorIndex.load": [],
        }

        def hnsw_load() -> None:
            raw = hnswlib.Index(space="ip", dim=args.dim)
            raw.load_index(str(path), max_elements=0)

        steps = {
            "crc32": lambda: file_checksum(path),
            "blake2b": lambda: _blake2b(path),
            "hnswlib load": hnsw_load,
            "VectorIndex.load": lambda: VectorIndex.load(path, args.dim),
        }
        for step in steps.values():  # warm the page cache once
            step()
        for _ in range(args.repeat):
            for name, step in steps.items():
                t = time.perf_counter()
                step()
                timings[name].append(time.perf_counter() - t)
    load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"{args.n} vectors, {args.dim}-d: index file {size / 1e6:.0f} MB (built or found in "
        f"{build:.0f} s)"
    )
    print(f"load average {load}; median of {args.repeat} (page cache warm)")
    for name, values in timings.items():
        print(f"  {name:<18} {statistics.median(values) * 1000:8.1f} ms")
    check = statistics.median(timings["crc32"])
    opened = statistics.median(timings["VectorIndex.load"])
    print(f"  checksum share of VectorIndex.load: {check / opened:.0%}")


if __name__ == "__main__":
    main()
