"""Model-free fact extraction: the declarative sentences of a text, made self-contained.

No model decides what matters here, so the rules are plain:

- questions, greetings and thanks, and sentences of fewer than four words give no fact;
- with a speaker, first-person words become the speaker's name ("I adopted a dog" ->
  "Melanie adopted a dog"); with a date, a relative time ("last week") gets the date it means
  appended in brackets;
- salience: 1.0 for lasting personal facts (identity, home, work, family, pets, preferences,
  health), 0.5 for sentences naming something specific (a capitalised name or a number), 0.2
  for the rest. At most five facts, the most salient first (then in text order).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from localmem.answers.extractive import parse_date, resolve_relative, split_sentences

MAX_FACTS = 5
MAX_CHARS = 200
LASTING = re.compile(
    r"\b(my name is|i am a|i'm a|live[sd]? in|moved to|work(?:s|ed)? (?:at|as|for)|born|"
    r"married|divorced|my (?:wife|husband|partner|son|daughter|kids?|children|mother|father|"
    r"mom|dad|sister|brother|dog|cat)|allergic|favou?rite|prefer|love[sd]?|hate[sd]?|"
    r"adopted|graduated|studying|diagnosed)\b",
    re.IGNORECASE,
)
SMALL_TALK = re.compile(
    r"^\s*(hi|hey|hello|thanks|thank you|ok|okay|cool|wow|haha|lol|bye|good (morning|night)|"
    r"see you|nice to)\b",
    re.IGNORECASE,
)
_SPECIFIC = re.compile(r"\d|(?<=\s)[A-Z][a-z]")
#: present-tense verbs that take an -s after a name ("I live" -> "Ann lives")
_VERBS = (
    "live|work|like|love|hate|prefer|want|need|own|play|enjoy|drink|eat|think|know|feel|"
    "run|drive|plan|hope|go|do|teach|watch|study|miss|volunteer|paint|write|read|cook|train"
)
_FIRST_PERSON = (
    (re.compile(rf"\bI (?:still |now |really |also )?(?:{_VERBS})\b"), "CONJ"),
    (re.compile(r"\bI'm\b|\bI am\b"), "{s} is"),
    (re.compile(r"\bI have\b"), "{s} has"),
    (re.compile(r"\bI've\b"), "{s} has"),
    (re.compile(r"\bI'll\b"), "{s} will"),
    (re.compile(r"\bI'd\b"), "{s} would"),
    (re.compile(r"\bI\b"), "{s}"),
    (re.compile(r"\b[Mm]y\b"), "{s}'s"),
    (re.compile(r"\b[Mm]ine\b"), "{s}'s"),
    (re.compile(r"\bme\b"), "{s}"),
)


def _third_person(phrase: str, speaker: str) -> str:
    """``I (still) live`` said by Ann -> ``Ann (still) lives``."""
    *adverbs, verb = phrase.split()[1:]
    if verb.endswith("y") and verb not in ("play", "enjoy"):
        verb = verb[:-1] + "ies"
    elif verb.endswith(("ch", "sh", "ss", "o")):
        verb += "es"
    else:
        verb += "s"
    return " ".join([speaker, *adverbs, verb])


def _as_written(text: str) -> Callable[[re.Match[str]], str]:
    """A replacement that puts ``text`` in as it is (``re.sub`` would read a template's
    backslashes as escapes)."""
    return lambda _match: text


def self_contained(sentence: str, speaker: str | None, when: str | None) -> str:
    """``sentence`` as the speaker's ("I" becomes the name), relative dates given their date."""
    if speaker:
        for pattern, repl in _FIRST_PERSON:
            if repl == "CONJ":
                sentence = pattern.sub(lambda m: _third_person(m.group(0), speaker), sentence)
            else:
                # a function, not a template: a name such as DOMAIN\\user is not a regex escape
                sentence = pattern.sub(_as_written(repl.format(s=speaker)), sentence)
    anchor = parse_date(when)
    if anchor is not None:
        phrase = resolve_relative(sentence, anchor)
        if phrase:
            sentence = f"{sentence.rstrip()} ({phrase})"
    return sentence


def salience(sentence: str) -> float:
    """How long a sentence is likely to matter (see the module docstring)."""
    if LASTING.search(sentence):
        return 1.0
    if _SPECIFIC.search(sentence):
        return 0.5
    return 0.2


def extract_facts(
    text: str, *, speaker: str | None = None, time: str | None = None
) -> list[tuple[str, float]]:
    """``(fact, salience)`` pairs of ``text``, the most salient first."""
    found: list[tuple[str, float]] = []
    seen: set[str] = set()
    for sentence in split_sentences(text):
        sentence = re.sub(r"^\s*[A-Z][\w .'-]{0,40}:\s+", "", sentence).strip()  # "Ann: ..."
        if (
            sentence.endswith("?")
            or len(sentence.split()) < 4
            or SMALL_TALK.match(sentence)
            or sentence.lower() in seen
        ):
            continue
        seen.add(sentence.lower())
        score = salience(sentence)
        fact = self_contained(sentence, speaker, time)
        found.append((fact[:MAX_CHARS].rstrip(), score))
    found.sort(key=lambda f: -f[1])  # stable: text order among equals
    return found[:MAX_FACTS]
