"""When the server of a served store stops: say so, and reconnect or open the store here."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class ServerGoneScreen(ModalScreen[str | None]):
    """Asks what to do now that the server is gone: ``reconnect`` (a server runs again),
    ``open`` (the store in this process) or None (stay as is)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "choose('reconnect')", "Reconnect"),
        Binding("o", "choose('open')", "Open here"),
        Binding("escape", "choose(None)", "Not now"),
    ]

    def __init__(self, message: str) -> None:
        super().__init__()
        self._message = message

    def compose(self) -> ComposeResult:
        with Vertical(classes="form"):
            yield Static(Text("The server is gone", style="bold"), classes="form-title")
            yield Static(Text(self._message))
            with Horizontal(classes="form-buttons"):
                yield Button("Reconnect  r", id="reconnect")
                yield Button("Open the store here  o", variant="primary", id="open")
                yield Button("Not now  esc", id="cancel")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(None if event.button.id == "cancel" else event.button.id)

    def action_choose(self, choice: str | None) -> None:
        self.dismiss(choice)
