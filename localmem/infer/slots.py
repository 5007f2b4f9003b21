"""Model-free reading of a fact: who it is about, which slot it fills, with what value.

Only a few kinds of facts hold a single value at a time, so only those can supersede one
another without a model: where someone lives, where they work and as what, who they are with
(and how: dating, engaged, married), a favourite X, an age, a count ("has 3 cats"). Liking
things is not one of them: "likes tea" and "likes coffee" are both true; only an explicit
negation ("no longer likes tea") ends a like. Anything else is no slot and is only ever added
or recognised as a duplicate.

A value is the short phrase after the verb, up to the first comma, preposition or time word
("lives in Paris with her cat" -> paris), so details around it do not hide a repeat. A clause
after a comma is read too ("Big news, Ann moved to Berlin"). Third-person pronouns are not
read: whom "she" means is unknown here, and no slot is better than a wrong one.
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
_NUM = r"\d+|" + "|".join(NUMBER_WORDS)
_WHO = r"(?P<subj>(?-i:I|[A-Z][\w'-]*(?: [A-Z][\w'-]*)?)|we)"
_NEG = r"(?P<neg>no longer |not |doesn't |does not |don't |do not |isn't |is not |never )?"
_ADV = r"(?:has |have |had |is |are |was |just |recently |finally |now |still |also |really )*"
#: where a value ends: punctuation, a preposition or conjunction, a time word
_BOUNDARY = (
    r"(?=\s*(?:[,.!?;:()]|$|\s(?:with|in|for|and|since|at|on|near|from|because|after|before|"
    r"last|this|next|now|right|today|yesterday|these|ago|anymore|again|every|but|so|to|who|"
    r"which|that|as|by|when|while|though|until|during|a few|several|\d+|"
    + "|".join(NUMBER_WORDS)
    + r"|the\s+\w+\s+(?:was|is))\b))"
)
_VALUE = r"(?P<value>(?:the |a |an |his |her |their |my )?[\w'&-]+(?: [\w'&-]+){0,3}?)" + _BOUNDARY


@dataclass(frozen=True)
class Slot:
    """A single-valued statement: ``subject`` has ``value`` for ``slot`` (or no longer, when
    ``negated``); ``detail`` qualifies it (a relationship's status)."""

    subject: str
    slot: str
    value: str
    negated: bool = False
    detail: str = ""


def _rule(slot: str, verbs: str, tail: str = _VALUE) -> tuple[str, re.Pattern[str]]:
    return slot, re.compile(rf"^{_WHO}\s+{_NEG}{_ADV}(?P<verb>{verbs})\s+{tail}", re.IGNORECASE)


_OUT = r"(?P<out>)"
# the order matters: the first rule that matches reads the clause
RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    _rule("home", r"(?:moved|relocated) (?:away )?(?:out of|from)", _VALUE + _OUT),
    _rule(
        "home",
        r"(?:lives?|living|lived|moved|relocated|settled|based|resides?) (?:back )?(?:in|to)",
    ),
    _rule("role", r"(?:works?|working|worked) as(?: an?)?"),
    _rule(
        "employer",
        r"(?:quit|left)(?: (?:his|her|their|my|[A-Z][\w-]*'s) job (?:at|with))?",
        _VALUE + _OUT,
    ),
    _rule(
        "employer",
        r"(?:(?:works?|working|worked|got a job|took a job|employed|a job) (?:at|for|by|with)|"
        r"joined|started (?:at|with|working at|working for))",
    ),
    _rule("partner", r"(?:divorced|broke up with|split up with|separated from)", _VALUE + _OUT),
    _rule(
        "partner",
        r"(?:got )?(?:married to|engaged to|dating|seeing|in a relationship with|together with)",
    ),
    _rule("age", r"(?:turned|turns|aged?)", rf"(?P<value>{_NUM})\b"),
    _rule("age", r"(?:is|am|are)?", rf"(?P<value>{_NUM}) years? old\b"),
    _rule(
        "count",
        r"(?:has|have|owns?|keeps?)",
        rf"(?P<value>{_NUM}) (?P<noun>[a-z]+)\b",
    ),
)
_FAVOURITE = re.compile(
    rf"^{_WHO}(?:'s|s'|’s) (?:new |current |all-time )?favou?rite (?P<what>\w+(?: \w+)?) "
    rf"(?:is|are|was) (?P<neg>no longer )?(?:now |still |definitely )?{_VALUE}",
    re.IGNORECASE,
)
_LIKE_VERBS = r"(?:likes?|loves?|enjoys?|eats?|drinks?|plays?|liking|loving|enjoying|playing)"
_LIKE = re.compile(
    rf"^{_WHO}\s+(?P<neg>no longer |doesn't |does not |don't |do not |stopped |has stopped "
    rf"|never )?(?:really |still |now |also )?{_LIKE_VERBS}\s+{_VALUE}",
    re.IGNORECASE,
)
_SAID_BY = re.compile(r"^([A-Z][\w.'-]*(?: [A-Z][\w.'-]*)?):\s+(.*)$")
_ARTICLE = re.compile(r"^(?:the|a|an|his|her|their|my)\s+", re.IGNORECASE)
_STATUS = (("married", "married"), ("engaged", "engaged"))


def _norm(value: str) -> str:
    value = _ARTICLE.sub("", value.strip().lower())
    return str(NUMBER_WORDS[value]) if value in NUMBER_WORDS else value


def _singular(noun: str) -> str:
    noun = noun.lower()
    if noun == "children":
        return "child"
    if noun.endswith("ies"):
        return noun[:-3] + "y"
    return noun[:-1] if noun.endswith("s") and not noun.endswith("ss") else noun


def _subject(raw: str, speaker: str | None) -> str:
    low = raw.lower()
    if low in ("i", "we"):
        return speaker.lower() if speaker else low
    return low


def _clauses(text: str) -> list[str]:
    """The text, then what follows each comma or sentence end ("Big news, Ann moved ..." ->
    "Ann moved ...")."""
    parts = [text]
    for m in re.finditer(r"(?:,|[.!?])\s+", text):
        parts.append(text[m.end() :])
    return parts


def read(fact: str, *, speaker: str | None = None) -> Slot | None:
    """The slot a fact fills, or None when it is no single-valued statement this can read."""
    text = " ".join(fact.split())
    said = _SAID_BY.match(text)
    if said:  # "Ann: I live in Rome" (a message kept as given)
        speaker, text = said.group(1), said.group(2)
    for clause in _clauses(text):
        if re.match(r"(?:she|he|they|it|this|that|there)\b", clause, re.IGNORECASE):
            continue
        found = _read_clause(clause, speaker)
        if found is not None:
            return found
    return None


def _read_clause(text: str, speaker: str | None) -> Slot | None:
    m = _FAVOURITE.match(text)
    if m:
        what = "favourite " + m["what"].lower()
        return Slot(_subject(m["subj"], speaker), what, _norm(m["value"]), bool(m["neg"]))
    m = _LIKE.match(text)
    if m:  # a like is its own slot: only its negation ends it
        return Slot(
            _subject(m["subj"], speaker), "likes " + _norm(m["value"]), "yes", bool(m["neg"])
        )
    for slot, pattern in RULES:
        m = pattern.match(text)
        if not m or m["subj"].lower() in ("there", "it"):
            continue
        groups = m.groupdict()
        value = _norm(groups["value"])
        negated = bool(groups.get("neg")) or groups.get("out") is not None
        name, detail = slot, ""
        if slot == "count":
            name = f"count {_singular(groups['noun'])}"
        elif slot == "partner":
            verb = (groups.get("verb") or "").lower()
            detail = next((s for key, s in _STATUS if key in verb), "dating")
        return Slot(_subject(m["subj"], speaker), name, value, negated, detail)
    return None
