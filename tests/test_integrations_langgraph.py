"""The LangGraph store on localmem: LangGraph's documented store behaviour (checked against its
own InMemoryStore where the two must agree), a real compiled graph whose nodes keep and find
memories through ``get_store()``, and the same on a served store."""

from __future__ import annotations

import asyncio
import uuid
from typing import TypedDict

import pytest
from langgraph.config import get_store
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore, Item, SearchItem
from langgraph.store.memory import InMemoryStore

import localmem
from localmem.integrations.langgraph import LocalmemStore


@pytest.fixture
def store(memory):
    return LocalmemStore(memory, index={"fields": ["text"]}, user_level=1)


def test_put_get_update_delete_keep_history(store, memory):
    ns = ("memories", "alice")
    store.put(ns, "food", {"text": "Alice is vegetarian", "since": 2019})
    item = store.get(ns, "food")
    assert isinstance(item, Item)
    assert (item.namespace, item.key, item.value) == (
        ns,
        "food",
        {"text": "Alice is vegetarian", "since": 2019},
    )
    store.put(ns, "food", {"text": "Alice is vegan", "since": 2021})
    again = store.get(ns, "food")
    assert again.value["text"] == "Alice is vegan" and again.created_at == item.created_at
    assert again.updated_at > item.updated_at
    (stored,) = memory.list(user_id="alice")  # one memory per (namespace, key), alice's
    assert stored.content == "Alice is vegan"
    events = [e.event for e in memory.history(stored.id)]
    assert events[0] == "ADD" and "UPDATE" in events
    assert store.get(ns, "other") is None and store.get(("memories", "bob"), "food") is None
    store.delete(ns, "food")
    assert store.get(ns, "food") is None
    assert memory.count() == 0
    store.delete(ns, "food")  # deleting what is not there is no error, as in LangGraph


def test_search_with_a_query_runs_the_pipeline(store):
    ns = ("memories", "alice")
    store.put(ns, "1", {"text": "Alice plays the cello in an orchestra", "kind": "hobby"})
    store.put(ns, "2", {"text": "Alice's flight to Lisbon leaves on Friday", "kind": "travel"})
    store.put(ns, "3", {"text": "Alice hates coriander", "kind": "food", "level": 3})
    store.put(("memories", "bob"), "1", {"text": "Bob plays the cello too", "kind": "hobby"})
    hits = store.search(("memories", "alice"), query="what instrument does she play", limit=2)
    assert all(isinstance(h, SearchItem) for h in hits)
    assert hits[0].key == "1" and hits[0].namespace == ns and isinstance(hits[0].score, float)
    assert len(hits) == 2
    everyone = store.search(("memories",), query="cello", limit=5)
    assert {h.namespace for h in everyone[:2]} == {ns, ("memories", "bob")}
    filtered = store.search(("memories",), query="cello", filter={"kind": "travel"})
    assert [h.key for h in filtered] == ["2"]
    ops = store.search(("memories",), filter={"level": {"$gte": 2}})
    assert [(h.key, h.score) for h in ops] == [("3", None)]  # no query: a listing
    assert store.search(("memories", "alice"), query="cello", offset=1, limit=1)[0].key != "1"


def test_index_false_is_kept_but_not_found_by_a_query(store):
    ns = ("docs",)
    store.put(ns, "secret", {"text": "the door code is 4821"}, index=False)
    store.put(ns, "open", {"text": "the door is blue", "note": "door code elsewhere"})
    assert store.get(ns, "secret").value == {"text": "the door code is 4821"}
    assert [h.key for h in store.search(ns, query="door code")] == ["open"]
    assert {h.key for h in store.search(ns)} == {"secret", "open"}  # listing shows both
    store.put(ns, "fields", {"title": "Gardening", "body": "prune roses"}, index=["title"])
    assert store.search(ns, query="Gardening")[0].key == "fields"


OPS = [
    ("put", ("a", "b"), "1", {"text": "one", "n": 1, "tags": {"x": 1}}),
    ("put", ("a", "b"), "2", {"text": "two", "n": 2}),
    ("put", ("a", "c", "d"), "3", {"text": "three", "n": 3}),
    ("put", ("z",), "4", {"text": "four", "n": 4}),
    ("put", ("a", "b"), "2", {"text": "two again", "n": 22}),
    ("delete", ("a", "b"), "1", None),
]


def _apply(s: BaseStore) -> None:
    for op, ns, key, value in OPS:
        if op == "put":
            s.put(ns, key, value)
        else:
            s.delete(ns, key)


@pytest.mark.parametrize(
    "call",
    [
        lambda s: s.list_namespaces(),
        lambda s: s.list_namespaces(prefix=("a",)),
        lambda s: s.list_namespaces(suffix=("b",)),
        lambda s: s.list_namespaces(prefix=("a", "*")),
        lambda s: s.list_namespaces(max_depth=1),
        lambda s: s.list_namespaces(limit=1, offset=1),
        lambda s: sorted((i.namespace, i.key) for i in s.search(("a",))),
        lambda s: sorted(i.key for i in s.search((), filter={"n": {"$gt": 2}})),
        lambda s: sorted(i.key for i in s.search((), filter={"n": {"$ne": 3}})),
        lambda s: sorted(i.key for i in s.search((), filter={"n": 22, "text": "two again"})),
        lambda s: [i.value if i else None for i in (s.get(("a", "b"), "1"), s.get(("z",), "4"))],
    ],
)
def test_agrees_with_langgraphs_in_memory_store(memory, call):
    ours, theirs = LocalmemStore(memory), InMemoryStore()
    _apply(ours)
    _apply(theirs)
    assert call(ours) == call(theirs)


def test_async_operations(store):
    async def scenario():
        ns = ("memories", "carol")
        await store.aput(ns, "k", {"text": "Carol runs marathons"})
        got = await store.aget(ns, "k")
        hits = await store.asearch(("memories",), query="running")
        spaces = await store.alist_namespaces(prefix=("memories",))
        await store.adelete(ns, "k")
        return got, hits, spaces, await store.aget(ns, "k")

    got, hits, spaces, gone = asyncio.run(scenario())
    assert got.value == {"text": "Carol runs marathons"}
    assert hits[0].key == "k" and spaces == [("memories", "carol")] and gone is None


def test_a_namespace_level_is_the_user_scope_a_person_can_be_forgotten_by(store, memory):
    store.put(("memories", "dave"), "1", {"text": "Dave's passport number is X123"})
    store.put(("memories", "erin"), "1", {"text": "Erin likes jazz"})
    assert memory.purge_all(user_id="dave") == 1
    assert store.get(("memories", "dave"), "1") is None
    assert store.list_namespaces() == [("memories", "erin")]


class State(TypedDict):
    user: str
    said: str
    recalled: list[str]


def remember(state: State) -> dict:
    store = get_store()
    store.put(("memories", state["user"]), str(uuid.uuid4()), {"text": state["said"]})
    return {}


def recall(state: State) -> dict:
    store = get_store()
    hits = store.search(("memories", state["user"]), query=state["said"], limit=3)
    return {"recalled": [h.value["text"] for h in hits]}


def _graph(store: BaseStore):
    builder = StateGraph(State)
    builder.add_node("remember", remember)
    builder.add_node("recall", recall)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "recall")
    builder.add_edge("recall", END)
    return builder.compile(store=store)


def _run_graph(store: BaseStore) -> list[list[str]]:
    graph = _graph(store)
    runs = []
    for said in (
        "I adopted a cat called Miso",
        "I work as a nurse at night",
        "what is my cat's name",
    ):
        runs.append(graph.invoke({"user": "fay", "said": said, "recalled": []})["recalled"])
    other = graph.invoke({"user": "gus", "said": "my cat", "recalled": []})["recalled"]
    return [*runs, other]


def test_a_compiled_graph_keeps_and_finds_memories(memory):
    first, _, question, other = _run_graph(LocalmemStore(memory, index={"fields": ["text"]}))
    assert first == ["I adopted a cat called Miso"]
    assert "I adopted a cat called Miso" in question[:2]
    assert other == ["my cat"]  # another user's namespace sees only its own
    assert memory.count() == 4


@pytest.mark.slow
def test_a_compiled_graph_on_a_served_store(tmp_path):
    from test_serve import start_server, stop_server

    store_path = tmp_path / "store"
    proc = start_server(store_path)
    try:
        with localmem.Memory.connect(store_path) as client:
            lg = LocalmemStore(client, index={"fields": ["text"]}, user_level=1)
            first, _, question, other = _run_graph(lg)
            assert first == ["I adopted a cat called Miso"]
            assert "I adopted a cat called Miso" in question[:2]
            assert other == ["my cat"]
            assert client.count(user_id="fay") == 3
            assert lg.list_namespaces() == [("memories", "fay"), ("memories", "gus")]
    finally:
        stop_server(proc)


def test_a_namespace_crowded_out_by_the_users_others_is_still_searched(store):
    for i in range(30):  # the user's other namespace fills the first pool of hits
        store.put(("archive", "hal"), str(i), {"text": f"Hal's bicycle repair note {i}"})
    store.put(("memories", "hal"), "bike", {"text": "Hal rides a red bicycle"})
    hits = store.search(("memories", "hal"), query="bicycle repair note", limit=2)
    assert [(h.namespace, h.key) for h in hits] == [(("memories", "hal"), "bike")]
