"""A model-free judge: token overlap between an answer and the reference answer.

Both texts are normalised the way QA evaluations do (lower case, no punctuation, no articles),
number words become digits, and words are stemmed. Then:

- ``f1``: harmonic mean of token precision and recall (multiset overlap);
- ``recall``: the share of the reference's tokens that the answer contains.

The label is CORRECT when ``f1 >= F1_THRESHOLD`` (0.5), or when ``recall >=
RECALL_THRESHOLD`` (0.75) and the answer is at most ``MAX_CONTAINING_TOKENS`` (30) tokens long:
a one-sentence answer that contains the reference is what LLM judges in LoCoMo/mem0 evaluations
accept ("touches on the same topic"), while a dump of every memory is not. Numbers are the
point of dates and counts, so every number in the reference must appear in the answer ("8 May
2023" is WRONG for "7 May 2023" although most tokens agree). When the reference says the
question cannot be answered, an answer that also says so is CORRECT. The thresholds are set by
hand, not tuned on any benchmark.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from dataclasses import dataclass

from localmem.text import stem

F1_THRESHOLD = 0.5
RECALL_THRESHOLD = 0.75
MAX_CONTAINING_TOKENS = 30

_ARTICLES = frozenset({"a", "an", "the"})
_NUMBER_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty"
)
_NUMBERS = {w: str(i) for i, w in enumerate(_NUMBER_WORDS.split())}
_ORDINAL = re.compile(r"^(\d+)(?:st|nd|rd|th)$")
_PUNCT = str.maketrans({c: " " for c in string.punctuation + "’‘“”"})
_UNKNOWN = re.compile(
    r"not (mentioned|in (the )?memor|known|specified|stated|available|provided)|no information|"
    r"(don't|do not|cannot|can't) (know|tell|determine|answer)|\bunknown\b|not answerable",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Verdict:
    """The label and the numbers behind it."""

    label: str  # CORRECT or WRONG
    f1: float
    recall: float
    reasoning: str


def normalise(text: str) -> list[str]:
    """Tokens for comparison: lower case, no punctuation or articles, digits, stems."""
    out = []
    for word in text.lower().translate(_PUNCT).split():
        if word in _ARTICLES:
            continue
        ordinal = _ORDINAL.match(word)
        out.append(ordinal.group(1) if ordinal else _NUMBERS.get(word) or stem(word))
    return out


def token_f1(answer: str, reference: str) -> tuple[float, float, float]:
    """(f1, precision, recall) of the answer's tokens against the reference's."""
    a, r = normalise(answer), normalise(reference)
    if not a or not r:
        same = float(answer.strip().lower() == reference.strip().lower())
        return same, same, same
    overlap = sum((Counter(a) & Counter(r)).values())
    if overlap == 0:
        return 0.0, 0.0, 0.0
    precision, recall = overlap / len(a), overlap / len(r)
    return 2 * precision * recall / (precision + recall), precision, recall


def says_unknown(text: str) -> bool:
    """Whether a text says the answer is not known or not in memory."""
    return bool(_UNKNOWN.search(text))


def judge_by_overlap(answer: str, reference: str) -> Verdict:
    """CORRECT or WRONG by token overlap (see the module docstring for the rule)."""
    f1, _, recall = token_f1(answer, reference)
    if says_unknown(reference):
        ok = says_unknown(answer)
        why = "reference says unanswerable; answer " + ("agrees" if ok else "gives an answer")
        return Verdict("CORRECT" if ok else "WRONG", f1, recall, why)
    answer_tokens = normalise(answer)
    numbers = {t for t in normalise(reference) if t.isdigit()}
    missing = sorted(numbers - set(answer_tokens))
    contains = recall >= RECALL_THRESHOLD and len(answer_tokens) <= MAX_CONTAINING_TOKENS
    ok = not missing and (f1 >= F1_THRESHOLD or contains)
    reasoning = (
        f"token F1 {f1:.2f} (threshold {F1_THRESHOLD}), reference recall {recall:.2f} over "
        f"{len(answer_tokens)} answer tokens (threshold {RECALL_THRESHOLD} within "
        f"{MAX_CONTAINING_TOKENS})"
    )
    if missing:
        reasoning += f"; reference numbers missing: {', '.join(missing)}"
    return Verdict("CORRECT" if ok else "WRONG", f1, recall, reasoning)
