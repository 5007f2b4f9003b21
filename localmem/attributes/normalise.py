"""Entity normalisation: one canonical form per entity, so "Redis" and "redis cache" can match.

An entity is kept as two things:

- ``value``: what a person reads: lower case, single spaces, the head noun made singular by a few
  safe rules ("Rate limit errors" -> "rate limit error");
- ``terms``: what matching uses: the Snowball stems of its content words, after the alias table
  ("Postgres" and "PostgreSQL" both give ``postgresql``). Two entities match when their term sets
  overlap enough (:func:`overlap`): "redis" is contained in "redis cache", so they match.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from localmem.text import STOP_WORDS, stem

#: spellings that name the same thing; keys and values are lower-case single words or phrases
BUILTIN_ALIASES: dict[str, str] = {
    "postgres": "postgresql",
    "pg": "postgresql",
    "k8s": "kubernetes",
    "db": "database",
    "dbs": "databases",
    "js": "javascript",
    "ts": "typescript",
    "py": "python",
    "auth": "authentication",
    "authn": "authentication",
    "authz": "authorization",
    "authorisation": "authorization",
    "optimisation": "optimization",
    "config": "configuration",
    "repo": "repository",
    "env": "environment",
    "perf": "performance",
    "mongo": "mongodb",
    "mom": "mother",
    "dad": "father",
    "kids": "children",
    "kid": "child",
}

# a word keeps identifier punctuation inside it (user_id, node.js); hyphens and slashes split
_WORD = re.compile(r"[a-z0-9+#][a-z0-9+#_.]*[a-z0-9+#]|[a-z0-9+#]")
_PARTS = re.compile(r"[_.]+")
_NOT_PLURAL = """
    series species news status analysis basis axis process access address class glass
    business physics mathematics economics politics kubernetes redis postgres aws ios css js
    ts this has is was gas bus us yes plus bonus census campus virus thesis
"""
_NO_SINGULAR = frozenset(_NOT_PLURAL.split())
#: -ie nouns whose plural the -ies rule would get wrong
_IE = "movies cookies rookies selfies zombies hoodies brownies calories pies ties lies"
_IE_PLURALS = frozenset(_IE.split())


def singular(word: str) -> str:
    """A plural English noun made singular by safe suffix rules (others are left alone)."""
    if word in _IE_PLURALS:
        return word[:-1]
    if len(word) <= 3 or word in _NO_SINGULAR or not word.isalpha():  # identifiers stay
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("sses"):
        return word[:-2]
    if word.endswith(("xes", "zzes", "shes", "tches", "rches", "nches")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is", "ous")):
        return word[:-1]
    return word


def words_of(phrase: str) -> list[str]:
    """Lower-case word pieces of a phrase (identifier punctuation splits words)."""
    return _WORD.findall(phrase.lower())


def apply_aliases(words: list[str], aliases: Mapping[str, str]) -> list[str]:
    """Words with every aliased word (or whole phrase) replaced by its canonical spelling."""
    whole = " ".join(words)
    if whole in aliases:
        return aliases[whole].split()
    out: list[str] = []
    for w in words:
        out += aliases.get(w, w).split()
    return out


def display_value(phrase: str, aliases: Mapping[str, str] = BUILTIN_ALIASES) -> str:
    """The readable canonical form of an entity: lower case, aliases applied, head singular."""
    words = apply_aliases(words_of(phrase), aliases)
    if not words:
        return ""
    words[-1] = singular(words[-1])
    return " ".join(words)


def entity_terms(phrase: str, aliases: Mapping[str, str] = BUILTIN_ALIASES) -> tuple[str, ...]:
    """The sorted, distinct stems of an entity's content words (what matching compares)."""
    words = apply_aliases(words_of(phrase), aliases)
    parts = [p for w in words for p in _PARTS.split(w) if p]  # user_id -> user, id
    stems = {stem(singular(p)) for p in parts if p not in STOP_WORDS}
    return tuple(sorted(stems or {stem(p) for p in parts}))


def overlap(a: Iterable[str], b: Iterable[str]) -> float:
    """Overlap coefficient of two term sets: shared terms / size of the smaller set (0..1).

    1.0 when one entity's terms contain the other's ("redis" in "redis cache"); 0.5 when two
    two-word entities share one word ("error handling", "rate limit error").
    """
    sa, sb = set(a), set(b)
    if not sa or not sb:
        return 0.0
    return len(sa & sb) / min(len(sa), len(sb))


def merged_aliases(extra: Mapping[str, str] | None) -> dict[str, str]:
    """The built-in alias table with the configured one on top (keys lower-cased)."""
    table = dict(BUILTIN_ALIASES)
    for key, value in (extra or {}).items():
        table[" ".join(words_of(key))] = " ".join(words_of(value))
    return table
