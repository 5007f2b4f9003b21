"""Model-free reading of a fact: who it is about, which slot it fills, with what value.

Only a few kinds of facts hold a single value at a time, so only those can supersede one
another without a model: where someone lives, where they work and as what, who they are with,
a favourite X, an age, a count ("has 3 cats"). Liking things is not one of them: "likes tea"
and "likes coffee" are both true; only an explicit negation ("no longer likes tea") ends a
like. Anything else is no slot and is only ever added or recognised as a duplicate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

NUMBER_WORDS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve".split()  # noqa: SIM905
    )
}
_NUM = r"(\d+|" + "|".join(NUMBER_WORDS) + r")"
_WHO = r"(?P<subj>(?-i:I|[A-Z][\w'-]*(?: [A-Z][\w'-]*)?)|she|he|they|we)"
_SUBJECT = "^" + _WHO + r"\s+"
_NEG = r"(?P<neg>no longer |not |doesn't |does not |don't |do not |isn't |is not |never )?"
_VALUE = r"(?P<value>[\w' -]+?)"
_END = r"(?:\s*(?:now|anymore|any more|these days|again)\b)?[.!]?\s*(?:\(.*\))?[.!]?$"


@dataclass(frozen=True)
class Slot:
    """A single-valued statement: ``subject`` has ``value`` for ``slot`` (or no longer, when
    ``negated``)."""

    subject: str
    slot: str
    value: str
    negated: bool = False


def _rule(slot: str, verbs: str, tail: str = _VALUE) -> tuple[str, re.Pattern[str]]:
    return slot, re.compile(_SUBJECT + _NEG + rf"(?:{verbs})\s+" + tail + _END, re.IGNORECASE)


# the order matters: the first rule that matches reads the sentence
RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    _rule(
        "home",
        r"(?:has |have )?(?:just |recently |finally )?(?:lives?|living|lived|moved|"
        r"relocated|settled|is based|are based|resides?) (?:in|to)",
    ),
    _rule(
        "home",
        r"(?:has |have )?(?:just |recently )?moved (?:away )?(?:out of|from)",
        r"(?P<value>[\w' -]+?)(?P<out>)",
    ),
    _rule("role", r"(?:now |still )?(?:works?|working|is working) as(?: an?)?"),
    _rule(
        "employer",
        r"(?:has |have |is )?(?:just |recently |now |still )?(?:(?:works?|working|"
        r"worked|started|got a job|took a job|employed|a job) (?:at|for|by|with)|joined|"
        r"started at)",
    ),
    _rule(
        "employer",
        r"(?:has |have )?(?:just |recently )?(?:quit|left)(?: (?:his|her|their|"
        r"my) job at)?",
        r"(?P<value>[\w' -]+?)(?P<out>)",
    ),
    _rule(
        "partner",
        r"(?:is |are |got |just got )?(?:married|engaged) to|(?:is |are )?dating|"
        r"(?:is |are )?in a relationship with",
    ),
    _rule(
        "partner",
        r"(?:has |have )?(?:divorced|broke up with|split up with|separated from)",
        r"(?P<value>[\w' -]+?)(?P<out>)",
    ),
    _rule(
        "age",
        r"(?:is|turned|just turned|is now|has turned)",
        r"(?:(?P<value>" + _NUM[1:-1] + r") years? old|(?P<v2>\d+))",
    ),
    _rule(
        "count",
        r"(?:has|have|owns?|now has|now owns?)",
        r"(?P<value>" + _NUM[1:-1] + r") (?P<noun>[a-z]+?)s?\b(?: in total| now)?",
    ),
)
_FAVOURITE = re.compile(
    "^" + _WHO + r"(?:'s|s'|’s) (?:new |current |all-time )?favou?rite (?P<what>[\w ]+?) "
    r"(?:is|are) (?:now |no longer )?(?P<value>[\w' -]+?)" + _END,
    re.IGNORECASE,
)
_FAVOURITE_NEG = re.compile(r"\bno longer\b", re.IGNORECASE)
_LIKE = re.compile(
    _SUBJECT + r"(?P<neg>no longer |doesn't |does not |don't |do not |stopped |has stopped )"
    r"(?:likes?|loves?|enjoys?|liking|loving|enjoying|eats?|eating|drinks?|drinking|playing|"
    r"plays?) (?P<value>[\w' -]+?)" + _END,
    re.IGNORECASE,
)
_LIKE_POS = re.compile(
    _SUBJECT + r"(?:really |still |now )?(?:likes?|loves?|enjoys?|eats?|drinks?|plays?) "
    r"(?P<value>[\w' -]+?)" + _END,
    re.IGNORECASE,
)
_SAID_BY = re.compile(r"^([A-Z][\w.'-]*(?: [A-Z][\w.'-]*)?):\s+(.*)$")
_STOP_VALUE = re.compile(r"^(?:the|a|an|his|her|their|my)\s+", re.IGNORECASE)


_TIME_TAIL = re.compile(
    r"\s+(?:last|this|next|since|ago|yesterday|today|recently|in \d{4}|on|a few|back in|"
    r"earlier|now|for \w+ (?:years?|months?|weeks?))\b.*$",
    re.IGNORECASE,
)


def _norm(value: str) -> str:
    value = _TIME_TAIL.sub("", value.strip())
    value = _STOP_VALUE.sub("", value.strip().lower())
    return NUMBER_WORDS.get(value, value) if value in NUMBER_WORDS else value


def _subject(raw: str, speaker: str | None) -> str:
    low = raw.lower()
    if low in ("i", "we"):
        return speaker.lower() if speaker else low
    return low


def read(fact: str, *, speaker: str | None = None) -> Slot | None:
    """The slot a fact fills, or None when it is no single-valued statement this can read."""
    text = " ".join(fact.split())
    said = _SAID_BY.match(text)
    if said:  # "Ann: I live in Rome" (a message kept as given)
        speaker, text = said.group(1), said.group(2)
    if re.match(r"(?:she|he|they)\b", text, re.IGNORECASE):
        return None  # whom a pronoun means is not known here: no slot rather than a wrong one
    m = _FAVOURITE.match(text)
    if m:
        return Slot(
            _subject(m["subj"], speaker),
            "favourite " + m["what"].lower(),
            _norm(m["value"]),
            bool(_FAVOURITE_NEG.search(text)),
        )
    m = _LIKE.match(text)
    if m:  # a negated like ends the like of the same thing, and nothing else
        return Slot(_subject(m["subj"], speaker), "likes " + _norm(m["value"]), "yes", True)
    m = _LIKE_POS.match(text)
    if m:
        return Slot(_subject(m["subj"], speaker), "likes " + _norm(m["value"]), "yes")
    for slot, pattern in RULES:
        m = pattern.match(text)
        if not m:
            continue
        groups = m.groupdict()
        value = groups.get("value") or groups.get("v2") or ""
        if not value.strip():
            continue
        negated = bool(groups.get("neg")) or groups.get("out") is not None
        name = slot
        if slot == "count":
            name = f"count {groups['noun'].lower()}"
            value = str(NUMBER_WORDS.get(value.lower(), value))
        elif slot == "age":
            value = str(NUMBER_WORDS.get(value.lower(), value))
        return Slot(_subject(m["subj"], speaker), name, _norm(str(value)), negated)
    return None
