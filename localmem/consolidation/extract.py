"""Model-free semantic facts: what a cluster of episodic memories establishes, by extraction.

Without a model nothing new can be written, so a fact is made of what was said: the cluster's
most central informative statements (the ones sharing most content words with the other
members), retold in the third person and merged into one sentence or two, and the key phrases
the members share (stored as the fact's context, so they are embedded and searchable too).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from localmem.consolidation.statements import (
    Statement,
    clip,
    content_terms,
    statements,
    third_person,
    word_set,
)
from localmem.text import STOP_WORDS, words

#: words of conversation that say nothing about a topic
FILLER = word_set(
    "great awesome cool thanks thank amazing love look looks looking made make new good since "
    "last really much lot lots glad happy nice wow bye time day sure thing things lol kinda gonna "
    "yeah hey get got go going know think feel felt like just also even way well one see seen "
    "wanna totally super pretty definitely hear heard glad tell told keep kept want wanted "
    "awesome fun right always still though let lets mean means"
)

#: two statements this similar (Jaccard of content words) say the same thing: keep one
DUPLICATE_OVERLAP = 0.5


@dataclass(frozen=True)
class ExtractedFact:
    """A fact and the members (0-based indices) whose statements it retells."""

    text: str
    members: tuple[int, ...]


def central_statements(found: Sequence[Statement], n_members: int) -> list[Statement]:
    """Informative statements, most central first (shared content words, by members)."""
    df: Counter[str] = Counter()
    for member in range(n_members):
        df.update({t for s in found if s.member == member for t in s.terms})

    def score(s: Statement) -> float:
        shared = sum(df[t] - 1 for t in s.terms)  # words other members also use
        return shared / math.sqrt(len(s.terms))

    useful = [s for s in found if s.informative and not s.about_listener]
    # what the speakers say about themselves first: that is what is worth remembering
    return sorted(useful, key=lambda s: (not s.first_person, -score(s), s.member))


def extract_fact(
    texts: Sequence[str], *, subject: str | None = None, limit: int = 200, most: int = 2
) -> ExtractedFact | None:
    """One fact from a cluster's texts: up to ``most`` central statements of different members,
    near-duplicates merged, in the third person; None when nothing informative was said."""
    found = statements(list(texts), speaker=subject)
    chosen: list[Statement] = []
    for s in central_statements(found, len(texts)):
        if any(s.member == c.member or _overlap(s, c) >= DUPLICATE_OVERLAP for c in chosen):
            continue
        chosen.append(s)
        if len(chosen) == most:
            break
    if not chosen:
        return None
    chosen.sort(key=lambda s: s.member)  # the order things were said in
    parts = [_sentence(third_person(s.text, s.speaker)) for s in chosen]
    text = " ".join(parts)
    if len(text) > limit:  # one statement that fits beats two that are cut
        text = parts[0]
    return ExtractedFact(clip(text, limit), tuple(s.member for s in chosen))


def key_phrases(
    texts: Sequence[str],
    *,
    most: int = 4,
    min_members: int = 2,
    exclude: Sequence[str] = (),
) -> list[str]:
    """Words and two-word phrases several members share, most shared first.

    A phrase counts once per member; two-word phrases win ties over single words, and a word
    inside a chosen phrase is not repeated. Filler words of conversation and the words of
    ``exclude`` (the speakers' names: they are in every memory) are never key phrases.
    """
    skip = STOP_WORDS | FILLER | {w.lower() for w in exclude}
    seen: Counter[str] = Counter()
    surface: dict[str, str] = {}
    first: dict[str, int] = {}
    position = 0
    for text in texts:
        body = " ".join(statement.text for statement in statements([text]))
        tokens = [w for w in words(body) if len(w) > 1]
        grams: set[str] = set()
        for i, w in enumerate(tokens):
            if w in skip or w.isdigit():
                continue
            grams.add(w)
            if i + 1 < len(tokens) and tokens[i + 1] not in skip:
                grams.add(f"{w} {tokens[i + 1]}")
        for g in sorted(grams):
            key = " ".join(content_terms(g))
            if not key:
                continue
            seen[key] += 1
            surface.setdefault(key, g)
            first.setdefault(key, position)
            position += 1
    ranked = sorted(
        (k for k, c in seen.items() if c >= min_members),
        key=lambda k: (-seen[k], -k.count(" "), first[k]),
    )
    out: list[str] = []
    for key in ranked:
        parts = set(key.split())
        if any(parts <= set(o.split()) or set(o.split()) <= parts for o in out):
            continue
        out.append(key)
        if len(out) == most:
            break
    return [surface[k] for k in out]


def _overlap(a: Statement, b: Statement) -> float:
    union = a.terms | b.terms
    return len(a.terms & b.terms) / len(union) if union else 1.0


def _sentence(text: str) -> str:
    text = text.strip()
    if text and text[0].islower():
        text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."
