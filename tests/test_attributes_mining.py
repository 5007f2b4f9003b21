"""Attribute mining without a model: key phrases, entity normalisation, label sets, the miner."""

from __future__ import annotations

import json

import numpy as np
import pytest

from localmem import InputError
from localmem.attributes.labels import LABEL_SETS, LabelSet, label_set_for, load_label_file
from localmem.attributes.mining import ModelFreeMiner, from_model_output
from localmem.attributes.normalise import (
    BUILTIN_ALIASES,
    display_value,
    entity_terms,
    merged_aliases,
    overlap,
    singular,
)
from localmem.attributes.phrases import candidates
from localmem.config import AttributeConfig
from localmem.errors import SchemaError


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("errors", "error"),
        ("queries", "query"),
        ("indexes", "index"),
        ("caches", "cache"),
        ("matches", "match"),
        ("classes", "class"),
        ("status", "status"),
        ("redis", "redis"),
        ("movies", "movie"),
        ("user_ids", "user_ids"),  # identifiers are left alone
    ],
)
def test_singular(word, expected):
    assert singular(word) == expected


def test_redis_matches_redis_cache_and_aliases_fold_spellings():
    assert display_value("Rate limit Errors") == "rate limit error"
    assert overlap(entity_terms("Redis"), entity_terms("redis cache")) == 1.0
    assert overlap(entity_terms("Postgres"), entity_terms("PostgreSQL")) == 1.0
    assert overlap(entity_terms("error handling"), entity_terms("rate limit errors")) == 0.5
    assert overlap(entity_terms("kafka topic"), entity_terms("redis cache")) == 0.0
    assert entity_terms("customer_id") == tuple(sorted(entity_terms("customer id")))
    table = merged_aliases({"PG": "PostgreSQL", "Mem0": "mem zero"})
    assert table["mem0"] == "mem zero" and table["postgres"] == BUILTIN_ALIASES["postgres"]


def test_candidates_keep_noun_phrases_identifiers_and_acronyms():
    found = [c.value for c in candidates("How should we handle rate limit errors in the API?")]
    assert found[0] == "rate limit error" and "api" in found
    assert "handle" not in found and "should" not in found
    text = "Added an index on orders(customer_id, created_at); the query went from 2.3s to 40ms."
    values = {c.value for c in candidates(text)}
    assert {"customer_id", "created_at", "index"} <= values
    assert not values & {"2.3s", "40ms"}  # measurements are not entities
    special = {c.value: c.special for c in candidates("We moved Kafka consumers to Node.js")}
    assert special["kafka"] and special["node.js"]


def test_candidates_of_text_without_content_words_are_empty():
    assert candidates("and then we just did it, really") == []


def test_label_sets_and_label_files(tmp_path):
    software = LABEL_SETS["software"]
    assert software.names("intent") == (
        "debugging",
        "design",
        "implementation",
        "analysis",
        "planning",
        "reflection",
    )
    assert "family" in LABEL_SETS["conversation"].names("topic")
    everyday = LABEL_SETS["everyday"]  # the default: life, work and software in parts
    assert everyday.grouped and not software.grouped
    assert {"pets", "work", "deployment"} <= set(everyday.names("topic"))
    restricted = label_set_for(AttributeConfig(intents=("design", "Ops")))
    assert restricted.names("intent") == ("design", "ops")
    assert restricted.names("topic") == everyday.names("topic")
    assert restricted.key != everyday.key
    path = tmp_path / "labels.json"
    path.write_text(json.dumps({"name": "mine", "intents": ["ask", "tell"], "topics": ["a", "b"]}))
    custom = load_label_file(path)
    assert isinstance(custom, LabelSet) and custom.names("topic") == ("a", "b")
    assert label_set_for(AttributeConfig(label_file=str(path))).name == "mine"
    path.write_text(json.dumps({"intents": ["only one"], "topics": ["a", "b"]}))
    with pytest.raises(InputError, match="at least 2"):
        load_label_file(path)
    path.write_text("{not json")
    with pytest.raises(InputError, match="cannot read label file"):
        load_label_file(path)
    path.write_text(
        json.dumps({"intents": ["a", "b"], "topics": [{"name": "x", "group": "y"}, "z"]})
    )
    with pytest.raises(InputError, match="group 'y', not one of life, software, work, any"):
        load_label_file(path)
    with pytest.raises(
        InputError, match="unknown label set 'nope'; known: conversation, everyday, software"
    ):
        label_set_for(AttributeConfig(label_set="nope"))


@pytest.fixture(scope="module")
def miner(embedder):
    return ModelFreeMiner(embedder, LABEL_SETS["software"], AttributeConfig())


NOTE = (
    "The rate limiter drops bursts because the Redis fixed-window counter resets every minute; "
    "a sliding window would smooth it out and keep the API responsive under load."
)


def test_model_free_miner_is_deterministic_and_within_the_label_set(miner):
    first = miner.mine(NOTE)
    again = miner.mine(NOTE)
    assert first == again
    assert first.miner == "model-free" and first.label_set == "software"
    entities = first.axis("entities")
    assert 3 <= len(entities) <= 5
    assert any("redis" in e.value for e in entities), [e.value for e in entities]
    # an axis is a label of the set, or nothing when no label is clearly best (abstention)
    assert first.first("intent") in (None, *LABEL_SETS["software"].names("intent"))
    assert first.first("topic") in LABEL_SETS["software"].names("topic")
    positions = sorted(a.priority for a in first.attributes)
    assert positions == list(range(len(first.attributes)))  # one ranking over every attribute
    assert all(0.0 <= a.score <= 1.0 for a in first.attributes)


def test_topics_follow_the_text(miner):
    assert (
        miner.mine("Tests are flaky: the fixture shares one database between tests.").first("topic")
        == "testing"
    )
    assert (
        miner.mine("Tokens must be signed and expire; passwords are hashed with bcrypt.").first(
            "topic"
        )
        == "security"
    )


def test_query_mining_is_cached(miner):
    first = miner.mine("How do we handle rate limit errors?", query=True)
    assert miner.mine("How do we handle rate limit errors?", query=True) is first


def test_model_output_is_normalised_and_checked():
    labels = LABEL_SETS["software"]
    mined = from_model_output(
        {
            "entities": ["Redis", "redis", "Rate limiters"],
            "intent": "design",
            "topic": "performance",
            "priority": ["performance", "rate limiter"],
        },
        labels,
        miner="llama:test",
        aliases=BUILTIN_ALIASES,
    )
    assert [a.value for a in mined.axis("entities")] == ["redis", "rate limiter"]
    assert [a.value for a in mined.priority][:2] == ["performance", "rate limiter"]
    with pytest.raises(SchemaError, match="intent='chatting'"):
        from_model_output(
            {"entities": ["x"], "intent": "chatting", "topic": "data", "priority": []},
            labels,
            miner="llama:test",
            aliases=BUILTIN_ALIASES,
        )


# -- issue 35: the part of the everyday set that fits each memory, and abstention -------------
@pytest.fixture(scope="module")
def everyday_miner(embedder):
    return ModelFreeMiner(embedder, LABEL_SETS["everyday"], AttributeConfig())


@pytest.mark.parametrize(
    ("text", "part"),
    [
        ("Noor: We took the kids to the seaside and they built a huge sandcastle.", "life"),
        ("Noor: My grandad's hip operation went fine, he's walking already.", "life"),
        ("The login endpoint leaks a stack trace when the JSON body is malformed.", "software"),
        (
            "Sharded the events table by month; the nightly rollup now takes four minutes.",
            "software",
        ),
    ],
)
def test_a_memory_gets_the_part_that_fits_it(everyday_miner, text, part):
    vec = everyday_miner.embedder.embed_batch([text])[0]
    assert everyday_miner.part(vec, text) == part
    topic = everyday_miner.mine(text, vector=vec).first("topic")
    groups = {x.name: x.group for x in LABEL_SETS["everyday"].topics}
    assert topic is None or groups[topic] in (part, "work")


def test_an_axis_is_left_empty_when_no_label_is_clearly_best(everyday_miner, monkeypatch):
    from localmem.attributes import modelfree

    text = "Noor: ok, see you then"
    vec = everyday_miner.embedder.embed_batch([text])[0]
    part = everyday_miner.part(vec, text)
    scores = everyday_miner.label_scores("intent", vec, text)
    allowed = np.sort(scores[everyday_miner.allowed("intent", part)])[::-1]
    margin = float(allowed[0] - allowed[1])
    monkeypatch.setitem(modelfree.ABSTAIN_MARGIN, "intent", margin + 0.001)
    assert everyday_miner.mine(text, vector=vec).first("intent") is None
    monkeypatch.setitem(modelfree.ABSTAIN_MARGIN, "intent", max(margin - 0.001, 0.0))
    assert everyday_miner.mine(text, vector=vec).first("intent") is not None


def test_a_forced_set_has_no_parts(miner):
    vec = miner.embedder.embed_batch([NOTE])[0]
    assert miner.part(vec, NOTE) is None and miner.allowed("topic", None).all()
