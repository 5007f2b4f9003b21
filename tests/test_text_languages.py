"""Index terms per language: Unicode words, each text stemmed in its own language, English as
before (a property test against the tokeniser it replaced)."""

from __future__ import annotations

import re

import Stemmer
from hypothesis import given, settings
from hypothesis import strategies as st

from localmem import Memory
from localmem.text import STOP_WORDS, _tokens, language, terms, words

_OLD_WORD = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?")
_english = Stemmer.Stemmer("english")


def old_terms(text: str) -> list[str]:
    """The English-only terms of the tokeniser before TERMS_VERSION 2."""
    out = []
    for w in _OLD_WORD.findall(text.lower()):
        if "'" in w or "’" in w:
            w = re.split(r"['’]", w, maxsplit=1)[0]
        if w not in STOP_WORDS:
            out.append(_english.stemWord(w))
    return out


ENGLISH = [
    "I went to a LGBTQ support group yesterday and it was so powerful.",
    "Caroline's paintings of the lake are great!",
    "Take care, see you on 2023-05-07.",
    "I will come with my son to the pottery class.",
    "We're thinking about adoption; the agency called (finally).",
    "Don't forget: rock'n'roll in the 90's, x'9 and it’s done.",
    "She said the deploy runs on Fridays at 5 pm.",
    "Did Caroline come to the camping trip?",
    "What did Melanie paint recently?",
    "A son and a daughter, both in school now.",
    "Hey Mel! Good to see you, how have you been?",
    "My mentor encouraged me to pursue counseling as a career.",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(ENGLISH), min_size=1, max_size=3).map(" ".join))
def test_english_text_gets_the_terms_it_always_had(text):
    assert language(_tokens(text)) == "english"
    assert terms(text) == old_terms(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=120))
def test_ascii_text_without_two_foreign_stop_words_is_unchanged(text):
    if language(_tokens(text)) == "english":
        assert terms(text) == old_terms(text)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_any_text_gives_terms_without_error(text):
    got = terms(text)
    assert all(isinstance(t, str) and t for t in got)


def test_words_of_other_languages_stay_whole():
    assert words("Ana est allergique aux cacahuètes") == [
        "ana",
        "est",
        "allergique",
        "aux",
        "cacahuètes",
    ]
    assert "müller" in words("Herr Müller wohnt in München")
    assert words("Москва это столица России")[0] == "москва"
    # the old tokeniser cut these into pieces: "cacahu", "tes"; "m", "ller"
    assert "cacahu" not in terms("Ana est allergique aux cacahuètes")


def test_a_decomposed_accent_is_the_same_word():
    composed, decomposed = "café", "cafe\u0301"
    assert words(composed) == words(decomposed) == ["café"]


def test_each_language_is_stop_listed_and_stemmed_by_its_own_rules():
    assert language(_tokens("Ana wohnt jetzt in Lissabon mit ihrem Hund")) == "german"
    assert terms("Ana wohnt jetzt in Lissabon mit ihrem Hund") == [
        "ana",
        "wohnt",
        "lissabon",
        "hund",
    ]
    assert language(_tokens("El perro de Ana se llama Max")) == "spanish"
    assert terms("El perro de Ana se llama Max") == ["perr", "ana", "llam", "max"]
    # French elision: "l'école" is "école", stemmed the French way
    assert terms("Ana est allergique aux cacahuètes et aime l'école") == [
        "ana",
        "allerg",
        "cacahuet",
        "aim",
        "ecol",
    ]
    # one stop-word of another language is not enough ("care" is a Romanian one)
    assert language(_tokens("Bye Joanna! Take care!")) == "english"


def test_a_query_finds_a_memory_in_its_own_language_by_its_inflected_forms():
    # the stems meet: "allergique"/"allergiques", "wohnt"/"wohnen" would not under English rules
    assert set(terms("Est-ce que Ana a des allergies alimentaires ?")) & set(
        terms("Ana est allergique aux cacahuètes")
    ) == {"ana", "allerg"}


def test_text_without_spaces_is_split_into_character_pairs():
    assert terms("我喜欢北京烤鸭") == ["我喜", "喜欢", "欢北", "北京", "京烤", "烤鸭"]
    assert "北京" in terms("北京")


def test_lexical_search_finds_non_english_memories(tmp_path, embedder):
    with Memory.open(tmp_path / "s", embedder=embedder) as mem:
        mem.add("Ana est allergique aux cacahuètes")
        mem.add("Ana wohnt jetzt in Lissabon mit ihrem Hund")
        mem.add("The deploy runs on Fridays")
        hit = mem.search("cacahuètes", k=1, mode="lexical").hits[0]
        assert hit.memory.content.startswith("Ana est allergique")
        hit = mem.search("Wo wohnen Ana und ihr Hund?", k=1, mode="lexical").hits[0]
        assert "Lissabon" in hit.memory.content


def test_the_precomputed_stop_lists_are_the_package_lists_folded():
    # fails after an upgrade of stop-words or a change of the tokenizer: run
    # python -c "import localmem.text as t; t.write_stop_table()"
    from localmem import text

    table = text._read_stop_table()
    assert table is not None, "localmem/stopwords.json is missing or made from another version"
    assert table == text.fold_stop_lists()


def test_without_the_precomputed_lists_the_same_languages_and_terms(monkeypatch):
    from localmem import text

    samples = [
        "when did Caroline go to the support group",
        "Wo wohnt Ana? Sie wohnt in Berlin mit ihrer Familie.",
        "El perro de mi hermana se llama Luna y es muy grande.",
        "Je suis allé à l'école avec mes amis hier matin.",
        "Я живу в Москве и работаю в библиотеке.",
        "Take care!",
    ]
    with_table = [(text.language(text._tokens(s)), text.terms(s)) for s in samples]
    text._stop_lists.cache_clear()
    monkeypatch.setattr(text, "_stop_package_version", lambda: "another version")
    try:
        assert text._read_stop_table() is None
        assert [(text.language(text._tokens(s)), text.terms(s)) for s in samples] == with_table
    finally:
        text._stop_lists.cache_clear()


# -- the tokeniser before its fast paths (ASCII words, one fold, English's early win), kept as
# the oracle: the fast paths must give the same words, language and terms for any text
def _reference_tokens(text: str) -> list[str]:
    import unicodedata

    from localmem.text import _CJK, _WORD

    lowered = text.lower()
    if not lowered.isascii():
        lowered = unicodedata.normalize("NFC", lowered)
    out: list[str] = []
    for w in _WORD.findall(lowered):
        if w.isascii() or not _CJK.search(w):
            out.append(w)
            continue
        for part in re.split(f"({_CJK.pattern})", w):
            if not part:
                continue
            if _CJK.fullmatch(part):
                out += [part] if len(part) == 1 else [part[i : i + 2] for i in range(len(part) - 1)]
            else:
                out.append(part)
    return out


def _reference_language(tokens: list[str]) -> str:
    from localmem.text import _LETTERS, _RANK, _fold, _stop_lists

    _, owners = _stop_lists()
    score: dict[str, int] = {}
    letters: set[str] = set()
    for w in map(_fold, tokens):
        for lang in owners.get(w, ()):
            score[lang] = score.get(lang, 0) + 1
        if not w.isascii():
            letters.update(w)
    for lang, marks in _LETTERS.items():
        if letters & marks:
            score[lang] = score.get(lang, 0) + 1
    if not score:
        return "english"
    top = max(score.values())
    best = min(
        (lang for lang, v in score.items() if v == top),
        key=lambda lang: (_RANK.get(lang, len(_RANK)), lang),
    )
    english = score.get("english", 0)
    if best == "english" or top <= english:
        return "english"
    if top >= 2 or (english == 0 and best in _RANK):
        return best
    return "english"


def _reference_terms(text: str) -> list[str]:
    from localmem.text import _LATIN_BASE, _fold, _foreign_terms, stem

    tokens = _reference_tokens(text)
    if not tokens:
        return []
    lang = _reference_language(tokens)
    if lang == "english":
        got = [stem(w) for w in map(_fold, tokens) if w not in STOP_WORDS]
    else:
        got = _foreign_terms(tokens, lang)
    return got if text.isascii() else [t if t.isascii() else t.translate(_LATIN_BASE) for t in got]


_MIXED = st.lists(
    st.one_of(
        st.sampled_from(ENGLISH),
        st.sampled_from(
            [
                "Wo wohnt Ana?",
                "el perro de la casa se fue",
                "C'est l'école de Müller",
                "Take care!",
                "¿Dónde está?",
                "東京に行きました",
                "Caroline’s and Mel's",
                "das ist nicht gut, aber ja",
            ]
        ),
        st.text(max_size=40),
        st.text(alphabet="abcdefghij'’ ÄéñçZ0189-.,", max_size=40),
    ),
    min_size=1,
    max_size=4,
).map(" ".join)


@settings(max_examples=400)
@given(_MIXED)
def test_the_fast_paths_give_the_reference_words_language_and_terms(text):
    assert _tokens(text) == _reference_tokens(text)
    assert language(_tokens(text)) == _reference_language(_reference_tokens(text))
    assert terms(text) == _reference_terms(text)
