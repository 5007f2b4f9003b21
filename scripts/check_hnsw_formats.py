"""Do hnswlib 0.8.0 and chroma-hnswlib 0.7.6 read and write the same index files?

    python scripts/check_hnsw_formats.py [--work .bench/hnsw-formats] [--n 5000]

Both distributions install a module named ``hnswlib``, so each gets a venv of its own (made here
with pip: hnswlib 0.8.0 publishes no wheel and compiles, chroma-hnswlib has wheels). In each, a
worker makes an index with the operations localmem's store does (``init_index`` with
``allow_replace_deleted=False``, ``add_items`` in batches, ``resize_index``, ``mark_deleted``, a
deleted label added again, ``save_index``), one thread so the graph is deterministic. Then each
library loads both files (its own and the other's) and answers the same queries, reads vectors
back (``get_items``) and lists the labels; then adds to the loaded index and saves it again.

It passes when the two libraries write byte-identical files from the same operations, and
every read of either file (neighbours, vectors, labels, counts; distances to 1e-6, since a
library built with other compiler flags sums in another order) is the same under both
libraries, before and after the second round of writes.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import venv
from pathlib import Path

import numpy as np

#: a name -> (the requirement pip installs, the module it installs)
LIBS = {
    "hnswlib-0.8.0": ("hnswlib==0.8.0", "hnswlib"),
    "chroma-hnswlib-0.7.6": ("chroma-hnswlib==0.7.6", "hnswlib"),
    "hnswlib-noderag-0.8.2": ("hnswlib-noderag==0.8.2", "hnswlib_noderag"),
}

WORKER = r"""
import hashlib, importlib, json, sys
import numpy as np

mode, work, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
hnswlib = importlib.import_module(sys.argv[4])
dim = 384
rng = np.random.default_rng(7)
vectors = rng.standard_normal((n + 500, dim)).astype(np.float32)
vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
queries = vectors[:50] + 0.05 * rng.standard_normal((50, dim)).astype(np.float32)

def items(index, labels):
    got = index.get_items(list(labels))  # chroma's has no return_type: the default both share
    return np.asarray(got, dtype=np.float32)

def facts(index):
    labels, dist = index.knn_query(queries, k=10)
    ids = sorted(index.get_ids_list())
    live = [i for i in ids if i % 37 and i != 3]  # the labels never marked deleted
    return {
        "count": index.element_count,
        "max": index.max_elements,
        "labels": hashlib.sha256(np.ascontiguousarray(labels, np.int64).tobytes()).hexdigest(),
        "dist": np.asarray(dist, np.float64).round(7).ravel().tolist(),
        "items": hashlib.sha256(items(index, [74, *live[:200]]).tobytes()).hexdigest(),
        "ids": hashlib.sha256(np.asarray(ids, np.int64).tobytes()).hexdigest(),
    }

def sha(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()

out = {}
if mode == "write":
    index = hnswlib.Index(space="ip", dim=dim)
    index.init_index(max_elements=1024, ef_construction=100, M=16, allow_replace_deleted=False)
    index.set_ef(96)
    index.set_num_threads(1)
    for start in range(0, n, 700):  # batches, growing as localmem's VectorIndex.add does
        batch = np.arange(start, min(n, start + 700))
        needed = index.element_count + len(batch)
        if needed > index.max_elements:
            index.resize_index(max(needed, int(index.max_elements * 1.5)))
        index.add_items(vectors[batch], batch, num_threads=1)
    for label in range(0, n, 37):
        index.mark_deleted(label)
    index.add_items(vectors[n : n + 1], [74], num_threads=1)  # a deleted label stored again
    index.save_index(f"{work}/written.hnsw")
    out["written"] = sha(f"{work}/written.hnsw")
    out["facts"] = facts(index)
else:  # read both files, then write to what was read
    for name in sys.argv[5:]:
        index = hnswlib.Index(space="ip", dim=dim)
        try:
            index.load_index(f"{work}/{name}/written.hnsw", max_elements=0)
        except RuntimeError as exc:  # a file this library cannot read
            out[name] = {"error": str(exc)}
            continue
        index.set_ef(96)
        index.set_num_threads(1)
        read = facts(index)
        more = np.arange(n, n + 500)
        index.resize_index(index.element_count + len(more))
        index.add_items(vectors[n : n + 500], more + 10**6, num_threads=1)
        index.mark_deleted(3)
        index.save_index(f"{work}/{mode}-{name}.hnsw")
        out[name] = {"read": read, "after_writes": facts(index),
                     "rewritten": sha(f"{work}/{mode}-{name}.hnsw")}
print(json.dumps(out))
"""


def make_venv(folder: Path, requirement: str) -> Path:
    """A venv with numpy and one hnswlib distribution (kept in ``--work`` for a rerun)."""
    python = folder / "bin" / "python"
    if not python.exists():
        venv.create(folder, with_pip=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "numpy", requirement], check=True
        )
    return python


def _output(run: subprocess.CompletedProcess) -> str:
    if run.returncode:
        raise SystemExit(f"the worker failed:\n{run.stderr}")
    return run.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path(".bench/hnsw-formats"))
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--libs", nargs="+", choices=list(LIBS), default=list(LIBS))
    args = parser.parse_args()
    work = args.work.resolve()
    libs = {name: LIBS[name] for name in args.libs}
    pythons = {name: make_venv(work / f"venv-{name}", req) for name, (req, _) in libs.items()}
    written, read = {}, {}
    for name, python in pythons.items():
        (work / name).mkdir(parents=True, exist_ok=True)
        command = [str(python), "-c", WORKER, "write", str(work / name), str(args.n)]
        written[name] = json.loads(
            _output(
                subprocess.run(
                    [*command, libs[name][1]], capture_output=True, text=True, check=False
                )
            )
        )
    for name, python in pythons.items():
        command = [str(python), "-c", WORKER, name, str(work), str(args.n), libs[name][1]]
        read[name] = json.loads(
            _output(subprocess.run([*command, *libs], capture_output=True, text=True, check=False))
        )

    def same(a: dict, b: dict) -> bool:
        """The same labels, ids, vectors and counts; distances equal to float32 rounding (a
        library built with other compiler flags sums in another order)."""
        close = np.allclose(a["dist"], b["dist"], rtol=0, atol=1e-6)
        return close and {k: v for k, v in a.items() if k != "dist"} == {
            k: v for k, v in b.items() if k != "dist"
        }

    reference, *others = libs
    ok = True
    for other in others:
        checks = {
            "writes a byte-identical file from the same operations": written[other]["written"]
            == written[reference]["written"],
            "its own reads agree": same(written[other]["facts"], written[reference]["facts"]),
        }
        for file, reader in ((reference, other), (other, reference)):
            got = read[reader][file]
            checks[f"{reader} reads {file}'s file as {file} does"] = "error" not in got and same(
                got["read"], written[file]["facts"]
            )
            checks[f"{reader} changes and rewrites {file}'s file as {file} does"] = (
                "error" not in got
                and same(got["after_writes"], read[file][file]["after_writes"])
                and got["rewritten"] == read[file][file]["rewritten"]
            )
        print(f"{other} against {reference} ({args.n} vectors):")
        for check, passed in checks.items():
            print(f"  {'ok' if passed else 'NO'}  {check}")
        ok = ok and all(checks.values())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
