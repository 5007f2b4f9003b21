"""Generated training data for model-free update detection (issue 35).

Sentences are built from slot types x paraphrase frames x values x subjects, each token tagged
with what it is to the fact:

- ``S``: the subject the fact is about (a person, a team, a service);
- ``A``: the aspect within the slot (the counted noun, the favourite *what*, the dependency
  whose version it is, the limit's measure);
- ``V``: the value the fact states now;
- ``X``: a value the fact says is over ("left **Shopify**", "switched from **Okta**");
- ``O``: anything else.

Each sentence also carries its slot (or ``none``) and whether it ends a fact ("I don't play
tennis anymore", "we separated"). ``scripts/train_infer.py`` fits the classifiers on them.

The frames are in ``lab.infer_frames``, the values in ``lab.infer_vocabulary``. They were
written for this generator; none is taken from the hand-written
evaluation dialogues (``scripts/lab/data/infer/``), which it must never see.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from dataclasses import dataclass

from lab.infer_frames import FRAMES, NONE_FRAMES
from lab.infer_vocabulary import (
    AFTER,
    ALLERGENS,
    BEFORE,
    CITIES,
    COMPANIES,
    COMPONENTS,
    COUNT_NOUNS,
    DEPENDENCIES,
    DIETS,
    EVENTS,
    FAVOURITE_OF,
    FAVOURITES,
    FILLERS,
    HABITS,
    HOBBIES,
    HOSTS,
    LIMITS,
    NAMES,
    NUMBERS,
    OWNED,
    OWNERS,
    PARTNERS,
    PREFERENCES,
    RELATIONS,
    ROLES,
    SCHOOLS,
    TAILS,
    TEAMS,
    TIMES,
    TOOLS,
    WHENS,
)

#: tokens as the tagger reads them (``localmem.infer.reading`` uses the same pattern)
TOKEN = re.compile(r"\w+(?:[.'’:/-]\w+)*|[^\w\s]")

SLOTS = (
    "home",
    "employer",
    "role",
    "partner",
    "diet",
    "allergy",
    "team",
    "manager",
    "age",
    "count",
    "preference",
    "hobby",
    "habit",
    "education",
    "version",
    "owner",
    "schedule",
    "limit",
    "host",
    "tool",
    "none",
)
#: slots that hold several values at once: only an ending that names one ends it
MULTI_VALUED = ("allergy", "hobby", "habit")
#: slots that hold one value at a time: a new value ends the old one
SINGLE_VALUED = tuple(s for s in SLOTS if s not in (*MULTI_VALUED, "none"))


@dataclass(frozen=True)
class Example:
    """One generated sentence: its tokens, their tags, its slot and whether it ends a fact."""

    tokens: tuple[str, ...]
    tags: tuple[str, ...]
    slot: str
    ending: bool

    @property
    def text(self) -> str:
        return detokenise(self.tokens)


def detokenise(tokens: tuple[str, ...] | list[str]) -> str:
    out = ""
    for t in tokens:
        if (out and not re.match(r"[^\w\s]", t)) or t in "(":
            out += " "
        out += t
    return out.strip()


# -- subjects ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Subject:
    """A subject as the frames need it: the name, a possessive, its grammatical person."""

    text: str
    possessive: str
    person: str  # "1s" (I), "1p" (we), "3s", "3p"


def person_subject(rng: random.Random) -> Subject:
    r = rng.random()
    if r < 0.55:
        name = rng.choice(NAMES)
        return Subject(name, f"{name}'s", "3s")
    if r < 0.7:
        return Subject("I", "my", "1s")
    if r < 0.78:
        return Subject("we", "our", "1p")
    owner = rng.choice(["my", f"{rng.choice(NAMES)}'s", "our", "his", "her"])
    rel = rng.choice(RELATIONS)
    return Subject(f"{owner} {rel}", f"{owner} {rel}'s", "3s")


def thing_subject(rng: random.Random) -> Subject:
    c = rng.choice(COMPONENTS)
    return Subject(c, f"{c}'s", "3s")


_AGREE = {
    "1s": {"s": "", "es": "", "be": "am", "have": "have", "was": "was", "do": "do", "ies": "y"},
    "1p": {"s": "", "es": "", "be": "are", "have": "have", "was": "were", "do": "do", "ies": "y"},
    "3s": {
        "s": "s",
        "es": "es",
        "be": "is",
        "have": "has",
        "was": "was",
        "do": "does",
        "ies": "ies",
    },
    "3p": {"s": "", "es": "", "be": "are", "have": "have", "was": "were", "do": "do", "ies": "y"},
}

_OBJECT = {"I": "me", "we": "us"}
#: words a filler's comma lowers at the start of what follows
_LOWER = {"We", "The", "There", "Our", "My", "His", "Her", "From", "All", "For", "Home", "Work"}


def _agree(frame: str, subj: Subject) -> str:
    for key, value in _AGREE[subj.person].items():
        frame = frame.replace("{" + key + "}", value)
    return frame


def _fill(frame: str, parts: dict[str, tuple[str, str]]) -> tuple[list[str], list[str]]:
    """Tokens and tags of a frame whose placeholders name ``(text, tag)`` parts."""
    tokens: list[str] = []
    tags: list[str] = []
    for piece in re.split(r"(\{[A-Z]\})", frame):
        if not piece:
            continue
        if re.fullmatch(r"\{[A-Z]\}", piece):
            text, tag = parts[piece[1]]
        else:
            text, tag = piece, "O"
        for tok in TOKEN.findall(text):
            tokens.append(tok)
            tags.append(tag)
    return tokens, tags


#: slots whose value is one pick from a list, and slots whose value comes with its aspect
_PLAIN: dict[str, list[str]] = {
    "home": CITIES,
    "employer": COMPANIES,
    "role": ROLES,
    "partner": PARTNERS,
    "manager": PARTNERS,
    "diet": DIETS,
    "allergy": ALLERGENS,
    "team": TEAMS,
    "habit": HABITS,
    "education": SCHOOLS,
    "owner": OWNERS,
    "schedule": WHENS,
    "host": HOSTS,
}
_WITH_ASPECT: dict[str, list[tuple[str, list[str]]]] = {
    "version": DEPENDENCIES,
    "limit": LIMITS,
    "tool": TOOLS,
}


def _value(slot: str, rng: random.Random) -> tuple[str, str, list[str]]:
    """``(value, aspect, pool)`` for a slot: a value, its aspect and where an old one comes from."""
    if slot in _PLAIN:
        return rng.choice(_PLAIN[slot]), "", _PLAIN[slot]
    if slot in _WITH_ASPECT:
        aspect, values = rng.choice(_WITH_ASPECT[slot])
        return rng.choice(values), aspect, values
    if slot == "age":
        n = str(rng.randint(3, 95))
        return n, "", [str(i) for i in range(3, 95)]
    if slot == "count":
        return rng.choice(NUMBERS), rng.choice(COUNT_NOUNS), NUMBERS
    if slot == "preference":
        if rng.random() < 0.5:
            return rng.choice(FAVOURITES), rng.choice(FAVOURITE_OF), FAVOURITES
        aspect, values = rng.choice(PREFERENCES)
        return rng.choice(values), aspect, values
    if slot == "hobby":  # likes: several hold at once ("likes tea", "likes coffee")
        pool = FAVOURITES if rng.random() < 0.4 else HOBBIES
        return rng.choice(pool), "", pool
    raise KeyError(slot)


def _subject_for(slot: str, rng: random.Random) -> Subject:
    if slot in ("version", "limit", "host") or (slot == "tool" and rng.random() < 0.5):
        return thing_subject(rng)
    if slot == "owner":
        return Subject(rng.choice(OWNED), "", "3s")
    if slot == "schedule":
        if rng.random() < 0.3:
            return person_subject(rng)
        return Subject(rng.choice(EVENTS), "", "3s")
    if slot == "count" and rng.random() < 0.25:
        return thing_subject(rng)
    return person_subject(rng)


def _decorate(tokens: list[str], tags: list[str], rng: random.Random) -> None:
    """A filler before, a tail after, or the sentence as said by someone ("Ann: ...")."""
    r = rng.random()
    if r < 0.25:
        words = rng.choice(FILLERS) if r < 0.12 else rng.choice(BEFORE)
        head = [*TOKEN.findall(words), ","]
        if tokens and tokens[0] in _LOWER:
            tokens[0] = tokens[0].lower()
        tokens[:0] = head
        tags[:0] = ["O"] * len(head)
    r = rng.random()
    if r < 0.2:
        tail = [",", *TOKEN.findall(rng.choice(TAILS))]
        tokens += tail
        tags += ["O"] * len(tail)
    elif r < 0.5:
        tail = ([","] if rng.random() < 0.4 else []) + TOKEN.findall(rng.choice(AFTER))
        tokens += tail
        tags += ["O"] * len(tail)
    if rng.random() < 0.2:
        head = [rng.choice(NAMES), ":"]
        tokens[:0] = head
        tags[:0] = ["O", "O"]
    tokens.append(rng.choice([".", ".", ".", "!", ""]) or ".")
    tags.append("O")


def _capitalise(tokens: list[str]) -> None:
    for i, tok in enumerate(tokens):
        if re.match(r"\w", tok):
            tokens[i] = tok[0].upper() + tok[1:]
            return


def example(slot: str, rng: random.Random) -> Example:
    """One sentence of ``slot`` (or ``none``)."""
    if slot == "none":
        frame = rng.choice(NONE_FRAMES)
        subj = person_subject(rng) if rng.random() < 0.7 else thing_subject(rng)
        parts = {
            "S": (subj.text, "O"),
            "P": (subj.possessive, "O"),
            "C": (rng.choice(CITIES), "O"),
            "K": (rng.choice(COMPANIES), "O"),
            "T": (rng.choice(TIMES), "O"),
        }
        tokens, tags = _fill(_agree(frame, subj), parts)
        _capitalise(tokens)
        _decorate(tokens, tags, rng)
        return Example(tuple(tokens), tuple(tags), "none", False)
    frame = rng.choice(FRAMES[slot])
    ending = frame.startswith("!")
    frame = frame.lstrip("!")
    subj = _subject_for(slot, rng)
    value, aspect, pool = _value(slot, rng)
    old = rng.choice([v for v in pool if v != value] or pool)
    parts = {
        "S": (subj.text, "S"),
        "M": (_OBJECT.get(subj.text, subj.text), "S"),
        "P": (subj.possessive, "S"),
        "V": (value, "V"),
        "X": (old, "X"),
        "A": (aspect or "", "A"),
        "T": (rng.choice(TIMES), "O"),
        "R": (rng.choice(ROLES), "O"),
    }
    tokens, tags = _fill(_agree(frame, subj), parts)
    _capitalise(tokens)
    _decorate(tokens, tags, rng)
    return Example(tuple(tokens), tuple(tags), slot, ending)


def generate(n_per_slot: int, *, seed: int = 35, none_share: float = 2.0) -> Iterator[Example]:
    """``n_per_slot`` sentences of every slot and ``none_share`` times as many of ``none``."""
    rng = random.Random(seed)
    for slot in SLOTS:
        count = int(n_per_slot * none_share) if slot == "none" else n_per_slot
        for _ in range(count):
            yield example(slot, rng)
