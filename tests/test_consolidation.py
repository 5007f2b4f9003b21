"""Hierarchical consolidation on a real store (DuckDB, hnswlib, MiniLM): episodic -> semantic ->
meta, provenance links, idempotent re-runs, level filters, bad input, failure atomicity."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
import pytest
from consolidation_helpers import CONVERSATION, _add_conversation, _links, _table_counts

from localmem.consolidation import write as consolidation_write
from localmem.consolidation.cluster import ClusterParams, agglomerate, cannot_link
from localmem.consolidation.extract import extract_fact, key_phrases
from localmem.consolidation.patterns import FactView, find_patterns
from localmem.consolidation.statements import third_person
from localmem.errors import InputError, NotFoundError


# -- pure parts ----------------------------------------------------------------------------------
def test_agglomerate_is_deterministic_and_respects_cannot_link():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=16), rng.normal(size=16)
    vecs = np.stack([a, a + 0.05, b, b + 0.05, a + 0.02])
    params = ClusterParams(threshold=0.8, max_size=8)
    first = agglomerate(vecs, params)
    assert first == agglomerate(vecs, params) == [[0, 1, 4], [2, 3]]
    # a session bound keeps 4 (another session) away from 0 and 1
    forbid = cannot_link(["x", "x", "y", "y", "y"], [None] * 5, ClusterParams(within_session=True))
    assert agglomerate(vecs, params, forbid=forbid) == [[0, 1], [2, 3], [4]]
    assert agglomerate(vecs, ClusterParams(threshold=0.8, max_size=2))[0] in ([0, 1], [0, 4])
    # a time window keeps 4 (a month later) apart; an unknown time constrains nothing
    day = datetime(2023, 5, 1, tzinfo=timezone.utc)
    times = [day, day, None, day, day + timedelta(days=30)]
    window = ClusterParams(threshold=0.8, window_days=7)
    assert agglomerate(vecs, window, forbid=cannot_link([None] * 5, times, window)) == [
        [0, 1],
        [2, 3],
        [4],
    ]


def test_statements_become_third_person_facts():
    assert (
        third_person("I love it and my dog loves me.", "Ann")
        == "Ann loves it and Ann's dog loves Ann."
    )
    texts = [
        "Ann: I love painting landscapes with watercolors.",
        "Bob: Wow, that's cool! What do you paint?",
        "Ann: I painted the lake with watercolors on Sunday.",
    ]
    fact = extract_fact(texts)
    assert fact is not None and fact.members == (0, 2)
    assert fact.text.startswith("Ann loves painting landscapes") and "Wow" not in fact.text
    assert "watercolors" in key_phrases(texts)
    assert extract_fact(["Bob: Hey, how are you?", "Ann: Thanks!"]) is None


def test_the_consolidate_task_runs_model_free():
    from localmem.llm.tasks import get_task, run_task

    result = run_task("consolidate", get_task("consolidate").example(), engine=None)
    assert result.served_by == "model-free" and len(result.value.facts) == 1
    fact = result.value.facts[0]
    assert fact.sources == [1, 2, 3] and "Melanie" in fact.fact and not result.value.patterns


def test_patterns_need_more_than_one_fact():
    one = FactView("f1", ("Ann: I really love hiking in the Alps with friends.",))
    two = FactView("f2", ("Ann: I love baking sourdough bread on Sundays.",))
    assert [d.key for d in find_patterns([one])] == []
    drafts = {d.key: d for d in find_patterns([one, two])}
    pref = drafts["preference:Ann"]
    assert pref.sources == ("f1", "f2") and "Ann really loves hiking" in pref.content


# -- the store -----------------------------------------------------------------------------------
def test_consolidation_writes_levels_with_provenance(memory):
    episodic = {m.id: m for m in _add_conversation(memory)}
    report = memory.consolidate(user_id="u1")
    assert report.run_id is not None and report.episodic == 10 and report.clusters >= 2
    assert report.served_by == ("model-free",)
    assert report.semantic, report.summary()
    for fact in report.semantic:
        item = memory.get(fact.id)
        assert item.level == "semantic" and item.user_id == "u1" and item.kind == "fact"
        sources = [r[0] for r in _links(memory, fact.id)]
        assert sorted(fact.sources) == sources and len(sources) >= 2
        assert all(episodic[s].level == "episodic" for s in sources)
        assert item.context.startswith("about: ") or item.context.startswith("from ")
    painting = [f for f in report.semantic if "watercolor" in f.content.lower()]
    assert painting and all(
        episodic[s].metadata["speaker"] == "Caroline" for s in painting[0].sources
    )
    # Caroline says she loves things in two different facts: a meta memory of her preferences
    meta = {m.content.split(" (")[0]: m for m in report.meta}
    assert "Caroline's preferences" in meta
    pref = memory.get(meta["Caroline's preferences"].id)
    assert pref.level == "meta"
    assert {r[0] for r in _links(memory, pref.id)} <= {f.id for f in report.semantic}
    history = memory.history(pref.id)
    assert [e.event for e in history] == ["ADD", "CONSOLIDATE"]


def test_dry_run_then_reruns_change_nothing_and_repeats_do_not_duplicate(memory):
    _add_conversation(memory)
    before = _table_counts(memory)
    dry = memory.consolidate(user_id="u1", dry_run=True)
    assert dry.dry_run and dry.semantic and dry.run_id is None
    assert _table_counts(memory) == before
    first = memory.consolidate(user_id="u1")
    assert [f.content for f in first.semantic] == [f.content for f in dry.semantic]
    before = _table_counts(memory)
    again = memory.consolidate(user_id="u1")
    assert not again.changed and again.run_id is None and _table_counts(memory) == before
    assert again.pending < first.pending
    # the same things said again: they extend facts or join them, never a second copy
    _add_conversation(memory, rows=CONVERSATION[:3])
    third = memory.consolidate(user_id="u1")
    contents = [
        r[0]
        for r in memory.store.db.fetchall(
            "SELECT content FROM memories WHERE level = 'semantic' AND NOT deleted"
        )
    ]
    assert len(contents) == len(set(contents))
    assert third.changed
    assert not memory.consolidate(user_id="u1").changed
    # a new preference changes Caroline's preferences: the meta memory is replaced, not doubled
    old = {m.id for m in memory.list(user_id="u1") if m.level == "meta"}
    baking = [
        ("Caroline", "I love baking sourdough bread on Sunday mornings.", "s3", 20),
        ("Caroline", "I love how the kitchen smells when I bake sourdough bread.", "s3", 20),
    ]
    _add_conversation(memory, rows=baking)
    fourth = memory.consolidate(user_id="u1")
    assert fourth.replaced and set(fourth.replaced) <= old
    replaced = memory.get(fourth.replaced[0], include_deleted=True)
    assert replaced.deleted and memory.history(replaced.id)[-1].actor == "consolidation"
    new_meta = [m for m in fourth.meta if "preferences" in m.content]
    assert new_meta and "sourdough" in new_meta[0].content
    supersedes = memory.store.db.fetchall(
        "SELECT dst FROM links WHERE src = ? AND kind = 'supersedes'", [new_meta[0].id]
    )
    assert [r[0] for r in supersedes] == [replaced.id]
    live = [m for m in memory.list(user_id="u1") if m.level == "meta"]
    assert len([m for m in live if "Caroline's preferences" in m.content]) == 1


def test_within_session_never_mixes_sessions(memory):
    items = {m.id: m for m in _add_conversation(memory)}
    report = memory.consolidate(user_id="u1", within="session")
    assert report.semantic
    for fact in report.semantic:
        assert len({items[s].session_id for s in fact.sources}) == 1
        assert memory.get(fact.id).session_id == items[fact.sources[0]].session_id


def test_search_per_level_and_across_levels(memory):
    _add_conversation(memory)
    report = memory.consolidate(user_id="u1")
    query = "watercolor painting"
    semantic = memory.search(query, k=5, levels=["semantic"], user_id="u1")
    assert semantic.hits and {h.memory.level for h in semantic.hits} == {"semantic"}
    episodic = memory.search(query, k=5, levels=["episodic"], user_id="u1")
    assert {h.memory.level for h in episodic.hits} == {"episodic"}
    every = memory.search(query, k=20, user_id="u1")
    assert {"episodic", "semantic"} <= {h.memory.level for h in every.hits}
    assert {f.id for f in report.semantic} & {h.memory.id for h in every.hits}


def test_bad_input_and_empty_scopes(memory):
    with pytest.raises(NotFoundError, match="no memories of user 'nobody'"):
        memory.consolidate(user_id="nobody")
    empty = memory.consolidate()  # an empty store: nothing to do, not an error
    assert empty.episodic == 0 and not empty.changed and empty.run_id is None
    _add_conversation(memory)
    with pytest.raises(InputError, match="within"):
        memory.consolidate(user_id="u1", within="everything")
    with pytest.raises(InputError, match="threshold"):
        memory.consolidate(user_id="u1", threshold=3)
    with pytest.raises(InputError, match="implementation"):
        memory.consolidate(user_id="u1", implementation="magic")
    assert memory.store.db.scalar("SELECT count(*) FROM memories WHERE level <> 'episodic'") == 0


def test_a_failed_write_leaves_the_store_as_it_was(memory, monkeypatch):
    _add_conversation(memory)
    before = _table_counts(memory)
    indexed = memory.store.vectors.live_count
    real_links = consolidation_write._insert_links

    def failing_links(db, links):  # after the memories' rows are written, in the transaction
        real_links(db, links)
        raise RuntimeError("disk full")

    monkeypatch.setattr(consolidation_write, "_insert_links", failing_links)
    with pytest.raises(RuntimeError, match="disk full"):
        memory.consolidate(user_id="u1")
    assert _table_counts(memory) == before
    assert memory.store.vectors.live_count == indexed  # no vector of a rolled-back memory
    assert memory.search("watercolor", k=5, levels=["semantic"]).hits == []
    monkeypatch.setattr(consolidation_write, "_insert_links", real_links)
    assert memory.consolidate(user_id="u1").semantic  # and the next run works
