"""Issue 35's engine path: the ``facts`` / ``reconcile`` and ``attributes`` prompts stay valid
end to end on the real Gemma 3 270M GGUF (a base model: what it decides is not scored here,
only that every call is schema-valid, served by the engine, recorded, and loses nothing)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from localmem.attributes.labels import EVERYDAY
from localmem.attributes.mining import EngineMiner
from localmem.config import AttributeConfig

pytestmark = pytest.mark.slow


def test_infer_runs_facts_and_reconcile_through_the_real_model(open_memory, tmp_path, real_engine):
    mem = open_memory(tmp_path / "s", engine=real_engine)
    said = [
        ("Maya: We rent a flat in Leeds.", datetime(2021, 4, 2, tzinfo=timezone.utc)),
        (
            "Maya: Finally bought a house! We're in York now.",
            datetime(2023, 8, 20, tzinfo=timezone.utc),
        ),
    ]
    for text, when in said:
        applied = mem.infer(text, user_id="maya", event_time=when)
        assert applied  # at least one decision, whatever the model answered
        for a in applied:
            assert a.event in ("ADD", "UPDATE", "INVALIDATE", "NONE")
            # served by the model, or a typed failure that stored the text as given
            assert a.decider in (real_engine.name, "failed")
            events = [h for h in mem.history(a.memory.id) if h.event == "INFER"]
            assert a.event == "NONE" or events, "every stored fact records its decision"
    stored = mem.list(user_id="maya", limit=100, include_deleted=True)
    assert stored and not any(m.deleted for m in stored)


def test_attribute_mining_with_the_everyday_set_is_valid_on_the_real_model(real_engine):
    miner = EngineMiner(real_engine, EVERYDAY, AttributeConfig())
    for text in (
        "Maya: I adopted a puppy last week, she chews everything.",
        "The CI pipeline uses npm ci and caches node_modules between runs.",
    ):
        mined = miner.mine(text)
        assert mined.miner == real_engine.name and mined.label_set == "everyday"
        assert mined.first("intent") in EVERYDAY.names("intent")
        assert mined.first("topic") in EVERYDAY.names("topic")
        assert mined.axis("entities")
