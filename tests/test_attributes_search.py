"""Attributes in a real store: mining on add (inline, deferred), deletion, and the search stage."""

from __future__ import annotations

import pytest

from localmem import InputError
from localmem.attributes import Attribute, Mined, miner_for
from localmem.attributes import rows as attribute_rows
from localmem.attributes.jobs import mine_now, queue_mining
from localmem.config import Config

THOUGHTS = [
    "REST endpoints should use plural nouns and the API version goes in the URL path.",
    "The API should enforce a rate limit per API key and answer 429 with a Retry-After header.",
    "Added a composite index on orders(customer_id, created_at); the slow query dropped to 40 ms.",
    "The connection pool is exhausted under load: 10 connections for 50 workers.",
    "Every error response uses one JSON body with an error code, a message and the request id.",
    "Clients should retry 429 responses with exponential backoff and jitter.",
]


def _config(**attributes):
    return Config().with_updates(attributes=attributes)


@pytest.fixture
def mined(open_memory, store_path):
    mem = open_memory(store_path, config=_config(mine_on_add="inline"))
    mem.add_many(THOUGHTS, kind="thought")
    return mem


def _ids(result):
    return [h.memory.id for h in result.hits]


def test_inline_mining_stores_rows_per_axis(mined):
    counts = attribute_rows.counts(mined.store.db)
    assert counts == {
        "memories": 6,
        "mined": 6,
        "unmined": 0,
        "stale": 0,
        "by_miner": {"model-free": 6},
    }
    item = mined.list(limit=1)[0]
    found = attribute_rows.read(mined.store.db, [item.id])[item.id]
    axes = {a.axis for a in found.mined.attributes}
    assert {"entities", "topic"} <= axes <= {"entities", "intent", "topic"}  # intent may abstain
    assert found.mined.label_set == "everyday" and not found.stale(item.content_hash)
    assert mined.store.jobs.counts() == {"mine": {"done": 6}}


def test_deferred_mining_waits_for_run_jobs_and_delete_removes_attributes(open_memory, store_path):
    mem = open_memory(store_path, config=_config(mine_on_add="deferred"))
    items = mem.add_many(THOUGHTS[:3])
    assert attribute_rows.counts(mem.store.db)["mined"] == 0
    assert mem.store.jobs.pending(["mine"]) == 3
    mem.delete(items[2].id)  # its pending job is dropped with it
    report = mem.run_jobs()
    assert (report.done, report.failed, report.remaining) == (2, 0, 0)
    assert set(attribute_rows.read(mem.store.db, [i.id for i in items])) == {
        items[0].id,
        items[1].id,
    }
    mem.delete(items[0].id)
    assert attribute_rows.read(mem.store.db, [items[0].id]) == {}
    mem.restore(items[0].id)  # restored memories are mined again when mining is on
    assert mem.run_jobs().done == 1
    assert items[0].id in attribute_rows.read(mem.store.db, [items[0].id])


def test_job_for_a_memory_deleted_meanwhile_is_dropped(open_memory, store_path):
    mem = open_memory(store_path)
    item = mem.add(THOUGHTS[0], mine="deferred")
    mem.store.db.execute("UPDATE memories SET deleted = true WHERE id = ?", [item.id])
    report = mem.run_jobs()
    assert report.dropped == 1 and attribute_rows.read(mem.store.db, [item.id]) == {}


def test_update_marks_stale_and_remines(open_memory, store_path):
    mem = open_memory(store_path)
    item = mem.add(THOUGHTS[2])
    mine_now(mem, item.id)
    mem.update(item.id, content="The dashboard query needs an index on orders.user_id.")
    assert (
        attribute_rows.counts(mem.store.db)["stale"] == 1
    )  # mining is off: the rows stay, flagged
    assert attribute_rows.to_mine(mem.store.db, which="stale") == [item.id]
    jobs = queue_mining(mem, which="outdated")
    assert len(jobs) == 1 and mem.run_jobs(job_ids=jobs).done == 1
    assert attribute_rows.counts(mem.store.db)["stale"] == 0


def test_sql_match_folds_entities_and_respects_refined(memory):
    item = memory.add("A note about caching")
    rows = Mined(
        (
            Attribute("entities", "redis cache", 0, 0.8, 0, ("cach", "redi")),
            Attribute("intent", "design", 0, 0.9, 1),
            Attribute("intent", "analysis", 1, 0.5, 3),
            Attribute("topic", "performance", 0, 0.2, 2),  # unconfident
        ),
        "model-free",
        "software",
    )
    with memory.store.db.transaction():
        attribute_rows.write(memory.store.db, item.id, rows, item.content_hash)
    query = [
        Attribute("entities", "redis", 0, 0.7, 0, ("redi",)),
        Attribute("intent", "analysis", 0, 0.8, 1),
        Attribute("topic", "performance", 0, 0.9, 2),
    ]
    kw = {"min_confidence": 0.3, "entity_match": 0.5}
    refined, mined = attribute_rows.match(
        memory.store.db, [item.label], query, strategy="refined", priority=False, **kw
    )
    assert mined == {item.label: "software"}
    assert set(refined[item.label]) == {"entities"}  # rank-1 intent and weak topic do not count
    assert refined[item.label]["entities"].strength == 1.0
    full, _ = attribute_rows.match(
        memory.store.db, [item.label], query, strategy="comprehensive", priority=True, **kw
    )
    assert set(full[item.label]) == {"entities", "intent", "topic"}
    assert full[item.label]["intent"].weight == pytest.approx(1 / 2 * 1 / 4)  # positions 1 and 3


def test_filter_keeps_matches_fills_and_explains(mined):
    query = "How should we handle rate limit errors in the API?"
    base = mined.search(query, k=6, mode="dense")
    result = mined.search(query, k=6, mode="dense", attributes="filter", min_matches=3)
    report = {r.stage: r for r in result.stages}["attributes"]
    assert report.implementation == "model-free"
    kept = report.notes["kept"]
    assert kept < 6 and len(result.hits) == 6  # short results are filled, never returned short
    fills = [h for h in result.hits if "fill" in h.flags]
    assert len(fills) == 6 - kept and result.hits[-1] in fills
    assert all(h.evidence["attr_matches"] == 3 for h in result.hits if "fill" not in h.flags)
    assert all(h.evidence["attr_matches"] < 3 for h in fills)
    assert "fill " in result.explain() and "query entities=" in result.explain()
    assert sorted(_ids(base)) == sorted(_ids(result))


def test_boost_reorders_without_dropping(mined):
    query = "rate limit errors in the API"
    plain = {"mode": "dense", "temporal": False, "rerank": "off"}  # the boost alone
    off = mined.search(query, k=6, **plain)
    boosted = mined.search(query, k=6, attributes="boost", **plain)
    assert sorted(_ids(off)) == sorted(_ids(boosted))
    for hit in boosted.hits:
        base = next(h for h in off.hits if h.memory.id == hit.memory.id)
        assert (hit.score > base.score) == (hit.evidence["attr_matches"] > 0)
        assert not hit.flags


def test_single_axis_and_options_are_checked(mined):
    result = mined.search(
        "API rate limit", k=3, attributes="filter", axes=["entities"], min_matches=1
    )
    notes = {r.stage: r for r in result.stages}["attributes"].notes
    assert notes["axes"] == "entities"
    for hit in result.hits:
        assert set(k for k in hit.evidence if k.startswith("attr_")) <= {
            "attr_matches",
            "attr_entities",
        }
    with pytest.raises(InputError, match="min_matches must be between 1 and 1"):
        mined.search("x", attributes="filter", axes=["topic"], min_matches=2)
    with pytest.raises(InputError, match="axis must be one of"):
        mined.search("x", attributes="filter", axes=["mood"])


def test_a_label_set_change_is_reported(open_memory, store_path):
    first = open_memory(store_path, config=_config(mine_on_add="inline"))
    first.add_many(THOUGHTS[:2])
    first.close()
    again = open_memory(store_path, config=_config(label_set="conversation"))
    result = again.search("rate limits", k=2, attributes="boost")
    notes = {r.stage: r for r in result.stages}["attributes"].notes
    assert notes["label_sets"] == "candidates mined with everyday, query with conversation"


def test_unmined_store_says_so(memory):
    memory.add_many(THOUGHTS[:3])
    result = memory.search("rate limits", k=2, attributes="filter")
    notes = {r.stage: r for r in result.stages}["attributes"].notes
    assert notes["unmined"] == 3 and "localmem mine" in notes["hint"]
    assert len(result.hits) == 2 and all("fill" in h.flags for h in result.hits)


def test_engine_miner_needs_an_engine(memory):
    with pytest.raises(Exception, match="no engine is configured"):
        miner_for(memory, "engine")
    with pytest.raises(InputError, match="miner must be one of"):
        miner_for(memory, "gpt")


def test_worker_thread_mines_deferred_jobs_while_adds_go_on(open_memory, store_path):
    from localmem.worker import JobWorker

    mem = open_memory(store_path, config=_config(mine_on_add="deferred"))
    with JobWorker(mem, kinds=["mine"], idle_s=0.05) as worker:
        mem.add_many(THOUGHTS[:3])
        mem.add(THOUGHTS[3])
        assert worker.drain(timeout=120)
    assert worker.error is None and worker.done == 4
    assert attribute_rows.counts(mem.store.db)["mined"] == 4 and mem.store.jobs.pending() == 0
