"""The localmem terminal app: tabs for browsing, search, procedures, runs and status.

Build it with :func:`make_app` (the ``localmem tui`` command and the tests both do). The app
never touches the store on its own thread: every read and write runs in a thread worker
(:func:`localmem_tui.common.background`) and comes back by a call on the UI thread.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any, ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Footer, Header, Input, TabbedContent, TabPane

from localmem.errors import LocalMemError
from localmem.remote.transport import ServerGone
from localmem_tui import forms
from localmem_tui.browse import BrowsePane
from localmem_tui.common import OpenMemory, background
from localmem_tui.detail import MemoryDetail, MemoryScreen
from localmem_tui.help import HelpScreen
from localmem_tui.procedures import ProceduresPane, procedure_api
from localmem_tui.reconnect import ServerGoneScreen
from localmem_tui.run import RunPane
from localmem_tui.search import SearchPane
from localmem_tui.status import StatusPane

if TYPE_CHECKING:
    from localmem.memory import Memory

log = logging.getLogger("localmem_tui")

#: tab id -> (title, pane class); the order is the order of the tabs and of their number keys
TABS: dict[str, tuple[str, type]] = {
    "browse": ("Browse", BrowsePane),
    "search": ("Search", SearchPane),
    "procedures": ("Procedures", ProceduresPane),
    "run": ("Run", RunPane),
    "status": ("Status", StatusPane),
}

#: what gets the focus when a tab opens, and when Esc leaves a text box in it
FIRST_FOCUS = {
    "browse": "#sources",
    "search": "#query",
    "procedures": "#procedure-list",
    # not its path box: the number keys must still switch tabs (Enter or a click edits it)
    "run": "#ingest-go",
    "status": "#status-pane",
}
#: worker groups that write to the store (quitting in the middle of one asks first)
WRITERS = {"ingest", "experiment", "form", "demo"}
QUIT_AGAIN_S = 5.0
LEAVE_TO = {
    "browse": "#rows",
    "search": "#hits",
    "procedures": "#procedure-list",
    "run": "#ingest-go",
}


class LocalMemApp(App[None]):
    """Browse, search and grow a localmem store from the terminal."""

    CSS_PATH = "localmem.tcss"
    TITLE = "localmem"
    BINDINGS: ClassVar[list[BindingType]] = [
        *(
            Binding(str(i), f"show_tab('{tab}')", title, show=False)
            for i, (tab, (title, _)) in enumerate(TABS.items(), start=1)
        ),
        # alt+N switches tabs even while typing in a box (N alone types there)
        *(
            Binding(f"alt+{i}", f"show_tab('{tab}')", title, show=False, priority=True)
            for i, (tab, (title, _)) in enumerate(TABS.items(), start=1)
        ),
        Binding("slash", "find", "Search", show=False),
        Binding("escape", "leave_input", "Leave box"),
        Binding("question_mark,f1", "help", "Help"),
        Binding("q", "quit", "Quit"),
    ]

    def __init__(
        self,
        memory: Memory,
        *,
        fill_demo: bool = False,
        notices: tuple[str, ...] = (),
        follow_s: float | None = None,
    ) -> None:
        super().__init__()
        self.memory = memory
        self.fill_demo = fill_demo
        self.notices = notices
        self.follow_s = follow_s
        self._seen: tuple | None = None
        self._follow_failed = False
        self.errors: list[str] = []  # every error shown, oldest first (tests read it)
        self._quit_asked_at = 0.0

    def compose(self) -> ComposeResult:
        yield Header()
        with TabbedContent(id="tabs"):
            for number, (tab, (title, pane)) in enumerate(TABS.items(), start=1):
                with TabPane(f"{number} {title}", id=tab):
                    yield pane(id=f"{tab}-pane")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = self.memory.path.name
        for notice in self.notices:
            self.notify(notice, markup=False, timeout=8)
        if self.fill_demo:
            self._fill_demo()
        self.query_one("#sources").focus()
        if self.follow_s:  # other clients write to this store: show what they add
            self.set_interval(self.follow_s, self._follow)

    def _follow(self) -> None:
        memory = self.memory

        def look() -> tuple | None:  # added and deleted memories; edits wait for a reload
            try:
                newest = memory.list(limit=1, include_deleted=True)
                return (
                    memory.count(),
                    memory.count(include_deleted=True),
                    newest[0].id if newest else None,
                )
            except ServerGone as exc:  # stopped: offer a reconnect or the store here, once
                return exc
            except LocalMemError:  # the server went away: say so once, keep looking
                return None

        def seen(state: tuple | ServerGone | None) -> None:
            if isinstance(state, ServerGone):
                if not self._follow_failed:
                    self.report_error(state)
                self._follow_failed = True
                return
            if state is None:
                if not self._follow_failed:
                    self.notify("the store's server does not answer", severity="warning")
                self._follow_failed = True
                return
            self._follow_failed = False
            if state != self._seen:  # the first look reloads too: it may be newer than the lists
                self.store_changed()
            self._seen = state

        background(self, look, done=seen, group="follow", exclusive=True)

    def _fill_demo(self) -> None:
        from localmem.demo import load_demo

        memory = self.memory

        def job() -> dict[str, int] | None:
            return load_demo(memory) if memory.count() == 0 else None

        def loaded(added: dict[str, int] | None) -> None:
            if added:
                parts = [f"{n} {what}" for what, n in added.items() if n]
                self.notify("demo store: " + ", ".join(parts), title="Demo")
                self.store_changed()

        background(self, job, done=loaded, group="demo")

    # -- errors ----------------------------------------------------------------------------------
    def report_error(self, exc: BaseException) -> None:
        """Show an error as a notification (the app keeps running); a server that is gone is
        offered a reconnect or the store opened here."""
        if isinstance(exc, ServerGone):
            self.errors.append(str(exc))
            if not isinstance(self.screen, ServerGoneScreen):
                self.push_screen(ServerGoneScreen(str(exc)), self.recover)
            return
        if isinstance(exc, LocalMemError):
            text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        else:  # a bug: still one line; the traceback goes to the log
            log.error("unexpected error in the TUI", exc_info=exc)
            text = f"unexpected {type(exc).__name__}: {exc}"
        self.errors.append(text)
        self.notify(text, title="Error", severity="error", markup=False, timeout=10)

    def recover(self, choice: str | None) -> None:
        """Reconnect to the store's server, or open the store in this process."""
        if choice is None:
            return
        from localmem.discovery import find_server
        from localmem.memory import Memory
        from localmem.remote import connect

        path = self.memory.path
        try:
            if choice == "reconnect":
                if find_server(path) is None:
                    self.notify("no server runs for this store yet", severity="warning")
                    return
                memory = connect(path)
            else:
                memory = Memory.open(path)
        except LocalMemError as exc:
            self.report_error(exc)
            return
        old, self.memory = self.memory, memory
        old.close()
        self.notify("reconnected to the server" if choice == "reconnect" else f"opened {path}")
        self.store_changed()

    async def action_quit(self) -> None:
        """Quit; while a write runs in the background, ask for a second q first."""
        busy = sorted({w.group for w in self.workers if w.group in WRITERS and not w.is_finished})
        if busy and time.monotonic() - self._quit_asked_at > QUIT_AGAIN_S:
            self._quit_asked_at = time.monotonic()
            self.notify(
                f"{', '.join(busy)} still running: q again within {QUIT_AGAIN_S:.0f} s quits "
                "anyway (what was written so far stays, the rest is not stored)",
                severity="warning",
            )
            return
        self.exit()

    # -- navigation ------------------------------------------------------------------------------
    def action_show_tab(self, tab: str) -> None:
        """Switch to a tab and focus its main control."""
        self.query_one(TabbedContent).active = tab
        self._focus_tab(tab)

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        tab = event.pane.id or ""
        if tab == "status":
            self.query_one(StatusPane).reload()
        elif tab == "procedures":
            self.query_one(ProceduresPane).reload()
        self._focus_tab(tab)

    def _focus_tab(self, tab: str) -> None:
        if tab in FIRST_FOCUS:
            self.query_one(FIRST_FOCUS[tab]).focus()

    def action_leave_input(self) -> None:
        """Leave a text box (so the number keys switch tabs again)."""
        tab = self.query_one(TabbedContent).active
        self.query_one(LEAVE_TO.get(tab, f"#{tab}-pane")).focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # "Leave box" only means something (and is only shown) while typing in a box
        if action == "leave_input":
            return isinstance(self.focused, Input)
        return True

    def action_find(self) -> None:
        """Go to the search box."""
        self.action_show_tab("search")

    def action_help(self) -> None:
        """Show every key."""
        sections = [("App", list(self.BINDINGS))]
        sections += [(title, list(pane.BINDINGS)) for title, pane in TABS.values()]
        sections.append(("Memory detail", list(MemoryDetail.BINDINGS)))
        self.push_screen(HelpScreen(sections))

    def on_open_memory(self, message: OpenMemory) -> None:
        self.push_screen(MemoryScreen(message.memory_id))

    def store_changed(self, *, session_id: str | None = None, memory_id: str | None = None) -> None:
        """Something was written: the lists showing the store read it again."""
        source = f"s:{session_id}" if session_id else None
        self.query_one(BrowsePane).reload(select_source=source, select_memory=memory_id)
        self.query_one(ProceduresPane).reload()

    # -- writing ---------------------------------------------------------------------------------
    @property
    def browse(self) -> BrowsePane:
        return self.query_one(BrowsePane)

    def action_add_memory(self) -> None:
        """Add a memory (scoped to the user shown, if any)."""
        memory = self.memory

        ran: list[str] = []

        def save(values: dict[str, Any]):
            content = values.pop("content")
            ran[:] = forms.mechanisms_asked(values)
            if values.pop("infer", False):
                return memory.infer(content, **values)  # every decision, to show them
            return memory.add(content, **values, infer=False)

        def added(result) -> None:
            also = f" ({', '.join(ran)})" if ran else " (stored as written)"
            if isinstance(result, list) and result:  # inferred: say what each fact did
                self.notify("; ".join(inferred_line(a) for a in result) + also)
                self.store_changed(memory_id=result[0].memory.id)
            elif result is not None:
                self.notify(f"added {result.kind} {result.id[:8]}{also}")
                self.store_changed(memory_id=result.id)

        self.push_screen(forms.AddMemoryForm(save, user_id=self.browse.user_id), added)

    def action_start_session(self) -> None:
        """Start a session of thoughts."""
        memory = self.memory

        def started(session) -> None:
            if session is not None:
                self.notify(f"session started: {session.title}")
                self.store_changed(session_id=session.id)

        self.push_screen(
            forms.StartSessionForm(lambda v: memory.start_session(v["title"])), started
        )

    def action_add_thought(self) -> None:
        """Add the next thought to the open session shown."""
        source = self.browse.source
        if source is None or source.session is None:
            self.notify("select a session first (or n to start one)", severity="warning")
            return
        if source.session.status != "open":
            self.notify(f"this session is {source.session.status}", severity="warning")
            return
        memory, sid = self.memory, source.session.id

        def added(thought) -> None:
            if thought is not None:
                self.notify(f"thought #{thought.number} added")
                self.store_changed(session_id=sid, memory_id=thought.memory.id)

        self.push_screen(
            forms.ThoughtForm(
                lambda v: memory.add_thought(sid, v.pop("content"), **v),
                subtitle=source.session.title,
            ),
            added,
        )

    def action_complete_session(self) -> None:
        """Close the open session shown with its outcome; abstract a procedure from it."""
        source = self.browse.source
        if source is None or source.session is None or source.session.status != "open":
            self.notify("select an open session first", severity="warning")
            return
        memory, sid = self.memory, source.session.id
        can_abstract = procedure_api(memory) is not None

        def save(values: dict[str, Any]):
            wanted = values["abstract"] and values["outcome"] == "success"
            options = {"abstract": True} if can_abstract and wanted else {}
            return memory.complete_session(sid, values["outcome"], notes=values["notes"], **options)

        def completed(session) -> None:
            if session is None:
                return
            self.notify(f"session completed: {session.outcome}")
            if session.metadata.get("procedure_id"):
                self.notify(
                    f"procedure {session.metadata['procedure_id']} abstracted from it",
                    title="Procedures",
                )
                self.query_one(ProceduresPane).reload()
            self.store_changed(session_id=sid)

        self.push_screen(
            forms.CompleteSessionForm(
                save,
                subtitle=source.session.title,
                can_abstract=can_abstract,
                # a procedure needs a few steps: a short session is closed without one
                abstract=source.session.thought_count >= 3,
            ),
            completed,
        )


def make_app(
    memory: Memory,
    *,
    fill_demo: bool = False,
    notices: tuple[str, ...] | list[str] = (),
    follow_s: float | None = None,
) -> LocalMemApp:
    """The app for an open store.

    Args:
        memory: the store to show (the caller opens and closes it).
        fill_demo: fill the store with the demo sample when it is empty.
        notices: lines to show as notifications on start (store repairs, which store is shown).
        follow_s: look for memories other clients added every so many seconds (a served
            store); None: only this app writes.
    """
    return LocalMemApp(memory, fill_demo=fill_demo, notices=tuple(notices), follow_s=follow_s)


def inferred_line(applied) -> str:
    """One decision of an inferring add, for a notification."""
    what = {"ADD": "added", "NONE": "already known", "UPDATE": "updated"}.get(applied.event)
    if what is None:
        target = applied.target.id[:8] if applied.target else "?"
        what = f"added, superseding {target}"
    return f"{what} {applied.memory.id[:8]} ({applied.reason})"
