"""Search: a query, the pipeline stages toggled on and off, hits with scores and the why."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Input, Static

from localmem.retrieval.options import ATTRIBUTE_MODES, EXPANSIONS, MODES, RERANKERS
from localmem.types import SearchResult
from localmem_tui.common import FitTable, OpenMemory, background, one_line, plain, section
from localmem_tui.toggle import Cycle

if TYPE_CHECKING:
    from localmem.memory import Memory

#: the toggles: (search option, label, values, the pipeline stage serving it or None for always)
TOGGLES: list[tuple[str, str, tuple[str, ...], str | None]] = [
    ("mode", "mode", MODES, None),
    ("attributes", "attributes", ATTRIBUTE_MODES, "attributes"),
    ("expand", "expand", EXPANSIONS, "expand"),
    ("temporal", "temporal", ("off", "on"), "temporal"),
    ("links", "links", ("off", "on"), "links"),
    ("rerank", "rerank", RERANKERS, "rerank"),
    ("k", "k", ("10", "5", "20", "50"), None),
]
_BOOLEAN = {"temporal", "links"}
COLUMNS = [
    ("rank", "#", 3),
    ("relevance", "relev.", 6),  # the calibrated 0-1 relevance; the raw score is in the why
    ("kind", "kind", 8),
    ("content", "content", None),
]


def available_stages(memory: Memory) -> set[str]:
    """Names of the stages the open store's read pipeline has (its mechanisms add some)."""
    return set(memory.stage_names)


def defaults(memory: Memory) -> dict[str, str]:
    """The toggles' first values: the store's default pipeline (what ``search(q)`` runs)."""
    cfg = memory.config.search
    return {"mode": cfg.mode, "temporal": "on" if cfg.temporal else "off", "rerank": cfg.rerank}


def is_on(value: str) -> bool:
    """Whether a toggle's value asks for its stage."""
    return value not in ("off", "")


@dataclass
class SearchRun:
    """A search as the pane asked for it, and what came back."""

    query: str
    options: dict[str, Any]
    missing: list[str]  # stages toggled on that this build does not have
    result: SearchResult | None = None


def plan(query: str, toggles: dict[str, str], stages: set[str]) -> SearchRun:
    """The keyword options for ``Memory.search`` from the toggles.

    A stage switched on that the pipeline does not have is left out of the search and named in
    ``missing``, so the search still runs and the explanation says what was skipped.
    """
    options: dict[str, Any] = {}
    missing = []
    for option, _, _, stage in TOGGLES:
        value = toggles[option]
        if stage is not None and is_on(value) and stage not in stages:
            missing.append(option)
            continue
        if option == "k":
            options["k"] = int(value)
        elif option in _BOOLEAN:
            options[option] = value == "on"
        else:
            options[option] = value
    return SearchRun(query, options, missing)


def explanation(run: SearchRun) -> Text:
    """Every stage that ran (in, out, time, implementation, notes) and what did not."""
    out = Text()
    out.append_text(section("Stages"))
    result = run.result
    if result is None:
        return out
    for report in result.stages:
        out.append("\n")
        out.append(report.stage, style="bold")
        out.append(f" {report.implementation}", style="cyan")
        out.append(
            f"\n  {report.candidates_in} → {report.candidates_out} candidates, {report.ms:.1f} ms",
            style="dim",
        )
        if report.notes:
            notes = ", ".join(f"{k}={v}" for k, v in report.notes.items())
            out.append(f"\n  {notes}", style="dim")
    ran = {r.stage for r in result.stages}
    for option, _, _, stage in TOGGLES:
        asked = run.options.get(option) not in (None, False, "off", "")
        if stage is not None and asked and stage not in ran:
            out.append(f"\n{stage} did not run", style="yellow")
    for option in run.missing:
        out.append(f"\n{option}: not available in this build, searched without it", style="yellow")
    out.append(f"\ntotal {result.total_ms:.1f} ms", style="dim")
    if result.packed_tokens is not None:
        out.append(f", {result.packed_tokens} tokens", style="dim")
    return out


def evidence_text(hit) -> Text:
    """The per-stage scores of one hit, and its flags."""
    out = Text()
    out.append_text(section(f"Hit {hit.rank}"))
    relevance = "-" if hit.relevance is None else f"{hit.relevance:.2f}"
    out.append(f"  relevance {relevance}", style="bold")
    out.append(f"  (score {hit.score:.4f})", style="dim")
    out.append(f"\n{hit.memory.origin}", style="cyan")
    for name, value in hit.evidence.items():
        out.append(f"\n{name:<14}", style="dim")
        out.append(f"{value:.4f}" if isinstance(value, float) else str(value))
    if hit.flags:
        out.append(f"\nflags         {', '.join(hit.flags)}", style="italic")
    return out


class SearchPane(Vertical):
    """Type a query, toggle stages (F2-F8), Enter on a hit opens it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f2", "cycle('mode')", "Mode"),
        Binding("f3", "cycle('attributes')", "Attrs"),
        Binding("f4", "cycle('expand')", "Expand"),
        Binding("f5", "cycle('temporal')", "Temporal"),
        Binding("f6", "cycle('links')", "Links"),
        Binding("f7", "cycle('rerank')", "Rerank"),
        Binding("f8", "cycle('k')", "k", show=False),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.last: SearchRun | None = None
        self._stages: set[str] = set()

    def compose(self) -> ComposeResult:
        self._stages = available_stages(self.app.memory)
        yield Input(placeholder="Search memories… (Enter)", id="query")
        start = defaults(self.app.memory)
        with Horizontal(id="toggles"):
            for option, label, values, stage in TOGGLES:
                hint = f"stage: {stage}" if stage else "search option"
                if stage and stage not in self._stages:
                    hint += " (not in this build yet)"
                yield Cycle(
                    label, values, value=start.get(option), id=f"toggle-{option}", tooltip=hint
                )
        with Horizontal(id="search-body"):
            table = FitTable(COLUMNS, id="hits")
            table.border_title = "Hits"
            yield table
            with VerticalScroll(id="why") as why:
                why.border_title = "Why"
                yield Static(id="why-stages")
                yield Static(id="why-hit")

    def on_mount(self) -> None:
        for option, _, _, stage in TOGGLES:
            if stage and stage not in self._stages:
                self.query_one(f"#toggle-{option}", Cycle).unavailable = True

    def toggles(self) -> dict[str, str]:
        """The current value of every toggle."""
        return {option: self.query_one(f"#toggle-{option}", Cycle).value for option, *_ in TOGGLES}

    def action_cycle(self, option: str) -> None:
        """Step one toggle (the search runs again)."""
        self.query_one(f"#toggle-{option}", Cycle).action_step(1)

    def on_cycle_changed(self, event: Cycle.Changed) -> None:
        if self.query_one("#query", Input).value.strip():
            self.run_search()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "query":
            self.run_search()

    def run_search(self) -> None:
        """Search for the query with the toggled stages, in a worker."""
        query = self.query_one("#query", Input).value
        if not query.strip():
            self.app.notify("type something to search for", severity="warning")
            return
        run = plan(query, self.toggles(), self._stages)
        table = self.query_one("#hits", DataTable)
        table.loading = True
        memory = self.app.memory

        def job() -> SearchRun:
            run.result = memory.search(query, **run.options)
            return run

        background(
            self,
            job,
            done=self._show,
            after=lambda: setattr(table, "loading", False),
            group="search",
            exclusive=True,
        )

    def _show(self, run: SearchRun) -> None:
        self.last = run
        assert run.result is not None
        table = self.query_one("#hits", FitTable)
        table.set_rows(
            [
                (
                    hit.memory.id,
                    (
                        str(hit.rank),
                        "-" if hit.relevance is None else f"{hit.relevance:.2f}",
                        hit.memory.kind,
                        plain(one_line(hit.memory.content, 300)),
                    ),
                )
                for hit in run.result.hits
            ]
        )
        table.loading = False  # before focus: a loading widget does not take the focus
        table.border_title = f"Hits · {len(run.result.hits)}"
        self.query_one("#why-stages", Static).update(explanation(run))
        self.query_one("#why-hit", Static).update(
            evidence_text(run.result.hits[0]) if run.result.hits else plain("no hits", "dim")
        )
        if run.missing:
            self.app.notify(
                f"not in this build yet: {', '.join(run.missing)} (searched without)",
                severity="warning",
            )
        if run.result.hits:
            table.focus()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if self.last is None or self.last.result is None:
            return
        hits = self.last.result.hits
        if 0 <= event.cursor_row < len(hits):
            self.query_one("#why-hit", Static).update(evidence_text(hits[event.cursor_row]))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value:
            self.post_message(OpenMemory(event.row_key.value))
