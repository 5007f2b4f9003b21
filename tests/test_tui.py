"""The terminal UI driven through Textual's Pilot, on real stores with the real MiniLM."""

from __future__ import annotations

import json

import pytest
from localmem_tui import make_app
from localmem_tui.browse import BrowsePane
from localmem_tui.detail import MemoryDetail, MemoryScreen
from localmem_tui.forms import AddMemoryForm, CompleteSessionForm, StartSessionForm, ThoughtForm
from localmem_tui.help import HelpScreen
from localmem_tui.procedures import ProceduresPane
from localmem_tui.run import RunPane
from localmem_tui.search import SearchPane, available_stages
from localmem_tui.status import StatusPane
from textual.widgets import DataTable, Input, OptionList, ProgressBar
from tui_helpers import copy_store, drive, press, settle, static_text, type_text

from localmem.demo import load_demo
from localmem.store import memories


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory, embedder):
    """The demo store, built once for the module (closed; tests work on copies)."""
    from localmem import Memory

    path = tmp_path_factory.mktemp("tui") / "demo"
    with Memory.open(path, embedder=embedder) as mem:
        load_demo(mem)
    return path


@pytest.fixture
def demo(demo_store, open_memory, tmp_path):
    """A fresh copy of the demo store."""
    return open_memory(copy_store(demo_store, tmp_path / "demo"))


def session_key(memory, title_start: str) -> str:
    return "s:" + next(s.id for s in memory.sessions() if s.title.startswith(title_start))


async def open_source(pilot, key: str) -> None:
    """Highlight an entry of the browse list with the arrow keys."""
    sources = pilot.app.query_one("#sources", OptionList)
    sources.focus()
    ids = [sources.get_option_at_index(i).id for i in range(sources.option_count)]
    await press(pilot, "home", *["down"] * ids.index(key))


def test_browse_lists_sessions_and_shows_a_thought_in_full(demo):
    key = session_key(demo, "Debug: API returns 500")

    async def scenario(pilot):
        browse = pilot.app.query_one(BrowsePane)
        assert browse.sources[0].key == "all"
        assert browse.query_one("#rows", DataTable).row_count == demo.count()
        await open_source(pilot, key)
        table = browse.query_one("#rows", DataTable)
        assert [r.item.content[:9] for r in browse.rows] == [
            "Reproduce",
            "The stack",
            "Add a val",
            "Write a r",
        ]
        table.focus()
        await press(pilot, "down", "down")
        detail = browse.query_one(MemoryDetail)
        assert detail.shown.item.content.startswith("Add a validation step")
        head = static_text(pilot.app, "#browse-detail .detail-head")
        assert "thought #3 in Debug: API returns 500" in head
        assert "(success)" in head
        assert "ADD" in static_text(pilot.app, "#browse-detail .detail-history")

    app = drive(make_app(demo), scenario)
    assert app.errors == []


def test_search_finds_and_opens_a_hit(demo):
    async def scenario(pilot):
        await press(pilot, "slash")
        assert isinstance(pilot.app.focused, Input)
        await type_text(pilot, "sliding window rate limiter")
        await press(pilot, "enter")
        pane = pilot.app.query_one(SearchPane)
        hits = pane.last.result.hits
        assert hits[0].memory.content.startswith("The rate limiter should use a sliding window")
        assert pilot.app.query_one("#hits", DataTable).row_count == len(hits) == 10
        why = static_text(pilot.app, "#why-stages")
        assert "candidates" in why and "hnsw+bm25" in why
        assert "dense" in static_text(pilot.app, "#why-hit")  # the per-stage evidence
        await press(pilot, "down")  # the evidence follows the highlighted hit
        assert static_text(pilot.app, "#why-hit").startswith("Hit 2")
        await press(pilot, "up", "enter")
        assert isinstance(pilot.app.screen, MemoryScreen)
        shown = pilot.app.screen.query_one(MemoryDetail).shown
        assert shown.item.id == hits[0].memory.id
        await press(pilot, "escape")
        assert not isinstance(pilot.app.screen, MemoryScreen)

    assert drive(make_app(demo), scenario).errors == []


def test_toggling_stages_reruns_the_search_and_reports_what_ran(demo):
    async def scenario(pilot):
        await press(pilot, "2")
        await type_text(pilot, "dashboard query index")
        await press(pilot, "enter")
        pane = pilot.app.query_one(SearchPane)
        assert pane.last.options["mode"] == "hybrid"
        await press(pilot, "f2")  # mode: hybrid -> dense
        assert pane.last.options["mode"] == "dense"
        served = {r.stage: r.implementation for r in pane.last.result.stages}
        assert served["candidates"] == "hnsw"
        assert "candidates" in static_text(pilot.app, "#why-stages")
        await press(pilot, "f6")  # links: off -> on
        why = static_text(pilot.app, "#why-stages")
        if "links" in available_stages(pilot.app.memory):
            assert pane.last.options["links"] is True
            assert "links" in why
        else:  # searched without it, and said so
            assert pane.last.missing == ["links"]
            assert "links" not in pane.last.options
            assert "not available in this build" in why
        # the toggles are focusable and step with Enter too, or with a click
        pane.query_one("#toggle-k").focus()
        await press(pilot, "enter")
        assert pane.last.options["k"] == 5
        assert len(pane.last.result.hits) == 5
        await pilot.click("#toggle-mode")
        await settle(pilot)
        assert pane.last.options["mode"] == "lexical"
        assert {r.stage: r.implementation for r in pane.last.result.stages}["candidates"] == "bm25"

    app = drive(make_app(demo), scenario)
    assert app.errors == []


def test_start_a_session_add_a_thought_and_complete_it(memory):
    async def scenario(pilot):
        app = pilot.app
        await press(pilot, "n")
        assert isinstance(app.screen, StartSessionForm)
        await type_text(pilot, "Cache invalidation for the feed")
        await press(pilot, "enter")
        session = memory.sessions()[0]
        assert session.title == "Cache invalidation for the feed"
        assert app.query_one(BrowsePane).current == f"s:{session.id}"
        await press(pilot, "t")
        assert isinstance(app.screen, ThoughtForm)
        await type_text(pilot, "Expire feed entries when the author edits a post")
        await press(pilot, "ctrl+s")
        assert not isinstance(app.screen, ThoughtForm)
        thoughts = memory.thoughts(session.id)
        assert [t.memory.content for t in thoughts] == [
            "Expire feed entries when the author edits a post"
        ]
        browse = app.query_one(BrowsePane)
        assert browse.query_one("#rows", DataTable).row_count == 1
        assert browse.query_one(MemoryDetail).shown.item.id == thoughts[0].memory.id
        for revises, error in (("9", "revises=9 but"), ("-", "revises must be")):
            await press(pilot, "t")
            await type_text(pilot, "Revise a thought that is not there")
            app.screen.query_one("#revises", Input).value = revises
            await press(pilot, "ctrl+s")
            assert isinstance(app.screen, ThoughtForm) and error in app.errors[-1]
            await press(pilot, "escape")
        assert len(memory.thoughts(session.id)) == 1
        await press(pilot, "c")
        assert isinstance(app.screen, CompleteSessionForm)
        await press(pilot, "ctrl+s")
        assert memory.get_session(session.id).outcome == "success"
        await press(pilot, "t")  # a completed session takes no more thoughts
        assert memory.get_session(session.id).thought_count == 1

    app = drive(make_app(memory), scenario)
    assert len(app.errors) == 2  # the two refused revisions


def test_a_refused_memory_keeps_the_form_open_and_says_why(memory):
    async def scenario(pilot):
        app = pilot.app
        await press(pilot, "a")
        assert isinstance(app.screen, AddMemoryForm)
        await press(pilot, "ctrl+s")  # empty content
        assert isinstance(app.screen, AddMemoryForm)
        assert app.errors and "empty" in app.errors[-1]
        await type_text(pilot, "The deploy runs on Fridays")
        await press(pilot, "ctrl+s")
        assert not isinstance(app.screen, AddMemoryForm)

    app = drive(make_app(memory), scenario)
    assert [m.content for m in memory.list()] == ["The deploy runs on Fridays"]
    assert memory.list()[0].kind == "note"
    assert len(app.errors) == 1


def test_add_thought_without_a_session_is_a_warning_not_a_crash(demo):
    async def scenario(pilot):
        await press(pilot, "t")  # "All memories" is selected, not a session
        assert not isinstance(pilot.app.screen, ThoughtForm)

    drive(make_app(demo), scenario)


def test_links_jump_and_history_shows_every_change(demo):
    key = session_key(demo, "API rate limiting")
    thoughts = demo.thoughts(key[2:])
    first, last = thoughts[0].memory, thoughts[-1].memory
    memories.update(
        demo.kernel,
        first.id,
        context="Rate limits protect /search; see the sliding-window decision.",
        actor="evolution",
        event="EVOLVE",
    )
    db = demo.store.db
    db.execute(
        "INSERT INTO links (src, dst, kind, weight, reason, created_at) "
        "VALUES (?, ?, 'see-also', 0.8, 'same problem', now())",
        [first.id, last.id],
    )
    # evolution (when this build has it) may have linked and evolved these already
    n_links = db.scalar("SELECT count(*) FROM links WHERE src = ? OR dst = ?", [first.id] * 2)
    n_evolved = sum(
        1 for h in demo.history(first.id) if h.event == "EVOLVE" and h.field == "context"
    )
    db.execute(
        "INSERT INTO attributes (memory_id, axis, value, rank, score, miner) "
        "VALUES (?, 'entities', 'Redis', 0, 0.9, 'test'), "
        "(?, 'topic', 'performance', 0, 0.7, 'test')",
        [first.id, first.id],
    )

    async def scenario(pilot):
        await open_source(pilot, key)
        detail = pilot.app.query_one("#browse-detail", MemoryDetail)
        assert detail.shown.item.id == first.id
        body = static_text(pilot.app, "#browse-detail .detail-body")
        assert "sliding-window decision" in body and f"evolved {n_evolved}×" in body
        assert "Redis" in body and "performance" in body
        history = static_text(pilot.app, "#browse-detail .detail-history")
        assert "ADD" in history and "EVOLVE" in history and "evolution" in history
        print("HISTORY", history)
        assert "→ Rate limits protect /search; see the" in history  # values cut to a line
        links = detail.query_one(".detail-links", OptionList)
        assert links.option_count == n_links
        target = next(i for i, link in enumerate(detail.shown.links) if link.kind == "see-also")
        links.focus()
        await press(pilot, "home", *["down"] * target, "enter")
        assert detail.shown.item.id == last.id  # jumped
        back = [link for link in detail.shown.links if link.kind == "see-also"]
        assert back[0].direction == "in" and back[0].other.id == first.id
        await press(pilot, "backspace")
        assert detail.shown.item.id == first.id  # and back

    assert drive(make_app(demo), scenario).errors == []


def test_ingest_a_file_with_progress_in_a_worker(memory, tmp_path):
    doc = tmp_path / "notes.md"
    doc.write_text("\n\n".join(f"Paragraph {i} about deploy windows." * 30 for i in range(6)))
    lines = tmp_path / "facts.jsonl"
    lines.write_text(
        "\n".join(json.dumps({"content": f"Fact number {i}", "kind": "fact"}) for i in range(5))
        + "\nnot json\n"
    )

    async def scenario(pilot):
        app = pilot.app
        await press(pilot, "4")
        run = app.query_one(RunPane)
        run.query_one("#ingest-path", Input).focus()  # the tab opens on its button (item 14)
        await type_text(pilot, str(doc))
        await press(pilot, "enter")
        bar = run.query_one("#ingest-progress", ProgressBar)
        assert bar.total and bar.progress == bar.total
        assert run.last_ingest.memories >= 2
        chunks = memory.list(kind="chunk")
        assert {c.metadata["chunker"] for c in chunks} == {"paragraph"}
        run.query_one("#ingest-chunker").value = "fixed"  # another strategy
        path_box = run.query_one("#ingest-path", Input)
        path_box.value = str(doc)
        await press(pilot, "enter")
        # chunked another way, the same file replaces its chunks (issue 33 item 2)
        assert {c.metadata["chunker"] for c in memory.list(kind="chunk")} == {"fixed"}
        path_box.value = str(lines)
        await press(pilot, "enter")
        assert run.last_ingest.memories == 5 and run.last_ingest.skipped == 1
        assert "1 line(s) skipped" in static_text(app, "#ingest-result")
        path_box.value = str(tmp_path / "missing.txt")
        await press(pilot, "enter")
        assert "no such file" in app.errors[-1]
        await press(pilot, "escape", "1")  # the browse list now holds them
        assert app.query_one("#rows", DataTable).row_count == memory.count()

    app = drive(make_app(memory), scenario)
    assert memory.count() >= 7
    assert len(app.errors) == 1


def test_an_experiment_runs_in_a_worker_with_progress_and_output(memory, monkeypatch):
    from lab.command import Experiment
    from lab.registry import EXPERIMENTS

    from localmem.console import Progress

    seen = {}

    def configure(parser):
        parser.add_argument("--steps", type=int, default=3)

    def run(args):
        seen["store"] = args.store
        bar = Progress("toy")
        for i in range(1, args.steps + 1):
            bar(i, args.steps)
        print(f"toy experiment did {args.steps} steps")
        return 0

    monkeypatch.setitem(EXPERIMENTS, "toy", Experiment("a toy", configure, run))

    async def scenario(pilot):
        app = pilot.app
        run_pane = app.query_one(RunPane)
        await press(pilot, "4")
        run_pane.query_one("#experiment-name").value = "toy"
        run_pane.query_one("#experiment-args", Input).value = "--steps 4"
        run_pane.query_one("#experiment-go").press()
        await settle(pilot)
        assert run_pane.last_exit == 0
        bar = run_pane.query_one("#experiment-progress", ProgressBar)
        assert (bar.progress, bar.total) == (4, 4)
        log_text = "\n".join(str(line) for line in run_pane.query_one("#experiment-log").lines)
        assert "toy experiment did 4 steps" in log_text
        run_pane.query_one("#experiment-args", Input).value = "--steps many"
        run_pane.query_one("#experiment-go").press()
        await settle(pilot)
        assert "invalid int value" in app.errors[-1]

    app = drive(make_app(memory), scenario)
    assert seen["store"].endswith("experiments/toy")  # never the store the app holds
    assert len(app.errors) == 1


def test_status_names_the_engines_the_embedder_and_the_store_health(demo):
    async def scenario(pilot):
        await press(pilot, "5")
        report = pilot.app.query_one(StatusPane).report
        assert report.stats["memories"] == demo.count()
        assert all(ok for _, ok, _ in report.checks)
        assert report.engines and all("served_by" in row for row in report.engines)
        text = static_text(pilot.app, "#status-body")
        assert "all-MiniLM-L6-v2" in text and "vector index" in text
        assert "candidates[hnsw+bm25]" in text

    assert drive(make_app(demo), scenario).errors == []


def test_help_lists_the_keys_of_every_pane(memory):
    async def scenario(pilot):
        await press(pilot, "question_mark")
        assert isinstance(pilot.app.screen, HelpScreen)
        text = static_text(pilot.app, "#help-body")
        for words in ("Add thought", "Complete session", "Rerank", "Backspace", "Leave box"):
            assert words in text
        await press(pilot, "escape")
        assert not isinstance(pilot.app.screen, HelpScreen)

    drive(make_app(memory), scenario)


def test_the_demo_fills_an_empty_store_on_first_start(memory):
    async def scenario(pilot):
        browse = pilot.app.query_one(BrowsePane)
        assert len([s for s in browse.sources if s.session]) == 3
        assert browse.query_one("#rows", DataTable).row_count == memory.count()

    drive(make_app(memory, fill_demo=True), scenario)
    assert memory.count() > 10


def test_procedures_pane_without_procedures_says_so(memory):
    from localmem_tui.procedures import procedure_api

    if procedure_api(memory) is not None:
        pytest.skip("this build has procedures")

    async def scenario(pilot):
        await press(pilot, "3")
        assert "not in this build" in static_text(pilot.app, "#procedure-body")

    drive(make_app(memory), scenario)


def test_complete_a_session_into_a_procedure_and_find_it(memory):
    pytest.importorskip("localmem.procedures")
    session = memory.start_session("Fix the crash when the cart is empty")
    for text in (
        "Reproduce: checkout with an empty cart raises IndexError in the total.",
        "The total function reads items[0] without checking the list.",
        "Return zero for an empty cart and add a guard in checkout.",
        "Add a regression test for the empty cart.",
    ):
        memory.add_thought(session.id, text)

    async def scenario(pilot):
        app = pilot.app
        await open_source(pilot, f"s:{session.id}")
        await press(pilot, "c")
        assert isinstance(app.screen, CompleteSessionForm)
        assert app.screen.query_one("#abstract").value is True
        await press(pilot, "ctrl+s")
        done = memory.get_session(session.id)
        assert done.outcome == "success" and done.metadata.get("procedure_id")
        await press(pilot, "3")
        pane = app.query_one(ProceduresPane)
        assert [e.procedure.id for e in pane.shown] == [done.metadata["procedure_id"]]
        body = static_text(app, "#procedure-body")
        assert "Trigger" in body and "Steps" in body and "Versions" in body and "CREATE" in body
        task = pane.query_one("#procedure-task", Input)
        task.focus()
        await type_text(pilot, "the app crashes when the shopping cart is empty")
        await press(pilot, "enter")
        assert pane.shown and pane.shown[0].match is not None
        assert "similarity" in static_text(app, "#procedure-body")

    assert drive(make_app(memory), scenario).errors == []


def test_quitting_during_a_write_asks_first(memory):
    import threading

    release = threading.Event()

    async def scenario(pilot):
        app = pilot.app
        app.run_worker(release.wait, thread=True, group="ingest")  # stands in for a long ingest
        await pilot.pause()
        await pilot.press("q")
        await pilot.pause()
        assert app.is_running  # asked, not quit
        release.set()
        await settle(pilot)
        await pilot.press("q")
        await pilot.pause()
        assert not app.is_running

    drive(make_app(memory), scenario)


def test_search_plan_leaves_out_stages_this_build_lacks():
    from localmem_tui.search import explanation, plan

    from localmem.types import SearchResult, StageReport

    toggles = {
        "mode": "dense",
        "attributes": "filter",
        "expand": "off",
        "temporal": "on",
        "links": "off",
        "rerank": "off",
        "k": "5",
    }
    run = plan("rate limits", toggles, {"filter", "candidates", "pack", "temporal"})
    assert run.missing == ["attributes"]
    assert run.options == {
        "mode": "dense",
        "expand": "off",
        "temporal": True,
        "links": False,
        "rerank": "off",
        "k": 5,
    }
    run.result = SearchResult(
        "rate limits", [], [StageReport("candidates", "hnsw", 0, 3, 1.0, {"lists": 1})], 2.0
    )
    text = explanation(run).plain
    assert "candidates" in text and "hnsw" in text and "lists=1" in text
    assert "temporal" in text and "did not run" in text  # asked for, present, but no report
    assert "attributes" in text and "not available in this build" in text


def test_engine_rows_are_grouped_by_what_serves_them():
    from localmem_tui.status import engine_groups

    rows = [
        {"task": "answer", "served_by": "model-free", "ok": True, "engine": "model-free"},
        {"task": "rerank", "served_by": "unavailable", "ok": True, "engine": "needs a model"},
        {"task": "judge", "served_by": "model-free", "ok": True, "engine": "model-free"},
    ]
    assert engine_groups(rows) == [
        ("model-free", ["answer", "judge"], "model-free", True),
        ("unavailable", ["rerank"], "needs a model", True),
    ]


def test_status_says_what_the_read_stage_runs_when_its_model_task_cannot():
    """Issue 33 item 13: 'rerank unavailable' beside a Search tab that reranks model-free."""
    from localmem_tui.status import stage_fallbacks

    stages = {"candidates": "hnsw+bm25", "rerank": "model-free", "expand": "off"}
    assert stage_fallbacks(["expand_query", "rerank"], stages) == "rerank model-free"
    assert stage_fallbacks(["judge"], stages) == ""


def test_a_failing_job_or_view_update_is_a_notification_not_a_crash(memory):
    from localmem_tui.common import background

    from localmem.errors import NotFoundError

    def missing():
        raise NotFoundError("no memory with id 'nope'")

    async def scenario(pilot):
        app = pilot.app
        background(app.screen, missing, done=lambda _: None)
        await settle(pilot)
        background(app.screen, lambda: 1, done=lambda n: n / 0)  # a bug in drawing a result
        await settle(pilot)
        assert app.errors == [
            "no memory with id 'nope'",
            "unexpected ZeroDivisionError: division by zero",
        ]
        assert app.is_running

    drive(make_app(memory), scenario)


def test_the_add_form_infers_and_the_detail_pane_shows_what_was_superseded(memory):
    from textual.widgets import Checkbox

    old = memory.add("Ann lives in Paris.", event_time="2021-01-01T00:00:00+00:00", infer=True)

    async def scenario(pilot):
        app = pilot.app
        await press(pilot, "a")
        assert isinstance(app.screen, AddMemoryForm)
        app.screen.query_one("#with-infer", Checkbox).value = True
        await type_text(pilot, "Ann moved to Berlin.")
        await press(pilot, "ctrl+s")
        assert not isinstance(app.screen, AddMemoryForm)
        new = next(m for m in memory.list() if "Berlin" in m.content)
        assert memory.get(old.id).superseded_by == new.id
        detail = app.query_one("#browse-detail", MemoryDetail)
        detail.show(old.id)
        await settle(pilot)
        head = static_text(app, "#browse-detail .detail-head")
        assert "superseded by" in head and new.id in head
        history = static_text(app, "#browse-detail .detail-history")
        assert "INVALIDATE" in history and "paris -> berlin" in history

    assert drive(make_app(memory), scenario).errors == []


def test_the_tab_keys_work_from_every_tab(memory):
    """Issue 33 item 14: the Run tab does not swallow '5'; alt+N switches even while typing."""
    from textual.widgets import TabbedContent

    async def scenario(pilot):
        tabs = pilot.app.query_one(TabbedContent)
        await press(pilot, "4")
        assert tabs.active == "run" and not isinstance(pilot.app.focused, Input)
        await press(pilot, "5")
        assert tabs.active == "status"
        await press(pilot, "2")  # the search box has the focus
        assert tabs.active == "search" and isinstance(pilot.app.focused, Input)
        await press(pilot, "alt+1")
        assert tabs.active == "browse"

    drive(make_app(memory), scenario)


def test_the_add_form_defaults_follow_the_store_and_say_what_ran(memory):
    """Issue 33 item 15: a plain note mines, evolves and infers nothing unless the store's
    config says so; a message infers; the notice says what ran."""
    from textual.widgets import Checkbox, Select

    async def scenario(pilot):
        app = pilot.app
        await press(pilot, "a")
        form = app.screen
        assert isinstance(form, AddMemoryForm)
        for box in ("#with-mine", "#with-evolve", "#with-infer"):
            assert form.query_one(box, Checkbox).value is False, box
        form.query_one("#kind", Select).value = "message"
        await settle(pilot)
        assert form.query_one("#with-infer", Checkbox).value is True
        form.query_one("#kind", Select).value = "note"
        await settle(pilot)
        assert form.query_one("#with-infer", Checkbox).value is False
        await type_text(pilot, "a plain note about the kettle")
        await press(pilot, "ctrl+s")
        assert not isinstance(app.screen, AddMemoryForm)
        notes = [n.message for n in app._notifications]
        assert any("stored as written" in n for n in notes), notes

    drive(make_app(memory), scenario)
    added = next(m for m in memory.list() if "kettle" in m.content)
    assert memory.links(added.id) == []
