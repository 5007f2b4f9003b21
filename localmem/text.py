"""Plain-text helpers shared by the lexical index and the model-free tasks.

English only for now: lower-casing, a word tokenizer, a stop-word list and the Snowball stemmer
(PyStemmer, a C extension that needs nothing from the network).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from functools import lru_cache

import Stemmer

_WORD = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?")

STOP_WORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "let",
        "lets",
        "s",
        "t",
        "d",
        "ll",
        "m",
        "re",
        "ve",
        "y",
        "don",
        "didn",
        "doesn",
        "isn",
        "wasn",
        "weren",
        "aren",
        "hasn",
        "haven",
        "hadn",
        "won",
        "wouldn",
        "shouldn",
        "couldn",
        "mustn",
        "cannot",
        "oh",
        "yeah",
        "yes",
        "ok",
        "okay",
        "hey",
        "hi",
        "hello",
        "wow",
        "really",
        "so",
        "much",
        "many",
        "lot",
        "lots",
        "thing",
        "things",
        "something",
        "anything",
        "get",
        "got",
        "getting",
        "gonna",
        "go",
        "going",
        "went",
    ]
)

_stemmer = Stemmer.Stemmer("english")


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """The Snowball stem of one lower-case word."""
    return _stemmer.stemWord(word)


def words(text: str) -> list[str]:
    """Lower-case word tokens (possessives folded: "Caroline's" -> "caroline")."""
    out = []
    for w in _WORD.findall(text.lower()):
        if "'" in w or "’" in w:
            w = re.split(r"['’]", w, maxsplit=1)[0]
        out.append(w)
    return out


def terms(text: str) -> list[str]:
    """Index terms: words without stop-words, stemmed."""
    return [stem(w) for w in words(text) if w not in STOP_WORDS]


def term_counts(text: str) -> Counter[str]:
    """Term frequencies of a text, as the BM25 index stores them."""
    return Counter(terms(text))


def content_hash(text: str) -> str:
    """A stable hash of a text (keys the embedding cache and finds duplicates)."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()
