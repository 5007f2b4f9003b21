"""Memories the candidate lists missed that join the reranker's pool (issue 18,
localmem/retrieval/joining.py): the turns next to the best candidates (a reply shares no word
with the question it answers), and on a question naming a time, the memories of that time.
Each stays out when the search's filters leave it out. Also the temporal stage leaving
unreachable candidates unread. Collected again on PostgreSQL (tests/test_store_contract.py)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from localmem.retrieval import joining, temporal
from localmem.retrieval.pipeline import run_stages, start
from localmem.store import timeline

UTC = timezone.utc
SUMMER = "what are the summer plans?"


def _small_pool(memory, **search) -> None:
    # each retriever hands on two memories: the answers below are never among them
    memory.config = memory.config.with_updates(
        search={"candidates": 2, "rerank_pool": 2, "rerank_neighbours": 0, "time_window": 0}
        | search
    )


def _ids(result) -> set[str]:
    return {h.memory.id for h in result.hits}


def _summer_store(memory, *, reply_user: str = "a") -> str:
    """A session whose answer is a reply sharing no word with the question asked of it, among
    turns that match the question better; returns the reply's id."""
    memory.add_many(
        [f"Jon: a hot summer day at the bakery, we sold {n} loaves" for n in range(6)],
        user_id="a",
        session_id="other",
    )
    memory.add("Mel: what are your plans for the summer break?", user_id="a", session_id="s1")
    reply = memory.add(
        "Caroline: researching adoption agencies, it has been a dream of mine",
        user_id=reply_user,
        session_id="s1",
    )
    return reply.id


def test_a_reply_the_retrievers_missed_is_scored_through_the_turn_it_answers(memory):
    reply = _summer_store(memory)
    _small_pool(memory)
    assert reply not in _ids(memory.search(SUMMER, k=10, user_id="a"))
    _small_pool(memory, rerank_neighbours=1)
    hits = {h.memory.id: h for h in memory.search(SUMMER, k=10, user_id="a").hits}
    assert reply in hits
    assert hits[reply].evidence["neighbour"] == 1.0 and "rerank" in hits[reply].evidence


def _pool_ids(memory, query: str, **options) -> set[str]:
    """The memories the model-free reranker would score for ``query``."""
    ctx = start(memory.kernel, query, k=10, **options)
    run_stages(ctx, memory.stages, until="rerank")
    pool, _ = joining.scored_pool(ctx)
    return {item.id for item in pool.items}


def test_a_neighbour_outside_the_search_scope_stays_out(memory):
    reply = _summer_store(memory, reply_user="b")  # same session, another user
    _small_pool(memory, rerank_neighbours=1)
    assert reply not in _ids(memory.search(SUMMER, k=10, user_id="a"))
    assert reply in _pool_ids(memory, SUMMER)  # no scope: it joins
    memory.delete(reply)
    assert reply not in _pool_ids(memory, SUMMER)  # deleted: it is nobody's neighbour


def _travel_store(memory, *, answer_user: str = "a") -> str:
    """A year of turns, one a week, that mention travel; the answer (July 2022) does not."""
    start = datetime(2022, 1, 3, 12, tzinfo=UTC)
    memory.add_many(
        [
            {
                "content": f"Joanna: I love to travel, week {w} went by",
                "event_time": start + timedelta(weeks=w),
            }
            for w in range(52)
            if w not in (26, 27, 28, 29)
        ],
        user_id="a",
    )
    answer = memory.add(
        "Joanna: I went to Woodhaven, a small town in the Midwest",
        user_id=answer_user,
        event_time=datetime(2022, 7, 12, 12, tzinfo=UTC),
    )
    return answer.id


def test_memories_of_the_time_a_question_names_join_the_pool(memory):
    answer = _travel_store(memory)
    question = "Where did Joanna travel to in July 2022?"
    _small_pool(memory)
    assert answer not in _ids(memory.search(question, k=10, user_id="a"))
    _small_pool(memory, time_window=5)
    result = memory.search(question, k=10, user_id="a")
    hits = {h.memory.id: h for h in result.hits}
    assert answer in hits, result.explain()
    assert hits[answer].evidence["window"] == 1.0 and hits[answer].evidence["time_close"] == 1.0
    assert "window" in hits[answer].flags
    rerank = next(r for r in result.stages if r.stage == "rerank")
    assert 1 <= rerank.notes["joined"]["window"] <= 5
    # a question naming a year is too wide a window; one naming no time has none
    for wide in ("Where did Joanna travel to in 2022?", "Where did Joanna travel to?"):
        assert answer not in _ids(memory.search(wide, k=10, user_id="a"))


def test_a_memory_of_that_time_outside_the_search_scope_stays_out(memory):
    answer = _travel_store(memory, answer_user="b")
    _small_pool(memory, time_window=50)
    assert answer not in _ids(memory.search("Where did Joanna go in July 2022?", k=10, user_id="a"))
    assert answer in _ids(memory.search("Where did Joanna go in July 2022?", k=10))


def test_labels_near_time_are_the_nearest_first_within_the_range(memory):
    middle = datetime(2024, 3, 10, 12, tzinfo=UTC)
    offsets = [-9, -3, -1, 0, 2, 5, 8, 40]
    added = memory.add_many(
        [{"content": f"note {d}", "event_time": middle + timedelta(days=d)} for d in offsets]
    )
    label = {d: memory.get(m.id).label for d, m in zip(offsets, added, strict=True)}
    db = memory.kernel.db
    window = timeline.Window(middle - timedelta(days=8), middle + timedelta(days=8), middle)
    got = timeline.labels_near_time(db, window, 10)
    assert got == [label[d] for d in (0, -1, 2, -3, 5, 8)]
    assert timeline.labels_near_time(db, window, 3) == [label[0], label[-1], label[2]]


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    start=st.integers(-30, 30),
    length=st.integers(0, 40),
    middle=st.integers(-40, 40),
    limit=st.integers(1, 30),
    scope=st.sampled_from([None, 2, 3, 7]),
)
def test_the_kept_timeline_answers_as_the_query_does(memory, start, length, middle, limit, scope):
    """The copy of the timeline a single-writer store keeps gives the query's answer, ties
    (several memories at one time) and scopes (every 2nd, 3rd or 7th label) included."""
    db = memory.kernel.db
    if not memory.count():
        base = datetime(2024, 3, 10, tzinfo=UTC)
        memory.add_many(
            [
                {"content": f"note {i}", "event_time": base + timedelta(days=(i * 7) % 23 - 11)}
                for i in range(40)
            ]
        )
    base = datetime(2024, 3, 10, tzinfo=UTC)
    window = timeline.Window(
        base + timedelta(days=start),
        base + timedelta(days=start + length),
        base + timedelta(days=middle),
    )
    labels = timeline.timeline(db)[1]
    allowed = None if scope is None else np.sort(labels[labels % scope == 0])
    kept = joining.near_time(memory.kernel, window, limit, allowed)
    assert kept == timeline.labels_near_time(db, window, limit, allowed)
    times, labels = timeline.timeline(db)
    assert kept == timeline.nearest(times, labels, window, limit, allowed)


def test_the_kept_timeline_sees_each_write(memory):
    base = datetime(2024, 3, 10, tzinfo=UTC)
    window = (timeline.Window(base - timedelta(days=2), base + timedelta(days=2), base), 10)
    first = memory.add("the first note", event_time=base)
    assert joining.near_time(memory.kernel, *window) == [memory.get(first.id).label]
    second = memory.add("the second note", event_time=base + timedelta(days=1))
    labels = [memory.get(m.id).label for m in (first, second)]
    assert joining.near_time(memory.kernel, *window) == labels
    memory.delete(first.id)
    assert joining.near_time(memory.kernel, *window) == labels[1:]
    memory.update(second.id, event_time=base + timedelta(days=30))
    assert joining.near_time(memory.kernel, *window) == []
    assert timeline.labels_near_time(memory.kernel.db, *window) == []


def test_a_kept_value_is_read_again_where_another_process_may_write(memory):
    """Kept between writes on a store this process alone writes (DuckDB); read on every call
    where any process may write (PostgreSQL), whose changes this kernel never counts."""
    reads = []

    def read() -> int:
        reads.append(1)
        return len(reads)

    first, second = memory.kernel.kept("probe", read), memory.kernel.kept("probe", read)
    assert (first, second) == ((1, 1) if memory.kernel.db.one_writer else (1, 2))


_WORDS = ["hike", "museum", "concert", "recipe", "garden", "trip", "meeting", "class"]
_WHEN = ["last week", "in May 2023", "on 9 May 2023", "yesterday", "last summer", ""]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    word=st.sampled_from(_WORDS),
    when=st.sampled_from(_WHEN),
    k=st.integers(1, 30),
    rerank=st.sampled_from(["off", "model-free"]),
)
def test_leaving_unreachable_candidates_unread_changes_no_result(
    memory, monkeypatch, word, when, k, rerank
):
    """The temporal stage reads the memories of only the candidates a time factor could lift
    into a place a later stage reads: the results are those of reading every one."""
    if not memory.count():
        base = datetime(2023, 1, 2, 12, tzinfo=UTC)
        memory.add_many(
            [
                {
                    "content": f"we talked about the {_WORDS[i % 8]} and the {_WORDS[i * 3 % 8]}"
                    + (" last Saturday" if i % 3 == 0 else ""),
                    "event_time": base + timedelta(days=5 * i),
                }
                for i in range(90)
            ]
        )
        memory.config = memory.config.with_updates(
            search={"candidates": 60, "rerank_pool": 2, "rerank_depth": 1, "time_window": 3}
        )
    query = f"when did we talk about the {word} {when}".strip() + "?"
    now = datetime(2024, 1, 1, tzinfo=UTC)

    def top(result):
        return [(h.memory.id, round(h.score, 9)) for h in result.hits]

    pruned = memory.search(query, k=k, rerank=rerank, now=now)
    stage = next(r for r in pruned.stages if r.stage == "temporal")
    with monkeypatch.context() as m:
        m.setattr(temporal, "_reachable", lambda ctx, *a, **kw: set(ctx.candidates))
        everything = memory.search(query, k=k, rerank=rerank, now=now)
    assert top(pruned) == top(everything)
    assert (
        stage.notes["read"]
        <= next(r for r in everything.stages if r.stage == "temporal").notes["read"]
    )


def test_the_temporal_stage_leaves_unreachable_candidates_unread(memory):
    base = datetime(2023, 1, 2, 12, tzinfo=UTC)
    memory.add_many(
        [
            {"content": f"note {i} about the garden" + " garden" * (i % 5), "event_time": base}
            for i in range(80)
        ]
    )
    memory.config = memory.config.with_updates(
        search={"candidates": 60, "rerank_pool": 4, "rerank_depth": 1}
    )
    result = memory.search("when did we talk about the garden?", k=3)
    stage = next(r for r in result.stages if r.stage == "temporal")
    assert stage.candidates_in > stage.notes["read"] >= 4


def test_a_crowded_window_of_other_users_still_finds_the_searched_users_memory(memory):
    """The window is searched within the search's scope, not cut from the nearest of all."""
    answer = _travel_store(memory)
    memory.add_many(
        [
            {"content": f"Bo: ordinary day {i}", "event_time": datetime(2022, 7, 16, tzinfo=UTC)}
            for i in range(60)
        ],
        user_id="b",
    )
    _small_pool(memory, time_window=5)
    assert answer in _ids(memory.search("Where did Joanna travel in July 2022?", k=10, user_id="a"))


def test_nothing_joins_where_no_model_free_reranker_scores_a_pool(memory):
    """Joined memories are for the reranker to score: without it they would only take places
    (and under an attribute filter they would slip past it)."""
    answer = _travel_store(memory)
    _small_pool(memory, time_window=5, rerank_neighbours=3)
    question = "Where did Joanna travel to in July 2022?"
    for options in ({"rerank": "off"}, {"rerank": "off", "mode": "lexical"}):
        result = memory.search(question, k=10, user_id="a", **options)
        assert answer not in _ids(result)
        assert not any({"window", "neighbour"} & set(h.flags) for h in result.hits)


def test_nothing_joins_under_an_attribute_filter(memory):
    _travel_store(memory)
    _small_pool(memory, time_window=5, rerank_neighbours=3)
    question = "Where did Joanna travel to in July 2022?"
    plain = memory.search(question, k=10, user_id="a")
    assert next(r for r in plain.stages if r.stage == "rerank").notes["joined"]["window"]
    filtered = memory.search(
        question, k=10, user_id="a", attributes="filter", axes=["entities"], min_matches=1
    )
    assert next(r for r in filtered.stages if r.stage == "rerank").notes["joined"] == {}


def test_a_window_at_the_ends_of_the_calendar_does_not_overflow(memory):
    memory.add("Joanna: the last day", event_time=datetime(9999, 12, 30, tzinfo=UTC))
    memory.add("Joanna: the first day", event_time=datetime(1, 1, 2, tzinfo=UTC))
    last = memory.search("what did Joanna do yesterday?", now=datetime(9999, 12, 31, tzinfo=UTC))
    assert "Joanna: the last day" in [h.memory.content for h in last.hits]
    first = memory.search("what did Joanna do yesterday?", now=datetime(1, 1, 3, tzinfo=UTC))
    assert "Joanna: the first day" in [h.memory.content for h in first.hits]


def test_the_grown_pool_is_the_pool_built_for_all_its_candidates(memory, monkeypatch):
    """The pool with the neighbours that joined it added (``grow_pool``: its columns kept,
    theirs read ahead or read then) is the pool :func:`build_pool` makes for all its
    candidates at once: the same candidates, labels, columns and neighbours, with the rows
    held in memory and read from DuckDB. One session's order runs against its labels, so some
    neighbours were not among those read ahead."""
    from localmem.retrieval import features
    from localmem.store import mirror as mirror_module

    monkeypatch.setattr(mirror_module, "WARM_AFTER", -1)
    base = datetime(2024, 5, 1, 12, tzinfo=UTC)
    for session, step in (("ahead", 1), ("behind", -1)):
        memory.add_many(
            [
                {
                    "content": f"{('Ana', 'Ben')[i % 2]}: the {('lake', 'cafe')[i % 2]} {i}",
                    "event_time": base + timedelta(minutes=step * i),
                }
                for i in range(30)
            ],
            session_id=session,
        )
    memory.add_many([f"Ben: loose turn {i} about the lake" for i in range(10)])
    grown: list[tuple] = []
    original = features.grow_pool

    def spy(pool, joined):
        out = original(pool, joined)
        fresh = features.build_pool(pool.ctx, list(out.cands))
        grown.append((out, fresh, pool.read.labels, [c.label for c in joined]))
        return out

    monkeypatch.setattr(joining, "grow_pool", spy)
    for rows_held in (True, False):
        memory.config = memory.config.with_updates(
            search={
                "rows_in_memory": rows_held,
                "candidates": 6,
                "rerank_pool": 6,
                "rerank_neighbours": 6,
            }
        )
        for query in ("the lake", "Ana cafe", "loose turn about the lake", "Ben"):
            memory.search(query, k=10)
    assert grown
    read_apart = 0
    for out, fresh, ahead, joined in grown:
        assert out.cands == fresh.cands and out.labels.tolist() == fresh.labels.tolist()
        assert out.rows == fresh.rows
        np.testing.assert_array_equal(
            out.cached("neighbours", lambda: None), np.stack(features.neighbours(fresh))
        )
        read_apart += any(x not in ahead for x in joined)
    assert read_apart  # the path that reads the joined rows ran too


@given(st.lists(st.integers(-3, 40), max_size=60))
def test_a_pools_labels_made_distinct_as_numpy_does(labels):
    """``sorted_unique`` (the pool's and its neighbours' labels made distinct, twice a search)
    gives ``np.unique``'s array: the same values, order and dtype (none, one, repeats)."""
    from localmem.retrieval.features import sorted_unique

    given_ = np.array(labels, dtype=np.int64)
    got, expected = sorted_unique(given_), np.unique(given_)
    assert got.dtype == expected.dtype and got.tolist() == expected.tolist()
