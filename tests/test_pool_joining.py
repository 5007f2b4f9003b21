"""Memories the candidate lists missed that join the reranker's pool (issue 18): the turns
next to the best candidates (a reply shares no word with the question it answers), and on a
question naming a time, the memories of that time. Each stays out when the search's filters
leave it out. Collected again on PostgreSQL (tests/test_store_contract.py)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from localmem.retrieval import temporal
from localmem.store import records

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


def test_a_neighbour_outside_the_search_scope_stays_out(memory):
    reply = _summer_store(memory, reply_user="b")  # same session, another user
    _small_pool(memory, rerank_neighbours=1)
    assert reply not in _ids(memory.search(SUMMER, k=10, user_id="a"))
    memory.delete(reply)
    assert reply not in _ids(memory.search("summer plans", k=10))


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
    temporal = next(r for r in result.stages if r.stage == "temporal")
    assert 1 <= temporal.notes["joined"] <= 5
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
    got = records.labels_near_time(
        db, middle - timedelta(days=8), middle + timedelta(days=8), middle, 10
    )
    assert got == [label[d] for d in (0, -1, 2, -3, 5, 8)]
    assert records.labels_near_time(
        db, middle - timedelta(days=8), middle + timedelta(days=8), middle, 3
    ) == [label[0], label[-1], label[2]]


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    start=st.integers(-30, 30),
    length=st.integers(0, 40),
    middle=st.integers(-40, 40),
    limit=st.integers(1, 30),
)
def test_the_kept_timeline_answers_as_the_query_does(memory, start, length, middle, limit):
    """The copy of the timeline a single-writer store keeps gives the query's answer, ties
    (several memories at one time) included; and it sees every write at once."""
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
    window = (
        base + timedelta(days=start),
        base + timedelta(days=start + length),
        base + timedelta(days=middle),
        limit,
    )
    kept = temporal.labels_near_time(memory.kernel, *window)
    assert kept == records.labels_near_time(db, *window)


def test_the_kept_timeline_sees_each_write(memory):
    base = datetime(2024, 3, 10, tzinfo=UTC)
    window = (base - timedelta(days=2), base + timedelta(days=2), base, 10)
    first = memory.add("the first note", event_time=base)
    assert temporal.labels_near_time(memory.kernel, *window) == [memory.get(first.id).label]
    second = memory.add("the second note", event_time=base + timedelta(days=1))
    labels = [memory.get(m.id).label for m in (first, second)]
    assert temporal.labels_near_time(memory.kernel, *window) == labels
    memory.delete(first.id)
    assert temporal.labels_near_time(memory.kernel, *window) == labels[1:]
    memory.update(second.id, event_time=base + timedelta(days=30))
    assert temporal.labels_near_time(memory.kernel, *window) == []
    assert records.labels_near_time(memory.kernel.db, *window) == []
