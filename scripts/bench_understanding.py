"""Model-free update detection that generalises (issue 35): the hand-written sets, the shipped
sets, LoCoMo and the add latency, raw against ``infer=True``, side by side in one run.

Usage:
    python scripts/bench_understanding.py [--locomo /path/to/locomo_dev.json]
        [--out docs/benchmarks.md] [--json results.json] [--dev-only [--reader reading.npz]]

Sets (each stored raw and with ``infer=True``, model-free, in fresh stores):

- ``written dev``: ``scripts/lab/data/infer/dev.json``, hand-written; the thresholds of
  ``localmem.infer.conflict`` were calibrated on it, so its figures are **in-sample**;
- ``written dev2``: ``scripts/lab/data/infer/dev2.json``, 16 more dialogues of fresh phrasings
  written (1d0fae4) after the first tuning; its first figures were out of sample, two false
  supersessions in it were then studied and fixed, so it is in-sample too;
- ``written dev3``: ``scripts/lab/data/infer/dev3.json``, 26 dialogues of chat registers
  (terse, emoji, passive, fronted time phrases, pronouns, noise turns) written (26294f8) before
  the third pass; its first figures (update .556, false supersession 0) were out of sample,
  its misses were then studied, so it is in-sample too;
- ``written dev4``: ``scripts/lab/data/infer/dev4.json``, 25 dialogues of other registers
  (formal notes, status updates, questions answered, handovers, unfamiliar names, pronouns,
  look-alikes) written (e42ddf4) before the fourth pass and kept out of its tuning: the
  check that a change generalises (its first run printed its misses once; no change was
  made for them);
- ``written dev5``: ``scripts/lab/data/infer/dev5.json``, 19 dialogues (terse role changes,
  handovers, favourites said without "favourite", values without a frame, look-alikes) written
  before the fifth pass, its first run with main's code; kept out of tuning like dev4;
- ``written dev6``: ``scripts/lab/data/infer/dev6.json``, 32 dialogues (people and projects,
  fresh phrasings of every slot the issue lists, noise turns, ten look-alikes) written and
  committed (0a76901) before the sixth pass ran anything against it; its first run, with
  main's code: update .545, false supersession .038; the out-of-sample check of the ensemble
  readers, never tuned on (its misses were not printed);
- ``written dev7``: ``scripts/lab/data/infer/dev7.json``, 29 dialogues (people text: terse,
  casual, facts in a subordinate clause, a third party's facts, project facts in a standup
  tone, noise turns, ten look-alikes) written and committed before the seventh pass ran
  anything against it; with dev6, its out-of-sample check (misses never printed);
- ``written dev8``: ``scripts/lab/data/infer/dev8.json``, 28 dialogues (messages a user types
  to their assistant: "note: ..", "fyi ..", "remember that ..", some without a speaker; work
  tools and teams, family and health; noise turns; ten look-alikes) written and committed
  before the eighth pass ran anything against it; out of sample with dev6 and dev7;
- ``written dev9``: ``scripts/lab/data/infer/dev9.json``, 30 dialogues shaped as the unseen
  check (22 supersessions, 8 look-alikes; chat lines of every slot the issue names, endings,
  noise turns and sessions) written by the lead and committed (09b3ec2) before the tenth pass
  ran anything against it; out of sample with dev6, dev7 and dev8;
- ``written held-out``: ``scripts/lab/data/infer/heldout.json``, hand-written in the same
  commit (5f01e5f) and never used to change anything: the honest figure;
- ``shipped dialogues`` / ``shipped held-out``: ``localmem/infer/data/`` (issue 20's sets).

The add latency is every dialogue turn's ``add`` in this run, raw and inferred (p50, p95 and
their ratio). ``--dev-only`` leaves the written held-out half out (for iterating: the held-out
half is run once, at the end) and prints the figures without writing the section. With
``--locomo``, LoCoMo dev evidence recall (hybrid search, no model) with
every turn stored raw and inferred (``bench_infer.locomo``). Writes the ``understanding``
section.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np
from bench_infer import locomo
from calibrate_links import cosines, figures
from lab import attributes_eval
from lab.infer_eval import load_dialogues, rates, run_dialogues, table
from lab.report import provenance, write_section
from lab.stats import percentile

from localmem import Memory
from localmem.attributes.labels import get_label_set
from localmem.attributes.modelfree import ModelFreeMiner
from localmem.config import AttributeConfig
from localmem.embed import make_embedder
from localmem.evolution.modelfree import UNCALIBRATED, link_similarity_for
from localmem.infer import reading

HERE = Path(__file__).resolve().parent
SETS = {
    "written dev (in-sample)": HERE / "lab/data/infer/dev.json",
    "written dev2 (in-sample)": HERE / "lab/data/infer/dev2.json",
    "written dev3 (in-sample)": HERE / "lab/data/infer/dev3.json",
    "written dev4 (generalisation check)": HERE / "lab/data/infer/dev4.json",
    "written dev5 (generalisation check)": HERE / "lab/data/infer/dev5.json",
    "written dev6 (generalisation check)": HERE / "lab/data/infer/dev6.json",
    "written dev7 (generalisation check)": HERE / "lab/data/infer/dev7.json",
    "written dev8 (generalisation check)": HERE / "lab/data/infer/dev8.json",
    "written dev9 (generalisation check)": HERE / "lab/data/infer/dev9.json",
    "written held-out": HERE / "lab/data/infer/heldout.json",
    "shipped dialogues": None,
    "shipped held-out": None,
}
SHIPPED = {"shipped dialogues": "dialogues", "shipped held-out": "heldout"}
#: issue 35's targets on the written held-out half: (metric, bound, "max"/"min")
TARGETS = (
    ("update accuracy", 0.70, "min"),
    ("false supersession", 0.05, "max"),
    ("stale@5 (now)", 0.25, "max"),
    ("duplicate rate", 0.0, "max"),
    ("past recall@5 (as_of)", 0.95, "min"),
)


def attributes_section(embedder) -> tuple[str, dict]:
    """Topic and intent on the 100 hand-labelled memories, per label set (model-free)."""
    halves = {h: attributes_eval.load(h) for h in ("dev", "heldout")}
    halves["all 100"] = halves["dev"] + halves["heldout"]
    rows = [
        "| label set | memories | topic given | topic accuracy (given) | software topic on "
        "personal chat | intent given | intent accuracy (given) |",
        "|---|---|---|---|---|---|---|",
    ]
    data: dict = {}
    for name in ("everyday", "software", "conversation"):
        miner = ModelFreeMiner(embedder, get_label_set(name), AttributeConfig())
        for half, memories in halves.items():
            m = attributes_eval.score(memories, attributes_eval.predict(miner, memories))
            data[f"{name} {half}"] = m
            shown = "default, per memory" if name == "everyday" else "forced"
            rows.append(
                f"| {name} ({shown}), {half} | {m['memories']} | {m['topic given']:.2f} | "
                f"{m['topic accuracy (given)']:.3f} | {m['software topic on personal chat']} | "
                f"{m['intent given']:.2f} | {m['intent accuracy (given)']:.3f} |"
            )
    return "\n".join(rows), data


def links_section(embedder) -> tuple[str, dict]:
    """Model-free links on the hand-labelled pairs: the calibrated bar against the old one."""
    bar = link_similarity_for(embedder.name, None)
    rows = [
        "| pairs | link similarity | related linked | unrelated linked | balanced accuracy |",
        "|---|---|---|---|---|",
    ]
    data: dict = {}
    for half in ("dev", "heldout"):
        sims, related = cosines(embedder, half)
        for t, what in ((bar, "calibrated"), (UNCALIBRATED, "before (no shared phrase)")):
            f = figures(sims, related, t)
            data[f"{half} {t:.2f}"] = f
            label = "dev (in-sample)" if half == "dev" else "held-out"
            rows.append(
                f"| {label} | {t:.2f} ({what}) | {f['related linked']:.2f} | "
                f"{f['unrelated linked']:.2f} | {f['balanced accuracy']:.2f} |"
            )
    return "\n".join(rows), data


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locomo", help="locomo10.json-shaped file (LoCoMo dev)")
    parser.add_argument("--out", default="docs/benchmarks.md")
    parser.add_argument("--json", default=None)
    parser.add_argument(
        "--dev-only",
        action="store_true",
        help="leave the written held-out half out; print, do not write the section",
    )
    parser.add_argument(
        "--reader",
        default=None,
        help="a candidate reading.npz (scripts/train_infer.py) in place of the shipped one; "
        "only with --dev-only",
    )
    args = parser.parse_args()
    if args.reader:
        if not args.dev_only:
            parser.error("--reader needs --dev-only: a candidate never meets the held-out half")
        candidate = reading.Reader(dict(np.load(args.reader, allow_pickle=False)))
        reading.shipped = lambda: candidate
    sets = {n: p for n, p in SETS.items() if not (args.dev_only and n == "written held-out")}
    embedder = make_embedder()
    load = os.getloadavg()
    out: dict = {}
    sections: list[str] = []
    add_ms: dict[str, list[float]] = {"raw": [], "infer": []}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        for n, (name, path) in enumerate(sets.items()):
            dialogues = (
                load_dialogues(path) if path is not None else load_dialogues(name=SHIPPED[name])
            )
            runs = run_dialogues(
                lambda s, n=n: Memory.open(tmp / f"{n}-{s}", embedder=embedder), dialogues
            )
            for run_name, run in runs.items():
                add_ms[run_name] += run.add_ms
            out[name] = {r: {**rates(run), **run.counts} for r, run in runs.items()}
            sections += [
                f"**{name}**: {len(dialogues)} dialogues, "
                f"{sum(len(s['turns']) for d in dialogues for s in d['sessions'])} turns, "
                f"{sum(len(d['supersede']) for d in dialogues)} labelled supersessions, "
                f"{sum(not d['supersede'] for d in dialogues)} dialogues that must not "
                "supersede.",
                "",
                table(runs),
                "",
            ]
            print(f"{name} done", file=sys.stderr)
        judged = "written dev (in-sample)" if args.dev_only else "written held-out"
        held = out[judged]["infer"]
        rows = [f"| target ({judged}) | bound | measured | met |", "|---|---|---|---|"]
        for metric, bound, kind in TARGETS:
            value = held[metric]
            met = value >= bound if kind == "min" else value <= bound
            sign = ">=" if kind == "min" else "<="
            rows.append(
                f"| {metric} | {sign} {bound:.2f} | {value:.3f} | {'yes' if met else 'no'} |"
            )
        p95 = {k: percentile(v, 95) for k, v in add_ms.items()}
        p50 = {k: percentile(v, 50) for k, v in add_ms.items()}
        ratio = p95["infer"] / p95["raw"]
        rows.append(
            f"| add p95, infer / raw (all {len(add_ms['raw'])} turns above) | <= 2.00 | "
            f"{ratio:.2f} ({p95['infer']:.1f} / {p95['raw']:.1f} ms; p50 {p50['infer']:.1f} / "
            f"{p50['raw']:.1f}) | {'yes' if ratio <= 2 else 'no'} |"
        )
        out["add_ms"] = {"p50": p50, "p95": p95, "ratio_p95": ratio}
        attr_md, out["attributes"] = attributes_section(embedder)
        links_md, out["links"] = links_section(embedder)
        sections = [
            *rows,
            "",
            *sections,
            "Attributes on the 100 hand-labelled memories (scripts/lab/data/attributes; the "
            "abstention margins were calibrated on dev):",
            "",
            attr_md,
            "",
            "Evolution links on the 60 hand-labelled pairs (scripts/lab/data/links; the bar was "
            "calibrated on dev). Before this change a shared key phrase linked from 0.30, so "
            "the old rule links at least what its row shows:",
            "",
            links_md,
            "",
        ]
        if args.locomo:
            md, data = locomo(args.locomo, embedder, tmp)
            out["locomo"] = data
            sections += ["LoCoMo dev evidence recall (hybrid search, no model):", "", md]
    after = os.getloadavg()
    command = "python scripts/bench_understanding.py" + (
        f" --locomo {args.locomo}" if args.locomo else ""
    )
    body = "\n".join(
        [
            "## Model-free updates that generalise (issue 35)",
            "",
            provenance(command),
            f"- load average (1 min) before / after: {load[0]:.2f} / {after[0]:.2f}",
            "- model-free (no engine); the default embedder; each set stored raw and inferred "
            "in fresh stores; the written sets were committed in 5f01e5f before any tuning",
            "",
            *sections,
        ]
    )
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2, default=str))
    if not args.dev_only:
        write_section(args.out, "understanding", body)
    print(body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
