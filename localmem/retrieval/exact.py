"""The exact-match guarantee: a memory that holds the query verbatim is never lost.

Fusion and reranking weigh evidence, and a verbatim match can lose to them: a query such as
"line0042 token0042x" that BM25 finds in exactly one memory gives the dense retriever, which
sees many similar lines, the final say. A person who types the words of a memory expects that
memory first. So, after reranking, the stage checks the best lexical candidates and lifts every
one whose words contain the query's words in order (case, punctuation and spacing aside) above
all the others, keeping their order among themselves.

A query of three words or more also lifts a memory that holds every one of its words in
another order (near-exact: "sliding window rate limiter" finds "The rate limiter should use a
sliding window", which the reranker had ranked third behind two thoughts of its session).
A one-word query lifts only a memory that is that word alone: one shared word is not a match
of the memory (it is what BM25 weighs). Dense-only searches are left as they are.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from localmem.retrieval.candidates import lexical
from localmem.retrieval.context import Candidate
from localmem.text import words

if TYPE_CHECKING:
    from localmem.retrieval.context import SearchContext

#: how many of the best lexical candidates are checked for the query's words
CHECKED = 20


def contains_phrase(haystack: list[str], phrase: list[str]) -> bool:
    """Whether ``phrase`` occurs in ``haystack`` as consecutive words."""
    n = len(phrase)
    if n == 0 or n > len(haystack):
        return False
    first = phrase[0]
    return any(
        haystack[i] == first and haystack[i : i + n] == phrase for i in range(len(haystack) - n + 1)
    )


#: a query of at least this many words is matched by a memory holding all of them, in any order
ANY_ORDER_FROM = 3


def is_exact(memory_words: list[str], query_words: list[str]) -> bool:
    """The guarantee's rule: the whole query in order, or a one-word query that is the memory,
    or (near-exact) a query of three words or more whose every word the memory holds."""
    if len(query_words) == 1:
        return memory_words == query_words
    if contains_phrase(memory_words, query_words):
        return True
    return len(query_words) >= ANY_ORDER_FROM and set(query_words) <= set(memory_words)


def exact_stage(ctx: SearchContext) -> dict | None:
    """Lift verbatim matches above every other candidate (None when there is none)."""
    query_words = ctx.parsed.words
    if ctx.options.mode == "dense" or not query_words:
        return None
    labels, _ = lexical(ctx, ctx.query, ctx.options.candidates)
    checked = [int(x) for x in labels[:CHECKED]]
    items = ctx.items(checked)
    found = [
        label
        for label in checked
        if label in items
        and not items[label].deleted
        and is_exact(words(items[label].content), query_words)
    ]
    if not found:
        return None
    rest = [c.score for label, c in ctx.candidates.items() if label not in found]
    floor = (max(rest) if rest else 0.0) + 1.0
    current = {label: ctx.candidates.get(label) for label in found}
    # their own order: as the pipeline ranked them, unranked ones after, by BM25
    order = sorted(found, key=lambda x: _ranked_first(current[x]))
    for rank, label in enumerate(reversed(order)):
        cand = current[label] or Candidate(label)
        cand.score = floor + rank
        cand.flags.add("exact")
        ctx.candidates[label] = cand
    return {"lifted": len(found)}


def _ranked_first(cand: Candidate | None) -> tuple[bool, float]:
    """The order of lifted memories: ranked ones first, best first; unranked ones after."""
    return (cand is None, -cand.score if cand is not None else 0.0)
