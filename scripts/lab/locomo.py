"""LoCoMo: reading the public ``locomo10.json`` layout, ingesting it, scoring evidence retrieval.

Retrieval never reads ``event_summary``, ``observation`` or ``session_summary`` (the dataset's own
annotations): only the turns, with their speaker, their session's date and photo captions.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from localmem.errors import InputError

if TYPE_CHECKING:
    from localmem.memory import Memory

#: the file's own category numbers and names (the mem0 paper relabels them; we do not)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
_SESSION_KEY = re.compile(r"^session_(\d+)$")


@dataclass(frozen=True)
class Turn:
    """One utterance of a conversation."""

    dia_id: str
    speaker: str
    text: str
    session: int
    when: datetime | None
    caption: str | None = None

    @property
    def content(self) -> str:
        """How the turn is stored: the speaker, the words, and a shared photo's caption."""
        text = f"{self.speaker}: {self.text}".strip()
        if self.caption:
            text += f" [shares a photo: {self.caption}]"
        return text


@dataclass(frozen=True)
class Question:
    """One QA item with the turns that hold its answer."""

    question: str
    answer: str | None
    evidence: tuple[str, ...]
    category: int
    adversarial_answer: str | None = None


@dataclass
class Conversation:
    """A LoCoMo sample: its turns and questions."""

    sample_id: str
    speakers: tuple[str, str]
    turns: list[Turn]
    questions: list[Question]
    skipped: dict[str, int] = field(default_factory=dict)
    #: one line per skipped sample of the file (kept on the first usable conversation)
    problems: list[str] = field(default_factory=list)


def parse_session_date(text: str) -> datetime | None:
    """LoCoMo's ``"1:56 pm on 8 May, 2023"`` as an aware datetime (UTC); None if unreadable."""
    cleaned = " ".join(str(text).replace(",", " ").split())
    for fmt in ("%I:%M %p on %d %B %Y", "%I:%M%p on %d %B %Y", "%d %B %Y"):
        try:
            return datetime.strptime(cleaned, fmt).replace(tzinfo=timezone.utc)
        except ValueError:
            continue
    return None


def split_evidence(raw: Any) -> tuple[str, ...]:
    """Evidence ids, tolerating the file's quirks ("D8:6; D9:17" in one string, stray spaces)."""
    out: list[str] = []
    for item in raw if isinstance(raw, list) else [raw]:
        for part in re.split(r"[;,\s]+", str(item)):
            part = part.strip()
            if re.fullmatch(r"D\d+:\d+", part):
                out.append(part)
    return tuple(dict.fromkeys(out))


def load_locomo(path: str | Path) -> list[Conversation]:
    """Read a LoCoMo-shaped JSON file; raises InputError when it is not one."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"no such file: {path}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{path} is not a JSON file: {exc}") from None
    if not isinstance(data, list) or not data:
        raise InputError(f"{path} is not LoCoMo-shaped: expected a list of samples")
    convs, problems = [], []
    for i, sample in enumerate(data):
        try:
            convs.append(_conversation(sample, i, path))
        except InputError as exc:  # one broken sample does not sink the others
            problems.append(str(exc))
    if not convs:
        raise InputError(
            problems[0]
            if len(problems) == 1
            else f"{path}: no usable sample ({len(problems)} broken; first: {problems[0]})"
        )
    if problems:
        convs[0].skipped["sample not LoCoMo-shaped"] = len(problems)
        convs[0].problems.extend(problems)
    return convs


def _conversation(sample: Any, index: int, path: Path) -> Conversation:
    if not isinstance(sample, dict) or not isinstance(sample.get("conversation"), dict):
        raise InputError(f"{path}: sample {index} has no 'conversation' object (not LoCoMo)")
    conv = sample["conversation"]
    skipped: dict[str, int] = {}
    turns: list[Turn] = []
    sessions = sorted((int(m.group(1)), key) for key in conv if (m := _SESSION_KEY.match(key)))
    for number, key in sessions:
        when = parse_session_date(conv.get(f"{key}_date_time", ""))
        if when is None:
            skipped["session without a date"] = skipped.get("session without a date", 0) + 1
        if not isinstance(conv[key], list):
            skipped["session that is not a list of turns"] = (
                skipped.get("session that is not a list of turns", 0) + 1
            )
            continue
        for raw in conv[key]:
            text = (raw.get("text") or "").strip() if isinstance(raw, dict) else ""
            caption = (raw.get("blip_caption") or "").strip() if isinstance(raw, dict) else ""
            if not isinstance(raw, dict) or not raw.get("dia_id") or not (text or caption):
                skipped["turn without text"] = skipped.get("turn without text", 0) + 1
                continue
            turns.append(
                Turn(
                    raw["dia_id"], str(raw.get("speaker", "?")), text, number, when, caption or None
                )
            )
    questions = []
    for raw in sample.get("qa") or []:
        if not isinstance(raw, dict) or not raw.get("question"):
            skipped["malformed question"] = skipped.get("malformed question", 0) + 1
            continue
        answer = raw.get("answer")
        try:
            category = int(raw.get("category", 0))
        except (TypeError, ValueError):
            category = 0
        if category not in CATEGORIES:
            skipped["question without a known category"] = (
                skipped.get("question without a known category", 0) + 1
            )
            continue
        questions.append(
            Question(
                question=str(raw["question"]),
                answer=None if answer is None else str(answer),
                evidence=split_evidence(raw.get("evidence", [])),
                category=category,
                adversarial_answer=raw.get("adversarial_answer"),
            )
        )
    if not turns:
        raise InputError(f"{path}: sample {index} has no turns (not LoCoMo-shaped)")
    speakers = (str(conv.get("speaker_a", "A")), str(conv.get("speaker_b", "B")))
    return Conversation(
        str(sample.get("sample_id", f"sample-{index}")), speakers, turns, questions, skipped
    )


def ingest_conversation(
    memory: Memory, conv: Conversation, *, batch_size: int = 256, plain: bool = False
) -> int:
    """Store every turn as a message memory: speaker, text, caption, the session's date.

    ``plain``: as a user who stores the text and nothing else would (``add("Caroline: ...")``):
    no session, no event time, no speaker field; only the grader's ``dia_id`` label, which
    retrieval never reads.
    """
    records = [
        {"content": t.content, "metadata": {"dia_id": t.dia_id}}
        if plain
        else {
            "content": t.content,
            "event_time": t.when,
            "session_id": f"{conv.sample_id}:S{t.session}",
            "metadata": {"dia_id": t.dia_id, "speaker": t.speaker, "session": t.session},
        }
        for t in conv.turns
    ]
    stored = memory.add_many(records, batch_size=batch_size, kind="message", user_id=conv.sample_id)
    return len(stored)


# -- metrics (pure) ------------------------------------------------------------------------------
def asked_at(conv: Conversation) -> datetime | None:
    """When the questions of a conversation are asked: the day after its last session."""
    times = [t.when for t in conv.turns if t.when is not None]
    return max(times) + timedelta(days=1) if times else None


def ensure_ingested(memory: Memory, conv: Conversation, *, plain: bool = False) -> int:
    """Ingest a conversation unless the store already holds it; returns the turns added."""
    held = memory.count(user_id=conv.sample_id)
    if held == len(conv.turns):
        return 0
    if held:
        raise InputError(
            f"the store holds {held} memories of {conv.sample_id}, not its {len(conv.turns)} "
            "turns: use a fresh store (or the one a complete run left)"
        )
    return ingest_conversation(memory, conv, plain=plain)


def evidence_recall(retrieved: Sequence[str], evidence: Iterable[str], k: int) -> float:
    """Share of the evidence turns found in the first ``k`` retrieved."""
    gold = set(evidence)
    if not gold:
        return 0.0
    return len(gold & set(retrieved[:k])) / len(gold)


def hit_at(retrieved: Sequence[str], evidence: Iterable[str], k: int) -> float:
    """1 when any evidence turn is in the first ``k``, else 0."""
    return float(bool(set(evidence) & set(retrieved[:k])))


def reciprocal_rank(retrieved: Sequence[str], evidence: Iterable[str]) -> float:
    """1 / rank of the first evidence turn (0 when none is retrieved)."""
    gold = set(evidence)
    for rank, dia in enumerate(retrieved, start=1):
        if dia in gold:
            return 1.0 / rank
    return 0.0
