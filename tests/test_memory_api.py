"""The Python API on a real store: add, get, update, delete, restore, purge, history, sessions."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from localmem import InputError, NotFoundError

UTC = timezone.utc


def test_add_get_roundtrip(memory):
    when = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    item = memory.add(
        "Caroline went to a support group",
        kind="message",
        user_id="conv-26",
        session_id="s1",
        event_time=when,
        metadata={"speaker": "Caroline"},
    )
    got = memory.get(item.id)
    assert got.content == "Caroline went to a support group"
    assert got.kind == "message" and got.user_id == "conv-26" and got.session_id == "s1"
    assert got.event_time == when
    assert got.metadata == {"speaker": "Caroline"}
    assert got.level == "episodic" and not got.deleted
    assert memory.get(item.id[:6]).id == item.id  # a unique prefix works


def test_add_many_in_batches_and_progress(memory):
    seen = []
    items = memory.add_many(
        [f"note number {i} about topic {i % 7}" for i in range(130)],
        batch_size=50,
        progress=seen.append,
        kind="note",
        user_id="u",
    )
    assert len(items) == 130 and seen == [50, 100, 130]
    assert memory.count() == 130
    assert memory.store.vectors.live_count == 130
    assert memory.store.lexical.doc_count == 130
    assert {i.kind for i in items} == {"note"}


def test_same_text_is_embedded_once(memory, monkeypatch):
    calls = []
    real = memory.embedder.embed_batch

    def counting(texts):
        calls.append(list(texts))
        return real(texts)

    monkeypatch.setattr(memory.embedder, "embed_batch", counting)
    memory.add("the same sentence")
    memory.add_many(["the same sentence", "a new one", "a new one"])
    assert calls == [["the same sentence"], ["a new one"]]
    assert memory.count() == 4


def test_update_reembeds_and_records_history(memory):
    item = memory.add("The cache uses Redis")
    before = memory.store.vectors.get([item.label])[0]
    updated = memory.update(item.id, content="The cache uses Memcached", metadata={"v": 2})
    assert updated.content == "The cache uses Memcached"
    after = memory.store.vectors.get([item.label])[0]
    assert not np.allclose(before, after)
    events = memory.history(item.id)
    assert [(e.event, e.field) for e in events] == [
        ("ADD", None),
        ("UPDATE", "content"),
        ("UPDATE", "metadata"),
    ]
    assert events[1].old_value == "The cache uses Redis"
    assert events[1].new_value == "The cache uses Memcached"
    hits = memory.search("Memcached", mode="lexical")
    assert hits[0].memory.id == item.id
    assert len(memory.search("Redis", mode="lexical")) == 0


def test_update_context_changes_the_vector_text(memory):
    item = memory.add("Use a sliding window")
    memory.update(item.id, context="Relates to API rate limiting")
    got = memory.get(item.id)
    assert got.context == "Relates to API rate limiting"
    assert memory.search("rate limiting", mode="lexical")[0].memory.id == item.id
    assert memory.history(item.id)[-1].event == "UPDATE"


def test_history_is_not_the_callers_to_write(memory):
    """Issue 30 item 8: the event, actor and info of a history row are not public arguments
    (a client could record a PURGE by "system:admin"); the actor is the Memory's own. Code
    inside localmem (evolution, an importer) writes other events through the kernel."""
    item = memory.add("Use a sliding window")
    for forged in ({"event": "PURGE"}, {"actor": "system:admin"}, {"info": {"why": "x"}}):
        with pytest.raises(TypeError):
            memory.update(item.id, content="changed", **forged)
    for method in (memory.delete, memory.restore, memory.purge):
        with pytest.raises(TypeError):
            method(item.id, actor="system:admin")
    memory.update(item.id, content="Use a sliding window of 60 s")
    assert [(e.event, e.actor) for e in memory.history(item.id)][-1] == ("UPDATE", "user")
    from localmem.store import memories

    memories.update(memory.kernel, item.id, context="imported", actor="import", event="EVOLVE")
    assert [(e.event, e.actor) for e in memory.history(item.id)][-1] == ("EVOLVE", "import")


def test_delete_restore_purge(memory):
    keep = memory.add("kept memory about gardening")
    gone = memory.add("secret memory about a password")
    memory.delete(gone.id)
    assert all(h.memory.id != gone.id for h in memory.search("password", k=5))
    with pytest.raises(NotFoundError):
        memory.get(gone.id)
    assert memory.get(gone.id, include_deleted=True).deleted
    memory.restore(gone.id)
    assert memory.search("password", k=1)[0].memory.id == gone.id
    memory.update(gone.id, content="secret memory about a new password")
    memory.purge(gone.id)
    purged = memory.get(gone.id, include_deleted=True)
    assert purged.content == "" and purged.deleted
    events = memory.history(gone.id)
    assert events[-1].event == "PURGE"
    assert all(e.old_value is None and e.new_value is None for e in events)
    text = memory.store.db.fetchall("SELECT content FROM memories")
    assert all("password" not in row[0] for row in text)
    with pytest.raises(NotFoundError):
        memory.restore(gone.id)
    assert memory.search("gardening", k=1)[0].memory.id == keep.id


def test_unknown_ids(memory):
    with pytest.raises(NotFoundError):
        memory.get("does-not-exist")
    with pytest.raises(NotFoundError):
        memory.update("does-not-exist", content="x")
    with pytest.raises(NotFoundError):
        memory.delete("does-not-exist")
    with pytest.raises(InputError):
        memory.get("")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"content": ""}, "empty"),
        ({"content": "   \n\t"}, "empty"),
        ({"content": 42}, "must be text"),
        ({"content": b"\xff\xfe bad"}, "UTF-8"),
        ({"content": "ok", "kind": "banana"}, "unknown kind"),
        ({"content": "ok", "level": "cosmic"}, "unknown level"),
        ({"content": "ok", "event_time": datetime(2023, 1, 1)}, "no time zone"),
        ({"content": "ok", "event_time": float("nan")}, "finite"),
        ({"content": "ok", "event_time": "yesterday"}, "ISO-8601"),
        ({"content": "ok", "metadata": ["a"]}, "must be a dict"),
        ({"content": "ok", "metadata": {"x": object()}}, "JSON"),
        ({"content": "ok", "user_id": ""}, "user_id"),
    ],
)
def test_bad_input_is_refused_and_nothing_is_stored(memory, kwargs, message):
    with pytest.raises(InputError, match=message):
        memory.add(**kwargs)
    assert memory.count(include_deleted=True) == 0
    assert memory.store.lexical.doc_count == 0


def test_content_over_the_limit(open_memory, store_path):
    from localmem import Config

    config = Config().with_updates(store={"max_content_chars": 100})
    mem = open_memory(store_path, config=config)
    with pytest.raises(InputError, match="limit"):
        mem.add("x" * 101)
    mem.add("x" * 100)
    assert mem.count() == 1


def test_bad_item_in_a_batch_writes_nothing_of_it(memory):
    with pytest.raises(InputError):
        memory.add_many(["fine", "also fine", ""])
    assert memory.count() == 0
    with pytest.raises(InputError, match="unknown field"):
        memory.add_many([{"content": "x", "colour": "red"}])


def test_batches_before_a_bad_one_are_stored(memory):
    # the next batch is embedded while the previous one is written: a bad item still stops at
    # its own batch, and the ones before it are stored
    with pytest.raises(InputError):
        memory.add_many(["one", "two", "three", "four", "five", ""], batch_size=2)
    assert sorted(i.content for i in memory.list()) == ["four", "one", "three", "two"]
    assert memory.store.vectors.live_count == 4 and memory.store.lexical.doc_count == 4


def test_an_embedder_failure_mid_way_keeps_the_earlier_batches(memory, monkeypatch):
    real = memory.embedder.embed_batch

    def failing(texts):
        if any("boom" in t for t in texts):
            raise RuntimeError("the model fell over")
        return real(texts)

    monkeypatch.setattr(memory.embedder, "embed_batch", failing)
    with pytest.raises(RuntimeError, match="fell over"):
        memory.add_many(["alpha", "beta", "gamma", "boom", "delta", "epsilon"], batch_size=2)
    assert sorted(i.content for i in memory.list()) == ["alpha", "beta"]
    assert memory.store.vectors.live_count == 2
    memory.add("after the failure")  # the store is still usable
    assert memory.count() == 3


def test_bytes_are_decoded(memory):
    item = memory.add("café au lait".encode())
    assert memory.get(item.id).content == "café au lait"


def test_list_and_stats(memory):
    memory.add_many(["one", "two"], kind="note")
    memory.add("three", kind="fact")
    assert [i.content for i in memory.list(kind="note")] == ["two", "one"]
    stats = memory.stats()
    assert stats["memories"] == 3 and stats["by_kind"] == {"fact": 1, "note": 2}
    assert stats["embedder"] == "all-MiniLM-L6-v2+int8" and stats["dim"] == 384


def test_sessions_of_thoughts(memory):
    session = memory.start_session("Debug a 500 error when the user field is null")
    t1 = memory.add_thought(session.id, "Reproduce with a request whose user is null")
    t2 = memory.add_thought(session.id, "The handler dereferences user.name without a check")
    t3 = memory.add_thought(session.id, "Actually the serializer fails first", revises=2)
    t4 = memory.add_thought(session.id, "Try a guard clause", branch_id="guard", branch_from=2)
    assert [t.number for t in (t1, t2, t3, t4)] == [1, 2, 3, 4]
    thoughts = memory.thoughts(session.id)
    assert next(t.memory.content for t in thoughts).startswith("Reproduce")
    assert thoughts[2].revises == 2 and thoughts[3].branch_id == "guard"
    assert all(t.memory.kind == "thought" and t.memory.session_id == session.id for t in thoughts)
    assert memory.get_session(session.id).thought_count == 4
    done = memory.complete_session(session.id, outcome="success")
    assert done.status == "completed" and done.outcome == "success"
    with pytest.raises(InputError, match="completed"):
        memory.add_thought(session.id, "too late")
    with pytest.raises(InputError, match="already"):
        memory.complete_session(session.id)
    hits = memory.search("null user field", session_id=session.id, k=2)
    assert all(h.memory.session_id == session.id for h in hits)


def test_session_bad_input(memory):
    session = memory.start_session("s")
    with pytest.raises(InputError):
        memory.add_thought(session.id, "x", revises=5)
    with pytest.raises(InputError):
        memory.complete_session(session.id, outcome="maybe")
    with pytest.raises(NotFoundError):
        memory.add_thought("s_nope", "x")
    with pytest.raises(InputError):
        memory.start_session("  ")


def test_event_time_accepts_strings_and_epoch(memory):
    a = memory.add("a", event_time="2023-05-08T13:56:00+02:00")
    b = memory.add("b", event_time=0)
    assert a.event_time == datetime(2023, 5, 8, 11, 56, tzinfo=UTC)
    assert b.event_time == datetime(1970, 1, 1, tzinfo=UTC)
    assert memory.get(a.id).event_time - memory.get(b.id).event_time > timedelta(days=1)


def test_bad_input_is_a_typed_error_on_every_backend(memory):
    """Issue 30 item 7: what reached the database as a cast error, an encoding error or a
    PostgreSQL DataError (a NUL byte) is an InputError naming the field; nothing is stored."""
    cases = [
        lambda: memory.add("x", user_id="u\x00"),
        lambda: memory.add("x", agent_id="a\x00"),
        lambda: memory.add("x", session_id="s\x00"),
        lambda: memory.add("x", metadata={"k\x00": 1}),
        lambda: memory.add("x", metadata={"k": ["v\x00"]}),
        lambda: memory.get("abcd\x00"),
        lambda: memory.count(user_id=[1]),
        lambda: memory.run_jobs(job_ids=["x"]),
        lambda: memory.run_jobs(job_ids=["\ud800"]),
        lambda: memory.run_jobs(kinds=["\ud800"]),
        lambda: memory.sources_of(["\ud800"]),
        lambda: memory.procedures.get("\ud800"),
        lambda: memory.infer("I like tea", speaker=5),
    ]
    for i, case in enumerate(cases):
        with pytest.raises(InputError):
            case()
        assert memory.count() == 0, i
    (said,) = memory.infer("I like green tea", speaker="DOMAIN\\user")  # not a regex template
    assert said.memory.content == "DOMAIN\\user likes green tea"
