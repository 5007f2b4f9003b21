"""Property-based tests over the public API (issue 16): whatever a caller hands in, the library
raises nothing but :class:`localmem.errors.LocalMemError`, and the store stays usable.

Hypothesis draws a sequence of calls with hostile arguments (lone surrogates, NUL, huge and
negative numbers, deep metadata, times out of range, odd metadata keys, ids of real, deleted
and purged memories) against one real store (DuckDB file, hnswlib, MiniLM) per test; after
every example the counts must agree, and at the end an add and a search must still work.
"""

from __future__ import annotations

import contextlib
import os
from datetime import datetime, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from localmem import Memory
from localmem.errors import LocalMemError

#: examples per property (a few ms each here); LOCALMEM_FUZZ_EXAMPLES=2000 for a longer hunt
EXAMPLES = int(os.environ.get("LOCALMEM_FUZZ_EXAMPLES", "200"))
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# -- strategies ----------------------------------------------------------------------------------
#: any code point, lone surrogates included (hypothesis leaves them out by default)
ANY_CHAR = st.characters(exclude_categories=())
texts = st.one_of(
    st.text(ANY_CHAR, max_size=40),
    st.sampled_from(
        ["", "   ", "a\x00b", "\ud800", "ok \udcff", "x" * 5000, "Redis cache", "deploy Friday"]
    ),
)
keys = st.one_of(
    st.text(ANY_CHAR, max_size=8),
    st.sampled_from(["a.", "a..b", ".a", "a.b", "$.x", "q'k", 'q"k', "s/l~", ""]),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    texts,
)
json_like = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(keys, inner, max_size=3)),
    max_leaves=8,
)


class Deep(dict):
    """A dict nested ``levels`` deep, with a short repr (hypothesis prints what it drew)."""

    def __init__(self, levels: int) -> None:
        super().__init__()
        self.levels = levels
        node = self
        for _ in range(levels):
            node["a"] = {}
            node = node["a"]

    def __repr__(self) -> str:
        return f"Deep({self.levels})"


metadatas = st.one_of(
    st.none(),
    st.dictionaries(keys, json_like, max_size=4),
    st.sampled_from([5, "x", [1], True, {1: "int key"}]),
    st.sampled_from([31, 40, 5000]).map(Deep),
)
times = st.one_of(
    st.none(),
    st.datetimes(timezones=st.timezones() | st.just(timezone.utc) | st.just(None)),
    st.sampled_from(
        [
            "9999-12-31T23:59:59-12:00",
            "0001-01-01T00:00:00+12:00",
            "2023-05-07T12:00:00+00:00",
            "2023-05-07",
            "nan",
            "Z",
            "2023-13-45T00:00:00Z",
        ]
    ),
    st.integers(min_value=-(2**64), max_value=2**64),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
)
scope_ids = st.one_of(st.none(), st.sampled_from(["u1", "u2", "s1"]), texts, st.integers())
kinds = st.one_of(st.sampled_from(["thought", "message", "fact", "note", "chunk"]), scalars)
limits = st.one_of(
    st.integers(min_value=-5, max_value=50),
    st.sampled_from([10**30, -(10**30), 0, 1]),
    scalars,
)
anything = st.one_of(scalars, json_like, metadatas, st.binary(max_size=8))


def _ids(memory: Memory) -> list[str]:
    return [m.id for m in memory.list(limit=1000, include_deleted=True)]


def _pick(data: st.DataObject, known: list[str], label: str) -> object:
    """A known id (whole, a prefix, upper-cased) or any value; the draws never depend on the
    store's state, so hypothesis can replay and shrink a failing case."""
    how = data.draw(st.sampled_from(["known", "prefix", "upper", "other"]), label=f"{label} kind")
    if how == "other":
        return data.draw(st.one_of(texts, anything), label=label)
    index = data.draw(st.integers(0, 10**6), label=f"{label} index")
    if not known:
        return "nosuchid"
    chosen = known[index % len(known)]
    return {"known": chosen, "prefix": chosen[:6], "upper": chosen.upper()}[how]


def memory_ids(memory: Memory, data: st.DataObject) -> object:
    """A real id (live, deleted or purged), a prefix of one, or something else."""
    return _pick(data, _ids(memory), "id")


def _some(data: st.DataObject, **strategies) -> dict:
    """Keyword arguments: each one present or left out."""
    return {
        name: data.draw(strategy, label=name)
        for name, strategy in strategies.items()
        if data.draw(st.booleans(), label=f"pass {name}")
    }


# -- the calls -----------------------------------------------------------------------------------
def op_add(m: Memory, data: st.DataObject) -> None:
    m.add(
        data.draw(texts, label="content"),
        **_some(
            data,
            kind=kinds,
            user_id=scope_ids,
            agent_id=scope_ids,
            session_id=scope_ids,
            event_time=times,
            metadata=metadatas,
            context=st.one_of(st.none(), texts),
            level=st.one_of(st.sampled_from(["episodic", "semantic", "meta"]), scalars),
            mine=st.sampled_from([None, "off", "deferred", "sometimes"]),
            dedupe=st.booleans(),
        ),
    )


def op_add_many(m: Memory, data: st.DataObject) -> None:
    item = st.one_of(
        texts,
        st.fixed_dictionaries(
            {"content": texts},
            optional={"kind": kinds, "user_id": scope_ids, "metadata": metadatas, "x": scalars},
        ),
        anything,
    )
    items = data.draw(st.one_of(st.lists(item, max_size=5), anything), label="items")
    m.add_many(
        items,
        **_some(
            data,
            batch_size=limits,
            dedupe=st.booleans(),
            user_id=scope_ids,
            kind=kinds,
        ),
    )


def op_get(m: Memory, data: st.DataObject) -> None:
    m.get(memory_ids(m, data), **_some(data, include_deleted=st.booleans()))


def op_get_many(m: Memory, data: st.DataObject) -> None:
    m.get_many(data.draw(st.one_of(st.lists(texts, max_size=3), anything), label="ids"))


def op_update(m: Memory, data: st.DataObject) -> None:
    m.update(
        memory_ids(m, data),
        **_some(
            data,
            content=st.one_of(st.none(), texts),
            context=st.one_of(st.none(), texts),
            metadata=metadatas,
            event_time=times,
        ),
    )


def op_delete(m: Memory, data: st.DataObject) -> None:
    m.delete(memory_ids(m, data))


def op_restore(m: Memory, data: st.DataObject) -> None:
    m.restore(memory_ids(m, data))


def op_purge(m: Memory, data: st.DataObject) -> None:
    m.purge(memory_ids(m, data))


def op_history(m: Memory, data: st.DataObject) -> None:
    m.history(memory_ids(m, data))


def op_links(m: Memory, data: st.DataObject) -> None:
    m.links(memory_ids(m, data))


def op_list(m: Memory, data: st.DataObject) -> None:
    m.list(
        **_some(
            data,
            kind=kinds,
            session_id=scope_ids,
            user_id=scope_ids,
            limit=limits,
            offset=limits,
            include_deleted=st.booleans(),
            in_session=st.one_of(st.none(), st.booleans()),
            oldest_first=st.booleans(),
        )
    )


def op_search(m: Memory, data: st.DataObject) -> None:
    m.search(
        data.draw(st.one_of(texts, anything), label="query"),
        **_some(
            data,
            k=limits,
            mode=st.one_of(st.sampled_from(["hybrid", "dense", "lexical"]), scalars),
            user_id=scope_ids,
            agent_id=scope_ids,
            session_id=scope_ids,
            kinds=st.one_of(st.lists(kinds, max_size=2), anything),
            levels=st.one_of(st.lists(st.sampled_from(["episodic", "meta"])), anything),
            since=times,
            until=times,
            metadata=metadatas,
            expand=st.sampled_from(["off", "prf", "auto", True, "x"]),
            temporal=st.booleans(),
            rerank=st.sampled_from(["off", "model-free", "auto", False, 3]),
            budget_tokens=st.one_of(st.none(), limits),
            links=st.booleans(),
            attributes=st.sampled_from(["off", "boost", "filter", "x"]),
            candidates=limits,
            dense_weight=st.one_of(st.floats(allow_nan=True), scalars),
            fusion=st.sampled_from(["rrf", "zscore", "minmax", "max"]),
            now=times,
        ),
    )


def _session_ids(m: Memory, data: st.DataObject) -> object:
    return _pick(data, [s.id for s in m.sessions(limit=50)], "session")


def op_sessions(m: Memory, data: st.DataObject) -> None:
    action = data.draw(st.sampled_from(["start", "thought", "complete", "list", "get"]))
    if action == "start":
        m.start_session(
            data.draw(texts, label="title"),
            **_some(data, user_id=scope_ids, agent_id=scope_ids, metadata=metadatas),
        )
    elif action == "thought":
        m.add_thought(
            _session_ids(m, data),
            data.draw(texts, label="thought"),
            **_some(
                data,
                branch_id=scope_ids,
                branch_from=limits,
                revises=limits,
                event_time=times,
                metadata=metadatas,
            ),
        )
    elif action == "complete":
        m.complete_session(
            _session_ids(m, data),
            data.draw(st.one_of(st.sampled_from(["success", "failure"]), scalars)),
            **_some(data, notes=st.one_of(st.none(), texts)),
        )
    elif action == "list":
        m.sessions(
            **_some(data, status=st.one_of(st.sampled_from(["open"]), scalars), limit=limits)
        )
    else:
        sid = _session_ids(m, data)
        m.get_session(sid)
        m.thoughts(sid)


OPS = [
    op_add,
    op_add_many,
    op_get,
    op_get_many,
    op_update,
    op_delete,
    op_restore,
    op_purge,
    op_history,
    op_links,
    op_list,
    op_search,
    op_sessions,
]


# -- the properties ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def fuzz_store(tmp_path_factory, embedder):
    """One real store for the whole module (embedding with the shared MiniLM)."""
    memory = Memory.open(tmp_path_factory.mktemp("fuzz") / "store", embedder=embedder)
    memory.add_many(
        ["Redis is the cache in front of Postgres", "The deploy runs on Fridays"], user_id="u1"
    )
    yield memory
    memory.close()


def check_consistent(memory: Memory) -> None:
    """Counts agree between the ways of reading them, and a plain search runs."""
    live = memory.count()
    assert live == len(memory.list(limit=1_000_000))
    assert memory.count(include_deleted=True) == len(memory.list(limit=10**6, include_deleted=True))
    assert live >= 0
    memory.search("cache", k=3)


@SETTINGS
@given(data=st.data())
def test_api_raises_only_localmem_errors(fuzz_store, data):
    for _ in range(data.draw(st.integers(1, 4), label="calls")):
        op = data.draw(st.sampled_from(OPS), label="op")
        with contextlib.suppress(LocalMemError):
            op(fuzz_store, data)
    check_consistent(fuzz_store)


def test_the_store_is_usable_after_the_fuzzing(fuzz_store):
    before = fuzz_store.count()
    item = fuzz_store.add("a final memory about zebra migrations", user_id="final")
    assert fuzz_store.count() == before + 1
    hits = fuzz_store.search("zebra migrations", k=3, user_id="final")
    assert [h.memory.id for h in hits] == [item.id]
    assert fuzz_store.get(item.id).content == "a final memory about zebra migrations"


@settings(max_examples=max(10, EXAMPLES // 2), deadline=None)
@given(
    when=st.datetimes(
        min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.timezones()
    )
)
def test_any_aware_time_is_stored_or_refused(fuzz_store, when):
    """Every aware datetime Python can hold is stored (and read back equal) or refused typed."""
    try:
        item = fuzz_store.add("a timed memory", event_time=when, dedupe=True)
    except LocalMemError:
        return
    # compared in UTC: Python never calls a time in a fold (a repeated DST hour) equal to one
    # in another zone, even the same instant
    utc = when.astimezone(timezone.utc)
    assert fuzz_store.get(item.id).event_time == utc == item.event_time
