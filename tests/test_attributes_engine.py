"""Attribute mining through the model engine: the real llama.cpp path on the tiny GGUF, and what
happens when a model's answer is not JSON or leaves the label set."""

from __future__ import annotations

import pytest

from localmem.attributes import rows as attribute_rows
from localmem.attributes.labels import EVERYDAY
from localmem.config import Config
from localmem.llm import run_task
from localmem.llm.llama import LlamaEngine
from localmem.llm.tasks import TaskContext, max_output_bytes


def _config(**attributes):
    # a byte-level model needs as many tokens as the longest output the grammar admits
    limit = max_output_bytes("attributes", {"text": "x"}) + 8
    return Config().with_updates(attributes={"miner": "engine", "max_tokens": limit, **attributes})


@pytest.mark.slow
def test_tiny_gguf_mines_memories_and_queries(open_memory, store_path, tiny_engine):
    mem = open_memory(store_path, config=_config(mine_on_add="inline"), engine=tiny_engine)
    items = mem.add_many(
        ["The rate limiter drops bursts at the gateway.", "Index the orders table by customer."]
    )
    assert mem.store.jobs.counts() == {"mine": {"done": 2}}
    rows = attribute_rows.read(mem.store.db, [i.id for i in items])
    for found in rows.values():
        assert found.mined.miner == "llama:tiny"
        # the default set (everyday): the engine chooses among all its labels
        assert found.mined.first("intent") in EVERYDAY.names("intent")
        assert found.mined.first("topic") in EVERYDAY.names("topic")
    from localmem.attributes.mining import miner_for

    miner = miner_for(mem)
    assert miner.mine("Retry 429s with backoff.") == miner.mine("Retry 429s with backoff.")
    result = mem.search("rate limits", k=2, attributes="boost")
    report = {r.stage: r for r in result.stages}["attributes"]
    assert report.implementation == "llama:tiny"
    again = mem.search("rate limits", k=2, attributes="boost")  # the query is mined once
    assert {r.stage: r for r in again.stages}["attributes"].notes["query"] == report.notes["query"]


def test_attributes_task_runs_model_free_without_an_engine(embedder):
    result = run_task(
        "attributes",
        {"text": "Tokens expire after an hour; passwords are hashed with bcrypt."},
        engine=None,
        context=TaskContext(embedder=embedder),
    )
    assert result.served_by == "model-free"
    assert result.value.topic == "security" and result.value.entities


class _ScriptedLlama(LlamaEngine):
    """The real engine (prompt, validation, retry) with the model's text replaced by a script."""

    answers: list[str]

    def _complete(self, tokens, **kwargs):
        from localmem.llm.base import Usage

        text = self.answers.pop(0) if self.answers else ""
        return text, "stop", Usage(len(tokens), len(text), 0.0)


@pytest.mark.parametrize(
    "bad",
    [
        "I think the topic is performance.",  # not JSON
        '{"entities": ["redis"], "intent": "chatting", "topic": "data", "priority": ["redis"]}',
    ],
)
def test_invalid_answers_are_retried_then_the_job_fails_and_can_be_retried(
    open_memory, store_path, tiny_gguf, bad
):
    engine = _ScriptedLlama(tiny_gguf, n_ctx=16384, n_threads=1)
    engine.answers = [bad, bad]
    mem = open_memory(store_path, config=_config(), engine=engine)
    item = mem.add("The cache hides a slow query on orders.", mine="inline")
    assert mem.get(item.id).content.startswith("The cache")  # stored all the same
    assert engine.answers == []  # asked twice: the answer and one retry
    status, error = mem.store.db.fetchone("SELECT status, error FROM jobs WHERE kind = 'mine'")
    assert status == "failed" and "after 2 attempts" in error
    assert attribute_rows.read(mem.store.db, [item.id]) == {}
    good = (
        '{"entities": ["slow query"], "intent": "debugging", "topic": "data", '
        '"priority": ["slow query"]}'
    )
    engine.answers = [good]
    assert mem.store.jobs.retry_failed(["mine"]) == 1
    assert mem.run_jobs().done == 1
    mined = attribute_rows.read(mem.store.db, [item.id])[item.id].mined
    assert mined.first("topic") == "data" and mined.first("entities") == "slow query"
