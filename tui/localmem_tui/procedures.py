"""Procedures (Mem^p): trigger, steps, success rate, versions; find one for a task.

The procedure store (``memory.procedures``) comes with the procedures mechanism; in a build
without it this pane says so and the rest of the app works as before.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Input, Static

from localmem_tui.common import FitTable, background, one_line, plain, section, when

if TYPE_CHECKING:
    from localmem.memory import Memory
    from localmem.procedures.model import ProcedureMatch

COLUMNS = [
    ("trigger", "trigger", None),
    ("type", "type", 11),
    ("steps", "steps", 5),
    ("rate", "success", 7),
    ("version", "v", 3),
    ("score", "match", 5),
]


def procedure_api(memory: Memory) -> Any | None:
    """The store's procedures, or None when this build has no procedure mechanism."""
    if getattr(type(memory), "procedures", None) is None:
        return None
    return memory.procedures


@dataclass
class Entry:
    """One row of the pane: a procedure, and its match for the task asked (if any)."""

    procedure: Any
    match: Any | None = None


@dataclass
class Record:
    """A procedure with its versions and events, loaded when it is highlighted."""

    entry: Entry
    versions: list[Any] = field(default_factory=list)
    events: list[Any] = field(default_factory=list)


def listing(memory: Memory) -> list[Entry]:
    """Every procedure, active and retired, newest first."""
    return [Entry(p) for p in memory.procedures.list(status=None, limit=500)]


def matching(memory: Memory, task: str) -> list[Entry]:
    """Active procedures scored for a task, best first (the threshold is marked, not applied)."""
    return [Entry(m.procedure, m) for m in memory.procedures.matches(task, k=20)]


def record(memory: Memory, entry: Entry) -> Record:
    """Versions and events of the procedure of ``entry``."""
    api = memory.procedures
    pid = entry.procedure.id
    return Record(entry, versions=api.versions(pid), events=api.history(pid))


def detail_text(rec: Record, *, threshold: float | None = None) -> Text:
    """Trigger, steps, example, caveats, record of use, match, versions and events."""
    p = rec.entry.procedure
    out = Text()
    out.append(f"{p.task_type} · {p.level} · v{p.version}", style="bold")
    if p.retired:
        out.append("  RETIRED", style="bold red")
    out.append(f"\n{p.id}  written by {p.served_by}", style="dim")
    if p.source_session_id:
        out.append(f"  from session {p.source_session_id}", style="dim")
    out.append("\n\n")
    out.append_text(section("Trigger"))
    out.append(f"\n{p.trigger}\n\n")
    out.append_text(section("Steps"))
    for i, step in enumerate(p.steps, start=1):
        out.append(f"\n{i:>2}. {step}")
    if p.example:
        out.append("\n\n")
        out.append_text(section("Example"))
        out.append(f"\n{p.example}")
    if p.caveats:
        out.append("\n\n")
        out.append_text(section("Caveats"))
        for caveat in p.caveats:
            out.append(f"\n- {caveat}", style="yellow")
    out.append("\n\n")
    out.append_text(section("Record"))
    rate = "no uses yet" if p.success_rate is None else f"{p.success_rate:.0%} success"
    out.append(f"\n{p.use_count} uses: {p.success_count} succeeded, {p.failure_count} failed")
    out.append(f" ({rate})")
    if p.last_used:
        out.append(f", last {when(p.last_used)}", style="dim")
    if rec.entry.match is not None:
        _append_match(out, rec.entry.match, threshold)
    _append_history(out, rec)
    return out


def _append_match(out: Text, m: ProcedureMatch, threshold: float | None) -> None:
    """The Match section: how the procedure scored for the task typed."""
    out.append("\n\n")
    out.append_text(section("Match"))
    verdict = ""
    if threshold is not None:
        verdict = "  over the threshold" if m.score >= threshold else "  under the threshold"
    out.append(f"\nscore {m.score:.3f}{verdict}", style="bold")
    out.append(f"\nsimilarity {m.similarity:.3f}, reliability {m.reliability:.2f}", style="dim")
    if m.task_type:
        agree = {True: "same type", False: "other type", None: ""}[m.type_match]
        out.append(f"\ntask type {m.task_type} ({agree})", style="dim")


def _append_history(out: Text, rec: Record) -> None:
    """The Versions and Events sections, where the record has any."""
    if rec.versions:
        out.append("\n\n")
        out.append_text(section("Versions"))
        for v in rec.versions:
            out.append(f"\nv{v.version} {when(v.created_at)} by {v.served_by}", style="dim")
            if v.reason:
                out.append(f"  {one_line(v.reason, 70)}")
    if rec.events:
        out.append("\n\n")
        out.append_text(section("Events"))
        for e in rec.events:
            outcome = {True: " success", False: " failure", None: ""}[e.success]
            out.append(f"\n{when(e.at)}  {e.event:<8} v{e.version}{outcome}", style="dim")


class ProceduresPane(Horizontal):
    """The store's procedures; type a task and press Enter to find one for it."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("r", "reload", "Reload")]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.shown: list[Entry] = []
        self.record: Record | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="procedures-left"):
            yield Input(placeholder="Find a procedure for a task… (Enter)", id="procedure-task")
            table = FitTable(COLUMNS, id="procedure-list")
            table.border_title = "Procedures"
            yield table
        with VerticalScroll(id="procedure-detail") as box:
            box.border_title = "Procedure"
            yield Static(id="procedure-body")

    def on_mount(self) -> None:
        self.reload()

    def action_reload(self) -> None:
        self.reload()

    def reload(self) -> None:
        """Read the procedures again."""
        memory = self.app.memory
        if procedure_api(memory) is None:
            self.query_one("#procedure-body", Static).update(
                plain("Procedures are not in this build of localmem.", "dim")
            )
            return
        background(
            self, lambda: listing(memory), done=self._show, group="procedures", exclusive=True
        )

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        memory = self.app.memory
        task = event.value.strip()
        if procedure_api(memory) is None:
            self.app.notify("procedures are not in this build", severity="warning")
        elif not task:
            self.reload()
        else:
            background(
                self,
                lambda: matching(memory, task),
                done=self._show,
                group="procedures",
                exclusive=True,
            )

    def _rows(self) -> list[tuple[str, tuple]]:
        rows = []
        for i, entry in enumerate(self.shown):
            p = entry.procedure
            rate = "–" if p.success_rate is None else f"{p.success_rate:.0%}"
            score = "" if entry.match is None else f"{entry.match.score:.2f}"
            trigger = plain(one_line(p.trigger, 300), "dim strike" if p.retired else "")
            rows.append(
                (str(i), (trigger, p.task_type, str(len(p.steps)), rate, str(p.version), score))
            )
        return rows

    def _show(self, entries: list[Entry]) -> None:
        self.shown = entries
        table = self.query_one("#procedure-list", FitTable)
        table.set_rows(self._rows())
        table.border_title = f"Procedures · {len(entries)}"
        if entries:
            self._load_record(0)
        else:
            self.record = None
            self.query_one("#procedure-body", Static).update(plain("none found", "dim"))

    def _load_record(self, index: int) -> None:
        memory, entry = self.app.memory, self.shown[index]
        background(
            self,
            lambda: record(memory, entry),
            done=self._show_record,
            group="procedure",
            exclusive=True,
        )

    def _show_record(self, rec: Record) -> None:
        self.record = rec
        threshold = self.app.memory.config.procedures.threshold
        self.query_one("#procedure-body", Static).update(detail_text(rec, threshold=threshold))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if 0 <= event.cursor_row < len(self.shown):
            self._load_record(event.cursor_row)
