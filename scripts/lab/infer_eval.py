"""Measuring inference on add (issue 20) on the shipped labelled dialogues and on LoCoMo.

The dialogues (``localmem/infer/data/dialogues.json``) are short multi-session chats written
for this: moves, job changes, relationship changes, preferences that change, counts and ages
that grow, plain repetitions, and look-alikes that do not conflict ("likes tea" and "likes
coffee"). Each names which turn supersedes which, questions about now (with the answer that
would be stale) and questions about a past moment (asked with ``as_of``).

Every dialogue is stored twice in one run, side by side: raw (today's ``add``) and with
``infer=True``, each turn a message with its session's time, the dialogue as the user scope.
Measured (:func:`score`):

- update accuracy: of the labelled supersessions, the share where a memory of the old turn
  ended up superseded by a memory of the new turn (raw storage never supersedes: 0);
- false supersession rate: of the memories of turns that should stay true, the share that
  were superseded anyway;
- duplicate rate: of the current memories, the share whose text repeats another current
  memory of the same dialogue;
- stale@5 and answer@5 for "now" questions: whether a top-5 hit holds the stale answer, the
  right one;
- past recall@5 with ``as_of``: whether a top-5 hit of the search for that moment holds the
  answer;
- add latency per turn.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from lab.stats import percentile
from localmem.infer.task import normal
from localmem.memory import Memory

#: the shipped sets: ``dialogues`` (the rules were written against it) and ``heldout``
#: (written afterwards and never used to change a rule)
SETS = ("dialogues", "heldout")


def load_dialogues(path: str | Path | None = None, *, name: str = "dialogues") -> list[dict]:
    """The labelled dialogues: a shipped set by ``name``, or the file at ``path``."""
    if path is None:
        text = resources.files("localmem.infer.data").joinpath(f"{name}.json").read_text()
    else:
        text = Path(path).read_text(encoding="utf-8")
    return json.loads(text)["dialogues"]


def _at(day: str, offset: int = 0) -> datetime:
    return datetime.fromisoformat(day).replace(tzinfo=timezone.utc) + timedelta(minutes=offset)


@dataclass
class Run:
    """What one way of storing (raw or inferred) did to the dialogues."""

    name: str
    add_ms: list[float] = field(default_factory=list)
    counts: dict[str, float] = field(default_factory=dict)


def ingest(memory: Memory, dialogue: dict[str, Any], *, infer: bool, run: Run) -> None:
    """Every turn of a dialogue, in order, as a message of its session's time."""
    for s, session in enumerate(dialogue["sessions"]):
        for t, turn in enumerate(session["turns"]):
            started = time.perf_counter()
            memory.add(
                turn,
                kind="message",
                user_id=dialogue["id"],
                event_time=_at(session["time"], t),
                metadata={"turn": f"{s}.{t}"},
                infer=infer,
            )
            run.add_ms.append((time.perf_counter() - started) * 1000)


def ingest_conversation(memory: Memory, conv: Any, *, infer: bool = True) -> int:
    """Every turn of a LoCoMo conversation (``lab.locomo``), in order, as a message of its own
    time under the conversation's id as the user; the number of turns."""
    for turn in conv.turns:
        memory.add(
            turn.content,
            kind="message",
            user_id=conv.sample_id,
            event_time=turn.when,
            infer=infer,
        )
    return len(conv.turns)


def _holds(hits: Sequence[Any], text: str | None) -> bool:
    if not text:
        return False
    return any(text.lower() in h.memory.content.lower() for h in hits)


def score(memory: Memory, dialogues: Sequence[dict[str, Any]], run: Run) -> None:
    """The metrics of the module docstring, into ``run.counts``."""
    c = {
        "expected": 0,
        "updated": 0,
        "should_stay": 0,
        "false_superseded": 0,
        "current": 0,
        "duplicates": 0,
        "now": 0,
        "stale": 0,
        "answered": 0,
        "past": 0,
        "past_found": 0,
    }
    for dlg in dialogues:
        items = memory.list(user_id=dlg["id"], limit=1000)
        by_turn: dict[str, list] = {}
        for m in items:
            by_turn.setdefault(m.metadata.get("turn", ""), []).append(m)
        ids_of = {turn: {m.id for m in ms} for turn, ms in by_turn.items()}
        old_turns = {old for old, _ in dlg["supersede"]}
        for old, new in dlg["supersede"]:
            c["expected"] += 1
            c["updated"] += any(
                m.superseded_by in ids_of.get(new, set()) for m in by_turn.get(old, [])
            )
        for turn, ms in by_turn.items():
            if turn in old_turns:
                continue
            c["should_stay"] += len(ms)
            c["false_superseded"] += sum(m.valid_to is not None for m in ms)
        current = [normal(m.content) for m in items if m.valid_to is None]
        c["current"] += len(current)
        c["duplicates"] += len(current) - len(set(current))
        for q in dlg["now"]:
            hits = memory.search(q["question"], k=5, user_id=dlg["id"]).hits
            c["now"] += 1
            c["stale"] += _holds(hits, q["stale"])
            c["answered"] += _holds(hits, q["answer"])
        for q in dlg["past"]:
            when = _at(q["as_of"])
            hits = memory.search(q["question"], k=5, user_id=dlg["id"], as_of=when).hits
            c["past"] += 1
            c["past_found"] += _holds(hits, q["answer"])
    run.counts = c


def rates(run: Run) -> dict[str, float]:
    """The counts of a run as the reported rates."""
    c = run.counts

    def share(a: str, b: str) -> float:
        return c[a] / c[b] if c[b] else 0.0

    ms = np.array(run.add_ms) if run.add_ms else np.zeros(1)
    return {
        "update accuracy": share("updated", "expected"),
        "false supersession": share("false_superseded", "should_stay"),
        "duplicate rate": share("duplicates", "current"),
        "stale@5 (now)": share("stale", "now"),
        "answer@5 (now)": share("answered", "now"),
        "past recall@5 (as_of)": share("past_found", "past"),
        "add p50 ms": percentile(ms, 50),
        "add p95 ms": percentile(ms, 95),
    }


def run_dialogues(
    open_store: Callable[[str], Memory], dialogues: Sequence[dict[str, Any]]
) -> dict[str, Run]:
    """Raw and inferred storage of the same dialogues, side by side in one run."""
    runs: dict[str, Run] = {}
    for name, infer in (("raw", False), ("infer", True)):
        run = Run(name)
        with open_store(name) as memory:
            for dlg in dialogues:
                ingest(memory, dlg, infer=infer, run=run)
            score(memory, dialogues, run)
        runs[name] = run
    return runs


def table(runs: dict[str, Run]) -> str:
    """One row per metric, one column per run (markdown)."""
    names = list(runs)
    rows = ["| metric | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    measured = {n: rates(r) for n, r in runs.items()}
    for metric in measured[names[0]]:
        cells = [
            f"{measured[n][metric]:.1f}" if metric.endswith("ms") else f"{measured[n][metric]:.3f}"
            for n in names
        ]
        rows.append(f"| {metric} | " + " | ".join(cells) + " |")
    return "\n".join(rows)
