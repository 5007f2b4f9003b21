"""The terminal UI on a PostgreSQL store: `localmem tui postgresql://...` opens it by its
address, and the UI browses and searches it as it does a folder."""

from __future__ import annotations

import pytest
from localmem_tui import make_app
from localmem_tui.search import SearchPane
from textual.widgets import DataTable
from tui_helpers import drive, press, type_text

from localmem import Memory
from localmem.cli.tui import choose_store
from localmem.demo import load_demo

pytestmark = pytest.mark.postgres


def test_tui_store_argument_takes_a_postgresql_address(pg_url):
    assert choose_store(f"  {pg_url} ", demo=False) == (pg_url, False, [])


def test_the_tui_searches_a_postgresql_store(pg_url, embedder):
    with Memory.open(pg_url, embedder=embedder) as mem:
        load_demo(mem)

        async def scenario(pilot):
            await press(pilot, "slash")
            await type_text(pilot, "sliding window rate limiter")
            await press(pilot, "enter")
            hits = pilot.app.query_one(SearchPane).last.result.hits
            assert hits[0].memory.content.startswith("The rate limiter should use a sliding window")
            assert pilot.app.query_one("#hits", DataTable).row_count == len(hits)

        assert drive(make_app(mem), scenario).errors == []
