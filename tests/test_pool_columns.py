"""The reranker's pool read as columns (localmem/store/columns.py, issue 34): from the rows held
in memory without making items, the same values the items give; the features read them one
way whichever the store, and a default search gives the same hits, evidence and all, with the
rows held or read from DuckDB, while making items only for what it returns."""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta, timezone

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from localmem.retrieval.features import NEAR_SECONDS, near_in_time
from localmem.store import memories
from localmem.store import mirror as mirror_module
from localmem.store.columns import (
    MemoryColumns,
    Placements,
    RowTexts,
    in_order,
    speaker_of_json,
    written_speaker,
)
from localmem.store.mirror import _Texts, written_speakers

BASE = datetime(2024, 5, 1, 12, tzinfo=timezone.utc)
_TEXT = st.one_of(st.none(), st.text(max_size=12))


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(_TEXT, max_size=30),
    cuts=st.lists(st.integers(0, 30)),
    kind=st.sampled_from([pa.string(), pa.large_string()]),
    data=st.data(),
)
def test_a_text_column_read_by_row_is_its_values(values, cuts, kind, data):
    """Any texts (nulls, empty, non-ASCII; none at all), 32- or 64-bit offsets, in any chunks, a
    slice of a larger array too: each row read from the buffers is the value, and ``filled``
    is its truth."""
    bounds = sorted({0, len(values), *(c for c in cuts if c < len(values))})
    chunks = [pa.array(values[a:b], kind) for a, b in itertools.pairwise(bounds)]
    padded = pa.array(["x", *values, "y"], kind).slice(1, len(values))
    rows = data.draw(st.lists(st.integers(0, len(values) - 1), max_size=40)) if values else []
    at = np.array(rows, dtype=np.int64)
    for column in (pa.chunked_array(chunks, kind), pa.chunked_array([padded])):
        texts = _Texts(column)
        assert texts.at(at) == [values[i] for i in rows]
        assert texts.filled(at).tolist() == [bool(values[i]) for i in rows]


@given(st.lists(st.integers(0, 50), unique=True, max_size=20), st.booleans(), st.data())
def test_columns_put_in_order_from_parts(labels, rows_held, data):
    """``in_order`` gathers the memories of several parts in the order asked, unknown labels
    left out; texts held as rows of a column (:class:`RowTexts`) stay rows and read the same."""
    texts = [f"text {x}" for x in labels]
    held = RowTexts(_Texts(pa.chunked_array([pa.array(texts, pa.string())])), np.arange(len(texts)))
    whole = MemoryColumns(
        labels,
        [f"s{x % 3}" if x % 2 else None for x in labels],
        held if rows_held else texts,
        [x % 5 == 0 for x in labels],
        [None] * len(labels),
        [None] * len(labels),
    )
    split = data.draw(st.integers(0, len(labels)))
    asked = data.draw(st.permutations([*labels, 99, 100]))
    parts = [whole.take(range(split)), whole.take(range(split, len(labels)))]
    order = [labels.index(x) for x in asked if x in labels]
    expected = whole.take(order)
    got = in_order(asked, parts)
    assert got == expected
    assert list(got.content) == [texts[i] for i in order]
    assert [got.content[i] for i in range(len(order))] == [texts[i] for i in order]
    assert isinstance(got.content, RowTexts) == rows_held
    grown = parts[0].then(parts[1])
    assert list(grown.content) == texts and list(grown.head(split).content) == texts[:split]


#: texts near the "Name: " rule's edges: names with non-ASCII letters, digits, dots, hyphens,
#: both apostrophes, up to four words, non-ASCII spaces before and after, a colon with no space
_NAMEISH = st.lists(
    st.sampled_from([*"AZaz09_.'’- :\t\n\x1c\x85\xa0\u2003ÉéßŁłİ東京", "Ana", "Ben", "Zoë", ": "]),
    max_size=16,
).map("".join)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(_NAMEISH, st.text(max_size=20), st.none()), max_size=12), st.data())
def test_the_written_speaker_read_by_re2_is_the_rule_on_text(texts, data):
    """The "Name: " rule read over a whole column (RE2, the few texts it cannot settle read by
    the rule) gives what the rule gives on each text, for any text (ASCII, non-ASCII names
    and spaces, none, null), in any chunks."""
    cut = data.draw(st.integers(0, len(texts)))
    column = pa.chunked_array(
        [pa.array(texts[:cut], pa.string()), pa.array(texts[cut:], pa.string())]
    )
    codes, values = written_speakers(column)
    assert values[codes].tolist() == [written_speaker(t) if t is not None else None for t in texts]


def test_the_written_speaker_examples():
    """Names the rule takes and those it does not, read by RE2 as by the rule."""
    cases = {
        "Ana: hi": "Ana",
        "  Zoë Angström: hi": "Zoë Angström",
        "Zoë Ångström: hi": None,
        "Ana Ben Cy Dee: hi": None,
        "Lena told Zane": None,
        "O’Neil: yes": "O’Neil",
        "Ana:hi": None,
        "Ana:\u2003hi": "Ana",
        "\xa0Ben: x": "Ben",
        "\x1cBen:\x1fx": "Ben",
        "ana: hi": None,
    }
    codes, values = written_speakers(pa.chunked_array([pa.array(list(cases))]))
    assert values[codes].tolist() == [written_speaker(t) for t in cases] == list(cases.values())


@pytest.mark.parametrize("kind", [pa.string(), pa.large_string(), pa.string_view()])
def test_the_written_speaker_of_a_column_in_any_text_layout(kind):
    """The column's "Name: " read from any layout of Arrow text a DuckDB may hand over (as the
    texts themselves are, ``_Texts``: another layout is read as one it reads), a slice too."""
    texts = ["Ana: hi", "Zoë: hi", None, "no one", "\u3000Ben: x"]
    padded = pa.array(["x", *texts, "y"], kind).slice(1, len(texts))
    for column in (pa.chunked_array([pa.array(texts, kind)]), pa.chunked_array([padded])):
        codes, values = written_speakers(column)
        assert values[codes].tolist() == ["Ana", "Zoë", None, None, "Ben"]


_PLACE = st.tuples(
    st.sampled_from([None, "", "s1"]),
    st.sampled_from([None, "u1", "u2"]),
    st.sampled_from([None, "a1"]),
    st.builds(
        lambda s, us: BASE + timedelta(seconds=s, microseconds=us),
        st.sampled_from([0, 300, 600, 900]),
        st.sampled_from([0, 1]),
    ),
    st.booleans(),
)


class _Placed:
    """A search's context reduced to what ``near_in_time`` asks of it: placements by label."""

    def __init__(self, places: dict) -> None:
        self.places = places

    def placements(self, labels: np.ndarray) -> Placements:
        return Placements.of(labels.tolist(), self.places)


@settings(max_examples=300, deadline=None)
@given(places=st.dictionaries(st.integers(0, 12), _PLACE, max_size=13), data=st.data())
def test_neighbours_in_time_over_arrays_are_the_rule_a_memory_at_a_time(places, data):
    """The neighbours ``near_in_time`` finds over placement columns are those of the rule read
    one memory at a time: the memory stored right before or after, when not deleted, without a
    session, of the same user and agent, and stored within ten minutes (to the microsecond)."""
    labels = data.draw(st.lists(st.sampled_from(sorted(places)), unique=True)) if places else []
    before, after = near_in_time(_Placed(places), labels)
    expected: tuple[dict, dict] = ({}, {})
    for label in labels:
        _, user, agent, when, _ = places[label]
        for step, side in ((-1, expected[0]), (1, expected[1])):
            other = places.get(label + step)
            if other is None:
                continue
            session, other_user, other_agent, other_when, deleted = other
            if (
                not deleted
                and not session
                and (user, agent) == (other_user, other_agent)
                and abs((when - other_when).total_seconds()) <= NEAR_SECONDS
            ):
                side[label] = label + step
    assert (before, after) == expected
    assert list(before) == [x for x in labels if x in before]  # in the order asked


def test_the_metadata_speaker_as_items_read_it():
    assert speaker_of_json(None) is None and speaker_of_json("") is None
    assert speaker_of_json('{"speaker": "Ana"}') == "Ana"
    assert speaker_of_json('{"speaker": 7}') == "7"
    assert speaker_of_json('{"speaker": ""}') is None and speaker_of_json("{}") is None


@pytest.fixture
def conversation(memory):
    """Sessions, loose chat turns, speakers in metadata and in the text, evolved contexts."""
    memory.add_many(
        [
            {
                "content": f"we met at the {('lake', 'cafe', 'office')[i % 3]} {i}",
                "event_time": BASE + timedelta(days=i // 4, minutes=i),
                "metadata": {"speaker": ("Ana", "Ben")[i % 2]},
            }
            for i in range(40)
        ],
        session_id="s1",
    )
    loose = memory.add_many(
        [{"content": f"Ben: loose turn {i} about the lake", "event_time": BASE} for i in range(20)]
    )
    for item in loose[::3]:
        memories.update(memory.kernel, item.id, context="Ana asked about the lake", event="EVOLVE")
    memory.add_many([f"a note {i} about the cafe" for i in range(10)])
    return memory


def test_the_pool_from_the_rows_held_is_the_pool_of_items(conversation, monkeypatch):
    """The columns the mirror gives a pool equal those its items give, and a default search
    gives the same hits with the rows held or read from DuckDB, every score and evidence."""
    monkeypatch.setattr(mirror_module, "WARM_AFTER", -1)
    from localmem.retrieval import joining

    pools = []
    original = joining.scored_pool

    def spy(ctx):
        pool, joined = original(ctx)
        pools.append((pool.rows, MemoryColumns.of_items(pool.items), ctx.rows_held()))
        return pool, joined

    monkeypatch.setattr("localmem.retrieval.rerank.scored_pool", spy)
    queries = ["where did Ana go to the lake?", "what happened on 3 May 2024?", "cafe", "Ben"]

    def run() -> list:
        out = []
        for q in queries:
            hits = conversation.search(q, k=10).hits
            out.append(
                [(h.memory.id, h.score, h.relevance, sorted(h.evidence.items())) for h in hits]
            )
        return out

    held = run()
    assert all(rows == items and used for rows, items, used in pools)
    kept = conversation.config
    conversation.config = kept.with_updates(search={"rows_in_memory": False})
    assert run() == held


def test_a_search_makes_items_only_for_what_it_reads_whole(conversation, monkeypatch):
    """The pool's ~70 memories are read as columns: the items made are those a search returns
    and those the exact-match check reads (at most 20 + k), not the pool."""
    monkeypatch.setattr(mirror_module, "WARM_AFTER", -1)
    result = conversation.search("where did Ana go to the lake?", k=5)
    rows = conversation.kernel.rows()
    rows.forget_items()
    result = conversation.search("where did Ana go to the lake?", k=5)
    scored = next(r.notes["scored"] for r in result.stages if r.stage == "rerank")
    assert scored > 40
    assert len(rows._built) <= 25 < scored


def test_postgres_pools_are_made_from_items(pg_url, embedder, monkeypatch):
    """PostgreSQL holds no rows in memory: the pool's columns are made from its items (the one
    feature code path), and a default search over sessions, loose turns and speakers runs."""
    from localmem import Memory
    from localmem.retrieval import joining

    seen = []
    original = joining.scored_pool

    def spy(ctx):
        pool, joined = original(ctx)
        seen.append((ctx.rows_held(), pool.rows == MemoryColumns.of_items(pool.items)))
        return pool, joined

    monkeypatch.setattr("localmem.retrieval.rerank.scored_pool", spy)
    with Memory.open(pg_url, embedder=embedder) as mem:
        mem.add_many(
            [
                {"content": f"we met at the lake {i}", "metadata": {"speaker": "Ana"}}
                for i in range(6)
            ],
            session_id="s1",
        )
        mem.add_many([f"Ben: loose turn {i} about the lake" for i in range(6)])
        hits = mem.search("where did Ana go to the lake?", k=5).hits
    assert hits and seen and all(not held and same for held, same in seen)
