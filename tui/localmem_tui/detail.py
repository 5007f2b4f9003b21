"""The detail of one memory: content, evolved context, attributes, links (to jump to), history."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from localmem_tui import data
from localmem_tui.common import background, labelled, one_line, plain, section, when


class MemoryDetail(VerticalScroll):
    """Shows one memory; Enter on a link jumps to the linked memory, Backspace goes back."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("backspace", "back", "Back", show=True)]

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.shown: data.Detail | None = None
        self._trail: list[str] = []  # memories shown before, for Backspace

    def compose(self) -> ComposeResult:
        yield Static(plain("Select a memory to see it here.", "dim"), classes="detail-head")
        yield Static(classes="detail-body")
        yield Static(section("Links"), classes="detail-heading")
        yield OptionList(classes="detail-links")
        yield Static(section("History"), classes="detail-heading")
        yield Static(classes="detail-history")

    def show(self, memory_id: str, *, remember: bool = True) -> None:
        """Load and show a memory (in a worker); ``remember`` keeps the current one for Back."""
        if remember and self.shown is not None and self.shown.item.id != memory_id:
            self._trail.append(self.shown.item.id)
        memory = self.app.memory
        background(
            self,
            lambda: data.detail(memory, memory_id),
            done=self._present,
            group="detail",
            exclusive=True,
        )

    def clear(self) -> None:
        """Show nothing (an empty list)."""
        self.shown = None
        self.query_one(".detail-head", Static).update(plain("Nothing to show.", "dim"))
        self.query_one(".detail-body", Static).update("")
        self.query_one(".detail-links", OptionList).clear_options()
        self.query_one(".detail-history", Static).update("")

    def action_back(self) -> None:
        """Go back to the memory shown before a jump."""
        if self._trail:
            self.show(self._trail.pop(), remember=False)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option_list.has_class("detail-links") and self.shown is not None:
            event.stop()
            other = self.shown.links[event.option_index].other if self.shown.links else None
            if other is not None:
                self.show(other.id)

    def _present(self, d: data.Detail) -> None:
        self.shown = d
        self.query_one(".detail-head", Static).update(head_text(d))
        self.query_one(".detail-body", Static).update(body_text(d))
        links = self.query_one(".detail-links", OptionList)
        links.clear_options()
        if d.links:
            links.add_options(link_option(link) for link in d.links)  # in the order of d.links
        else:
            links.add_option(Option(plain("no links", "dim"), disabled=True))
        self.query_one(".detail-history", Static).update(history_text(d))
        self.scroll_home(animate=False)


def head_text(d: data.Detail) -> Text:
    """Kind, place in its session, scope and times."""
    item = d.item
    title = Text()
    title.append(item.kind, style="bold")
    if d.thought:
        title.append(f" #{d.thought['number']}", style="bold")
    if d.session:
        title.append(" in ")
        title.append(d.session.title, style="italic")
        state = d.session.outcome or d.session.status
        title.append(f" ({state})", style="dim")
    if item.deleted:
        title.append("  DELETED", style="bold red")
    pairs = [("id", item.id), ("level", item.level)]
    scope = ", ".join(
        f"{name} {value}"
        for name, value in (
            ("user", item.user_id),
            ("agent", item.agent_id),
            ("session", item.session_id),
        )
        if value
    )
    if scope:
        pairs.append(("scope", scope))
    if item.event_time:
        pairs.append(("happened", when(item.event_time)))
    pairs.append(("stored", when(item.created_at)))
    if item.valid_to is not None:  # superseded: when it was true and what replaced it
        start = when(item.valid_from or item.when)
        pairs.append(("valid", f"{start} → {when(item.valid_to)}"))
        pairs.append(("superseded by", item.superseded_by or "?"))
    if item.updated_at != item.created_at:
        pairs.append(("updated", when(item.updated_at)))
    if d.thought and (d.thought.get("revises") or d.thought.get("branch_id")):
        extra = []
        if d.thought.get("revises"):
            extra.append(f"revises #{d.thought['revises']}")
        if d.thought.get("branch_id"):
            extra.append(f"branch {d.thought['branch_id']} from #{d.thought['branch_from']}")
        pairs.append(("thought", ", ".join(extra)))
    return Text("\n").join([title, labelled(pairs)])


def body_text(d: data.Detail) -> Text:
    """Content, evolved context, attributes and metadata."""
    item = d.item
    out = Text()
    out.append_text(section("Content"))
    out.append("\n")
    out.append(item.content or "(purged)")
    out.append("\n\n")
    out.append_text(section("Context"))
    evolved = sum(1 for h in d.history if h.event == "EVOLVE" and h.field == "context")
    if evolved:
        out.append(f"  evolved {evolved}×", style="dim")
    out.append("\n")
    out.append(item.context or "none yet", style="" if item.context else "dim")
    out.append("\n\n")
    out.append_text(section("Attributes"))
    out.append("\n")
    if d.attributes:
        by_axis: dict[str, list[data.Attribute]] = {}
        for attr in d.attributes:
            by_axis.setdefault(attr.axis, []).append(attr)
        for axis, values in by_axis.items():
            out.append(f"{axis:<10}", style="dim")
            out.append(", ".join(a.value for a in values))
            miners = {a.miner for a in values if a.miner}
            if miners:
                out.append(f"  ({', '.join(sorted(miners))})", style="dim")
            out.append("\n")
    else:
        out.append("none mined\n", style="dim")
    meta = data.metadata_text(item.metadata)
    if meta:
        out.append("\n")
        out.append_text(section("Metadata"))
        out.append("\n")
        out.append(meta)
    return out


def link_option(link: data.Link) -> Option:
    """One link as a selectable line: direction, kind, weight, the other memory's text."""
    arrow = "→" if link.direction == "out" else "←"
    text = Text(f"{arrow} {link.kind} {link.weight:.2f}  ", style="dim")
    if link.other is None:
        text.append("(memory gone)", style="dim")
        return Option(text, disabled=True)
    text.append(one_line(link.other.content or "(purged)", 70))
    if link.reason:
        text.append(f"  {one_line(link.reason, 40)}", style="italic dim")
    return Option(text)  # two links may lead to one memory: options are told apart by index


def history_text(d: data.Detail) -> Text:
    """Every change, oldest first: when, event, by whom, what."""
    out = Text()
    for i, event in enumerate(d.history):
        if i:
            out.append("\n")
        out.append(f"{when(event.at)}  ", style="dim")
        out.append(f"{event.event:<8}", style="bold")
        out.append(f"{event.actor:<10}", style="dim")
        out.append(data.history_value(event))
    return out


class MemoryScreen(ModalScreen[None]):
    """A memory on its own screen (opened from search results, procedures, ...)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss", "Close")]

    def __init__(self, memory_id: str) -> None:
        super().__init__()
        self.memory_id = memory_id

    def compose(self) -> ComposeResult:
        yield MemoryDetail(id="memory-screen-detail")
        yield Footer()

    def on_mount(self) -> None:
        detail = self.query_one(MemoryDetail)
        detail.border_title = "Memory"
        detail.show(self.memory_id)
        detail.focus()
