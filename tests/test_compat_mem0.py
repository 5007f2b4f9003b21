"""mem0's documented examples (docs.mem0.ai, the open-source Python SDK pages, read from the
mem0ai/mem0 repository's docs/) run unchanged apart from the import, on a real store, and
return mem0's result shapes. One test per example; the code of each is mem0's, then the checks.

What differs from mem0 on purpose: no language model (localmem infers by rules or its own
model), so which facts an inferring add extracts is localmem's; ids are localmem's.
"""

from __future__ import annotations

import asyncio
import re

import pytest

from localmem.compat.mem0 import AsyncMemory, Memory
from localmem.errors import InputError, NotFoundError

ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?[+-]\d\d:\d\d$")
MD5 = re.compile(r"^[0-9a-f]{32}$")


def check_item(item: dict, *, scored: bool = False) -> None:
    """mem0's memory item: id, memory, hash, metadata, created_at, updated_at, the scopes, and
    score for a search hit."""
    assert isinstance(item["id"], str) and item["id"]
    assert isinstance(item["memory"], str) and item["memory"]
    assert MD5.match(item["hash"])
    assert item["metadata"] is None or isinstance(item["metadata"], dict)
    assert ISO.match(item["created_at"]) and ISO.match(item["updated_at"])
    assert ("score" in item) == scored
    if scored:
        assert isinstance(item["score"], float)


def check_results(result: dict, *, scored: bool = False) -> list[dict]:
    assert set(result) == {"results"} and isinstance(result["results"], list)
    for item in result["results"]:
        check_item(item, scored=scored)
    return result["results"]


def check_added(result: dict) -> list[dict]:
    assert set(result) == {"results"}
    for entry in result["results"]:
        assert entry["event"] in ("ADD", "UPDATE", "DELETE")
        assert isinstance(entry["id"], str) and isinstance(entry["memory"], str)
    return result["results"]


@pytest.fixture(autouse=True)
def _close_default_stores():
    opened: list[Memory] = []
    original = Memory.__init__

    def tracking(self, *args, **kwargs):
        original(self, *args, **kwargs)
        opened.append(self)

    Memory.__init__ = tracking  # every Memory() of an example is closed after it
    yield
    Memory.__init__ = original
    for m in opened:
        m.close()


# -- docs/open-source/python-quickstart.mdx ------------------------------------------------------
def test_quickstart():
    m = Memory()
    messages = [
        {"role": "user", "content": "Hi, I'm Alex. I love basketball and gaming."},
        {"role": "assistant", "content": "Hey Alex! I'll remember your interests."},
    ]
    m.add(messages, user_id="alex")
    results = m.search("What do you know about me?", filters={"user_id": "alex"})
    print(results)

    hits = check_results(results, scored=True)
    assert hits and all(h["user_id"] == "alex" for h in hits)
    assert any("basketball" in h["memory"] for h in hits)
    assert not any("I'll remember" in h["memory"] for h in hits)  # the assistant's turn


# -- docs/core-concepts/memory-operations/add.mdx ------------------------------------------------
def test_add():
    m = Memory()

    messages = [
        {"role": "user", "content": "I'm planning to watch a movie tonight. Any recommendations?"},
        {"role": "assistant", "content": "How about thriller movies? They can be quite engaging."},
        {
            "role": "user",
            "content": "I'm not a big fan of thriller movies but I love sci-fi movies.",
        },
        {
            "role": "assistant",
            "content": "Got it! I'll avoid thriller recommendations and suggest sci-fi movies in the future.",  # noqa: E501 (mem0's example, verbatim)
        },
    ]

    # Store inferred memories (default behavior)
    result = m.add(messages, user_id="alice", metadata={"category": "movie_recommendations"})
    inferred = check_added(result)

    # Optionally store raw messages without inference
    result = m.add(
        messages, user_id="alice", metadata={"category": "movie_recommendations"}, infer=False
    )
    raw = check_added(result)

    # Optionally set an expiration date (YYYY-MM-DD)
    result = m.add(messages, user_id="alice", expiration_date="2030-01-31")

    assert inferred and all(e["event"] == "ADD" for e in inferred)
    assert [e["memory"] for e in raw] == [msg["content"] for msg in messages]
    assert [e["role"] for e in raw] == ["user", "assistant", "user", "assistant"]
    stored = m.get(raw[0]["id"])
    assert stored["metadata"] == {"category": "movie_recommendations"}
    assert stored["role"] == "user"
    check_added(result)  # the facts were known already: nothing new (mem0 reports no NONE)
    added = m.add("I am learning Portuguese", user_id="alice", expiration_date="2030-01-31")
    item = m.get(check_added(added)[0]["id"])
    assert item["metadata"]["expiration_date"] == "2030-01-31"
    gone = m.add("I am on holiday", user_id="alice", infer=False, expiration_date="2020-01-31")
    assert m.get(gone["results"][0]["id"]) is not None  # get still shows it, as mem0's does
    listed = m.get_all(filters={"user_id": "alice"})["results"]
    assert "I am on holiday" not in {i["memory"] for i in listed}  # expired: not listed


# -- docs/core-concepts/memory-operations/search.mdx ---------------------------------------------
def test_search():
    m = Memory()
    m.add("I drink green tea every morning", user_id="alice", infer=False)
    m.add(
        "I am vegetarian",
        user_id="alice",
        infer=False,
        metadata={"categories": ["diet", "health"]},
    )

    # Simple search: entity IDs go in `filters`
    related_memories = m.search("Should I drink coffee or tea?", filters={"user_id": "alice"})

    # Search with additional metadata filters (combine entity + metadata in the same dict)
    memories = m.search(
        "food preferences",
        filters={"user_id": "alice", "categories": {"contains": "diet"}},
    )

    assert check_results(related_memories, scored=True)[0]["memory"].startswith("I drink green")
    assert [h["memory"] for h in check_results(memories, scored=True)] == ["I am vegetarian"]


def test_search_filter_by_session_context():
    m = Memory()
    m.add("I like chess", user_id="alice", agent_id="chatbot", run_id="session-123", infer=False)
    m.add("I like go", user_id="alice", agent_id="chatbot", run_id="session-456", infer=False)

    # Get memories from a specific agent session: entity IDs combined in filters
    result = m.search(
        "query",
        filters={
            "user_id": "alice",
            "agent_id": "chatbot",
            "run_id": "session-123",
        },
    )

    hits = check_results(result, scored=True)
    assert [h["memory"] for h in hits] == ["I like chess"]
    assert (hits[0]["agent_id"], hits[0]["run_id"]) == ("chatbot", "session-123")


# -- docs/open-source/features/metadata-filtering.mdx -----------------------------------------
@pytest.fixture
def tagged():
    m = Memory()
    for text, meta in (
        (
            "Weekly team meeting moved to Monday",
            {
                "category": "work",
                "priority": 8,
                "status": "active",
                "title": "team meeting",
                "description": "IMPORTANT sync",
            },
        ),
        (
            "Buy groceries: vegetables and rice",
            {"category": "food", "priority": 3, "status": "completed", "tags": ["urgent", "home"]},
        ),
        (
            "Flight to Lisbon on Friday",
            {
                "category": "travel",
                "priority": 9,
                "status": "active",
                "deadline": "today",
                "score": 0.95,
                "confidence": 0.5,
                "rating": 2,
                "archived": False,
            },
        ),
        ("Old notes about the 2019 project", {"category": "archived", "status": "deleted"}),
        ("Call mum about the weekend", {"category": "personal", "priority": 5, "status": "active"}),
    ):
        m.add(text, user_id="alice", metadata=meta, infer=False)
    return m


def _texts(result: dict) -> set[str]:
    return {h["memory"] for h in check_results(result, scored=True)}


def test_metadata_key_value(tagged):
    m = tagged
    results = m.search(
        "What are my preferences?", filters={"user_id": "alice", "category": "personal"}
    )
    assert _texts(results) == {"Call mum about the weekend"}


def test_metadata_comparisons(tagged):
    m = tagged
    results = m.search(
        "recent activities",
        filters={
            "user_id": "alice",
            "score": {"gt": 0.8},
            "priority": {"gte": 5},
            "confidence": {"lt": 0.9},
            "rating": {"lte": 3},
        },
    )
    assert _texts(results) == {"Flight to Lisbon on Friday"}
    results = m.search(
        "specific content",
        filters={"user_id": "alice", "status": {"eq": "active"}, "archived": {"ne": True}},
    )
    assert _texts(results) == {
        "Weekly team meeting moved to Monday",
        "Flight to Lisbon on Friday",
        "Call mum about the weekend",
    }


def test_metadata_in_and_nin(tagged):
    m = tagged
    results = m.search(
        "multi-category search",
        filters={
            "user_id": "alice",
            "category": {"in": ["food", "travel", "entertainment"]},
            "status": {"nin": ["deleted", "archived"]},
        },
    )
    assert _texts(results) == {"Buy groceries: vegetables and rice", "Flight to Lisbon on Friday"}


def test_metadata_contains(tagged):
    m = tagged
    results = m.search(
        "content search",
        filters={
            "user_id": "alice",
            "title": {"contains": "meeting"},
            "description": {"icontains": "important"},
        },
    )
    assert _texts(results) == {"Weekly team meeting moved to Monday"}
    results = m.search("tags", filters={"user_id": "alice", "tags": {"contains": "urgent"}})
    assert _texts(results) == {"Buy groceries: vegetables and rice"}


def test_metadata_wildcard(tagged):
    m = tagged
    results = m.search("all with category", filters={"user_id": "alice", "deadline": "*"})
    assert _texts(results) == {"Flight to Lisbon on Friday"}


def test_metadata_logic(tagged):
    m = tagged
    results = m.search(
        "complex query",
        filters={
            "user_id": "alice",
            "AND": [
                {"category": "work"},
                {"priority": {"gte": 7}},
                {"status": {"ne": "completed"}},
            ],
        },
    )
    assert _texts(results) == {"Weekly team meeting moved to Monday"}
    results = m.search(
        "flexible query",
        filters={
            "user_id": "alice",
            "OR": [
                {"category": "urgent"},
                {"priority": {"gte": 9}},
                {"deadline": {"contains": "today"}},
            ],
        },
    )
    assert _texts(results) == {"Flight to Lisbon on Friday"}
    results = m.search(
        "exclusion query",
        filters={"user_id": "alice", "NOT": [{"category": "archived"}, {"status": "deleted"}]},
    )
    assert "Old notes about the 2019 project" not in _texts(results)
    assert len(_texts(results)) == 4
    with pytest.raises(InputError, match="unsupported operator"):
        m.search("x", filters={"user_id": "alice", "priority": {"between": [1, 2]}})


# -- docs/core-concepts/memory-operations/update.mdx and delete.mdx ------------------------------
def test_update():
    memory = Memory()
    added = memory.add("Alex prefers coffee", user_id="alex", infer=False)["results"][0]
    memory_id = added["id"]  # the docs' "mem_123"

    # Replace the content
    memory.update(
        memory_id=memory_id,
        text="Alex now prefers decaf coffee",
    )

    # Update content plus metadata and an expiration date (None clears it)
    answer = memory.update(
        memory_id=memory_id,
        text="Alex now prefers decaf coffee",
        metadata={"category": "preferences"},
        expiration_date="2030-01-31",
    )

    assert answer == {"message": "Memory updated successfully!"}
    item = memory.get(memory_id)
    check_item(item)
    assert item["memory"] == "Alex now prefers decaf coffee"
    assert item["metadata"] == {"category": "preferences", "expiration_date": "2030-01-31"}
    memory.update(memory_id, expiration_date=None)
    assert memory.get(memory_id)["metadata"] == {"category": "preferences"}
    with pytest.raises(InputError):
        memory.update(memory_id)


def test_delete():
    memory = Memory()
    first = memory.add("Alice likes tea", user_id="alice", infer=False)["results"][0]["id"]
    memory.add("Alice likes cake", user_id="alice", infer=False)
    memory.add("Bob likes tea", user_id="bob", infer=False)

    memory.delete(memory_id=first)
    memory.delete_all(user_id="alice")

    assert memory.get(first) is None
    assert memory.get_all(filters={"user_id": "alice"}) == {"results": []}
    assert len(memory.get_all(filters={"user_id": "bob"})["results"]) == 1
    with pytest.raises(InputError, match="reset"):
        memory.delete_all()
    with pytest.raises(NotFoundError):
        memory.delete(memory_id=first)


# -- docs/open-source/features/async-memory.mdx (its scoped organisation, synchronously) ---------
def test_scoped_organization():
    memory = Memory()
    memory.add(
        messages=[{"role": "user", "content": "I prefer vegetarian food"}],
        user_id="alice",
        agent_id="diet-assistant",
        run_id="consultation-001",
    )
    memory.add("I prefer window seats", user_id="alice", agent_id="travel", infer=False)

    all_user_memories = memory.get_all(filters={"user_id": "alice"})
    agent_memories = memory.get_all(filters={"user_id": "alice", "agent_id": "diet-assistant"})
    session_memories = memory.get_all(filters={"user_id": "alice", "run_id": "consultation-001"})
    specific_memories = memory.get_all(
        filters={"user_id": "alice", "agent_id": "diet-assistant", "run_id": "consultation-001"}
    )

    assert len(check_results(all_user_memories)) == 2
    for result in (agent_memories, session_memories, specific_memories):
        (item,) = check_results(result)
        assert "vegetarian" in item["memory"]
        assert (item["agent_id"], item["run_id"]) == ("diet-assistant", "consultation-001")
    history = memory.history(memory_id=item["id"])
    assert [h["event"] for h in history] == ["ADD"]
    assert history[0]["new_memory"] == item["memory"] and history[0]["old_memory"] is None


# -- the 1.x calling style (top-level ids, limit) and the rest of the API ------------------------
def test_history_get_all_and_reset_in_the_1x_style():
    m = Memory()
    result = m.add("I live in Berlin", user_id="sam", infer=False)
    memory_id = result["results"][0]["id"]
    m.update(memory_id, "I live in Hamburg")
    m.delete(memory_id)
    events = m.history(memory_id)
    assert [e["event"] for e in events] == ["ADD", "UPDATE", "DELETE"]
    assert (events[0]["old_memory"], events[0]["new_memory"]) == (None, "I live in Berlin")
    assert (events[1]["old_memory"], events[1]["new_memory"]) == (
        "I live in Berlin",
        "I live in Hamburg",
    )
    assert events[2]["is_deleted"] is True
    assert set(events[0]) == {
        "id",
        "memory_id",
        "old_memory",
        "new_memory",
        "event",
        "created_at",
        "updated_at",
        "is_deleted",
        "actor_id",
        "role",
    }
    for i in range(3):
        m.add(f"fact {i} about sam", user_id="sam", infer=False)
    assert len(m.get_all(user_id="sam", limit=2)["results"]) == 2
    assert len(m.search("fact", user_id="sam", limit=1)["results"]) == 1
    with pytest.raises(InputError, match="user_id, agent_id or run_id"):
        m.search("fact")
    assert m.reset() is None
    assert m.get_all(user_id="sam") == {"results": []}
    assert m.memory.count(include_deleted=True) == 4  # tombstones, their text erased
    assert all(i.content == "" for i in m.memory.list(include_deleted=True))


def test_an_inferring_add_reports_updates_and_deletes(embedder, tmp_path):
    import localmem

    with localmem.Memory.open(tmp_path / "s", embedder=embedder) as store:
        m = Memory(store)
        first = check_added(m.add("I live in Paris", user_id="kim"))
        assert [e["event"] for e in first] == ["ADD"]
        again = check_added(m.add("I live in Paris", user_id="kim"))
        assert again == []  # a fact already known: mem0 reports nothing (NONE)
        moved = check_added(m.add("I live in Rome", user_id="kim"))
        assert {e["event"] for e in moved} <= {"ADD", "UPDATE", "DELETE"}
        found = m.search("where does kim live", user_id="kim")["results"]
        assert found[0]["memory"].endswith("Rome")


def test_a_served_store_works_the_same(tmp_path):
    from test_serve import start_server, stop_server

    import localmem

    store = tmp_path / "store"
    proc = start_server(store)
    try:
        with localmem.Memory.connect(store) as client:
            m = Memory(client)
            added = check_added(m.add("I collect stamps", user_id="ann", infer=False))
            hits = check_results(m.search("hobby", filters={"user_id": "ann"}), scored=True)
            assert hits[0]["id"] == added[0]["id"]
            m.delete_all(user_id="ann")
            assert m.get_all(user_id="ann") == {"results": []}
    finally:
        stop_server(proc)


# -- docs/open-source/features/async-memory.mdx --------------------------------------------------
def test_async_batch_operations():
    async def batch_operations():
        memory = AsyncMemory()
        tasks = [
            memory.add(messages=[{"role": "user", "content": f"Message {i}"}], user_id=f"user_{i}")
            for i in range(5)
        ]
        results = await asyncio.gather(*tasks, return_exceptions=True)
        for i, result in enumerate(results):
            if isinstance(result, Exception):
                print(f"Task {i} failed: {result}")
            else:
                print(f"Task {i} completed successfully")
        return memory, results

    memory, results = asyncio.run(batch_operations())
    assert not any(isinstance(r, Exception) for r in results)
    for i, result in enumerate(results):
        check_added(result)
        found = asyncio.run(memory.get_all(filters={"user_id": f"user_{i}"}))["results"]
        assert [item["memory"] for item in found] == [f"Message {i}"]


def test_async_scoped_organization_and_from_config(tmp_path):
    async def scenario():
        memory = await AsyncMemory.from_config(
            {"vector_store": {"config": {"path": str(tmp_path / "s")}}}
        )
        await memory.add(
            messages=[{"role": "user", "content": "I prefer vegetarian food"}],
            user_id="alice",
            agent_id="diet-assistant",
            run_id="consultation-001",
        )
        all_user_memories = await memory.get_all(filters={"user_id": "alice"})
        specific_memories = await memory.get_all(
            filters={"user_id": "alice", "agent_id": "diet-assistant", "run_id": "consultation-001"}
        )
        history = await memory.history(memory_id=all_user_memories["results"][0]["id"])
        return all_user_memories, specific_memories, history

    everyone, specific, history = asyncio.run(scenario())
    assert check_results(everyone) == check_results(specific)
    assert [h["event"] for h in history] == ["ADD"]
    assert (tmp_path / "s").is_dir()  # the configured path is the store
