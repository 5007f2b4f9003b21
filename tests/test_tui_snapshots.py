"""Snapshots of the main screens (pytest-textual-snapshot; `--snapshot-update` to accept changes).

What is drawn must not depend on the clock, random ids or the machine: the store gets counted
ids and frozen timestamps, and no snapshot shows a score or a timing.
"""

from __future__ import annotations

import itertools

import pytest
from localmem_tui import make_app
from localmem_tui.detail import MemoryScreen
from tui_helpers import SIZE, copy_store, freeze, settle, type_text

from localmem.demo import CONVERSATION, SESSIONS
from localmem.store import memories


@pytest.fixture(scope="module")
def steady_store(tmp_path_factory, embedder):
    """The demo's data with counted ids, frozen times, an evolved context, a link, attributes
    (built once; each test opens a copy)."""
    import localmem.sessions
    import localmem.store.memories
    from localmem import Memory

    path = tmp_path_factory.mktemp("snapshots") / "store"
    ids, sessions = itertools.count(1), itertools.count(1)
    with pytest.MonkeyPatch.context() as mp, Memory.open(path, embedder=embedder) as memory:
        mp.setattr(localmem.store.memories, "new_id", lambda: f"{next(ids):016x}")
        mp.setattr(localmem.sessions.secrets, "token_hex", lambda n: f"{next(sessions):0{2 * n}x}")
        fill(memory)
        session = next(s for s in memory.sessions() if s.title.startswith("API rate limiting"))
        thoughts = memory.thoughts(session.id)
        first, last = thoughts[0].memory, thoughts[-1].memory
        memories.update(
            memory.kernel,
            first.id,
            context="Per-client limits for /search; settled on a sliding window in Redis.",
            actor="evolution",
            event="EVOLVE",
        )
        db = memory.store.db
        db.execute(
            "INSERT INTO links (src, dst, kind, weight, reason, created_at) "
            "VALUES (?, ?, 'related', 0.82, 'same decision', now())",
            [first.id, last.id],
        )
        db.execute(
            "INSERT INTO attributes (memory_id, axis, value, rank, score, miner) "
            "VALUES (?, 'entities', '/search', 0, 0.9, 'model-free'), "
            "(?, 'entities', 'rate limits', 1, 0.8, 'model-free'), "
            "(?, 'intent', 'design', 0, 0.7, 'model-free'), "
            "(?, 'topic', 'performance', 0, 0.6, 'model-free')",
            [first.id] * 4,
        )
        freeze(memory)
    return path, session.id, first.id


@pytest.fixture
def steady(steady_store, open_memory, tmp_path):
    """A copy of the snapshot store (the folder name is part of what is drawn)."""
    path, session_id, first_id = steady_store
    memory = open_memory(copy_store(path, tmp_path / "store"))
    memory.rate_session = session_id
    memory.first_thought = first_id
    return memory


def fill(memory) -> None:
    """The demo's sessions and conversation, written here rather than by ``load_demo`` so the
    snapshots do not change when the demo grows (it abstracts procedures where it can)."""
    for title, outcome, thoughts in SESSIONS:
        session = memory.start_session(title)
        for text in thoughts:
            memory.add_thought(session.id, text)
        memory.complete_session(session.id, outcome=outcome)
    memory.add_many(
        [
            {
                "content": f"{who}: {text}",
                "event_time": f"{day}T12:00:00+00:00",
                "metadata": {"speaker": who},
            }
            for who, text, day in CONVERSATION
        ],
        kind="message",
        user_id="caroline-melanie",
    )


def _open_rate_limit_session(memory):
    async def run_before(pilot) -> None:
        await settle(pilot)
        sources = pilot.app.query_one("#sources")
        keys = [sources.get_option_at_index(i).id for i in range(sources.option_count)]
        await pilot.press("home", *["down"] * keys.index(f"s:{memory.rate_session}"))
        await settle(pilot)

    return run_before


def test_main_screen(steady, snap_compare):
    assert snap_compare(
        make_app(steady), terminal_size=SIZE, run_before=_open_rate_limit_session(steady)
    )


def test_memory_with_links_and_history(steady, snap_compare):
    async def run_before(pilot) -> None:
        await settle(pilot)
        pilot.app.push_screen(MemoryScreen(steady.first_thought))
        await settle(pilot)

    assert snap_compare(make_app(steady), terminal_size=SIZE, run_before=run_before)


def test_help_screen(steady, snap_compare):
    async def run_before(pilot) -> None:
        await settle(pilot)  # the screen behind the help is drawn by workers
        await pilot.press("question_mark")
        await settle(pilot)

    assert snap_compare(make_app(steady), terminal_size=SIZE, run_before=run_before)


def test_add_thought_form(steady, snap_compare, monkeypatch):
    # the form offers mining and evolution as switches when the build has them; the picture
    # shows them switchable whatever this build has, so it does not change as they land
    monkeypatch.setattr("localmem_tui.forms.available_jobs", lambda memory: {"mine", "evolve"})

    async def run_before(pilot) -> None:
        await _open_rate_limit_session(steady)(pilot)
        # completed sessions take no thoughts: open a new one and write into its form
        steady.start_session("Retry policy for the billing webhook")
        freeze(steady)
        pilot.app.store_changed()
        await settle(pilot)
        await pilot.press("home")
        await settle(pilot)
        sources = pilot.app.query_one("#sources")
        keys = [sources.get_option_at_index(i).id for i in range(sources.option_count)]
        await pilot.press(*["down"] * next(i for i, k in enumerate(keys) if k.startswith("s:")))
        await settle(pilot)
        await pilot.press("t")
        await settle(pilot)
        await type_text(pilot, "Retry with exponential backoff, at most five times")

    assert snap_compare(make_app(steady), terminal_size=SIZE, run_before=run_before)
