"""Helpers for driving the TUI in tests: run a scenario, wait for workers, read the screen."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextlib import suppress
from datetime import datetime

from textual.pilot import Pilot
from textual.worker import WorkerCancelled

SIZE = (120, 36)
FROZEN = datetime(2025, 3, 1, 9, 0)


async def settle(pilot: Pilot) -> None:
    """Wait until no worker runs and the UI has handled what they sent back."""
    app = pilot.app
    for _ in range(200):
        await pilot.pause()
        if all(w.is_finished for w in app.workers):
            await pilot.pause()
            if all(w.is_finished for w in app.workers):
                return
        with suppress(WorkerCancelled):  # an exclusive job replaced by a newer one: expected
            await app.workers.wait_for_complete()
    raise AssertionError("the app's workers never finished")


def drive(app, scenario: Callable[[Pilot], Awaitable[None]], *, size=SIZE):
    """Run ``app`` headless, settle, play ``scenario``, settle again; returns the app."""

    async def main() -> None:
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            await scenario(pilot)
            await settle(pilot)

    asyncio.run(main())
    return app


async def press(pilot: Pilot, *keys: str) -> None:
    """Press keys, then wait for the work they started."""
    await pilot.press(*keys)
    await settle(pilot)


async def type_text(pilot: Pilot, text: str) -> None:
    """Type a text key by key (spaces included)."""
    await pilot.press(*[{" ": "space"}.get(c, c) for c in text])


def static_text(app, selector: str) -> str:
    """The plain text a Static shows."""
    import io

    from rich.console import Console
    from textual.widgets import Static

    content = app.screen.query_one(selector, Static).content
    if hasattr(content, "plain"):
        return content.plain
    console = Console(width=200, file=io.StringIO(), color_system=None)
    console.print(content)
    return console.file.getvalue()


def freeze(memory) -> None:
    """Fixed timestamps everywhere, so what the screen shows does not depend on the clock."""
    db = memory.store.db
    db.execute(
        "UPDATE memories SET created_at = ? + to_minutes(CAST(label AS INTEGER)), "
        "updated_at = ? + to_minutes(CAST(label AS INTEGER))",
        [FROZEN, FROZEN],
    )
    db.execute("UPDATE history SET changed_at = ? + to_minutes(CAST(id AS INTEGER))", [FROZEN])
    # sessions keep their order (newest first in the list) but get fixed times
    db.execute(
        "UPDATE sessions SET created_at = ? + to_minutes(CAST(t.r AS INTEGER)), "
        "completed_at = CASE WHEN completed_at IS NULL THEN NULL "
        "ELSE ? + to_minutes(CAST(t.r AS INTEGER) + 1) END "
        "FROM (SELECT id AS sid, row_number() OVER (ORDER BY created_at, id) AS r FROM sessions) t "
        "WHERE sessions.id = t.sid",
        [FROZEN, FROZEN],
    )


def copy_store(source, target):
    """A copy of a closed store folder (building a store embeds; copying it does not)."""
    import shutil

    shutil.copytree(source, target)
    return target
