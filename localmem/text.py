"""Plain-text helpers shared by the lexical index and the model-free tasks.

Lower-casing, a word tokenizer, stop-words and the Snowball stemmer (PyStemmer, a C extension that
needs nothing from the network). Words are Unicode words ("cacahuètes", "Müller", "Лиссабон" stay
whole); Chinese, Japanese and Korean script, written without spaces, becomes overlapping pairs of
characters, as Lucene's CJK analyser does.

Index terms (:func:`terms`) are made per language: each text's language is told by a vote of its
stop-words (localmem's English list, whose words vote whole for English, the default; the ``stop-
words`` package's lists for the other languages, where a word that is a stop-word in several
languages splits its vote). Another language needs two of its stop-words and more votes than
English, so English text is tokenised, stop-listed and stemmed exactly as before; another language's
text is stemmed by its own Snowball stemmer where PyStemmer has one, and is not stemmed at all where
it has none (never by the English one). A query and a memory in the same language thus share terms;
across languages, dense search (the multilingual embedder) is what finds a memory.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections import Counter
from functools import lru_cache
from pathlib import Path

import Stemmer

#: bumped when :func:`terms` changes what it gives for a text (2: Unicode words, per-language
#: stop-words and stemming; 3: the language vote of 5af091f, which tells a few short texts such
#: as "Take care, talk soon" another language). A store records the version that made its BM25
#: postings (:data:`localmem.store.lexical.TERMS_META`); the reranker reads a memory's terms
#: from them only where that is this version, and ``localmem doctor --repair`` rebuilds them
TERMS_VERSION = 3

# a word: letters and digits of any script, with an apostrophe and letters after it kept on
# (possessives, elisions); for ASCII text exactly what `[a-z0-9]+(?:['’][a-z]+)?` matched
_WORD = re.compile(r"[^\W_]+(?:['’][^\W\d_]+)?")
_ASCII_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")  # the same on lower-case ASCII text
# scripts written without spaces between words: Han, Hiragana, Katakana, Hangul
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")

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
    """The English Snowball stem of one lower-case word."""
    return _stemmer.stemWord(word)


def _tokens(text: str) -> list[str]:
    """Lower-case Unicode words, apostrophes kept; runs of CJK script as character pairs."""
    lowered = text.lower()
    if lowered.isascii():  # no CJK script: the words as found, by the ASCII pattern (faster)
        return _ASCII_WORD.findall(lowered)
    lowered = unicodedata.normalize("NFC", lowered)  # "é" as one letter, not e + accent
    out: list[str] = []
    for w in _WORD.findall(lowered):
        if w.isascii() or not _CJK.search(w):
            out.append(w)
            continue
        for part in re.split(f"({_CJK.pattern})", w):  # a CJK run inside a word of letters
            if not part:
                continue
            if _CJK.fullmatch(part):
                out += [part] if len(part) == 1 else [part[i : i + 2] for i in range(len(part) - 1)]
            else:
                out.append(part)
    return out


def _fold(word: str) -> str:
    """The part before an apostrophe ("caroline's" -> "caroline")."""
    return re.split(r"['’]", word, maxsplit=1)[0] if ("'" in word or "’" in word) else word


def words(text: str) -> list[str]:
    """Lower-case word tokens (possessives folded: "Caroline's" -> "caroline")."""
    return [_fold(w) for w in _tokens(text)]


# -- languages --------------------------------------------------------------------------------
#: the stop-word lists' languages that PyStemmer stems (the others are left unstemmed)
_SNOWBALL = frozenset(Stemmer.algorithms())
#: who wins a tie of votes, most written first (a short Spanish sentence's stop-words, "el",
#: "de", "se", are Romanian stop-words too); the languages not named follow by name
_PREFERRED = (
    "english",
    "spanish",
    "french",
    "german",
    "portuguese",
    "italian",
    "russian",
    "dutch",
    "polish",
    "turkish",
    "swedish",
)
_RANK = {lang: i for i, lang in enumerate(_PREFERRED)}
#: languages that elide an article or pronoun before a vowel: "l'école" is "école"
_ELIDING = frozenset({"french", "italian", "catalan"})


#: the ``stop-words`` package's lists, folded as :func:`_tokens` folds text, made once
#: (:func:`write_stop_table`): folding them took ~50 ms, paid by the first search of every
#: process. Used when the installed package is the version they were made from; otherwise the
#: lists are folded at run time as before (tests/test_text_languages.py checks they agree).
STOP_TABLE = Path(__file__).with_name("stopwords.json")


def fold_stop_lists() -> dict[str, frozenset[str]]:
    """Each language's stop-words (but English's), folded from the ``stop-words`` package."""
    from stop_words import AVAILABLE_LANGUAGES, get_stop_words

    return {
        lang: frozenset(_fold(w) for w in get_stop_words(lang) for w in _tokens(w))
        for lang in sorted(set(AVAILABLE_LANGUAGES))
    }


def _stop_package_version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("stop-words")
    except PackageNotFoundError:
        return None


def write_stop_table(path: Path = STOP_TABLE) -> None:
    """Write the folded lists of the installed ``stop-words`` package to ``path``; after an
    upgrade of the package: ``python -c "import localmem.text as t; t.write_stop_table()"``."""
    table = {
        "stop_words": _stop_package_version(),
        "languages": {lang: sorted(words) for lang, words in fold_stop_lists().items()},
    }
    text = json.dumps(table, ensure_ascii=False, indent=0, sort_keys=True)
    path.write_text(text + "\n", encoding="utf-8")


def _read_stop_table() -> dict[str, frozenset[str]] | None:
    """The precomputed lists, or None when they are missing or made from another version."""
    try:
        table = json.loads(STOP_TABLE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(table, dict) or table.get("stop_words") != _stop_package_version():
        return None
    return {lang: frozenset(words) for lang, words in table["languages"].items()}


@lru_cache(maxsize=1)
def _stop_lists() -> tuple[dict[str, frozenset[str]], dict[str, tuple[str, ...]]]:
    """Each language's stop-words, and the languages each stop-word belongs to."""
    lists = _read_stop_table() or fold_stop_lists()
    lists["english"] = STOP_WORDS  # English is told by localmem's own list
    owners: dict[str, list[str]] = {}
    for lang, stops in lists.items():
        for w in stops:
            owners.setdefault(w, []).append(lang)
    return lists, {w: tuple(langs) for w, langs in owners.items()}


#: letters that only some of the languages write: a vote for each language they belong to
_LETTERS = {
    "german": frozenset("äöüß"),
    "spanish": frozenset("ñáíóú"),
    "french": frozenset("çœèêëàâîïôûù"),
    "portuguese": frozenset("ãõç"),
}


def language(tokens: list[str]) -> str:
    """The language of a text's tokens: the one with most of its stop-words there, plus a vote
    for letters only some languages write. English, the default, wins ties; another language
    needs two votes, or one among the widely written languages when English has none ("Wo
    wohnt Ana?"), so an English sign-off ("Take care!": "take" is a Czech stop-word) stays
    English."""
    return _vote([_fold(w) for w in tokens])


def _vote(folded: list[str]) -> str:
    """:func:`language` of tokens already folded."""
    _, owners = _stop_lists()
    # a plain dict, votes added only for stop-words: Counter.update costs ~3x more a word,
    # and the reranker's length feature asks for the language of every text in its pool
    score: dict[str, int] = {}
    for langs in [owners[w] for w in folded if w in owners]:
        for lang in langs:
            score[lang] = score.get(lang, 0) + 1
    letters = {c for w in folded if not w.isascii() for c in w}
    if letters:
        for lang, marks in _LETTERS.items():
            if letters & marks:
                score[lang] = score.get(lang, 0) + 1
    if not score:
        return "english"
    top = max(score.values())
    english = score.get("english", 0)
    if top <= english:  # English has most votes, and wins any tie
        return "english"
    best = min(
        (lang for lang, v in score.items() if v == top),
        key=lambda lang: (_RANK.get(lang, len(_RANK)), lang),
    )
    if top >= 2 or (english == 0 and best in _RANK):
        return best
    return "english"


@lru_cache(maxsize=64)
def _stemmer_for(lang: str) -> Stemmer.Stemmer | None:
    return Stemmer.Stemmer(lang) if lang in _SNOWBALL else None


def _latin_base_table() -> dict[int, str]:
    table = {}
    for cp in range(0xC0, 0x250):
        base = "".join(
            c for c in unicodedata.normalize("NFKD", chr(cp)) if not unicodedata.combining(c)
        )
        if base and base.isascii() and base != chr(cp):
            table[cp] = base
    return table


#: Latin letters with accents -> their base letters ("è" -> "e"), applied to stems: a query
#: too short to tell its language ("cacahuètes", stemmed the English way) meets the memory
#: whose own stemmer took the accent off ("cacahuet"); other scripts are left alone
_LATIN_BASE = _latin_base_table()


def terms(text: str) -> list[str]:
    """Index terms: words without stop-words, stemmed, both in the text's own language;
    accents taken off Latin letters after stemming."""
    tokens = _tokens(text)
    if not tokens:
        return []
    # folded once for the vote and the terms; an ASCII text without an apostrophe has nothing
    # to fold (the reranker tokenises ~100 texts a search)
    plain = text.isascii() and "'" not in text
    folded = tokens if plain else [_fold(w) for w in tokens]
    lang = _vote(folded)
    if lang == "english":
        got = [stem(w) for w in folded if w not in STOP_WORDS]
    else:
        got = _foreign_terms(tokens, lang)
    return got if text.isascii() else [t if t.isascii() else t.translate(_LATIN_BASE) for t in got]


def _foreign_terms(tokens: list[str], lang: str) -> list[str]:
    stops = _stop_lists()[0][lang]
    if lang in _ELIDING:
        tokens = [re.split(r"['’]", w)[-1] for w in tokens]
    else:
        tokens = [_fold(w) for w in tokens]
    kept = [w for w in tokens if w not in stops]
    stemmer = _stemmer_for(lang)
    return stemmer.stemWords(kept) if stemmer else kept


def term_counts(text: str) -> Counter[str]:
    """Term frequencies of a text, as the BM25 index stores them."""
    return Counter(terms(text))


def content_hash(text: str) -> str:
    """A stable hash of a text (keys the embedding cache and finds duplicates)."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()
