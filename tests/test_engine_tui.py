"""The TUI's status pane shows the model host's state after a real crash (issue 29)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from localmem_tui import make_app
from localmem_tui.status import StatusPane
from tui_helpers import drive, press, static_text

from localmem.config import Config
from localmem.errors import EngineCrashedError, EngineUnhealthyError

CRASH_HOST = [sys.executable, str(Path(__file__).parent / "engine_hosts" / "crash_host.py")]


@pytest.mark.slow
def test_status_shows_the_engine_crashed_then_unhealthy_with_the_reason(
    open_memory, store_path, tiny_gguf, monkeypatch
):
    monkeypatch.setenv("LOCALMEM_ENGINE_HOST_COMMAND", shlex.join(CRASH_HOST))
    config = Config().with_updates(engine={"model_path": str(tiny_gguf), "n_threads": 1})
    mem = open_memory(store_path, config=config)
    mem.add("The cache in front of the orders service expires hourly.")
    engine = mem.kernel.engine
    ask = [{"role": "user", "content": "[[host:SIGILL]] go"}]
    with pytest.raises(EngineCrashedError):
        engine.generate_text(ask, max_tokens=4)

    async def crashed(pilot):
        await press(pilot, "5")
        pane = pilot.app.query_one(StatusPane)
        check = next(c for c in pane.report.checks if c[0] == "engine")
        assert check[1] is False and check[2].startswith("crashed: ")
        text = static_text(pilot.app, "#status-body")
        assert "SIGILL" in text and "does not allow" in text

    assert drive(make_app(mem), crashed).errors == []
    for _ in range(2):  # two more failures in the window: unhealthy
        with pytest.raises(EngineCrashedError):
            engine.generate_text(ask, max_tokens=4)
        engine.supervisor._next_start = 0  # skip the back-off's wait
    with pytest.raises(EngineUnhealthyError):
        engine.generate_text(ask, max_tokens=4)

    async def unhealthy(pilot):
        await press(pilot, "5")
        text = static_text(pilot.app, "#status-body")
        assert "unhealthy: 3 failures" in text and "SIGILL" in text

    assert drive(make_app(mem), unhealthy).errors == []
