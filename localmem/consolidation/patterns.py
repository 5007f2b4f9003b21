"""Model-free meta memories: preferences, habits and recurring subjects across semantic facts.

A pattern is something that shows in more than one fact: a person saying what they like, love
or prefer (preference), what they always, usually or every week do (habit), or the people,
places and topics that keep coming back (recurring). Each becomes one meta memory per person
and kind, derived from the facts it was seen in.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from localmem.consolidation.extract import FILLER
from localmem.consolidation.statements import clip, statements, third_person, word_set

MAX_ITEMS = 6
MAX_SOURCES = 12
MIN_CLAUSE_WORDS = 4

_CUES: dict[str, re.Pattern[str]] = {
    "preference": re.compile(
        r"\b(?:I|we)\b(?:\s+(?:really|also|just|absolutely|totally|still))?\s+"
        r"(?:like|love|enjoy|prefer|adore|hate|dislike|can't stand)\b.*|"
        r"\bmy (?:favou?rite|fave)\b.*",
        re.IGNORECASE,
    ),
    "habit": re.compile(
        r"\b(?:I|we)\b(?:\s+\w+)?\s+(?:always|usually|often|regularly|normally|never)\b.*|"
        r"\b(?:I|we)\b[^.!?]{0,40}\bevery (?:day|morning|evening|night|week|weekend|"
        r"month|summer|winter|year|time)\b.*",
        re.IGNORECASE,
    ),
}
_PROPER = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-z]{2,}(?:\s[A-Z][a-z]{2,})*)")
_CALENDAR = word_set(
    "Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May "
    "June July August September October November December"
)
_NOT_NAMES = frozenset(
    {"The", "This", "That", "These", "Those", "What", "When", "Where", "How", "Why", "And"}
)


@dataclass(frozen=True)
class FactView:
    """A semantic fact as the pattern finder sees it.

    Attributes:
        id: The semantic memory.
        texts: Its sources' texts (episodic memories, "Speaker: ..." when a speaker is known).
        topics: Its key phrases.
    """

    id: str
    texts: tuple[str, ...]
    topics: tuple[str, ...] = ()


@dataclass(frozen=True)
class MetaDraft:
    """A meta memory to write: a stable key (one per person and kind), its text, its sources."""

    key: str
    kind: str
    subject: str | None
    content: str
    sources: tuple[str, ...]


def find_patterns(
    facts: Sequence[FactView], *, min_facts: int = 2, subject: str | None = None
) -> list[MetaDraft]:
    """Preferences and habits per person, and recurring subjects, seen in ``min_facts`` facts.

    Args:
        facts: Every semantic fact of the scope.
        min_facts: Least number of facts a pattern must show in.
        subject: Whose memories these are when the texts name no speaker.
    """
    cues: dict[tuple[str, str | None], dict[str, str]] = defaultdict(dict)  # -> {clause: fact}
    for fact in facts:
        for s in statements(list(fact.texts), speaker=subject):
            for kind, pattern in _CUES.items():
                match = pattern.search(s.text)
                if match and not s.text.rstrip().endswith("?") and not s.about_listener:
                    clause = clip(third_person(match.group(0), s.speaker).rstrip(" .!"), 90)
                    if len(clause.split()) < MIN_CLAUSE_WORDS:
                        continue
                    cues[(kind, s.speaker)].setdefault(clause, fact.id)
    drafts = []
    for (kind, who), clauses in sorted(cues.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")):
        sources = tuple(dict.fromkeys(clauses.values()))
        if len(sources) < min_facts:
            continue
        items = list(clauses)[:MAX_ITEMS]
        name = f"{who}'s" if who else "Their"
        word = "preferences" if kind == "preference" else "habits"
        content = f"{name} {word} (seen in {len(sources)} facts): " + "; ".join(items) + "."
        drafts.append(MetaDraft(f"{kind}:{who or ''}", kind, who, content, sources[:MAX_SOURCES]))
    recurring = _recurring(facts, min_facts=max(min_facts, 3))
    if recurring:
        drafts.append(recurring)
    return drafts


def _recurring(facts: Sequence[FactView], *, min_facts: int) -> MetaDraft | None:
    """People, places and topics named in at least ``min_facts`` facts."""
    seen: dict[str, dict[str, None]] = defaultdict(dict)  # name -> facts (ordered)
    speakers = set()
    for fact in facts:
        for s in statements(list(fact.texts)):
            if s.speaker:
                speakers.add(s.speaker)
            for name in _PROPER.findall(s.text):
                if name not in _NOT_NAMES:
                    seen[name][fact.id] = None
        for topic in fact.topics:
            if topic.lower() not in FILLER:
                seen[topic.lower()][fact.id] = None
    # the people talking (and their short names) are everywhere: not a pattern
    short = {p[:n].lower() for name in speakers for p in name.split() for n in range(3, len(p) + 1)}
    for name in list(seen):
        if name.lower() in short or name in _CALENDAR:
            seen.pop(name)
    common = [(n, ids) for n, ids in seen.items() if len(ids) >= min_facts]
    if not common:
        return None
    common.sort(key=lambda kv: (-len(kv[1]), kv[0]))
    top = common[: MAX_ITEMS * 2]
    who = ", ".join(sorted(speakers)) if speakers else None
    items = "; ".join(f"{n} ({len(ids)} facts)" for n, ids in top)
    about = f" in the memories of {who}" if who else ""
    content = f"Recurring people, places and topics{about}: {items}."
    sources: dict[str, None] = {}
    for _, ids in top:
        sources.update(ids)
    return MetaDraft("recurring", "recurring", who, content, tuple(sources)[:MAX_SOURCES])
