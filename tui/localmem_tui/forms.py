"""Small forms: add a memory, start a session, add a thought, complete a session.

A form does its write itself (in a worker) and closes only when it succeeded, so a refused input
shows as a notification and the text typed so far stays in the form.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, Select, Static, TextArea

from localmem.types import KINDS
from localmem_tui.common import background

if TYPE_CHECKING:
    from localmem.memory import Memory

Save = Callable[[dict[str, Any]], Any]


def available_jobs(memory: Memory) -> set[str]:
    """The write-time mechanisms (mine, evolve) the open store offers."""
    return set(memory.add_options)


def mechanisms_asked(values: dict[str, Any]) -> list[str]:
    """What an add with these form values runs besides storing ("facts inferred", ...)."""
    out = []
    if values.get("infer"):
        out.append("facts inferred")
    if values.get("mine") not in (None, "off"):
        out.append("attributes mined")
    if values.get("evolve"):
        out.append("neighbours evolved")
    return out


class FormScreen(ModalScreen[Any]):
    """A modal form: Ctrl+S (or the Save button) saves, Escape cancels."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "submit", "Save", priority=True),
        Binding("escape", "cancel", "Cancel"),
    ]
    heading = "Form"

    def __init__(self, save: Save, *, subtitle: str = "") -> None:
        super().__init__()
        self._save = save
        self._subtitle = subtitle
        self._busy = False

    def compose(self) -> ComposeResult:
        with Vertical(classes="form"):
            yield Static(Text(self.heading, style="bold"), classes="form-title")
            if self._subtitle:
                yield Static(Text(self._subtitle, style="italic"), classes="form-subtitle")
            yield from self.fields()
            with Horizontal(classes="form-buttons"):
                yield Button("Save  ctrl+s", variant="primary", id="save")
                yield Button("Cancel  esc", id="cancel")

    def fields(self) -> ComposeResult:
        """The inputs of this form."""
        yield from ()

    def values(self) -> dict[str, Any]:
        """What the inputs hold now."""
        return {}

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "save":
            self.action_submit()
        else:
            self.action_cancel()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_submit()

    def action_submit(self) -> None:
        """Save in a worker; close with the result when it worked."""
        if self._busy:
            return
        self._busy = True
        values = self.values()
        button = self.query_one("#save", Button)
        label = button.label
        button.label, button.disabled = "Saving…", True

        def unbusy() -> None:
            self._busy = False
            button.label, button.disabled = label, False

        background(self, lambda: self._save(values), done=self.dismiss, after=unbusy, group="form")

    def mechanism_fields(self) -> ComposeResult:
        """Switches for the write-time mechanisms (attribute mining, evolution) of this build."""
        handlers = available_jobs(self.app.memory)
        # on only where the store's config says an add does it (mining: attributes.mine_on_add;
        # evolution is asked per add, never by default): a plain note gets no surprise links
        config = self.app.memory.config
        defaults = {"mine": config.attributes.mine_on_add != "off", "evolve": False}
        with Horizontal(classes="form-row"):
            for job, label in (("mine", "Mine attributes"), ("evolve", "Evolve neighbours")):
                here = job in handlers
                yield Checkbox(
                    label if here else f"{label}: n/a",
                    value=here and defaults[job],
                    disabled=not here,
                    id=f"with-{job}",
                )

    def mechanism_values(self) -> dict[str, Any]:
        """The ``mine`` / ``evolve`` options of an add, for the mechanisms this build has."""
        handlers = available_jobs(self.app.memory)
        out: dict[str, Any] = {}
        if "mine" in handlers:
            out["mine"] = "inline" if self.query_one("#with-mine", Checkbox).value else "off"
        if "evolve" in handlers:
            out["evolve"] = self.query_one("#with-evolve", Checkbox).value
        return out

    def action_cancel(self) -> None:
        self.dismiss(None)


class AddMemoryForm(FormScreen):
    """A new memory: text, kind, optional user and context."""

    heading = "Add a memory"

    def __init__(self, save: Save, *, user_id: str | None = None) -> None:
        super().__init__(save)
        self._user_id = user_id

    def fields(self) -> ComposeResult:
        yield Label("Content")
        yield TextArea(id="content", soft_wrap=True)
        with Horizontal(classes="form-row"):
            with Vertical():
                yield Label("Kind")
                yield Select(((k, k) for k in KINDS), value="note", allow_blank=False, id="kind")
            with Vertical():
                yield Label("User (optional)")
                yield Input(value=self._user_id or "", id="user")
        yield Label("Context (optional)")
        yield Input(id="context")
        yield from self.mechanism_fields()
        yield Checkbox(
            "Infer: extract facts, skip repeats, supersede what changed",
            value=self.app.memory.infers(None),
            id="with-infer",
        )

    def on_select_changed(self, event: Select.Changed) -> None:
        # a chat message is inferred by default (as `localmem ingest` does); other kinds
        # follow the store's infer.on_add
        if event.select.id == "kind":
            infer = event.value == "message" or self.app.memory.infers(None)
            self.query_one("#with-infer", Checkbox).value = infer

    def values(self) -> dict[str, Any]:
        return {
            "content": self.query_one("#content", TextArea).text,
            "kind": self.query_one("#kind", Select).value,
            "user_id": self.query_one("#user", Input).value.strip() or None,
            "context": self.query_one("#context", Input).value.strip() or None,
            "infer": self.query_one("#with-infer", Checkbox).value,
            **self.mechanism_values(),
        }


class StartSessionForm(FormScreen):
    """A new session of thoughts: its title."""

    heading = "Start a session"

    def fields(self) -> ComposeResult:
        yield Label("Title (the task this session works on)")
        yield Input(id="title")

    def values(self) -> dict[str, Any]:
        return {"title": self.query_one("#title", Input).value}


class ThoughtForm(FormScreen):
    """The next thought of an open session, optionally revising an earlier one."""

    heading = "Add a thought"

    def fields(self) -> ComposeResult:
        yield Label("Thought")
        yield TextArea(id="content", soft_wrap=True)
        yield Label("Revises thought number (optional)")
        yield Input(id="revises", type="integer")
        yield from self.mechanism_fields()

    def on_select_changed(self, event: Select.Changed) -> None:
        # a chat message is inferred by default (as `localmem ingest` does); other kinds
        # follow the store's infer.on_add
        if event.select.id == "kind":
            infer = event.value == "message" or self.app.memory.infers(None)
            self.query_one("#with-infer", Checkbox).value = infer

    def values(self) -> dict[str, Any]:
        return {
            "content": self.query_one("#content", TextArea).text,
            "revises": thought_number(self.query_one("#revises", Input).value),
            **self.mechanism_values(),
        }


def thought_number(text: str) -> int | str | None:
    """A thought number typed in a box: None when empty, else an int, else the text as typed
    (the Memory API then refuses it with a clear error)."""
    text = text.strip()
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        return text


class CompleteSessionForm(FormScreen):
    """Close a session with its outcome; optionally abstract a procedure from it."""

    heading = "Complete the session"

    def __init__(
        self,
        save: Save,
        *,
        subtitle: str = "",
        can_abstract: bool = False,
        abstract: bool = True,
    ) -> None:
        super().__init__(save, subtitle=subtitle)
        self._can_abstract = can_abstract
        self._abstract = abstract

    def fields(self) -> ComposeResult:
        yield Label("Outcome")
        yield Select(
            (("success", "success"), ("failure", "failure")),
            value="success",
            allow_blank=False,
            id="outcome",
        )
        yield Label("Notes (optional)")
        yield Input(id="notes")
        label = "Abstract a procedure from it (when it succeeded)" + (
            "" if self._can_abstract else " (procedures are not in this build)"
        )
        can = self._can_abstract
        yield Checkbox(label, value=can and self._abstract, disabled=not can, id="abstract")

    def values(self) -> dict[str, Any]:
        return {
            "outcome": self.query_one("#outcome", Select).value,
            "notes": self.query_one("#notes", Input).value.strip() or None,
            "abstract": self.query_one("#abstract", Checkbox).value,
        }
