"""Key phrases two texts share: the model-free way to name a connection (pure functions).

A phrase is a run of up to three content words (no stop-words, no punctuation inside), compared
by stems so "rate limiting" and "rate limiter" meet. Which shared phrases count is decided by how
rare their words are in the store (document frequency from the lexical index): a word that half
the memories contain (a speaker's name, "today") names no particular connection.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from localmem.text import STOP_WORDS, stem

#: words that are not stop-words for search but name nothing on their own in a key phrase
GENERIC = frozenset(
    [
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "first",
        "second",
        "third",
        "new",
        "old",
        "use",
        "used",
        "using",
        "uses",
        "need",
        "needs",
        "needed",
        "make",
        "makes",
        "made",
        "making",
        "way",
        "ways",
        "time",
        "times",
        "every",
        "like",
        "well",
        "good",
        "great",
        "better",
        "best",
        "bad",
        "take",
        "takes",
        "took",
        "want",
        "wants",
        "think",
        "know",
        "say",
        "says",
        "said",
        "see",
        "saw",
        "also",
        "still",
        "even",
        "back",
        "just",
        "kind",
        "sort",
        "lot",
        "bit",
        "thing",
        "stuff",
        "able",
        "sure",
        "maybe",
        "actually",
    ]
)

#: longest phrase, in words
MAX_WORDS = 3
#: a word must have at least this many characters to carry a phrase alone
MIN_CHARS = 3

# a word (as the lexical index splits words: a hyphen separates) or a break (punctuation)
_TOKEN = re.compile(r"[A-Za-z0-9]+(?:['’][A-Za-z]+)?|[.,;:!?()\[\]{}\"“”/|\n]")


@dataclass(frozen=True)
class Phrase:
    """A candidate key phrase: its stems (the identity) and its words as written."""

    stems: tuple[str, ...]
    text: str


def _runs(text: str) -> list[list[str]]:
    """Runs of consecutive content words, split at stop-words and punctuation."""
    runs: list[list[str]] = []
    current: list[str] = []
    for token in _TOKEN.findall(text):
        word = token.lower()
        base = re.split(r"['’]", word, maxsplit=1)[0]
        if not base[:1].isalnum() or base in STOP_WORDS or base in GENERIC:
            if current:
                runs.append(current)
            current = []
            continue
        current.append(base)
    if current:
        runs.append(current)
    return runs


def _usable(word: str) -> bool:
    return len(word) >= MIN_CHARS and not word.isdigit()


def phrases(text: str) -> dict[tuple[str, ...], Phrase]:
    """Every phrase of 1..3 content words in ``text``, by stems (first spelling kept)."""
    out: dict[tuple[str, ...], Phrase] = {}
    for run in _runs(text):
        lowered = [w.lower() for w in run]
        stems = [stem(w) for w in lowered]
        for n in range(1, MAX_WORDS + 1):
            for i in range(len(run) - n + 1):
                if n == 1 and not _usable(lowered[i]):
                    continue
                key = tuple(stems[i : i + n])
                out.setdefault(key, Phrase(key, " ".join(lowered[i : i + n])))
    return out


def idf(df: int, n_docs: int) -> float:
    """BM25-style inverse document frequency (never negative)."""
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


def rare_filter(
    doc_freq: Mapping[str, int], n_docs: int, *, max_share: float, min_docs: int = 50
) -> Callable[[str], bool]:
    """A test "is this stem rare enough to name a connection?".

    In a small store every word is rare (document frequencies mean little below ``min_docs``
    memories); in a larger one a stem found in more than ``max_share`` of the memories is not.
    """
    if n_docs < min_docs:
        return lambda s: True
    limit = max_share * n_docs
    return lambda s: doc_freq.get(s, 0) <= limit


def shared_phrases(
    new_text: str,
    old_text: str,
    *,
    is_rare: Callable[[str], bool] = lambda s: True,
    weight: Callable[[str], float] = lambda s: 1.0,
    limit: int = 3,
) -> list[str]:
    """Phrases of ``new_text`` that ``old_text`` also has, most telling first.

    A phrase counts when all its words are rare (``is_rare``); a shared phrase hides the shorter
    shared phrases inside it ("sliding window" hides "window"). Ranked by the summed ``weight``
    (e.g. idf) of their stems, then by length, then alphabetically (deterministic).
    """
    mine = phrases(new_text)
    theirs = phrases(old_text)
    common = [p for key, p in mine.items() if key in theirs and all(is_rare(s) for s in key if s)]
    keep = [p for p in common if not any(_inside(p.stems, q.stems) for q in common if q is not p)]
    keep.sort(key=lambda p: (-sum(weight(s) for s in p.stems), -len(p.stems), p.text))
    return [p.text for p in keep[:limit]]


def new_phrases(
    new_text: str,
    old_text: str,
    *,
    weight: Callable[[str], float] = lambda s: 1.0,
    limit: int = 3,
) -> list[str]:
    """Phrases of ``new_text`` that ``old_text`` lacks: what the new memory adds to the old.

    Maximal phrases only (a phrase inside a longer one is hidden), ranked like
    :func:`shared_phrases`; a phrase of which the old text has every word is not new.
    """
    theirs_stems = {s for key in phrases(old_text) for s in key}
    fresh = [p for key, p in phrases(new_text).items() if not set(key) <= theirs_stems]
    keep = [p for p in fresh if not any(_inside(p.stems, q.stems) for q in fresh if q is not p)]
    keep.sort(key=lambda p: (-sum(weight(s) for s in p.stems), -len(p.stems), p.text))
    return [p.text for p in keep[:limit]]


def _inside(small: tuple[str, ...], big: tuple[str, ...]) -> bool:
    if len(small) >= len(big):
        return False
    n = len(small)
    return any(big[i : i + n] == small for i in range(len(big) - n + 1))


def stems_of(texts: Iterable[str]) -> set[str]:
    """Every stem in some texts (for looking up document frequencies in one go)."""
    return {s for t in texts for key in phrases(t) for s in key}
