"""A one-line switch that cycles through its values: Enter, Space, arrows or a click."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget


class Cycle(Widget, can_focus=True):
    """Shows ``label value``; each press moves to the next value and posts :class:`Changed`."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,space,right", "step(1)", "Next value", show=False),
        Binding("left", "step(-1)", "Previous value", show=False),
    ]

    value: reactive[str] = reactive("", layout=True)
    #: the value is on but nothing in this build serves it (drawn with a warning mark)
    unavailable: reactive[bool] = reactive(False)

    class Changed(Message):
        """The value of a cycle changed."""

        def __init__(self, cycle: Cycle, value: str) -> None:
            super().__init__()
            self.cycle = cycle
            self.value = value

        @property
        def control(self) -> Cycle:
            return self.cycle

    def __init__(
        self,
        label: str,
        values: tuple[str, ...],
        *,
        value: str | None = None,
        id: str | None = None,
        tooltip: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.label = label
        self.values = values
        self.set_reactive(Cycle.value, value if value is not None else values[0])
        if tooltip:
            self.tooltip = tooltip

    def render(self) -> Text:
        text = Text(f"{self.label} ", style="dim")
        on = self.value not in ("off", "")
        style = "bold" if on else ""
        if on and self.unavailable:
            style = "bold yellow strike"
        text.append(self.value, style=style)
        return text

    def action_step(self, delta: int) -> None:
        """Move to the next (or previous) value."""
        index = self.values.index(self.value) if self.value in self.values else 0
        self.value = self.values[(index + delta) % len(self.values)]
        self.post_message(self.Changed(self, self.value))

    def on_click(self) -> None:
        self.action_step(1)
