"""The model-free update decision's own time (``conflict.verdicts``), this tree's against other
commits', side by side in one run on the same inputs.

Usage:
    python -P scripts/bench_update_decision.py [--base REV ...] [--neighbours 10]
        [--conversations 2] [--locomo PATH] [--out docs/benchmarks.md]

Inputs: LoCoMo turns (each turn, as stored, against its ``--neighbours`` nearest earlier turns
of its conversation by the MiniLM cosine) and the turns of the in-sample hand-written dev sets
(dev..dev5, pooled: short chat, most pairs read past the first checks). Each commit's
``localmem/infer/conflict.py`` is imported beside today's (``lab.at_commit``: the reader and
the rest are today's), every fact's verdicts are checked identical, then each decides every fact
in turn, in alternating order, six rounds (the median). The shipped reader caches readings by
text, so three loads: ``warm`` (every text read before), ``fact`` (the new fact read afresh,
its neighbours cached: the add path's usual case), ``cold`` (nothing cached). Writes the
``update-decision-cost`` section.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
from lab.at_commit import module_at
from lab.locomo import load_locomo
from lab.report import provenance, write_section

from localmem.embed import make_embedder
from localmem.infer import conflict
from localmem.infer.reading import shipped

HERE = Path(__file__).resolve().parent
DEV = ("dev", "dev2", "dev3", "dev4", "dev5")
LOADS = ("warm", "fact", "cold")
ROUNDS = 6


def dev_turns() -> list[str]:
    turns: list[str] = []
    for name in DEV:
        data = json.loads((HERE / f"lab/data/infer/{name}.json").read_text(encoding="utf-8"))
        for dialogue in data["dialogues"]:
            for session in dialogue["sessions"]:
                turns += session["turns"]
    return turns


def cases(embedder, groups: list[list[str]], k: int) -> list[tuple]:
    """(fact, vector, its k nearest earlier texts with their vectors) for every text but the
    first of each group."""
    out = []
    for texts in groups:
        vectors = np.asarray(embedder.embed_batch(texts), np.float32)
        for t in range(1, len(texts)):
            near = np.argsort(-(vectors[:t] @ vectors[t]))[:k]
            out.append((texts[t], vectors[t], [(texts[j], vectors[j]) for j in near]))
    return out


def _same(a: list, b: list) -> bool:
    def key(found: list) -> list:
        return [v if isinstance(v, str) else (v.index, v.confidence, v.reason) for v in found]

    return key(a) == key(b)


def timed(module, reader, facts: list[tuple], load: str) -> float:
    start = time.perf_counter()
    for fact, vector, memories in facts:
        if load == "cold":
            reader._cache.clear()
        elif load == "fact":
            reader._cache.pop(fact, None)
        module.verdicts(reader, fact, vector, memories)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", action="append", default=None, help="a commit (repeatable)")
    parser.add_argument("--neighbours", type=int, default=10)
    parser.add_argument("--conversations", type=int, default=2)
    parser.add_argument("--locomo", default="/work/shared/data/locomo/locomo_dev.json")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    bases = args.base or ["a32c7d7"]
    modules = {b: module_at(b, "localmem/infer/conflict.py") for b in bases}
    modules["this tree"] = conflict
    embedder, reader = make_embedder(), shipped()
    convs = load_locomo(args.locomo)[: args.conversations]
    sets = {
        f"LoCoMo, {len(convs)} conversations": [[t.content for t in c.turns] for c in convs],
        "dev..dev5 turns": [dev_turns()],
    }
    rows = []
    for name, groups in sets.items():
        facts = cases(embedder, groups, args.neighbours)
        for fact, vector, memories in facts:
            found = [m.verdicts(reader, fact, vector, memories) for m in modules.values()]
            if not all(_same(found[0], f) for f in found[1:]):
                raise SystemExit(f"verdicts differ on {name}")
        for load in LOADS:
            took: dict[str, list[float]] = {m: [] for m in modules}
            for r in range(ROUNDS):
                order = list(modules.items())
                for label, module in order if r % 2 == 0 else order[::-1]:
                    took[label].append(timed(module, reader, facts, load))
            ms = {m: 1e3 * float(np.median(t)) / len(facts) for m, t in took.items()}
            first = ms[bases[0]]
            cells = " | ".join(f"{v:.3f} ({v / first:.2f}x)" for v in ms.values())
            loadavg = os.getloadavg()[0]
            rows.append(f"| {name} ({len(facts)} facts) | {load} | {cells} | {loadavg:.2f} |")
            print(rows[-1], flush=True)
    head = " | ".join(modules)
    table = [
        f"| inputs | readings cached | {head} | load |",
        "|---|---|" + "---|" * len(modules) + "---|",
        *rows,
    ]
    command = "python -P scripts/bench_update_decision.py " + " ".join(
        [*(f"--base {b}" for b in bases), f"--neighbours {args.neighbours}"]
    )
    text = "\n".join(
        [
            f"Each fact against its {args.neighbours} nearest earlier turns; verdicts identical "
            f"across the commits on every fact. Milliseconds per fact (x {bases[0]}'s), the "
            f"median of {ROUNDS} rounds; load: the 1-minute load average after each row.",
            "",
            *table,
            "",
            provenance(command),
        ]
    )
    if args.out:
        write_section(args.out, "update-decision-cost", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
