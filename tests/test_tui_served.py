"""The TUI beside a running agent: opened on a store that `localmem serve` holds, it works
through the server and shows what other clients add as they add it."""

from __future__ import annotations

import asyncio

import pytest
from localmem_tui import make_app
from localmem_tui.browse import BrowsePane
from localmem_tui.procedures import ProceduresPane
from localmem_tui.search import SearchPane
from localmem_tui.status import StatusPane
from test_serve import start_server, stop_server
from textual.widgets import DataTable
from tui_helpers import drive, press, settle, static_text

import localmem
from localmem.demo import load_demo

pytestmark = pytest.mark.slow


@pytest.fixture
def served_demo(tmp_path, embedder):
    path = tmp_path / "demo"
    with localmem.Memory.open(path, embedder=embedder) as mem:
        load_demo(mem)
    proc = start_server(path)
    yield path
    stop_server(proc)


def test_the_tui_on_a_served_store_shows_what_another_client_adds(served_demo):
    app_side = localmem.connect(served_demo)
    agent_side = localmem.connect(served_demo)  # another client: the agent
    before = agent_side.count()

    async def scenario(pilot):
        browse = pilot.app.query_one(BrowsePane)
        table = browse.query_one("#rows", DataTable)
        assert table.row_count == before
        added = await asyncio.to_thread(
            agent_side.add, "The agent noted that the deploy moved to Thursdays", kind="note"
        )
        for _ in range(40):  # the app looks every 0.2 s
            await asyncio.sleep(0.1)
            await settle(pilot)
            if table.row_count == before + 1:
                break
        assert table.row_count == before + 1
        assert added.id in {row.item.id for row in browse.rows}

        table.focus()  # the detail pane reads through the server too (history, thought, links)
        await press(pilot, "home")
        assert "ADD" in static_text(pilot.app, "#browse-detail .detail-history")

        await press(pilot, "slash")
        pane = pilot.app.query_one(SearchPane)
        pane.query_one("#query").value = "when is the deploy now"
        await press(pilot, "enter")
        assert pane.last.result.hits[0].memory.id == added.id

        await press(pilot, "5")
        report = pilot.app.query_one(StatusPane).report
        assert report.stats["memories"] == before + 1
        assert all(ok for _, ok, _ in report.checks)

        await press(pilot, "3")
        assert pilot.app.query_one(ProceduresPane).shown  # the demo's procedures

    app = drive(make_app(app_side, follow_s=0.2), scenario)
    assert app.errors == []


def test_when_the_server_stops_the_tui_says_so_and_opens_the_store_here(tmp_path, embedder):
    """Issue 33 item 12: a refused connection applied nothing; the TUI offers to reconnect or
    open the store directly, and does it."""
    from localmem_tui.reconnect import ServerGoneScreen

    from localmem.remote.transport import ServerGone

    path = tmp_path / "store"
    with localmem.Memory.open(path, embedder=embedder) as mem:
        mem.add("the deploy runs on Fridays", kind="note")
    proc = start_server(path)
    client = localmem.connect(path)

    async def scenario(pilot):
        app = pilot.app
        await asyncio.to_thread(stop_server, proc)
        with pytest.raises(ServerGone, match="nothing was applied"):
            await asyncio.to_thread(client.add, "lost?", kind="note")
        await press(pilot, "r")  # reload the browse list: the server is gone
        for _ in range(40):
            if isinstance(app.screen, ServerGoneScreen):
                break
            await asyncio.sleep(0.1)
            await settle(pilot)
        assert isinstance(app.screen, ServerGoneScreen)
        await press(pilot, "o")  # open the store here
        for _ in range(40):
            if not hasattr(app.memory, "call"):
                break
            await asyncio.sleep(0.1)
            await settle(pilot)
        assert not isinstance(app.screen, ServerGoneScreen)
        added = await asyncio.to_thread(app.memory.add, "written after the server left")
        assert app.memory.get(added.id).content == "written after the server left"

    app = drive(make_app(client), scenario)
    assert any("nothing was applied" in e for e in app.errors)
    app.memory.close()
