"""The help screen: every key of every pane, read from the bindings themselves."""

from __future__ import annotations

from typing import ClassVar

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

_INTRO = (
    "localmem keeps an agent's memories in a local store. Everything here works with the "
    "keyboard and with the mouse (click tabs, rows, toggles and buttons). Long work (search with "
    "a model load, ingestion, experiments) runs in the background; errors appear as "
    "notifications in the corner."
)

_EXTRA = [
    ("Lists", "↑ ↓ move, Enter opens, Tab / Shift+Tab move between panels"),
    ("Links", "in a memory's detail, Enter on a link jumps to it; Backspace goes back"),
    ("Search", "Esc in the query box moves to the hits; toggles also step with Enter / Space"),
    ("Forms", "Ctrl+S saves, Esc cancels; a refused input keeps the form open"),
]


def key_table(title: str, bindings: list[Binding]) -> Table:
    """A two-column table of keys and what they do."""
    table = Table(title=title, title_style="bold", title_justify="left", box=None, padding=(0, 2))
    table.add_column("key", style="bold cyan", no_wrap=True)
    table.add_column("does")
    for b in bindings:
        if not b.description:
            continue
        keys = ", ".join(_pretty(k) for k in b.key.split(","))
        table.add_row(keys, b.description)
    return table


def _pretty(key: str) -> str:
    return {"question_mark": "?", "slash": "/", "space": "Space"}.get(key, key)


class HelpScreen(ModalScreen[None]):
    """Keys of the app and of each pane; Esc or ? closes it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark,q", "dismiss", "Close"),
    ]

    def __init__(self, sections: list[tuple[str, list[Binding]]]) -> None:
        super().__init__()
        self.sections = sections

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help") as box:
            box.border_title = "Help"
            yield Static(id="help-body")

    def on_mount(self) -> None:
        parts: list = [Text(_INTRO), Text()]
        for title, bindings in self.sections:
            parts += [key_table(title, bindings), Text()]
        extra = Table(title="Everywhere", title_style="bold", title_justify="left", box=None)
        extra.add_column(style="bold cyan", no_wrap=True)
        extra.add_column()
        for name, what in _EXTRA:
            extra.add_row(name, what)
        parts.append(extra)
        self.query_one("#help-body", Static).update(Group(*parts))
