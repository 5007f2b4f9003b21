"""Statements inside episodic memories: who said them, whether they carry information, and
how to retell them in the third person (pure text functions, English only).

An episodic memory of a conversation reads ``"Caroline: I went to a support group..."``; the
speaker prefix tells whose first person "I" is, so a statement can become a fact about
Caroline. Greetings, questions and reactions ("Wow, that's cool!") carry no lasting knowledge
and are not used for facts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from localmem.text import STOP_WORDS, stem, words


def word_set(text: str) -> frozenset[str]:
    """The words of a space-separated list (keeps long word lists readable)."""
    return frozenset(text.split())


_SPEAKER = re.compile(r"^\s*([A-Z][\w'’\-]*(?: [A-Z][\w'’\-]*){0,2}):\s+(.*)$", re.DOTALL)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'A-Z0-9])")
_CAPTION = re.compile(r"\s*\[shares? a photo[^\]]*\]\s*", re.IGNORECASE)
# reactions and small talk: a statement starting like this says nothing lasting
_SMALL_TALK = re.compile(
    r"^(hey|hi|hello|wow|thanks|thank you|thx|congrats|congratulations|yeah|yes|no|oh|aw+|"
    r"haha|lol|ok|okay|sure|cool|great|awesome|nice|glad|sounds|that's|that is|good to|"
    r"see you|bye|take care|you're|you are|you've|you have|you'd|you should|whoa|omg|so cool|"
    r"so glad|really glad|looks like|sounds like|good luck|no worries|totally|exactly)\b",
    re.IGNORECASE,
)
MIN_CONTENT_WORDS = 4
_SECOND_PERSON = re.compile(r"\b(?:you|your|yours|yourself|you're|you've|you'd|ya)\b", re.I)
_FIRST_PERSON_WORD = re.compile(r"\b(?:I|I'm|I've|I'd|I'll|my|me|mine|myself|we|our|us)\b")
# "Caroline love..." reads wrong: these verbs take an -s after a name
_VERBS = word_set(
    "love like enjoy prefer hate want need think feel know hope plan work live make take "
    "play paint read write run cook bake travel visit try keep find believe wish miss "
    "remember spend teach learn volunteer help support collect watch listen adore "
    "dislike get use own drive walk swim sing dance draw study practise practice"
)
_ADVERBS = (
    r"(?:(?:really|also|just|always|usually|often|never|still|totally|absolutely|"
    r"sometimes|even|actually|definitely|truly|especially|now)\s+)?"
)
_I_VERB = re.compile(rf"\bI ({_ADVERBS})([a-z]+)\b")

# first person -> third person, longest forms first; agreement of other verbs is left alone
_FIRST_PERSON = (
    (re.compile(r"\bI am\b|\bI'm\b|\bI’m\b"), "{s} is"),
    (re.compile(r"\bI was\b"), "{s} was"),
    (re.compile(r"\bI have\b|\bI've\b|\bI’ve\b"), "{s} has"),
    (re.compile(r"\bI will\b|\bI'll\b|\bI’ll\b"), "{s} will"),
    (re.compile(r"\bI would\b|\bI'd\b|\bI’d\b"), "{s} would"),
    (re.compile(r"\bI\b"), "{s}"),
    (re.compile(r"\bmyself\b", re.IGNORECASE), "{s}"),
    (re.compile(r"\bmy\b"), "{s}'s"),
    (re.compile(r"\bMy\b"), "{s}'s"),
    (re.compile(r"\bme\b"), "{s}"),
    (re.compile(r"\bmine\b"), "{s}'s"),
)


@dataclass(frozen=True)
class Statement:
    """One sentence of a memory.

    Attributes:
        member: Index of the memory (in its cluster) the sentence comes from.
        speaker: Who said it, when the memory names a speaker.
        text: The sentence as said.
        terms: Its stemmed content words.
    """

    member: int
    speaker: str | None
    text: str
    terms: frozenset[str]

    @property
    def about_listener(self) -> bool:
        """Whether it speaks to or about the other person ("you", "your")."""
        return bool(_SECOND_PERSON.search(self.text))

    @property
    def first_person(self) -> bool:
        """Whether the speaker talks about themselves (what memory should keep)."""
        return bool(_FIRST_PERSON_WORD.search(self.text))

    @property
    def informative(self) -> bool:
        """A statement worth keeping as knowledge: no question, no small talk, enough words."""
        text = self.text.strip()
        if text.endswith("?") or _SMALL_TALK.match(text):
            return False
        return len(self.terms) >= MIN_CONTENT_WORDS


def split_speaker(text: str) -> tuple[str | None, str]:
    """``"Caroline: hi"`` -> ``("Caroline", "hi")``; text without a speaker prefix is kept."""
    match = _SPEAKER.match(text)
    if match:
        return match.group(1), match.group(2)
    return None, text


def sentences(text: str) -> list[str]:
    """The sentences of a text (photo captions dropped, whitespace folded)."""
    text = " ".join(_CAPTION.sub(" ", text).split())
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def statements(texts: list[str], *, speaker: str | None = None) -> list[Statement]:
    """Every sentence of every text, with its speaker (from the text's prefix, else ``speaker``)."""
    out = []
    for i, raw in enumerate(texts):
        who, body = split_speaker(raw)
        who = who or speaker
        for sent in sentences(body):
            out.append(Statement(i, who, sent, frozenset(content_terms(sent))))
    return out


def content_terms(text: str) -> list[str]:
    """Stemmed words that are not stop-words, in order."""
    return [stem(w) for w in words(text) if w not in STOP_WORDS and len(w) > 1]


def third_person(text: str, speaker: str | None) -> str:
    """Retell a first-person sentence about ``speaker`` (unchanged without one)."""
    if not speaker:
        return text
    text = _I_VERB.sub(lambda m: f"I {m.group(1)}{_third_singular(m.group(2))}", text)
    for pattern, repl in _FIRST_PERSON:
        text = pattern.sub(repl.format(s=speaker), text)
    return text


def _third_singular(verb: str) -> str:
    if verb not in _VERBS:
        return verb
    if verb.endswith(("s", "sh", "ch", "x", "o")):
        return verb + "es"
    if verb.endswith("y") and verb[-2:-1] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def clip(text: str, limit: int) -> str:
    """At most ``limit`` characters, cut at a word boundary with an ellipsis."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:-")
    return cut + "…"
