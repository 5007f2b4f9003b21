"""The model-free answer and judge: extractive answers (with the real MiniLM) and token overlap."""

from __future__ import annotations

from datetime import date

import pytest
from lab.judge_overlap import judge_by_overlap, normalise, token_f1

from localmem.answers.extractive import (
    extract_answer,
    parse_date,
    resolve_relative,
    split_sentences,
)
from localmem.llm import run_task
from localmem.llm.tasks import TaskContext

MEMORIES = [
    ("Caroline: I went to a LGBTQ support group yesterday. It was so powerful.", "8 May 2023"),
    ("Melanie: I painted a lake sunrise last year. Painting relaxes me.", "8 May 2023"),
    ("Caroline: I'm researching adoption agencies, I want to build a family.", "25 May 2023"),
    ("Melanie: We went camping in the mountains on 20 June 2023 with the kids.", "27 June 2023"),
]
NOT_FOUND = "Not in memory."


def _answer(question: str, embedder=None) -> str:
    return extract_answer(question, MEMORIES, embedder=embedder, not_found=NOT_FOUND).answer


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("When did Caroline go to the LGBTQ support group?", "7 May 2023"),
        ("When did Melanie paint a sunrise?", "2022"),
        ("When did Melanie go camping in the mountains?", "20 June 2023"),
        ("When did Caroline research adoption agencies?", "25 May 2023"),
    ],
)
def test_time_questions_get_dates(question, expected):
    assert _answer(question) == expected


def test_other_questions_get_the_best_sentence_without_speaker():
    assert _answer("What is Caroline researching?") == (
        "I'm researching adoption agencies, I want to build a family."
    )
    found = extract_answer("What relaxes Melanie?", MEMORIES, not_found=NOT_FOUND)
    assert found.answer == "Painting relaxes me." and found.evidence == (2,)


def test_nothing_relevant_gives_the_not_found_phrase(embedder):
    assert _answer("What is the capital of Peru?") == NOT_FOUND
    assert _answer("What is the capital of Peru?", embedder) == NOT_FOUND
    assert extract_answer("anything?", [], not_found=NOT_FOUND).answer == NOT_FOUND


def test_the_embedder_finds_paraphrases_words_miss(embedder):
    memories = [
        ("Jon: my bakery finally opened its doors downtown.", "1 March 2023"),
        ("Jon: the weather was awful all week.", "2 March 2023"),
    ]
    question = "Did Jon start a business selling bread?"
    lexical = extract_answer(question, memories, not_found=NOT_FOUND)
    dense = extract_answer(question, memories, embedder=embedder, not_found=NOT_FOUND)
    assert dense.answer == "my bakery finally opened its doors downtown."
    assert "dense" in dense.reasoning and "dense" not in lexical.reasoning


def test_date_helpers():
    assert parse_date("1:56 pm on 8 May, 2023") == date(2023, 5, 8)
    assert parse_date("May 8th, 2023") == date(2023, 5, 8)
    assert parse_date("2023-05-08") == date(2023, 5, 8)
    assert parse_date("sometime") is None
    anchor = date(2023, 5, 8)
    assert resolve_relative("two weeks ago we met", anchor) == "the week of 24 April 2023"
    assert resolve_relative("last month was hard", date(2023, 1, 10)) == "December 2022"
    assert resolve_relative("nothing relative", anchor) is None
    assert split_sentences("One. Two!\nThree?") == ["One.", "Two!", "Three?"]


def test_answer_task_model_free_with_context(embedder):
    result = run_task(
        "answer",
        {
            "question": "When did Caroline go to the LGBTQ support group?",
            "memories": [{"text": t, "time": w} for t, w in MEMORIES],
        },
        engine=None,
        context=TaskContext(embedder=embedder),
    )
    assert result.served_by == "model-free"
    assert result.value.answer == "7 May 2023" and result.value.evidence == [1]


@pytest.mark.parametrize(
    ("answer", "reference", "label"),
    [
        ("7 May 2023", "7 May 2023", "CORRECT"),
        ("May 7, 2023", "7 May 2023", "CORRECT"),
        ("She went on the 7th of May 2023 with friends.", "7 May 2023", "CORRECT"),
        ("8 May 2023", "7 May 2023", "WRONG"),
        ("two", "2", "CORRECT"),
        ("adoption agencies", "Researching adoption agencies", "CORRECT"),
        ("painting", "Researching adoption agencies", "WRONG"),
        ("Not in memory.", "Researching adoption agencies", "WRONG"),
        ("Not in memory.", "Not mentioned in the conversation", "CORRECT"),
        ("She adopted a dog.", "Not mentioned in the conversation", "WRONG"),
        (" ".join(["word"] * 40) + " adoption agencies", "adoption agencies", "WRONG"),
    ],
)
def test_overlap_judge(answer, reference, label):
    assert judge_by_overlap(answer, reference).label == label


def test_normalisation_and_f1():
    assert normalise("The Dogs, a cat!") == ["dog", "cat"]
    f1, precision, recall = token_f1("red apple pie", "apple pie")
    assert recall == 1.0 and precision == pytest.approx(2 / 3) and f1 == pytest.approx(0.8)
    assert token_f1("", "") == (1.0, 1.0, 1.0)
