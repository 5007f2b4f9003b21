"""Model-free readers side by side on the dev dialogues (issue 35), and why they miss.

Usage:
    python scripts/compare_readers.py [--reader NAME=PATH ...] [--sets dev,dev4,...]
        [--misses] [--json results.json]

Each reader (a ``reading.npz`` written by ``scripts/train_infer.py``; ``shipped`` is the one in
the package) stands in for the shipped reader while every chosen set is stored with
``infer=True`` in a fresh store (``lab.infer_eval``, as ``bench_understanding.py`` does; the
decision's rules and thresholds are the package's). Prints one row per reader and set: update
accuracy (supersessions found / labelled), false supersession (memories ended that should
stay / memories that should), stale@5 and answer@5 for "now", duplicates, past recall@5.

``--misses`` also prints, per set and reader, each labelled supersession that was missed and
each false one, with the reader's reading of both texts (its likeliest slots, ending
probability, subject, aspect, value, ended value), so the next pass can see why.

``--gates`` says, for every labelled supersession missed, which gate of
``localmem.infer.conflict`` rejected it (:data:`~localmem.infer.conflict.GATES`: none,
size, same-slot, old-ending, subject, aspect, value, confidence), or that the old memory
never reached the decision (``not-neighbour``: not among the memories searched;
``no-decision``: the rules were not asked, e.g. no neighbour at all; ``chosen-other``: it
was ended, but another memory was the one picked), and prints the counts per set. It
prints no text, so it may be run on the out-of-sample sets too (dev6..dev9;
``--misses`` refuses them).

``--decision PATH[:MODE]`` scores a learned combination of the decision's evidence
(``scripts/fit_update_decision.py``'s file; MODE ``learned`` or ``rescue`` overrides the
file's) in place of the chain of gates.

``--same-slot MODE:PATH`` scores the decision with a pair model (``scripts/train_pair.py``)
at the same-slot gate: ``pair`` in place of the product of the two slot distributions (the
gate at the model's calibrated bar), ``either`` passing a pair that either clears (the score
downstream the larger of the two), ``product`` (no PATH) the product alone (main's gate).

Sets: ``dev``..``dev9`` (``scripts/lab/data/infer/``), ``shipped`` and ``shipped-heldout``
(``localmem/infer/data/``). The written held-out half is refused: it is run once, by
``bench_understanding.py``, after a merge.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np
from lab import update_decision as combine
from lab.infer_eval import Run, ingest, load_dialogues, rates, score

from localmem import Memory
from localmem.embed import make_embedder
from localmem.infer import conflict, reading

HERE = Path(__file__).resolve().parent
WRITTEN = ("dev", "dev2", "dev3", "dev4", "dev5", "dev6", "dev7", "dev8", "dev9")
#: the out-of-sample checks: scored, never read (``--misses`` refuses them)
OUT_OF_SAMPLE = ("dev6", "dev7", "dev8", "dev9")
SHIPPED = {"shipped": "dialogues", "shipped-heldout": "heldout"}
DEFAULT_SETS = (*WRITTEN, *SHIPPED)


def dialogues_of(name: str) -> list[dict]:
    """A dev set's dialogues by name (never the written held-out half)."""
    if name in SHIPPED:
        return load_dialogues(name=SHIPPED[name])
    if name not in WRITTEN:
        raise SystemExit(f"unknown or refused set: {name} (sets: {', '.join(DEFAULT_SETS)})")
    return load_dialogues(HERE / f"lab/data/infer/{name}.json")


class ProbabilityAverage(reading.Reader):
    """Several readers read as one by averaging their probabilities (slot, ending, each
    token's tag), not their weights: the alternative to ``train_infer.py --seeds``, measured
    here only (it costs one model per member at inference and in the file)."""

    def __init__(self, members: list[reading.Reader], data: dict) -> None:
        super().__init__(data)
        self.members = members

    def slot_probs(self, vectors: np.ndarray) -> np.ndarray:
        return np.mean([m.slot_probs(vectors) for m in self.members], axis=0)

    def ending_p(self, vector: np.ndarray, tokens) -> float:
        return float(np.mean([m.ending_p(vector, tokens) for m in self.members]))

    def tag(self, tokens) -> list[str]:
        if not tokens:
            return []
        probs = np.zeros((len(tokens), len(self.tags)), np.float32)
        for m in self.members:
            scores = reading.tag_scores(tokens, m.vocab, m.tag_w, m.tag_b)
            e = np.exp(scores - scores.max(axis=1, keepdims=True))
            probs += e / e.sum(axis=1, keepdims=True)
        return [self.tags[j] for j in probs.argmax(axis=1)]


def load_reader(path: str) -> reading.Reader:
    """A reader from a ``reading.npz`` file (``shipped``: the package's), or
    ``mean:a.npz,b.npz,...``: those readers' probabilities averaged, or
    ``mix:a.npz+b.npz``: the slot and ending classifiers of ``a``, the tagger of ``b``."""
    if path == "shipped":
        return reading.shipped.__wrapped__()
    if path.startswith("mix:"):
        # which part of a reader moves a figure: its classifiers from one file, its tagger
        # from another
        classifiers, tagger = (
            dict(np.load(f, allow_pickle=False)) for f in path.removeprefix("mix:").split("+")
        )
        meta = {**json.loads(str(classifiers["meta"]))}
        meta["features"] = json.loads(str(tagger["meta"]))["features"]
        mixed = {**classifiers, "tag_w": tagger["tag_w"], "tag_b": tagger["tag_b"]}
        return reading.Reader({**mixed, "meta": np.array(json.dumps(meta))})
    if path.startswith("mean:"):
        files = path.removeprefix("mean:").split(",")
        data = [dict(np.load(f, allow_pickle=False)) for f in files]
        return ProbabilityAverage([reading.Reader(d) for d in data], data[0])
    return reading.Reader(dict(np.load(path, allow_pickle=False)))


class PairSameSlot:
    """A pair model's reading of "both fill the same slot" (``scripts/train_pair.py``'s file)
    standing in for :func:`conflict.same_slot` (``mode`` above, under ``--same-slot``)."""

    def __init__(self, mode: str, path: str) -> None:
        self.mode = mode
        if mode == "product":
            return
        data = dict(np.load(path, allow_pickle=False))
        self.w, self.b = data["pair_w"], float(data["pair_b"])
        self.w1, self.b1 = data.get("pair_w1"), data.get("pair_b1")  # an MLP's hidden layer
        self.a, self.c = (float(v) for v in data["platt"])
        self.bar = float(data["bar"])

    def pair(self, vector: np.ndarray, vec: np.ndarray) -> float:
        a, b = np.asarray(vector, np.float32), np.asarray(vec, np.float32)
        f = np.concatenate([a * b, np.abs(a - b)])
        if self.w1 is not None:
            f = np.maximum(f @ self.w1 + self.b1, 0.0)
        z = float(f @ self.w + self.b)
        return 1.0 / (1.0 + float(np.exp(-(self.a * z + self.c))))

    def __call__(self, reader, new, old, vector, vec) -> float:
        none = reader.slots.index("none")
        product = float(np.dot(new.probs, old.probs)) - new.p(none) * old.p(none)
        if self.mode == "product":
            return product
        q = self.pair(vector, vec)
        # a pair at or over the model's calibrated bar passes the gate (SAME_SLOT_P at least)
        passed = max(q, conflict.SAME_SLOT_P) if q >= self.bar else 0.0
        if self.mode == "pair":
            return passed
        if self.mode == "either":
            return max(product, passed)
        raise SystemExit(f"unknown --same-slot mode: {self.mode}")


def describe(reader: reading.Reader, embedder, text: str) -> str:
    """One line of what ``reader`` reads in ``text``."""
    r = reader.read(text, embedder.embed_batch([text])[0])
    top = np.argsort(-r.probs)[:3]
    slots = " ".join(f"{reader.slots[i]} {r.probs[i]:.2f}" for i in top)

    def show(words: frozenset[str]) -> str:
        return ",".join(sorted(words)) or "-"

    return (
        f"[{slots}; ending {r.ending_p:.2f}; S {show(r.subject)}; A {show(r.aspect)}; "
        f"V {show(r.value)}; X {show(r.ended)}]"
    )


class GateRecorder:
    """Stands in for :func:`conflict.endings` while a set is stored: the same decision, with
    every memory's verdict kept per dialogue and new fact."""

    def __init__(self) -> None:
        self.dialogue = ""
        #: (dialogue, new fact) -> [(stored text, Ending or the rejecting gate)]
        self.seen: dict[tuple[str, str], list[tuple[str, conflict.Ending | str]]] = {}

    def __call__(self, reader, fact, vector, memories, **kw) -> list[conflict.Ending]:
        found = conflict.verdicts(reader, fact, vector, memories, **kw)
        self.seen[(self.dialogue, fact)] = [
            (t, v) for (t, _), v in zip(memories, found, strict=True)
        ]
        out = [v for v in found if isinstance(v, conflict.Ending)]
        return sorted(out, key=lambda e: -e.confidence)

    def gate(self, dialogue: str, old_texts: list[str], new_texts: list[str]) -> str:
        """Why a labelled supersession (the old and new turns' stored texts) did not happen."""
        decided = [self.seen[(dialogue, n)] for n in new_texts if (dialogue, n) in self.seen]
        if not decided:
            return "no-decision"
        found = [v for rows in decided for t, v in rows if t in old_texts]
        if not found:
            return "not-neighbour"
        if any(isinstance(v, conflict.Ending) for v in found):
            return "chosen-other"
        return str(found[0])


def misses(
    memory: Memory, dialogues: list[dict], reader, embedder, recorder: GateRecorder | None = None
) -> list[str]:
    """Each missed and each false supersession of a stored set, with both texts' readings
    (and, given the ``recorder`` of the run, the gate that lost each miss)."""
    out = []
    for dlg in dialogues:
        items = memory.list(user_id=dlg["id"], limit=1000)
        by_id = {m.id: m for m in items}
        by_turn: dict[str, list] = {}
        for m in items:
            by_turn.setdefault(m.metadata.get("turn", ""), []).append(m)
        turns = {
            f"{s}.{t}": text
            for s, session in enumerate(dlg["sessions"])
            for t, text in enumerate(session["turns"])
        }
        old_turns = {old for old, _ in dlg["supersede"]}
        for old, new in dlg["supersede"]:
            new_ids = {m.id for m in by_turn.get(new, [])}
            if not any(m.superseded_by in new_ids for m in by_turn.get(old, [])):
                olds = [m.content for m in by_turn.get(old, [])] or [turns[old]]
                news = [m.content for m in by_turn.get(new, [])] or [turns[new]]
                gate = f" [{recorder.gate(dlg['id'], olds, news)}]" if recorder else ""
                out.append(f"MISSED {dlg['id']} {old} -> {new}{gate}")
                for what, turn in (("old", old), ("new", new)):
                    # what the decision read: the stored fact (the turn when none was stored)
                    stored = [m.content for m in by_turn.get(turn, [])] or [turns[turn]]
                    for text in stored:
                        out += [f"  {what}: {text}", f"       {describe(reader, embedder, text)}"]
        for m in items:
            if m.valid_to is None or m.metadata.get("turn") in old_turns:
                continue
            successor = by_id.get(m.superseded_by) if m.superseded_by else None
            by = successor.content if successor else "(no successor in this dialogue)"
            out += [
                f"FALSE {dlg['id']} {m.metadata.get('turn')}",
                f"  ended: {m.content}",
                f"         {describe(reader, embedder, m.content)}",
                f"  by:    {by}",
            ]
            if successor:
                out.append(f"         {describe(reader, embedder, successor.content)}")
    return out


def gates_missed(memory: Memory, dialogues: list[dict], recorder: GateRecorder) -> Counter:
    """The gate that lost each missed labelled supersession, counted."""
    counts: Counter = Counter()
    for dlg in dialogues:
        by_turn: dict[str, list] = {}
        for m in memory.list(user_id=dlg["id"], limit=1000):
            by_turn.setdefault(m.metadata.get("turn", ""), []).append(m)
        turns = {
            f"{s}.{t}": text
            for s, session in enumerate(dlg["sessions"])
            for t, text in enumerate(session["turns"])
        }
        for old, new in dlg["supersede"]:
            new_ids = {m.id for m in by_turn.get(new, [])}
            if any(m.superseded_by in new_ids for m in by_turn.get(old, [])):
                continue
            olds = [m.content for m in by_turn.get(old, [])] or [turns[old]]
            news = [m.content for m in by_turn.get(new, [])] or [turns[new]]
            counts[recorder.gate(dlg["id"], olds, news)] += 1
    return counts


def run_set(
    name: str, embedder, tmp: Path, *, show_misses: bool, show_gates: bool = False
) -> tuple[dict, list[str]]:
    """One set stored with ``infer=True`` under the current reader: its counts and rates
    (with ``show_gates``, ``gates``: the missed supersessions counted by the gate that lost
    them)."""
    dialogues = dialogues_of(name)
    run = Run("infer")
    recorder = GateRecorder()
    original = conflict.endings
    if show_gates:
        conflict.endings = recorder
    try:
        with Memory.open(tmp / name, embedder=embedder) as memory:
            for dlg in dialogues:
                recorder.dialogue = dlg["id"]
                ingest(memory, dlg, infer=True, run=run)
            score(memory, dialogues, run)
            shown = recorder if show_gates else None
            lines = (
                misses(memory, dialogues, reading.shipped(), embedder, shown) if show_misses else []
            )
            gates = dict(gates_missed(memory, dialogues, recorder)) if show_gates else {}
    finally:
        conflict.endings = original
    return {**rates(run), **run.counts, **({"gates": gates} if show_gates else {})}, lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--reader",
        action="append",
        default=None,
        help="NAME=PATH (PATH 'shipped': the package's; 'mean:a.npz,b.npz': probabilities "
        "averaged; 'mix:a.npz+b.npz': a's classifiers, b's tagger)",
    )
    parser.add_argument("--sets", default=",".join(DEFAULT_SETS))
    parser.add_argument("--misses", action="store_true")
    parser.add_argument(
        "--gates", action="store_true", help="count the missed supersessions by the losing gate"
    )
    parser.add_argument("--same-slot", default=None, help="MODE:PATH, a pair model's gate")
    parser.add_argument(
        "--decision",
        default=None,
        help="PATH[:MODE], a combiner (scripts/fit_update_decision.py) in place of the chain",
    )
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    if args.decision:
        path, _, mode = args.decision.partition(":")
        combiner = combine.Combiner.load(path)
        conflict.decide = replace(combiner, mode=mode) if mode else combiner
    if args.same_slot:
        mode, _, path = args.same_slot.partition(":")
        conflict.same_slot = PairSameSlot(mode, path)
    readers = dict(r.split("=", 1) for r in (args.reader or ["shipped=shipped"]))
    sets = args.sets.split(",")
    for name in sets:
        dialogues_of(name)  # refuse an unknown set before any work
    if args.misses and set(sets) & set(OUT_OF_SAMPLE):
        refused = ", ".join(OUT_OF_SAMPLE)
        raise SystemExit(f"--misses is refused on the out-of-sample sets ({refused})")
    embedder = make_embedder()
    original = reading.shipped
    results: dict[str, dict] = {}
    print("| reader | set | update | false | stale@5 | answer@5 | duplicates | past@5 |")
    print("|---|---|---|---|---|---|---|---|")
    try:
        for label, path in readers.items():
            candidate = load_reader(path)
            reading.shipped = lambda candidate=candidate: candidate
            for name in sets:
                with tempfile.TemporaryDirectory() as tmp_name:
                    r, lines = run_set(
                        name,
                        embedder,
                        Path(tmp_name),
                        show_misses=args.misses,
                        show_gates=args.gates,
                    )
                results[f"{label} {name}"] = r
                print(
                    f"| {label} | {name} | {r['update accuracy']:.3f} "
                    f"({r['updated']}/{r['expected']}) | {r['false supersession']:.3f} "
                    f"({r['false_superseded']}/{r['should_stay']}) | {r['stale@5 (now)']:.3f} | "
                    f"{r['answer@5 (now)']:.3f} | {r['duplicate rate']:.3f} | "
                    f"{r['past recall@5 (as_of)']:.3f} |",
                    flush=True,
                )
                if args.gates:
                    counted = sorted(r["gates"].items(), key=lambda kv: -kv[1])
                    print(f"  gates {label} {name}: " + ", ".join(f"{g} {n}" for g, n in counted))
                for line in lines:
                    print(line, file=sys.stderr)
    finally:
        reading.shipped = original
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
