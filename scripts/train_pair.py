"""Fit a pair model of "do these two facts fill the same slot?" (issue 35, ninth pass).

Usage:
    python scripts/train_pair.py [--per-slot 900] [--seed 35] [--cache gen.npy]
        [--hidden 64] --out pair.npz [--hand-check]

The shipped decision reads each fact alone and multiplies the two slot distributions
(``conflict.same_slot``). A pair model sees both: a logistic regression over ``[a*b, |a-b|]``
of the two MiniLM vectors (symmetric in a and b), trained on pairs of sentences that
``lab.infer_training`` generates (the reader's own training sentences, seed 35):

- same slot, another value (positive); same slot, the same value said again (positive);
- same slot, the least similar of a few (positive: what the words do not share);
- another slot, drawn at random (negative, ``none`` included);
- another slot, the most similar of the sentence's neighbours (negative: look-alikes);
- two sentences that fill no slot (negative: the product leaves none x none out too).

Calibrated (Platt scaling on the logit) on pairs drawn the same way from another seed's
sentences, none of which it trained on, and printed against the product of the shipped
reader's slot distributions on the same pairs: at the bar whose false pass rate on held-out
different-slot pairs equals the product's at ``SAME_SLOT_P``, how many same-slot pairs pass.
``--hand-check`` also prints both scores on the in-sample hand-written supersessions
(dev..dev5: the two turns of each), never on dev6..dev9 or the held-out half.

Writes the weights (float32), the calibration and the bar to ``--out`` with a fixed zip
timestamp, so the same seed and embedder rebuild the file bit for bit (``--hidden 64``: 182
KiB). ``scripts/compare_readers.py --same-slot either:FILE`` scores it at the same-slot gate.
Measured in issue 35's ninth pass and not shipped (docs/benchmarks.md): at any bar that finds
one more in-sample supersession it ends more of LoCoMo's turns than the product alone.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
from lab.infer_training import SLOTS, generate
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier
from train_infer import HAND_SETS, _dedupe

from localmem.embed import make_embedder
from localmem.infer import conflict, reading

HERE = Path(__file__).resolve().parent
NONE = SLOTS.index("none")


def features(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The pair's features: what both vectors share and where they differ (symmetric)."""
    return np.hstack([a * b, np.abs(a - b)]).astype(np.float32)


def _value_of(e) -> str:
    return " ".join(t.lower() for t, g in zip(e.tokens, e.tags, strict=True) if g == "V")


def sample_pairs(examples, x: np.ndarray, rng: np.random.Generator, *, near: int = 10):
    """``(i, j, label)`` rows: label 1 when both fill the same slot (not none)."""
    y = np.array([SLOTS.index(e.slot) for e in examples])
    by_slot = {s: np.flatnonzero(y == s) for s in range(len(SLOTS))}
    by_value: dict[tuple[int, str], list[int]] = {}
    for i, e in enumerate(examples):
        v = _value_of(e)
        if y[i] != NONE and v:
            by_value.setdefault((int(y[i]), v), []).append(i)
    rows: list[tuple[int, int, int]] = []
    # the most similar sentences of another slot (look-alikes), in chunks
    hard = np.zeros(len(examples), int)
    for start in range(0, len(examples), 2048):
        sims = x[start : start + 2048] @ x.T
        block = y[start : start + 2048]
        sims[block[:, None] == y[None, :]] = -2.0  # same slot (and none x none): not a negative
        top = np.argpartition(-sims, near, axis=1)[:, :near]
        pick = rng.integers(0, near, len(top))
        hard[start : start + len(top)] = top[np.arange(len(top)), pick]
    for i in range(len(examples)):
        s = int(y[i])
        rows.append((i, int(hard[i]), 0))
        other = rng.choice(np.flatnonzero(y != s)) if s != NONE else rng.choice(len(examples))
        rows.append((i, int(other), int(s != NONE and y[other] == s)))
        if s == NONE:
            rows.append((i, int(rng.choice(by_slot[NONE])), 0))
            continue
        mates = by_slot[s][by_slot[s] != i]
        rows.append((i, int(rng.choice(mates)), 1))
        few = rng.choice(mates, size=min(20, len(mates)), replace=False)
        rows.append((i, int(few[np.argmin(x[few] @ x[i])]), 1))
        again = [j for j in by_value.get((s, _value_of(examples[i])), []) if j != i]
        if again:
            rows.append((i, int(rng.choice(again)), 1))
    return np.array(rows)


def embed(embedder, examples, cache: Path | None) -> np.ndarray:
    if cache and cache.exists():
        x = np.load(cache)
        if len(x) == len(examples):
            return x
    x = np.asarray(embedder.embed_batch([e.text for e in examples]), np.float32)
    if cache:
        np.save(cache, x)
    return x


def logit(hidden: dict, w: np.ndarray, b, xa: np.ndarray, xb: np.ndarray) -> np.ndarray:
    """The model's score of each pair (before calibration)."""
    f = features(xa, xb)
    if hidden:
        f = np.maximum(f @ hidden["pair_w1"] + hidden["pair_b1"], 0.0)
    return f @ w + b


def platt(z: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """``(a, b)`` with ``sigmoid(a * z + b)`` calibrated on held-out pairs (log loss)."""
    model = LogisticRegression(C=1e6, max_iter=1000)
    model.fit(z.reshape(-1, 1), y)
    return float(model.coef_[0, 0]), float(model.intercept_[0])


def product(reader: reading.Reader, xa: np.ndarray, xb: np.ndarray) -> np.ndarray:
    """The shipped same-slot score of each pair: the product of the slot distributions."""
    pa, pb = reader.slot_probs(xa), reader.slot_probs(xb)
    return (pa * pb).sum(axis=1) - pa[:, NONE] * pb[:, NONE]


def write(out: Path, arrays: dict[str, np.ndarray]) -> None:
    """An ``.npz`` whose bytes depend on the arrays only (a fixed timestamp in the zip)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name in sorted(arrays):
            data = io.BytesIO()
            np.lib.format.write_array(data, np.asarray(arrays[name]), allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data.getvalue())
    out.write_bytes(buf.getvalue())


def hand_check(model_score, reader, embedder) -> None:
    """Both scores on the in-sample hand-written supersessions (dev..dev5)."""
    for name in HAND_SETS:
        dialogues = json.loads((HERE / f"lab/data/infer/{name}.json").read_text())["dialogues"]
        for dlg in dialogues:
            turns = {
                f"{s}.{t}": text
                for s, session in enumerate(dlg["sessions"])
                for t, text in enumerate(session["turns"])
            }
            for old, new in dlg["supersede"]:
                xa, xb = embedder.embed_batch([turns[old], turns[new]])
                ra, rb = reader.read(turns[old], xa), reader.read(turns[new], xb)
                prod = conflict.same_slot(reader, rb, ra, xb, xa)
                pair = model_score(xa[None], xb[None])[0]
                print(
                    f"{name} {dlg['id']} product {prod:.3f} pair {pair:.3f} | "
                    f"{turns[old][:60]} -> {turns[new][:60]}"
                )


def fit(args, x: np.ndarray, rows: np.ndarray) -> tuple[dict, np.ndarray, np.float32]:
    """The pair model's weights: ``(hidden layer or {}, output weights, output bias)``."""
    fx = features(x[rows[:, 0]], x[rows[:, 1]])
    if args.hidden:
        # a small MLP (relu): what two facts share that a linear score of a*b cannot say
        mlp = MLPClassifier(
            hidden_layer_sizes=(args.hidden,),
            alpha=args.alpha,
            early_stopping=True,
            random_state=args.seed,
            max_iter=200,
        )
        mlp.fit(fx, rows[:, 2])
        hidden = {
            "pair_w1": mlp.coefs_[0].astype(np.float32),
            "pair_b1": mlp.intercepts_[0].astype(np.float32),
        }
        w = mlp.coefs_[1][:, 0].astype(np.float32)
        b = np.float32(mlp.intercepts_[1][0])
    else:
        model = LogisticRegression(C=args.c, max_iter=3000)
        model.fit(fx, rows[:, 2])
        hidden = {}
        w, b = model.coef_[0].astype(np.float32), np.float32(model.intercept_[0])
    return hidden, w, b


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-slot", type=int, default=900)
    parser.add_argument("--seed", type=int, default=35)
    parser.add_argument("--c", type=float, default=1.0)
    parser.add_argument("--hidden", type=int, default=0, help="an MLP of this width (0: linear)")
    parser.add_argument("--alpha", type=float, default=1e-4)
    parser.add_argument("--cache", default=None, help="the training sentences' embeddings")
    parser.add_argument("--out", required=True)
    parser.add_argument("--hand-check", action="store_true")
    args = parser.parse_args()
    started = time.time()
    embedder = make_embedder()
    reader = reading.shipped()
    train = _dedupe(generate(args.per_slot, seed=args.seed))
    x = embed(embedder, train, Path(args.cache) if args.cache else None)
    seen = {e.text.lower() for e in train}
    valid = [
        e
        for e in _dedupe(generate(max(100, args.per_slot // 5), seed=args.seed + 1000))
        if e.text.lower() not in seen
    ]
    xv = np.asarray(embedder.embed_batch([e.text for e in valid]), np.float32)
    rng = np.random.default_rng(args.seed)
    rows = sample_pairs(train, x, rng)
    vrows = sample_pairs(valid, xv, np.random.default_rng(args.seed + 1000))
    print(
        f"{len(train)} sentences, {len(rows)} pairs ({rows[:, 2].mean():.2f} same); "
        f"held-out {len(valid)} sentences, {len(vrows)} pairs",
        file=sys.stderr,
    )
    hidden, w, b = fit(args, x, rows)
    zv = logit(hidden, w, b, xv[vrows[:, 0]], xv[vrows[:, 1]])
    a, c = platt(zv, vrows[:, 2])
    qv = 1.0 / (1.0 + np.exp(-(a * zv + c)))
    pv = product(reader, xv[vrows[:, 0]], xv[vrows[:, 1]])
    pos, neg = vrows[:, 2] == 1, vrows[:, 2] == 0
    false_pass = float((pv[neg] >= conflict.SAME_SLOT_P).mean())
    bar = float(np.quantile(qv[neg], 1.0 - false_pass))
    report = {
        "pairs": len(rows),
        "held-out pairs": len(vrows),
        "product: same-slot pairs passing SAME_SLOT_P": round(float((pv[pos] >= 0.05).mean()), 4),
        "product: other-slot pairs passing": round(false_pass, 4),
        "pair: accuracy at .5": round(float(((qv >= 0.5) == pos).mean()), 4),
        "pair: bar at the product's false pass rate": round(bar, 4),
        "pair: same-slot pairs passing that bar": round(float((qv[pos] >= bar).mean()), 4),
        "pair: log loss": round(float(-np.mean(np.log(np.where(pos, qv, 1 - qv).clip(1e-9)))), 4),
    }
    meta = {
        "embedder": embedder.name,
        "dim": embedder.dim,
        "seed": args.seed,
        "per_slot": args.per_slot,
        "c": args.c,
        "hidden": args.hidden,
        "alpha": args.alpha,
        "calibration": "platt on held-out generated pairs",
        "validation": report,
    }
    arrays = {
        **hidden,
        "pair_w": w,
        "pair_b": np.array(b, np.float32),
        "platt": np.array([a, c], np.float32),
        "bar": np.array(bar, np.float32),
        "meta": np.array(json.dumps(meta, sort_keys=True)),
    }
    out = Path(args.out)
    write(out, arrays)
    print(json.dumps(report, indent=1))
    print(f"wrote {out} ({out.stat().st_size} bytes) in {time.time() - started:.0f} s")
    if args.hand_check:

        def score(xa, xb):
            z = logit(hidden, w, b, xa, xb)
            return 1.0 / (1.0 + np.exp(-(a * z + c)))

        hand_check(score, reader, embedder)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
