"""The offline date parser: absolute, relative (against an anchor) and vague expressions."""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from localmem.dates import distance_days, find_spans, is_temporal_question
from localmem.dates.spans import scan_spans
from localmem.dates.vocabulary import MONTHS, NUMBERS, SEASONS, VAGUE_DAYS, WEEKDAYS

THURSDAY = date(2023, 5, 25)  # the example: "last Saturday" said on 25 May 2023


def one(text: str, anchor: date | None = THURSDAY):
    spans = find_spans(text, anchor)
    assert len(spans) == 1, spans
    return spans[0]


@pytest.mark.parametrize(
    ("text", "start", "end", "unit"),
    [
        ("We met on 7 May 2023 at noon", date(2023, 5, 7), date(2023, 5, 7), "day"),
        ("It was May 7, 2023", date(2023, 5, 7), date(2023, 5, 7), "day"),
        ("see 2023-06-01", date(2023, 6, 1), date(2023, 6, 1), "day"),
        ("back in June 2022", date(2022, 6, 1), date(2022, 6, 30), "month"),
        ("in summer 2021", date(2021, 6, 1), date(2021, 8, 31), "season"),
        ("since 2019 I paint", date(2019, 1, 1), date(2019, 12, 31), "year"),
    ],
)
def test_absolute_dates(text, start, end, unit):
    span = one(text, None)
    assert (span.start, span.end, span.unit) == (start, end, unit)
    assert not span.relative


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("I went hiking last Saturday", date(2023, 5, 20), date(2023, 5, 20)),
        ("yesterday was fun", date(2023, 5, 24), date(2023, 5, 24)),
        ("two weeks ago", date(2023, 5, 8), date(2023, 5, 14)),
        ("3 days ago", date(2023, 5, 22), date(2023, 5, 22)),
        ("last month", date(2023, 4, 1), date(2023, 4, 30)),
        ("last year", date(2022, 1, 1), date(2022, 12, 31)),
        ("last weekend", date(2023, 5, 20), date(2023, 5, 21)),
        ("next week", date(2023, 5, 29), date(2023, 6, 4)),
    ],
)
def test_relative_dates_resolve_against_the_anchor(text, start, end):
    span = one(text)
    assert (span.start, span.end) == (start, end)
    assert span.relative


def test_relative_expressions_need_an_anchor():
    assert find_spans("I went hiking last Saturday", None) == ()


def test_may_the_verb_is_not_a_month():
    assert find_spans("you may want to come", THURSDAY) == ()
    assert one("early in May we left").start == date(2023, 5, 1)


def test_a_full_date_is_one_span_not_a_day_and_a_year():
    spans = find_spans("On 9 November 2022 and then in 2023", None)
    assert [s.unit for s in spans] == ["day", "year"]


def test_yearless_dates_match_any_year():
    june = one("in June", date(2023, 1, 10))
    assert june.yearless
    day = find_spans("on 12 June 2021", None)[0]
    assert distance_days(june, day) == 0
    assert distance_days(one("in March", date(2023, 1, 10)), day) > 60


@pytest.mark.parametrize(
    ("question", "temporal"),
    [
        ("When did Caroline go to the support group?", True),
        ("How long has Melanie been painting?", True),
        ("What did she do on 7 May 2023?", True),
        ("What is Caroline's favourite book?", False),
        ("Who is Melanie married to?", False),
    ],
)
def test_temporal_questions(question, temporal):
    assert is_temporal_question(question) is temporal


# -- the quick test for cues never drops a match -------------------------------------------------
_TOKENS = [
    *MONTHS,
    *WEEKDAYS,
    *SEASONS,
    *NUMBERS,
    *VAGUE_DAYS,
    *[
        "ago",
        "back",
        "last",
        "this",
        "next",
        "past",
        "coming",
        "the",
        "of",
        "in",
        "on",
        "since",
        "until",
        "by",
        "during",
        "early",
        "late",
        "mid",
        "around",
        "before",
        "after",
        "year",
        "years",
        "day",
        "days",
        "week",
        "weeks",
        "weekend",
        "weekends",
        "month",
        "months",
        "night",
        "yesterday",
        "today",
        "tonight",
        "tomorrow",
        "morning",
        "afternoon",
        "evening",
        "other",
        "these",
        "recently",
        "lately",
        "7",
        "12th",
        "2023",
        "2023-05-07",
        "31st",
        "1999",
        "Sept.",
        "MAY",
        "May,",
        "İstanbul",
        "Caroline",
        "went",
        "said",
        ":",
        ",",
        ".",
        "-",
    ],
]
_TOKENS += [
    "3 days back",
    "a few weeks ago",
    "the day before yesterday",
    "the other day",
    "these days",
    "this morning",
    "last night",
    *(f"{season} of 2023" for season in SEASONS),
    *(f"{prep} 1999" for prep in ("around", "year", "since", "until", "during", "before", "after")),
]
#: two-word phrases, so that every rule's shape ("last night", "on Sun", "3 days ago") comes up
_TOKENS += [
    f"{a} {b}"
    for a in ("last", "this", "next", "past", "coming", "on", "in", "3", "the")
    for b in _TOKENS
]


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.one_of(st.sampled_from(_TOKENS), st.text(max_size=8)), max_size=12),
    st.sampled_from(["", " ", "  ", "\n"]),
    st.one_of(st.none(), st.dates(date(1990, 1, 1), date(2030, 12, 31))),
)
def test_the_cue_test_finds_what_every_rule_finds(tokens, sep, anchor):
    text = (sep or " ").join(tokens)
    assert find_spans.__wrapped__(text, anchor) == scan_spans(text, anchor)


@pytest.mark.parametrize("anchor", [None, date(2023, 5, 7)])
def test_the_cue_test_keeps_every_phrase_of_the_rules(anchor):
    for token in _TOKENS:
        for text in (token, token.upper(), f"we met {token}, then left"):
            assert find_spans.__wrapped__(text, anchor) == scan_spans(text, anchor), text


@pytest.mark.parametrize(
    "query",
    [
        "how can I see which packages are out of date",
        "is my fork up to date",
        "keep the docs up-to-date",
        "will the build finish in time",
        "did the train arrive on time",
        "what is failing at the moment",
        "from time to time the build breaks",
        "for the time being we pin numpy",
        "run the jobs one at a time",
        "the request hit a time out",
        "first of all, which branch is it",
        "as long as the tests pass, merge",
    ],
)
def test_idioms_of_time_words_are_not_time_questions(query):
    """Issue 33 item 6: these ask nothing about time."""
    assert not is_temporal_question(query)


@pytest.mark.parametrize(
    "query",
    [
        "what was out of date last week",
        "when was the fork last up to date",
        "how long ago did we pin numpy",
        "what did we deploy in March 2024",
    ],
)
def test_a_time_question_stays_one_beside_an_idiom(query):
    assert is_temporal_question(query)


@pytest.mark.parametrize(
    "text", ["on 2023-05-07", "on 2023-5-7 at 9", "note 20230507", "2023 05 07"]
)
def test_an_iso_date_is_read_only_where_a_hyphen_could_make_one(text):
    assert find_spans.__wrapped__(text, None) == scan_spans(text, None)
    assert bool(find_spans.__wrapped__(text, None)) == ("-" in text)
