"""Model-free abstraction as pure text functions: steps, placeholders, scoring, success rules."""

from __future__ import annotations

import pytest
from lab.memp_tasks import load_pairs, parse_pair

from localmem.errors import InputError
from localmem.procedures import extract, scoring
from localmem.procedures.drafts import clean_steps, model_free_revision_of

SEED_THOUGHTS = [
    "Reproduce with a request that has user=null: 500 confirmed.",
    "The stack trace points at the serializer calling user.name.",
    "I tried restarting the server but that didn't help.",
    "Add a null check in serializers/user.py and return 400 with a clear message.",
    "Then I wrote a regression test for the null user field; it passes.",
]


def test_steps_are_imperative_in_order_without_dead_ends():
    steps = [s.text for s in extract.extract_steps(SEED_THOUGHTS)]
    assert steps == [
        "Reproduce with a request that has user=null",
        "Check whether the stack trace points at the serializer calling user.name",
        "Add a null check in serializers/user.py and return 400 with a clear message",
        "Write a regression test for the null user field",
    ]


@pytest.mark.parametrize(
    ("sentence", "step"),
    [
        ("Let's check the logs for the request id", "Check the logs for the request id"),
        ("First, I reproduced the bug locally", "Reproduce the bug locally"),
        ("We then logged every retry", "Log every retry"),
        ("Identified the slow query with EXPLAIN", "Identify the slow query with EXPLAIN"),
        ("I'll split the function in two", "Split the function in two"),
    ],
)
def test_as_step_turns_actions_into_the_imperative(sentence, step):
    assert extract.as_step(sentence)[0] == step


@pytest.mark.parametrize("sentence", ["The cache is cold", "Done", "Interesting, the p95 is high"])
def test_observations_are_not_steps(sentence):
    assert extract.as_step(sentence) is None


def test_abstract_text_strips_instance_specifics():
    text = (
        "Fix `UserSerializer.to_dict` in /srv/app/serializers/user.py, set retries=3, "
        "rename the email field, bump v2.3.1 and check commit 3fa9c2b1 after 250 ms"
    )
    out = extract.abstract_text(text)
    assert out == (
        "Fix <identifier> in <file>, set <field>=<value>, rename the <field> field, "
        "bump <version> and check commit <id> after <number> ms"
    )
    for specific in ("UserSerializer", "user.py", "retries", "email", "2.3.1", "3fa9c2b1", "250"):
        assert specific not in out


def test_status_codes_name_a_class_of_failure_and_stay():
    assert extract.abstract_text("It returns 500 and we want a 400 error") == (
        "It returns 500 and we want a 400 error"
    )
    assert extract.abstract_text("retry 3 times") == "retry <number> times"


def test_natural_reads_like_a_task():
    text = extract.abstract_text("Debug: API returns 500 error when user field is null")
    assert extract.natural(text) == "Debug: API returns 500 error when a field is null"


def test_too_many_steps_keep_the_surest_in_order():
    thoughts = [
        "Reproduce the crash",
        "The disk is full again today",
        "We measured the write rate",
        "Delete old snapshots",
        "Add an alert on free space",
    ]
    steps = extract.extract_steps(thoughts, max_steps=3)
    # the finding (0.3) and the past-tense step (0.8) go first; order is kept
    assert [s.text for s in steps] == [
        "Reproduce the crash",
        "Delete old snapshots",
        "Add an alert on free space",
    ]


def test_near_duplicate_steps_keep_the_first():
    steps = extract.extract_steps(["Check part 1 of the system", "Check part 2 of the system"])
    assert [s.text for s in steps] == ["Check part 1 of the system"]


def test_clean_steps_drops_blanks_repeats_and_non_text():
    noise = ["  Run it ", "run it.", "", "42", "}}}O", None, "- Test it"]
    assert clean_steps(noise, max_steps=8) == ("Run it", "Test it")


def test_task_types_are_words():
    from localmem.procedures.tasktypes import check_task_type

    assert check_task_type(" API  Design ") == "api design"
    with pytest.raises(InputError, match="must be words"):
        check_task_type("}}}}}\x7fd")


def test_failure_cause_prefers_a_stated_cause():
    trace = [
        "Added a null check in the serializer, still 500.",
        "The error came from the validation middleware, before the serializer.",
    ]
    assert extract.failure_cause(trace).startswith("The error came from the validation")
    assert extract.failure_cause(["Added a null check, still 500."]).endswith("still 500")
    assert extract.failure_cause(["All good."]) is None


def test_model_free_revision_keeps_steps_and_adds_an_abstract_caveat():
    steps = ("Do a", "Do b")
    trace = ["The error came from middleware/validate.py, not the view."]
    rev = model_free_revision_of(steps, trace, None, level="abstract")
    assert rev.steps == steps and rev.served_by == "model-free"
    assert rev.caveat == "The error came from a file, not the view"
    concrete = model_free_revision_of(steps, trace, None, level="concrete")
    assert concrete.caveat == "The error came from middleware/validate.py, not the view"
    bare = model_free_revision_of(steps, [], None, level="abstract")
    assert bare.caveat is None and "demote" in bare.diagnosis


def test_reliability_promotes_and_demotes():
    assert scoring.reliability(0, 0) == 0.5
    assert scoring.reliability(0, 1) < 0.5 < scoring.reliability(1, 1)
    base = dict(type_weight=0.1, reliability_weight=0.2)
    assert scoring.match_score(0.6, type_match=None, reliability_value=0.5, **base) == 0.6
    assert scoring.match_score(0.6, type_match=True, reliability_value=0.5, **base) == 0.7
    low = scoring.match_score(0.6, type_match=False, reliability_value=0.25, **base)
    assert low == pytest.approx(0.55)


def test_retirement_rule():
    rule = dict(after_uses=3, below=0.5)
    assert not scoring.should_retire(2, 0, **rule)
    assert scoring.should_retire(3, 1, **rule)
    assert not scoring.should_retire(4, 2, **rule)


def test_shipped_pairs_cover_the_seed_and_three_types():
    pairs = load_pairs()
    assert pairs[0].a.title == "Debug: API returns 500 error when user field is null"
    assert pairs[0].b.title == "Debug: API returns 500 error when email field is missing"
    assert len(pairs) >= 6
    assert {"debugging", "design", "refactoring"} <= {p.b.type for p in pairs}
    assert any(p.cross_type for p in pairs)


def test_success_rule_needs_every_concept():
    rule = load_pairs(["null-field"])[0].success
    good = (
        "The KeyError comes from the missing email key. Validate the payload and return 400; "
        "add a regression test."
    )
    assert rule.check(good) == (True, [])
    ok, missing = rule.check("Return 400 when the email is missing.")
    assert not ok and missing == [
        "fix: validate or check the field before use",
        "regression test",
    ]


def test_bad_pairs_are_refused():
    with pytest.raises(InputError, match="unknown task pair"):
        load_pairs(["nope"])
    with pytest.raises(InputError, match="missing or malformed"):
        parse_pair({"id": "x"})
    bad = {
        "id": "x",
        "task_a": {"type": "t", "title": "a", "thoughts": ["x"]},
        "task_b": {"type": "t", "title": "b"},
        "success": {"all_of": [{"concept": "c", "any": ["(unclosed"]}]},
    }
    with pytest.raises(InputError, match="bad pattern"):
        parse_pair(bad)
