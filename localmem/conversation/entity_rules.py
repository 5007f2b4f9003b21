"""Rule-based entity and relation extraction for the conversation memory, no model needed.

The seed tags natural phenomena from a fixed list of patterns, locations after prepositions and
people by capitalised names, and links them with ``occurs_in`` and ``studied``. Here the rules
are general:

- **phenomena**: names passed in (e.g. the titles of a corpus's documents, or ``re:`` regular
  expressions), plus capitalised names ending in a phenomenon word ("Catatumbo lightning",
  "Morning Glory cloud");
- **places**: capitalised names after a place preposition ("in Antarctica", "near Lake Nyos");
- **people**: capitalised names with a title ("Dr. Jane Smith"), or two to three capitalised
  words next to a cue of a person (``by``, ``according to``, ``said``, ``studied``, ...);
- **relations**: a phenomenon and a place in one sentence -> ``phenomenon occurs_in place``; a
  person, a phenomenon and a study verb in one sentence -> ``person studied phenomenon``.

Types use the vocabulary of the ``entities`` model task (``phenomenon``, ``place``, ``person``),
so the long-term store reads the same whichever extractor wrote it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from localmem.dates import MONTH_NAMES, WEEKDAY_NAMES
from localmem.errors import InputError
from localmem.text import STOP_WORDS

PHENOMENON_WORDS = (
    "arc",
    "aurora",
    "brinicle",
    "cloud",
    "clouds",
    "eclipse",
    "eruption",
    "falls",
    "fireball",
    "fireballs",
    "flash",
    "fog",
    "halo",
    "lightning",
    "mirage",
    "quake",
    "rain",
    "rainbow",
    "spectre",
    "storm",
    "stones",
    "tornado",
    "waterspout",
    "wave",
)
PLACE_PREPOSITIONS = (
    "in",
    "at",
    "near",
    "from",
    "across",
    "over",
    "off",
    "within",
    "throughout",
    "around",
    "above",
    "beneath",
    "under",
    "into",
    "to",
)
PERSON_TITLES = ("Dr", "Prof", "Professor", "Sir", "Mr", "Mrs", "Ms", "Captain", "Dame", "Lord")
PERSON_CUES_BEFORE = ("by", "according to", "named after", "geologist", "scientist", "explorer")
PERSON_CUES_AFTER = (
    "said",
    "wrote",
    "described",
    "studied",
    "observed",
    "reported",
    "discovered",
    "explained",
    "proposed",
    "investigated",
    "photographed",
    "suggested",
    "noted",
    "found",
    "who",
)
STUDY_VERBS = re.compile(
    r"\b(stud(?:y|ied|ies|ying)|investigat\w*|research\w*|observ\w*|describ\w*|discover\w*|"
    r"document\w*|explain\w*|photograph\w*|measur\w*|analy[sz]\w*|explor\w*)\b",
    re.IGNORECASE,
)
# words that start a sentence or a heading in capitals without naming anything
_LEADING = {
    "the",
    "a",
    "an",
    "this",
    "that",
    "these",
    "those",
    "in",
    "on",
    "at",
    "it",
    "its",
    "what",
    "which",
    "who",
    "how",
    "why",
    "when",
    "where",
    "both",
    "some",
    "many",
    "most",
    "during",
    "after",
    "before",
    "there",
    "tell",
    "is",
    "are",
    "do",
    "does",
    "can",
}
_NOT_NAMES = {*MONTH_NAMES, *WEEKDAY_NAMES, "i"}
_PLACE_WORDS = {
    "lake",
    "river",
    "glacier",
    "valley",
    "mountain",
    "mount",
    "mt",
    "island",
    "islands",
    "sea",
    "ocean",
    "bay",
    "desert",
    "park",
    "county",
    "state",
    "city",
    "province",
    "gulf",
    "strait",
    "peninsula",
    "basin",
    "plateau",
    "coast",
    "cape",
    "falls",
}
_CAP = r"[A-Z][\w'’\-]*\.?"
_NAME = rf"{_CAP}(?:\s+(?:(?:of|de|del|la|le|da|di|von|van)\s+)?{_CAP})*"
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


@dataclass(frozen=True)
class Extraction:
    """Entities ``(name, type, attributes)`` and relations ``(source, relation, target)``."""

    entities: tuple[tuple[str, str, dict[str, Any]], ...] = ()
    relations: tuple[tuple[str, str, str], ...] = ()

    def names(self) -> list[str]:
        """The entity names, in order of appearance."""
        return [n for n, _, _ in self.entities]


@dataclass
class RuleExtractor:
    """The rule-based extractor; ``phenomena`` are names (or ``re:`` patterns) to tag.

    A name with a trailing parenthesised qualifier ("Fata Morgana (mirage)", as document titles
    often have) is matched without it.
    """

    phenomena: Sequence[str] = ()
    _patterns: list[tuple[re.Pattern[str], str | None]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._patterns = []
        for item in self.phenomena:
            if not isinstance(item, str) or not item.strip():
                raise InputError(f"a phenomenon pattern must be non-empty text, not {item!r}")
            if item.startswith("re:"):
                try:
                    self._patterns.append((re.compile(item[3:], re.IGNORECASE), None))
                except re.error as exc:
                    raise InputError(f"bad phenomenon pattern {item!r}: {exc}") from None
                continue
            name = re.sub(r"\s*\([^)]*\)\s*$", "", item).strip() or item.strip()
            words = r"\s+".join(re.escape(w) for w in name.split())
            plural = "" if name[-1:].lower() == "s" else "(?:s|es)?"  # "fireballs" too
            self._patterns.append((re.compile(rf"\b{words}{plural}\b", re.IGNORECASE), name))

    def extract(self, text: str) -> Extraction:
        """Entities and relations found in ``text``."""
        entities: dict[str, tuple[str, str, dict[str, Any]]] = {}
        relations: list[tuple[str, str, str]] = []
        for sentence in (s for s in _SENTENCE.split(text) if s and s.strip()):
            found = self._sentence(sentence)
            for name, etype in found:
                entities.setdefault(name.lower(), (name, etype, {"extractor": "rules"}))
            phen = [n for n, t in found if t == "phenomenon"]
            places = [n for n, t in found if t == "place"]
            people = [n for n, t in found if t == "person"]
            relations += [(p, "occurs_in", pl) for p in phen for pl in places]
            if STUDY_VERBS.search(sentence):
                relations += [(who, "studied", p) for who in people for p in phen]
        return Extraction(tuple(entities.values()), tuple(dict.fromkeys(relations)))

    def _sentence(self, sentence: str) -> list[tuple[str, str]]:
        taken: list[tuple[int, int]] = []
        found: list[tuple[int, str, str]] = []

        def claim(start: int, end: int, name: str, etype: str) -> None:
            if any(s < end and start < e for s, e in taken):
                return  # a span already tagged (a listed phenomenon wins over the rules)
            taken.append((start, end))
            found.append((start, name, etype))

        for pattern, name in self._patterns:
            for m in pattern.finditer(sentence):
                claim(m.start(), m.end(), name or _tidy(m.group()), "phenomenon")
        heads = "|".join(PHENOMENON_WORDS)
        for m in re.finditer(rf"\b((?:{_CAP}\s+){{1,3}})({heads})\b", sentence, re.IGNORECASE):
            lead = _strip_leading(m.group(1), adverbs=True)
            if lead and lead[0].isupper() and lead.split()[0].lower() not in _NOT_NAMES:
                start = m.start() + m.group().index(lead)
                claim(start, m.end(), _tidy(f"{lead} {m.group(2)}"), "phenomenon")
        for m in re.finditer(rf"(?<![\w-])({_NAME})", sentence):
            self._name(sentence, m, claim)
        return [(name, etype) for _, name, etype in sorted(found)]

    def _name(self, sentence: str, m: re.Match[str], claim) -> None:
        raw = m.group(1)
        name = _strip_leading(raw)
        if not name or name.lower() in _NOT_NAMES or not name[0].isupper():
            return
        start = m.start(1) + raw.index(name)
        end = start + len(name)
        name = name.rstrip(".")
        before = sentence[:start].rstrip().lower()
        after = sentence[end:].lstrip().lower()
        words = name.split()
        title = words[0].rstrip(".") in PERSON_TITLES and len(words) >= 2
        if title or (
            2 <= len(words) <= 3
            and not any(w.lower().rstrip(".") in _PLACE_WORDS for w in words)
            and (
                before.endswith(PERSON_CUES_BEFORE)
                or after.startswith(PERSON_CUES_AFTER)
                or (after.startswith(",") and after[1:].lstrip().startswith(PERSON_CUES_AFTER))
            )
        ):
            claim(start, end, name, "person")
            return
        last_word = before.rsplit(None, 1)[-1] if before else ""
        if last_word == "the":  # "in the Taylor Valley"
            rest = before[: -len("the")].rstrip()
            last_word = rest.rsplit(None, 1)[-1] if rest else ""
        if last_word in PLACE_PREPOSITIONS:
            claim(start, end, name, "place")


def _strip_leading(name: str, *, adverbs: bool = False) -> str:
    """A capitalised run without the sentence-start words in front ("In Antarctica",
    "Slowly the mirage"): function words (and, before a phenomenon word, adverbs) are
    capitalised only by their position."""
    words = name.split()
    while words and _sentence_word(words[0], adverbs=adverbs):
        words.pop(0)
    return " ".join(words)


def _sentence_word(word: str, *, adverbs: bool) -> bool:
    w = word.lower().rstrip(".,")
    return w in _LEADING or w in STOP_WORDS or (adverbs and w.endswith("ly") and len(w) > 4)


def _tidy(name: str) -> str:
    return " ".join(name.split()).strip(" .,;:")


def extract_rules(text: str, *, phenomena: Sequence[str] = ()) -> Extraction:
    """Entities and relations of ``text`` by the rules (see :class:`RuleExtractor`)."""
    return RuleExtractor(tuple(phenomena)).extract(text)


# -- the output of the `entities` task, model-free -------------------------------------
MAX_ITEMS = 10
MAX_NAME = 60
MAX_RELATION = 30


def extract_graph(text: str, *, phenomena: tuple[str, ...] = ()) -> dict[str, Any]:
    """Entities and relations of ``text`` as plain data in the shape of the task's output."""
    found = extract_rules(text, phenomena=phenomena)
    entities = [
        {"name": name, "type": etype} for name, etype, _ in found.entities if len(name) <= MAX_NAME
    ][:MAX_ITEMS]
    kept = {e["name"] for e in entities}
    relations = [
        {"source": s, "relation": r[:MAX_RELATION], "target": t}
        for s, r, t in found.relations
        if s in kept and t in kept
    ][:MAX_ITEMS]
    return {"entities": entities, "relations": relations}
