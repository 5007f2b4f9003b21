"""The dates each memory states, kept with the rows (localmem/store/stated.py, issue 34): written
by the unit of writing with the memory, held by the row mirror, read by the temporal stage
instead of parsing; a kept row that no longer matches its memory (another parser version, a
text changed by code that keeps none) is never read; a failed unit leaves none; a purge drops
them; ``doctor --repair`` keeps the missing ones; searches give the same results either way."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from store_helpers import race

from localmem.dates import find_spans
from localmem.dates.stored import DATES_VERSION, decode_spans, encode_spans
from localmem.store import mirror as mirror_module
from localmem.store import repair, stated

UTC = timezone.utc
BASE = datetime(2024, 5, 1, 12, tzinfo=UTC)
SAID = ("", "last Saturday", "on 9 May 2024", "yesterday", "in June", "two weeks ago", "2023-03-04")
QUERIES = (
    "what did Ana do last Saturday?",
    "what happened on 10 May 2024?",
    "when did Ben go to the lake?",
    "what did we do in June?",
    "garden",
)


@pytest.fixture(autouse=True)
def rows_at_once(monkeypatch):
    """The mirror from the first search (a process starts it after a few)."""
    monkeypatch.setattr(mirror_module, "WARM_AFTER", -1)


def _fill(memory, n: int = 60) -> list:
    return memory.add_many(
        [
            {
                "content": f"{('Ana', 'Ben')[i % 2]}: to the lake {SAID[i % len(SAID)]} {i}",
                "event_time": BASE + timedelta(days=i % 40),
            }
            for i in range(n)
        ],
        session_id="s1",
    )


def _kept(memory) -> dict[int, tuple]:
    """The current kept dates of every memory, decoded."""
    return {label: decode_spans(line) for label, line in stated.current(memory.kernel.db)}


def _results(memory) -> list:
    return [
        [(h.memory.id, h.score, sorted(h.evidence.items())) for h in memory.search(q, k=8).hits]
        for q in QUERIES
    ]


@settings(max_examples=200, deadline=None)
@given(
    words=st.lists(st.sampled_from([*SAID, "we", "on", "May", "3", "2022", "-"]), max_size=8),
    anchor=st.one_of(st.none(), st.dates(date(1990, 1, 1), date(2090, 12, 31))),
)
def test_spans_come_back_as_they_were_kept(words, anchor):
    spans = find_spans(" ".join(words), anchor)
    assert decode_spans(encode_spans(spans)) == spans


def test_the_unit_keeps_every_memorys_dates_as_the_parser_finds_them(memory):
    items = _fill(memory)
    kept = _kept(memory)
    assert set(kept) == {m.label for m in items}
    for m in items:
        assert kept[m.label] == find_spans(m.content, m.event_time.date())
    assert any(kept.values()) and not all(kept.values())


def test_an_update_keeps_the_new_texts_dates_and_the_old_ones_are_no_longer_read(memory):
    first = memory.add("Ana: we sailed yesterday", event_time=BASE)
    memory.update(first.id, content="Ana: we sailed on 3 March 2023")
    assert _kept(memory)[first.label] == find_spans("Ana: we sailed on 3 March 2023", None)
    memory.update(first.id, content="Ana: we sailed yesterday")
    memory.update(first.id, event_time=BASE + timedelta(days=10))
    (span,) = _kept(memory)[first.label]
    assert span.start == (BASE + timedelta(days=9)).date()  # the new event day's yesterday
    rows = memory.kernel.rows()
    assert rows.stated([first.label]) == {first.label: (span,)}


def test_searches_give_the_same_results_with_the_dates_kept_or_parsed(memory):
    _fill(memory)
    kept = _results(memory)
    memory.kernel.db.execute("DELETE FROM memory_dates")  # a store made before them
    memory.kernel._mirror = None  # read the table whole again
    assert not memory.kernel.rows().stated(range(100))
    assert _results(memory) == kept
    memory.config = memory.config.with_updates(search={"rows_in_memory": False})
    assert _results(memory) == kept


def test_dates_of_another_parser_version_or_a_text_changed_elsewhere_are_not_read(memory):
    items = _fill(memory, 10)
    db = memory.kernel.db
    db.execute("UPDATE memory_dates SET version = ? WHERE label = ?", [DATES_VERSION + 1, 0])
    # code that keeps no dates (an older version) rewrites a text: the kept row no longer matches
    db.execute(
        "UPDATE memories SET content = 'Ana: on 1 January 2020', content_hash = 'x' WHERE label = 1"
    )
    assert set(_kept(memory)) == {m.label for m in items} - {0, 1}
    memory.kernel._mirror = None
    assert set(memory.kernel.rows().stated(range(20))) == {m.label for m in items} - {0, 1}
    total, held = stated.counts(db)
    assert (total, held) == (10, 8)
    assert stated.restate(db) == 2
    kept = _kept(memory)
    assert kept[1] == find_spans("Ana: on 1 January 2020", items[1].event_time.date())
    assert int(db.scalar("SELECT count(*) FROM memory_dates")) == 10  # the stale rows went


def test_doctor_repair_keeps_the_dates_of_a_store_made_before_them(memory):
    _fill(memory, 12)
    memory.kernel.db.execute("DELETE FROM memory_dates")
    facts = repair.facts(memory.kernel.store, deep=True)
    assert facts["stated_dates"] == (0, 12)
    done = repair.repair(memory.kernel.store)
    assert "stated dates: kept for 12 more memories" in done
    assert repair.facts(memory.kernel.store, deep=True)["stated_dates"] == (12, 12)


def test_a_failed_unit_leaves_no_dates_and_no_memory(memory, monkeypatch):
    """A fault after the dates are written (the postings, vectors and history still to come)
    rolls the whole unit back: neither the memory nor its dates stay."""
    memory.add("Ana: kept on 9 May 2024", event_time=BASE)
    real = stated.state

    def state_then_fail(*args, **kwargs):
        real(*args, **kwargs)
        raise OSError("disk gone")

    monkeypatch.setattr(stated, "state", state_then_fail)
    with pytest.raises(OSError):
        memory.add("Ana: lost on 10 May 2024", event_time=BASE)
    monkeypatch.setattr(stated, "state", real)
    db = memory.kernel.db
    assert int(db.scalar("SELECT count(*) FROM memory_dates")) == 1
    assert int(db.scalar("SELECT count(*) FROM memories")) == 1
    assert [m.content for m in memory.list()] == ["Ana: kept on 9 May 2024"]


def test_a_purge_drops_the_words_the_dates_were_read_from(memory):
    gone = memory.add("Ana: the secret trip last Saturday", event_time=BASE)
    memory.add("Ben: a walk yesterday", event_time=BASE)
    memory.purge(gone.id)
    lines = [r[0] for r in memory.kernel.db.fetchall("SELECT spans FROM memory_dates")]
    assert len(lines) == 1 and "Saturday" not in " ".join(lines)
    assert gone.label not in memory.kernel.rows().stated([gone.label])


def test_postgres_keeps_none(pg_url, embedder):
    from localmem import Memory

    with Memory.open(pg_url, embedder=embedder) as mem:
        mem.add("Ana: we met on 9 May 2024")
        assert int(mem.kernel.db.scalar("SELECT count(*) FROM memory_dates")) == 0
        assert [h.memory.content for h in mem.search("what happened on 9 May 2024?", k=1).hits]


def test_dates_left_by_a_purge_of_code_that_keeps_none_are_not_read_and_repair_drops_them(memory):
    gone = memory.add("Ana: the secret trip last Saturday", event_time=BASE)
    memory.add("Ben: a walk yesterday", event_time=BASE)
    db = memory.kernel.db
    # an older version purges: the text goes, the hash and the kept dates stay
    db.execute("UPDATE memories SET content = '', deleted = true WHERE label = ?", [gone.label])
    assert gone.label not in _kept(memory)
    assert stated.counts(db) == (1, 1)
    stated.restate(db)
    lines = [r[0] for r in db.fetchall("SELECT spans FROM memory_dates")]
    assert len(lines) == 1 and "Saturday" not in " ".join(lines)


def test_racing_writers_and_searches_leave_every_kept_date_current(memory):
    """Writer threads rewrite texts and event times (each its own memories) while reader threads
    run searches that name a time: no search fails, and at the end the mirror holds, for every
    memory, the dates its text states now (what a search reads is never an older text's)."""
    items = _fill(memory, 40)
    ids = [m.id for m in items]

    def write(offset: int) -> None:
        mine = ids[offset * 20 : (offset + 1) * 20]
        for i in range(20):
            said = SAID[(i + offset) % len(SAID)]
            memory.update(mine[i], content=f"Ben: changed {offset}-{i} {said}")
            if i % 3 == 0:
                memory.update(mine[(i + 7) % 20], event_time=BASE + timedelta(days=i))

    race(write, lambda: memory.search("what did Ben do last Saturday?", k=5))
    rows = memory.kernel.rows()
    held = rows.stated(range(100))
    for m in memory.list(limit=100):
        assert held[m.label] == find_spans(m.content, m.event_time.date())


def test_a_process_killed_while_writing_leaves_every_memorys_dates_or_none(open_memory, store_path):
    """kill -9 of a process adding and rewriting dated texts in a loop: after reopening, every
    memory that survived has its current dates (a unit commits its memories and their dates
    together), and a search naming a time reads them."""
    import signal
    import subprocess
    import sys
    import textwrap
    import time

    script = textwrap.dedent(
        """
        from datetime import datetime, timezone
        from localmem import Memory
        m = Memory.open(STORE)
        when = datetime(2024, 5, 1, tzinfo=timezone.utc)
        i = 0
        while True:
            done = m.add_many(
                [{"content": f"Ana: a walk {i} {j} last Saturday", "event_time": when}
                 for j in range(8)]
            )
            m.update(done[0].id, content=f"Ana: a swim {i} on 9 May 2024")
            i += 1
            if i == 2:
                print("ready", flush=True)
        """
    ).replace("STORE", repr(str(store_path)))
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(1.0)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    mem = open_memory(store_path)
    assert mem.count() >= 16 and mem.count() % 8 == 0
    kept = _kept(mem)
    every = mem.list(limit=10_000)
    assert {m.label for m in every} == set(kept)
    for m in every:
        assert kept[m.label] == find_spans(m.content, m.event_time.date())
    assert mem.search("what did Ana do on 9 May 2024?", k=3).hits
