"""Fit the model-free fact reader (issue 35) and write ``localmem/infer/data/reading.npz``.

Usage:
    python scripts/train_infer.py [--per-slot 900] [--seed 35]
        [--out localmem/infer/data/reading.npz]

Generates sentences (``lab.infer_training``: slot types x paraphrase frames x values x
subjects, each token tagged), embeds them with the store's default embedder, and fits:

- the slot classifier: multinomial logistic regression over the embedding;
- the ending classifier: logistic regression over the embedding and the negation cues;
- the token tagger: multinomial logistic regression over each token's features
  (``localmem.infer.reading.token_features``); features seen fewer than 3 times are dropped.

Prints the accuracy of each on a generated validation split (other seed). The hand-written
dialogues are never read here. Deterministic for a seed and an embedder.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
from lab.infer_training import SINGLE_VALUED, SLOTS, generate
from sklearn.linear_model import LogisticRegression

from localmem.embed import make_embedder
from localmem.infer.reading import TAGS, cue_vector, token_features


def _dedupe(examples):
    seen, out = set(), []
    for e in examples:
        if e.text.lower() not in seen:
            seen.add(e.text.lower())
            out.append(e)
    return out


def fit_tagger(examples, *, min_count: int = 3, c: float = 1.0):
    counts: Counter[str] = Counter()
    rows = []
    for e in examples:
        feats = token_features(e.tokens)
        rows.append(feats)
        for f in feats:
            counts.update(f)
    vocab = sorted(f for f, n in counts.items() if n >= min_count)
    index = {f: i for i, f in enumerate(vocab)}
    from scipy.sparse import csr_matrix

    data, ind, ptr, y = [], [], [0], []
    for e, feats in zip(examples, rows, strict=True):
        for f, tag in zip(feats, e.tags, strict=True):
            cols = sorted({index[x] for x in f if x in index})
            ind += cols
            data += [1.0] * len(cols)
            ptr.append(len(ind))
            y.append(TAGS.index(tag))
    x = csr_matrix((data, ind, ptr), shape=(len(y), len(vocab)), dtype=np.float32)
    model = LogisticRegression(C=c, max_iter=300)
    model.fit(x, np.array(y))
    # coef_ rows follow model.classes_ (every tag occurs, so they are 0..4 in order)
    assert list(model.classes_) == list(range(len(TAGS)))
    return vocab, model.coef_.T.astype(np.float32), model.intercept_.astype(np.float32)


def tag_accuracy(vocab, w, b, examples) -> dict[str, float]:
    index = {f: i for i, f in enumerate(vocab)}
    right = total = 0
    per = Counter()
    per_total = Counter()
    for e in examples:
        for feats, tag in zip(token_features(e.tokens), e.tags, strict=True):
            s = b.copy()
            idx = [index[f] for f in feats if f in index]
            if idx:
                s = s + w[idx].sum(axis=0)
            got = TAGS[int(s.argmax())]
            right += got == tag
            total += 1
            per_total[tag] += 1
            per[tag] += got == tag
    return {"all": right / total, **{t: per[t] / per_total[t] for t in TAGS if per_total[t]}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-slot", type=int, default=900)
    parser.add_argument("--seed", type=int, default=35)
    parser.add_argument("--out", default="localmem/infer/data/reading.npz")
    args = parser.parse_args()
    started = time.time()
    train = _dedupe(generate(args.per_slot, seed=args.seed))
    valid = _dedupe(generate(max(100, args.per_slot // 5), seed=args.seed + 1000))
    seen = {e.text.lower() for e in train}
    valid = [e for e in valid if e.text.lower() not in seen]
    print(f"{len(train)} training and {len(valid)} validation sentences", file=sys.stderr)
    embedder = make_embedder()
    xt = embedder.embed_batch([e.text for e in train])
    xv = embedder.embed_batch([e.text for e in valid])
    print(f"embedded with {embedder.name} in {time.time() - started:.0f} s", file=sys.stderr)

    yt = np.array([SLOTS.index(e.slot) for e in train])
    yv = np.array([SLOTS.index(e.slot) for e in valid])
    slot_model = LogisticRegression(C=4.0, max_iter=2000)
    slot_model.fit(xt, yt)
    assert list(slot_model.classes_) == list(range(len(SLOTS)))
    slot_acc = float((slot_model.predict(xv) == yv).mean())

    def ending_x(examples, vectors):
        return np.hstack([vectors, np.stack([cue_vector(e.tokens) for e in examples])])

    et = np.array([e.ending for e in train])
    ev = np.array([e.ending for e in valid])
    end_model = LogisticRegression(C=4.0, max_iter=2000, class_weight="balanced")
    end_model.fit(ending_x(train, xt), et)
    end_acc = float((end_model.predict(ending_x(valid, xv)) == ev).mean())

    vocab, tag_w, tag_b = fit_tagger(train)
    tag_acc = tag_accuracy(vocab, tag_w, tag_b, valid)

    meta = {
        "version": 1,
        "embedder": embedder.name,
        "dim": int(xt.shape[1]),
        "slots": list(SLOTS),
        "single_valued": list(SINGLE_VALUED),
        "tags": list(TAGS),
        "features": vocab,
        "trained_on": {"sentences": len(train), "per_slot": args.per_slot, "seed": args.seed},
        "validation": {
            "sentences": len(valid),
            "slot accuracy": round(slot_acc, 4),
            "ending accuracy": round(end_acc, 4),
            "tag accuracy": {k: round(v, 4) for k, v in tag_acc.items()},
        },
    }
    out = Path(args.out)
    np.savez_compressed(
        out,
        meta=np.array(json.dumps(meta)),
        slot_w=slot_model.coef_.astype(np.float32),
        slot_b=slot_model.intercept_.astype(np.float32),
        end_w=end_model.coef_[0].astype(np.float32),
        end_b=np.array(end_model.intercept_[0], np.float32),
        tag_w=tag_w.astype(np.float16),
        tag_b=tag_b,
    )
    print(json.dumps(meta["validation"], indent=1))
    print(f"wrote {out} ({out.stat().st_size // 1024} KiB) in {time.time() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
