"""Regenerate docs/screenshot.svg: the TUI's main screen on the demo store.

    .venv/bin/python scripts/screenshot.py [--out docs/screenshot.svg] [--size 120x36]

The demo store is built in a temporary folder (nothing in ~/.localmem is touched), the app runs
headless, a session is opened, and Textual saves what the terminal would show as SVG.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
from contextlib import suppress
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SESSION = "API rate limiting"  # the demo session shown


async def settle(pilot) -> None:
    """Wait until the app's workers are done and their results are drawn."""
    from textual.worker import WorkerCancelled

    app = pilot.app
    for _ in range(200):
        await pilot.pause()
        if all(w.is_finished for w in app.workers):
            await pilot.pause()
            if all(w.is_finished for w in app.workers):
                return
        with suppress(WorkerCancelled):  # a replaced worker: keep waiting for the rest
            await app.workers.wait_for_complete()


async def shoot(out: Path, size: tuple[int, int]) -> None:
    from localmem_tui import make_app

    from localmem import Memory
    from localmem.demo import load_demo

    with Memory.open(Path(os.environ["LOCALMEM_HOME"]) / "demo") as memory:
        load_demo(memory)
        app = make_app(memory)
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            sources = app.query_one("#sources")
            titles = [
                str(sources.get_option_at_index(i).prompt) for i in range(sources.option_count)
            ]
            index = next(i for i, t in enumerate(titles) if SESSION in t)
            await pilot.press("home", *["down"] * index)
            await settle(pilot)
            app.query_one("#rows").focus()
            await pilot.press("down", "down")
            await settle(pilot)
            app.save_screenshot(filename=out.name, path=str(out.parent))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshot.svg")
    parser.add_argument("--size", default="120x36", help="terminal columns x rows")
    args = parser.parse_args()
    cols, rows = (int(n) for n in args.size.lower().split("x"))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as home:
        os.environ["LOCALMEM_HOME"] = home
        asyncio.run(shoot(args.out.resolve(), (cols, rows)))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
