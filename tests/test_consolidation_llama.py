"""Consolidation through the real llama.cpp runtime (the tiny random-weight test GGUF).

Its JSON follows the schema but its text is noise, so this checks the plumbing: whatever valid
facts it returns are written as semantic memories served by llama.cpp, linked only to memories
of the cluster it was shown; an output that cannot be used writes nothing.
"""

from __future__ import annotations

import pytest
from consolidation_helpers import CONVERSATION, _add_conversation, _links

from localmem import Config
from localmem.consolidation.task import ConsolidateInput
from localmem.llm.tasks import max_output_bytes

PAINTING = [row for row in CONVERSATION if "atercolor" in row[1]]


@pytest.mark.slow
def test_consolidation_goes_through_llama_cpp(store_path, open_memory, tiny_engine):
    budget = max_output_bytes(
        "consolidate",
        ConsolidateInput(memories=[{"text": f"{w}: {t}"} for w, t, _, _ in PAINTING]),
    )
    config = Config().with_updates(consolidation={"max_tokens": budget + 64})
    mem = open_memory(store_path, engine=tiny_engine, config=config)
    members = {m.id for m in _add_conversation(mem, rows=PAINTING)}
    report = mem.consolidate(user_id="u1", implementation="model", meta=False)
    assert report.clusters == 1
    assert report.served_by and report.served_by[0].startswith("llama:")
    assert report.completion_tokens > 0
    if not report.semantic:  # the noise had no usable fact: said so, nothing written
        assert report.warnings and report.run_id is None
        assert mem.count() == len(PAINTING)
        return
    for fact in report.semantic:
        assert fact.served_by.startswith("llama:")
        item = mem.get(fact.id)
        assert item.level == "semantic" and item.metadata["consolidation"]["served_by"]
        sources = {r[0] for r in _links(mem, fact.id)}
        assert sources and sources <= members
    rerun = mem.consolidate(user_id="u1", implementation="model", meta=False)
    assert rerun.clusters == 0 and not rerun.semantic  # consolidated: not sent again
