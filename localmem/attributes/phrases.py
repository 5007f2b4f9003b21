"""Key-phrase candidates of a text, without a model: the first half of model-free entity mining.

A candidate is a run of up to three content words between punctuation and function words
("rate limit errors", "Redis", "connection pool"), a code identifier (``user_id``, ``Node.js``,
`` `retry()` ``) or an acronym (API, JWT). Each is reduced to its canonical form
(:mod:`localmem.attributes.normalise`) and counted; :func:`candidates` ranks them by cheap
statistics so that only the best few are embedded (the miner then ranks those by similarity to
the whole text). Pure functions over strings: deterministic and easy to test.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

from localmem.attributes.normalise import BUILTIN_ALIASES, display_value, entity_terms
from localmem.text import STOP_WORDS

MAX_WORDS = 3

# verbs, adjectives, adverbs and fillers that are rarely an entity on their own; they split
# phrases the way stop-words do ("we should *handle* rate limit errors")
_WEAK = """
    able about across actually add added adding already always another anyway around ask asked
    asking away back bad basically become becomes believe best better big bit certain certainly
    change changed clearly come comes coming consider considering could currently definitely
    different do done easily easy else enough especially even ever every everything exactly feel
    feels felt figure find finding finds first fine fix fixed following get gets give gives glad
    good great guess handle handled handles happen happened happens hard help helped helps hope
    however idea ideas important instead interesting keep keeps kind know knew known large last
    later least less like liked likely little long look looked looking looks love loved made
    main maybe make makes making mean means might mind must need needed needs never new next
    nice often old one ones pretty probably put quite rather ready right said say says see seem
    seems seen set several share shared show shows simple simply since small sort soon start
    started still stuff sure take takes taking tell thank thanks think thinking thought today
    together tomorrow told tried tries true try trying two turn turned usually use used uses
    using via want wanted wants way ways well whole within without wonder work worked works
    yesterday yet amazing awesome cool excited fun happy lol haha omg yeah wow hmm gonna wanna
    totally super sounds sound congrats congratulations dear guys guy lately recently someday
    sometimes somewhere anyone everyone someone nothing etc e.g i.e vs per
"""
WEAK_WORDS = frozenset(_WEAK.split())
# these -ly words are nouns (or names), not adverbs
_LY = "family supply reply assembly anomaly italy july ally rally emily lily"
_LY_NOUNS = frozenset(_LY.split())

_PATTERN = re.compile(
    r"(?P<code>`[^`\n]{1,60}`)"
    r"|(?P<word>[A-Za-z0-9][A-Za-z0-9_+#'’./\-]*[A-Za-z0-9+#]|[A-Za-z0-9])"
    r"|(?P<end>[.!?\n]+)"
    r"|(?P<brk>[;:,()\[\]{}\"“”—–]|\s-\s)"
)
_MEASURE = re.compile(r"^\d+(?:[.,:]\d+)*(?:[a-z%]{0,3})$")  # 2.3s, 40ms, 10:30, 99%
# an entity does not end in a participle or an adjective ("requests failed", "so powerful")
_NOT_LAST = ("ed", "ful", "ous")
_IDENTIFIER = re.compile(r"[a-z][A-Z]|_|\.[a-z]|/|#|\+\+|[A-Za-z]\d|\d[A-Za-z]")


@dataclass(frozen=True)
class Token:
    """A word of the text with what the extractor needs to know about it."""

    surface: str
    lower: str
    content: bool  # may be part of a phrase
    special: bool  # a proper noun, an acronym or a code identifier
    start: int  # index among the text's words


@dataclass(frozen=True)
class PhraseCandidate:
    """One candidate entity: its canonical value, match terms and statistics."""

    value: str
    terms: tuple[str, ...]
    count: int
    first: int
    words: int
    special: bool

    @property
    def stat(self) -> float:
        """A cheap relevance estimate: frequency, length, specialness, early mention."""
        return (
            math.log2(1 + self.count) * (1.0 + 0.4 * (self.words - 1))
            + (0.8 if self.special else 0.0)
            + 0.3 / (1 + self.first / 8)
        )


def _is_special(surface: str, sentence_start: bool) -> bool:
    if surface.startswith("`") or _IDENTIFIER.search(surface):
        return True
    letters = [c for c in surface if c.isalpha()]
    if len(letters) >= 2 and all(c.isupper() for c in letters):
        return True  # an acronym: API, JWT, LGBTQ
    return surface[:1].isupper() and not sentence_start


def _is_content(lower: str, special: bool) -> bool:
    if lower in STOP_WORDS or lower in WEAK_WORDS:
        return False
    if _MEASURE.match(lower):
        return False
    if special:
        return True
    if len(lower) < 2 or _MEASURE.match(lower):
        return False
    return not (lower.endswith("ly") and len(lower) > 4 and lower not in _LY_NOUNS)


def tokens(text: str) -> list[list[Token]]:
    """The text's words in runs between punctuation (a run never crosses a comma or a full stop)."""
    runs: list[list[Token]] = [[]]
    sentence_start = True
    index = 0
    for m in _PATTERN.finditer(text):
        if m.lastgroup in ("end", "brk"):
            runs.append([])
            sentence_start = sentence_start or m.lastgroup == "end" or m.group() == ":"
            continue
        surface = m.group()
        if m.lastgroup == "word" and ("'" in surface or "’" in surface):
            base, _, suffix = re.split(r"(['’])", surface, maxsplit=1)
            if suffix.lower() != "s":  # a contraction (don't, I'm): a function word
                runs.append([])
                sentence_start = False
                index += 1
                continue
            surface = base  # a possessive: Caroline's -> Caroline
        special = _is_special(surface, sentence_start)
        lower = surface.strip("`").lower()
        runs[-1].append(Token(surface, lower, _is_content(lower, special), special, index))
        sentence_start = False
        index += 1
    return [r for r in runs if r]


def _ngrams(run: list[Token], max_words: int):
    """Sub-runs of consecutive content words, up to ``max_words`` long."""
    chunk: list[Token] = []
    for tok in [*run, None]:
        if tok is not None and tok.content:
            chunk.append(tok)
            continue
        for i in range(len(chunk)):
            for n in range(1, max_words + 1):
                if i + n > len(chunk):
                    break
                gram = chunk[i : i + n]
                last = gram[-1].lower
                if not gram[-1].special and last.endswith(_NOT_LAST) and len(last) > 4:
                    continue
                yield gram
        chunk = []


def candidates(
    text: str,
    *,
    aliases: Mapping[str, str] = BUILTIN_ALIASES,
    max_words: int = MAX_WORDS,
    limit: int | None = None,
) -> list[PhraseCandidate]:
    """Entity candidates of ``text``, best first by :attr:`PhraseCandidate.stat`.

    Args:
        text: any text (a memory or a query).
        aliases: spelling -> canonical spelling, applied to values and terms.
        max_words: longest phrase considered.
        limit: keep only this many (the ones worth embedding).
    """
    found: dict[str, dict] = {}
    for run in tokens(text):
        for gram in _ngrams(run, max_words):
            surface = " ".join(t.surface.strip("`") for t in gram)
            value = display_value(surface, aliases)
            if not value:
                continue
            entry = found.get(value)
            if entry is None:
                found[value] = {
                    "terms": entity_terms(surface, aliases),
                    "count": 1,
                    "first": gram[0].start,
                    "words": len(gram),
                    "special": any(t.special for t in gram),
                }
            else:
                entry["count"] += 1
                entry["special"] = entry["special"] or any(t.special for t in gram)
    out = [PhraseCandidate(value=v, **e) for v, e in found.items() if e["terms"]]
    out.sort(key=lambda c: (-c.stat, c.first, c.value))
    return out[:limit] if limit is not None else out
