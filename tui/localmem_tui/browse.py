"""Browse: sessions (and user scopes) on the left, their memories, and the detail of one."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, OptionList
from textual.widgets.option_list import Option

from localmem_tui import data
from localmem_tui.common import FitTable, background, one_line, plain, when
from localmem_tui.detail import MemoryDetail

COLUMNS = [("n", "#", 3), ("kind", "kind", 8), ("when", "when", 16), ("content", "content", None)]
SOURCE_WIDTH = 30  # characters of a line in the sources list
_MARKS = {"open": ("○", "yellow"), "success": ("✓", "green"), "failure": ("✗", "red")}


class BrowsePane(Horizontal):
    """Pick a session or scope, walk its memories, read one in full."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "app.add_memory", "Add memory"),
        Binding("n", "app.start_session", "New session"),
        Binding("t", "app.add_thought", "Add thought"),
        Binding("c", "app.complete_session", "Complete session"),
        Binding("r", "reload", "Reload"),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.sources: list[data.Source] = []
        self.rows: list[data.Row] = []
        self.current: str = "all"
        self._select_after: str | None = None  # a memory to highlight once the rows arrive

    def compose(self) -> ComposeResult:
        sources = OptionList(id="sources")
        sources.border_title = "Sessions"
        yield sources
        with Vertical(id="browse-right"):
            table = FitTable(COLUMNS, id="rows")
            table.border_title = "Memories"
            yield table
            detail = MemoryDetail(id="browse-detail")
            detail.border_title = "Memory"
            yield detail

    def on_mount(self) -> None:
        self.reload()

    # -- loading ---------------------------------------------------------------------------------
    def action_reload(self) -> None:
        self.reload()

    def reload(self, *, select_source: str | None = None, select_memory: str | None = None) -> None:
        """Read the sources and the current one's memories again."""
        if select_source:
            self.current = select_source
        self._select_after = select_memory
        memory = self.app.memory
        background(self, lambda: data.sources(memory), done=self._show_sources, group="sources")

    def _show_sources(self, sources: list[data.Source]) -> None:
        self.sources = sources
        if self.current not in {s.key for s in sources}:
            self.current = "all"
        widget = self.query_one("#sources", OptionList)
        widget.clear_options()
        widget.add_options(source_option(s) for s in sources)
        index = next(i for i, s in enumerate(sources) if s.key == self.current)
        widget.highlighted = index
        self._load_rows(self.current)

    def _load_rows(self, key: str) -> None:
        self.current = key
        memory = self.app.memory
        background(
            self,
            lambda: data.rows(memory, key),
            done=self._show_rows,
            group="rows",
            exclusive=True,
        )

    def _show_rows(self, rows: list[data.Row]) -> None:
        self.rows = rows
        target = 0
        if self._select_after:
            target = next((i for i, r in enumerate(rows) if r.item.id == self._select_after), 0)
            self._select_after = None
        table = self.query_one("#rows", FitTable)
        table.set_rows(
            [
                (
                    row.item.id,
                    (
                        str(row.number if row.number is not None else i),
                        row.item.kind,
                        when(row.item.when),
                        plain(one_line(row.item.content, 300)),
                    ),
                )
                for i, row in enumerate(rows, start=1)
            ],
            cursor=target,
        )
        title = self.source.title if self.source else "Memories"
        table.border_title = Text(f"{one_line(title, 60)} · {len(rows)}")
        detail = self.query_one(MemoryDetail)
        if rows:
            detail.show(rows[target].item.id, remember=False)
        else:
            detail.clear()

    @property
    def source(self) -> data.Source | None:
        """The browse entry shown now."""
        return next((s for s in self.sources if s.key == self.current), None)

    @property
    def session_id(self) -> str | None:
        """The session shown now, if the current entry is one."""
        return self.current[2:] if self.current.startswith("s:") else None

    @property
    def user_id(self) -> str | None:
        """The user scope shown now, if the current entry is one."""
        return self.current[2:] if self.current.startswith("u:") else None

    # -- events ----------------------------------------------------------------------------------
    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        key = event.option.id
        if event.option_list.id == "sources" and key and key != self.current:
            self._load_rows(key)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id == "rows" and event.row_key.value:
            self.query_one(MemoryDetail).show(event.row_key.value, remember=False)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.data_table.id == "rows":
            self.query_one(MemoryDetail).focus()


def source_option(source: data.Source) -> Option:
    """A browse entry: a mark for a session's state, its title and size."""
    text = Text()
    if source.session is not None:
        state = source.session.outcome or source.session.status
        mark, style = _MARKS.get(state, ("·", "dim"))
        text.append(f"{mark} ", style=style)
    elif source.key == "all":
        text.append("≡ ", style="bold")
    else:
        text.append("@ ", style="cyan")
    count = str(source.count)
    text.append(one_line(source.title, SOURCE_WIDTH - 3 - len(count)))
    text.append(f" {count}", style="dim")
    return Option(text, id=source.key)
