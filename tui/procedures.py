"""Procedures (Mem^p): trigger, steps, success rate, versions; find one for a task.

The procedure API (``memory.procedures``) comes with the procedures mechanism; in a build
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

from localmem.errors import InputError
from localmem.tui.common import background, one_line, plain, section, set_columns, when

if TYPE_CHECKING:
    from localmem.memory import Memory


COLUMNS = [
    ("trigger", "trigger", None),
    ("steps", "steps", 5),
    ("rate", "success", 7),
    ("version", "v", 3),
    ("score", "match", 5),
]


def procedure_api(memory: Memory) -> Any | None:
    """The store's procedures, or None when this build has no procedure mechanism."""
    return getattr(memory, "procedures", None)


@dataclass(frozen=True)
class ProcedureView:
    """What the pane shows of one procedure (read from whatever the API hands back)."""

    id: str
    trigger: str
    task_type: str
    steps: list[str]
    successes: int
    failures: int
    version: int
    source_session: str | None
    score: float | None = None
    versions: list[dict[str, Any]] = field(default_factory=list)

    @property
    def uses(self) -> int:
        return self.successes + self.failures

    @property
    def success_rate(self) -> float | None:
        return self.successes / self.uses if self.uses else None


def _field(obj: Any, *names: str, default: Any = None) -> Any:
    for name in names:
        value = obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)
        if value is not None:
            return value
    return default


def view(obj: Any, *, score: float | None = None) -> ProcedureView:
    """A procedure object (dataclass, pydantic model or dict) as a view."""
    return ProcedureView(
        id=str(_field(obj, "id", default="?")),
        trigger=str(_field(obj, "trigger", default="")),
        task_type=str(_field(obj, "task_type", "kind", default="")),
        steps=[str(s) for s in _field(obj, "steps", default=[])],
        successes=int(_field(obj, "success_count", "successes", default=0)),
        failures=int(_field(obj, "failure_count", "failures", default=0)),
        version=int(_field(obj, "version", default=1)),
        source_session=_field(obj, "source_session_id", "session_id"),
        score=score,
    )


def listing(memory: Memory) -> list[ProcedureView]:
    """Every procedure of the store."""
    api = procedure_api(memory)
    if api is None:
        return []
    return [view(p) for p in api.list()]


def find(memory: Memory, task: str) -> list[ProcedureView]:
    """Procedures for a task, best first."""
    api = procedure_api(memory)
    if api is None:
        raise InputError("procedures are not in this build")
    found = api.find(task)
    if found is None:
        return []
    items = found if isinstance(found, list) else [found]
    return [view(_field(p, "procedure", default=p), score=_field(p, "score")) for p in items]


def detail_text(p: ProcedureView) -> Text:
    """Trigger, steps, record of use and versions of one procedure."""
    out = Text()
    out.append_text(section("Trigger"))
    out.append(f"\n{p.trigger}\n\n")
    out.append_text(section("Steps"))
    for i, step in enumerate(p.steps, start=1):
        out.append(f"\n{i:>2}. {step}")
    out.append("\n\n")
    out.append_text(section("Record"))
    rate = "no uses yet" if p.success_rate is None else f"{p.success_rate:.0%} success"
    out.append(f"\n{p.successes} successes, {p.failures} failures ({rate})")
    out.append(f"\nversion {p.version}")
    if p.task_type:
        out.append(f", type {p.task_type}")
    if p.source_session:
        out.append(f"\nfrom session {p.source_session}", style="dim")
    for v in p.versions:
        line = f"\n  v{v.get('version')} {when(v.get('at'))} {v.get('reason', '')}"
        out.append(line, style="dim")
    return out


class ProceduresPane(Horizontal):
    """The store's procedures; type a task and press Enter to find one for it."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("r", "reload", "Reload")]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.shown: list[ProcedureView] = []

    def compose(self) -> ComposeResult:
        with Vertical(id="procedures-left"):
            yield Input(placeholder="Find a procedure for a task… (Enter)", id="procedure-task")
            table = DataTable(id="procedures", cursor_type="row", zebra_stripes=True)
            table.border_title = "Procedures"
            yield table
        with VerticalScroll(id="procedure-detail") as box:
            box.border_title = "Procedure"
            yield Static(id="procedure-body")

    def on_mount(self) -> None:
        set_columns(self.query_one("#procedures", DataTable), COLUMNS)
        self.reload()

    def on_resize(self) -> None:
        if self.shown:
            self._fill_table()

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
        background(self, lambda: listing(memory), done=self._show, group="procedures")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        task = event.value.strip()
        if not task:
            self.reload()
            return
        memory = self.app.memory
        background(self, lambda: find(memory, task), done=self._show, group="procedures")

    def _fill_table(self) -> DataTable:
        table = self.query_one("#procedures", DataTable)
        set_columns(table, COLUMNS)
        for p in self.shown:
            rate = "–" if p.success_rate is None else f"{p.success_rate:.0%}"
            score = "" if p.score is None else f"{p.score:.2f}"
            table.add_row(
                plain(one_line(p.trigger, 200)), str(len(p.steps)), rate, str(p.version), score
            )
        return table

    def _show(self, procedures: list[ProcedureView]) -> None:
        self.shown = procedures
        table = self._fill_table()
        table.border_title = f"Procedures · {len(procedures)}"
        body = self.query_one("#procedure-body", Static)
        body.update(detail_text(procedures[0]) if procedures else plain("none found", "dim"))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if 0 <= event.cursor_row < len(self.shown):
            body = self.query_one("#procedure-body", Static)
            body.update(detail_text(self.shown[event.cursor_row]))
