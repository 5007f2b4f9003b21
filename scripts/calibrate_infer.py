"""Calibrate the model-free update decision (issue 35): its two thresholds, on two dev sources.

Usage:
    python scripts/calibrate_infer.py --locomo /path/to/locomo_dev.json [--conversations 1]
        [--grid 0.1:0.1,0.2:0.3] [--max-background 0.01] [--reader reading.npz]

For each ``confidence:same_slot`` pair of the grid (``localmem.infer.conflict.CONFIDENCE`` and
``SAME_SLOT_P``):

- the hand-written **dev** dialogues (``scripts/lab/data/infer/dev.json``, ``dev2.json`` and
  ``dev3.json``, pooled) stored with ``infer=True``: update accuracy and false supersession
  (``lab.infer_eval``);
- the first ``--conversations`` LoCoMo dev conversations stored turn by turn with
  ``infer=True``: the share of turns superseded. LoCoMo's people rarely change a fact, so this
  is the decision's background rate of ending what is still true (and evidence a search then
  cannot find).

The pair chosen has the best dev update accuracy among those whose background rate is at most
``--max-background`` and whose dev false supersession is at most 0.02. The held-out dialogues
are never read (``--sets`` pools other in-sample sets: dev4, dev5; never dev6..dev9). The
chosen values go into ``localmem/infer/conflict.py`` by hand. ``--reader``
calibrates a candidate reader (a ``reading.npz`` of ``scripts/train_infer.py``) in place of the
shipped one.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np
from lab.infer_eval import Run, ingest, ingest_conversation, load_dialogues, rates, score
from lab.locomo import load_locomo

from localmem import Memory
from localmem.embed import make_embedder
from localmem.infer import conflict, reading

HERE = Path(__file__).resolve().parent
#: the hand-written dev sets pooled by default (never the held-out half)
DEV_SETS = ("dev", "dev2", "dev3")
#: what ``--sets`` may pool: the in-sample sets (dev6..dev9 are out-of-sample checks)
IN_SAMPLE = (*DEV_SETS, "dev4", "dev5")


def dev_rates(embedder, tmp: Path, sets: tuple[str, ...] = DEV_SETS) -> dict[str, float]:
    dialogues = [d for name in sets for d in load_dialogues(HERE / f"lab/data/infer/{name}.json")]
    run = Run("infer")
    with Memory.open(tmp / "dev", embedder=embedder) as memory:
        for dialogue in dialogues:
            ingest(memory, dialogue, infer=True, run=run)
        score(memory, dialogues, run)
    return rates(run)


def background(embedder, tmp: Path, path: str, conversations: int) -> float:
    turns = superseded = 0
    with Memory.open(tmp / "locomo", embedder=embedder) as memory:
        for conv in load_locomo(path)[:conversations]:
            turns += ingest_conversation(memory, conv)
        superseded = sum(m.valid_to is not None for m in memory.list(limit=1_000_000))
    return superseded / max(turns, 1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locomo", required=True)
    parser.add_argument("--conversations", type=int, default=1)
    parser.add_argument("--grid", default="0.1:0.1,0.15:0.2,0.2:0.3,0.3:0.3,0.4:0.4")
    parser.add_argument("--max-background", type=float, default=0.01)
    parser.add_argument("--reader", default=None, help="a candidate reading.npz")
    parser.add_argument("--sets", default=",".join(DEV_SETS), help="in-sample dev sets pooled")
    args = parser.parse_args()
    sets = tuple(args.sets.split(","))
    if not set(sets) <= set(IN_SAMPLE):
        raise SystemExit(f"--sets pools only in-sample sets ({', '.join(IN_SAMPLE)})")
    if args.reader:
        candidate = reading.Reader(dict(np.load(args.reader, allow_pickle=False)))
        reading.shipped = lambda: candidate
    embedder = make_embedder()
    rows = []
    for pair in args.grid.split(","):
        confidence, same = (float(x) for x in pair.split(":"))
        conflict.CONFIDENCE, conflict.SAME_SLOT_P = confidence, same
        with tempfile.TemporaryDirectory() as tmp_name:
            tmp = Path(tmp_name)
            dev = dev_rates(embedder, tmp, sets)
            rate = background(embedder, tmp, args.locomo, args.conversations)
        rows.append((confidence, same, dev["update accuracy"], dev["false supersession"], rate))
        print(
            f"confidence {confidence:.2f} same-slot {same:.2f}: dev update accuracy "
            f"{dev['update accuracy']:.3f}, false supersession {dev['false supersession']:.3f}; "
            f"LoCoMo turns superseded {rate:.3f}",
            flush=True,
        )
    fit = [r for r in rows if r[4] <= args.max_background and r[3] <= 0.02]
    if fit:
        best = max(fit, key=lambda r: (r[2], r[0]))
        print(f"chosen: confidence {best[0]:.2f}, same-slot {best[1]:.2f}")
    else:
        print("no pair of the grid meets the bounds")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
