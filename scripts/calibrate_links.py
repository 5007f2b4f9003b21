"""Calibrate model-free evolution links (issue 35) on hand-labelled related / unrelated pairs.

Usage:
    python scripts/calibrate_links.py

Embeds the pairs of ``scripts/lab/data/links/dev.json`` with the default embedder and picks the
cosine from which two memories are linked: the threshold with the best balanced accuracy on
dev (ties: the higher one, fewer links). Prints it with its figures on dev (in-sample) and on
``heldout.json`` (never used to choose). The chosen value goes into
``CALIBRATED`` of ``localmem/evolution/modelfree.py`` by hand, so a change is a reviewed commit.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from localmem.embed import make_embedder

HERE = Path(__file__).resolve().parent


def cosines(embedder, half: str) -> tuple[np.ndarray, np.ndarray]:
    pairs = json.loads((HERE / "lab/data/links" / f"{half}.json").read_text())["pairs"]
    a = embedder.embed_batch([p["a"] for p in pairs])
    b = embedder.embed_batch([p["b"] for p in pairs])
    return (a * b).sum(axis=1), np.array([p["related"] for p in pairs])


def figures(sims: np.ndarray, related: np.ndarray, t: float) -> dict[str, float]:
    linked = sims >= t
    tpr = (linked & related).sum() / max(related.sum(), 1)
    tnr = (~linked & ~related).sum() / max((~related).sum(), 1)
    return {
        "balanced accuracy": float((tpr + tnr) / 2),
        "related linked": float(tpr),
        "unrelated linked": float(1 - tnr),
    }


def main() -> int:
    embedder = make_embedder()
    dev, dev_y = cosines(embedder, "dev")
    held, held_y = cosines(embedder, "heldout")
    best, best_t = -1.0, 0.0
    for t in np.round(np.arange(0.1, 0.9, 0.01), 2):
        score = figures(dev, dev_y, t)["balanced accuracy"]
        if score >= best:
            best, best_t = score, float(t)
    print(f"embedder {embedder.name}; chosen link similarity {best_t:.2f}")
    for name, (s, y) in {"dev (in-sample)": (dev, dev_y), "held-out": (held, held_y)}.items():
        f = figures(s, y, best_t)
        print(f"  {name}: " + ", ".join(f"{k} {v:.2f}" for k, v in f.items()))
        for t in (0.3, 0.55):
            g = figures(s, y, t)
            print(f"    at {t:.2f}: " + ", ".join(f"{k} {v:.2f}" for k, v in g.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
