"""What the screens share: running store work in threads, messages, and text formatting."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from datetime import datetime
from typing import Any, TypeVar

from rich.text import Text
from textual.dom import DOMNode
from textual.message import Message
from textual.widgets import DataTable
from textual.worker import Worker, get_current_worker

T = TypeVar("T")


def background(
    node: DOMNode,
    job: Callable[[], T],
    *,
    done: Callable[[T], Any] | None = None,
    after: Callable[[], Any] | None = None,
    group: str = "default",
    exclusive: bool = False,
    description: str = "",
) -> Worker:
    """Run ``job`` in a thread worker and hand its result to ``done`` on the UI thread.

    Every store call goes through here, so the interface never waits on the store or a model.
    An exception does not crash the app: the app shows it as a notification (``report_error``).
    With ``exclusive``, an older job of the same group is cancelled and its result dropped.
    ``after`` runs on the UI thread in any case (success or error), e.g. to stop a spinner.
    """

    def body() -> None:
        worker = get_current_worker()
        try:
            result = job()
            if done is not None and not worker.is_cancelled:
                _call_ui(node, done, result)  # raises here what ``done`` raised
        except Exception as exc:  # shown to the person; the app keeps running
            _call_ui(node, node.app.report_error, exc)
        finally:
            if after is not None:
                _call_ui(node, after)

    return node.run_worker(
        body,
        thread=True,
        group=group,
        exclusive=exclusive,
        exit_on_error=False,
        description=description or group,
    )


def _call_ui(node: DOMNode, fn: Callable[..., Any], *args: Any) -> None:
    """Run ``fn`` on the UI thread; quietly skipped when the app has already closed."""
    with suppress(RuntimeError):  # the app stopped while the job ran: nobody to show it to
        node.app.call_from_thread(fn, *args)


class OpenMemory(Message):
    """Show one memory (a search hit, a linked memory, a procedure's source)."""

    def __init__(self, memory_id: str) -> None:
        super().__init__()
        self.memory_id = memory_id


def one_line(text: str, width: int) -> str:
    """``text`` on one line, cut to ``width`` characters with an ellipsis."""
    line = " ".join(text.split())
    return line if len(line) <= width else line[: max(0, width - 1)] + "…"


def when(value: datetime | None) -> str:
    """A timestamp for a person, in UTC to the minute (blank when unknown)."""
    return value.strftime("%Y-%m-%d %H:%M") if value else ""


def plain(text: str, style: str = "") -> Text:
    """User text as a renderable that is never read as markup."""
    return Text(text, style=style)


def section(title: str) -> Text:
    """A section heading inside a detail pane."""
    return Text(title, style="bold underline")


def labelled(pairs: list[tuple[str, str]]) -> Text:
    """``label value`` pairs on one line each, labels dimmed."""
    out = Text()
    for i, (label, value) in enumerate(pairs):
        if i:
            out.append("\n")
        out.append(f"{label:<10}", style="dim")
        out.append(value)
    return out


def score(value: float | None) -> str:
    """A score with four decimals (blank when absent)."""
    return "" if value is None else f"{value:.4f}"


Column = tuple[str, str, "int | None"]  # key, label, width (None: the rest of the row)


class FitTable(DataTable):
    """A row table whose one flexible column takes the width the others leave, so rows never
    scroll sideways; it re-lays its rows out whenever its own size changes."""

    def __init__(self, columns: list[Column], *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self.spec = columns
        self._rows: list[tuple[str, tuple[Any, ...]]] = []
        self._laid_out_for = -1

    def set_rows(self, rows: list[tuple[str, tuple[Any, ...]]], *, cursor: int = 0) -> None:
        """Show these (key, cells) rows with the cursor on row ``cursor``."""
        self._rows = rows
        self._lay_out(cursor)

    def on_mount(self) -> None:
        self._lay_out(0)

    def on_resize(self) -> None:
        if self.size.width != self._laid_out_for:
            self._lay_out(self.cursor_row)

    def _lay_out(self, cursor: int) -> None:
        self._laid_out_for = self.size.width
        self.clear(columns=True)
        padding = 2 * self.cell_padding
        fixed = sum((width or 0) + padding for _, _, width in self.spec)
        # room for a vertical scrollbar is always kept, so the layout does not depend on
        # whether one is showing at the moment
        room = self.content_region.width - self.styles.scrollbar_size_vertical
        flexible = max(12, room - fixed - padding) if room > 0 else 60
        for key, label, width in self.spec:
            self.add_column(label, key=key, width=width if width is not None else flexible)
        for key, cells in self._rows:
            self.add_row(*cells, key=key)
        if 0 <= cursor < len(self._rows):
            self.move_cursor(row=cursor, scroll=True)
