"""Status: which engine serves each model task, the embedder, the store's size and health."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Static

from localmem_tui.common import background, section

if TYPE_CHECKING:
    from localmem.memory import Memory


@dataclass
class StatusReport:
    """What the status pane shows, gathered in one worker call."""

    stats: dict[str, Any]
    checks: list[tuple[str, bool, str]]
    engines: list[dict[str, Any]]
    embedder: dict[str, Any]
    stages: list[tuple[str, str]] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)


def gather(memory: Memory) -> StatusReport:
    """Read the facts of the open store (never opens a second handle on it)."""
    status = memory.status()
    facts = status["check"]
    checks = [
        (
            "vector index",
            facts["vectors_in_step"],
            f"{facts['vectors_live']} vectors for {facts['live']} memories",
        ),
        (
            "lexical index",
            facts["lexical_in_step"],
            f"{facts['lexical_docs']} documents for {facts['live']} memories",
        ),
        ("migrations", True, ", ".join(facts["migrations"])),
    ]
    host = next(
        (r["engine_info"].get("host") for r in status["engines"] if r.get("engine_info")), None
    )
    if host:  # the model host: running, idle, or crashed / unhealthy with the reason
        state = str(host.get("state"))
        detail = state if not host.get("reason") else f"{state}: {host['reason']}"
        if host.get("extra_buffer_types") is False:
            detail += " (llama.cpp's extra buffer types off, after the CPU probe)"
        checks.append(("engine", state in ("idle", "running"), detail))
    failed = {kind: by.get("failed", 0) for kind, by in facts["jobs"].items()}
    if any(failed.values()):
        detail = ", ".join(f"{k}: {n}" for k, n in failed.items() if n)
        checks.append(("jobs", False, f"failed jobs ({detail}); localmem jobs retry"))
    return StatusReport(
        stats=status["stats"],
        checks=checks,
        engines=status["engines"],
        embedder=status["embedder"],
        stages=[tuple(stage) for stage in status["stages"]],
        notices=status["notices"],
    )


_SERVED_STYLE = {"model-free": "cyan", "unavailable": "yellow"}


def engine_groups(rows: list[dict[str, Any]]) -> list[tuple[str, list[str], str, bool]]:
    """Tasks grouped by what serves them: (served by, tasks, one line about it, all ok)."""
    groups: dict[str, tuple[list[str], str, bool]] = {}
    for row in rows:
        served = str(row.get("served_by", "?"))
        tasks, line, ok = groups.get(served, ([], str(row.get("engine", "")), True))
        tasks.append(str(row.get("task", "?")))
        groups[served] = (tasks, line, ok and bool(row.get("ok", True)))
    return [(served, tasks, line, ok) for served, (tasks, line, ok) in groups.items()]


#: the read stage each model task serves (the stage has a model-free implementation of its own)
TASK_STAGES = {"rerank": "rerank", "expand_query": "expand"}


def stage_fallbacks(tasks: list[str], stage_runs: dict[str, str]) -> str:
    """What the read stages of unavailable model tasks run instead ("rerank model-free"), so
    Status does not say "unavailable" of what the Search tab runs."""
    runs = [
        f"{TASK_STAGES[t]} {stage_runs[TASK_STAGES[t]]}"
        for t in tasks
        if TASK_STAGES.get(t) in stage_runs and stage_runs[TASK_STAGES[t]] != "off"
    ]
    return ", ".join(runs)


def render(report: StatusReport) -> list[Any]:
    """The status as renderables, one per section."""
    s = report.stats
    store = Table.grid(padding=(0, 2))
    store.add_column(style="dim")
    store.add_column()
    store.add_row("path", Text(s["path"]))
    store.add_row("on disk", f"{s['bytes_on_disk'] / 1e6:.1f} MB")
    kinds = ", ".join(f"{k} {n}" for k, n in s["by_kind"].items()) or "none"
    store.add_row("memories", f"{s['memories']} ({kinds}); {s['deleted']} deleted")
    store.add_row("sessions", str(s["sessions"]))
    store.add_row("links", str(s["links"]))
    store.add_row("jobs", f"{s['jobs_pending']} pending")

    health = Table.grid(padding=(0, 2))
    health.add_column()
    health.add_column(style="bold")
    health.add_column()
    for name, ok, detail in report.checks:
        mark = Text("ok", style="green") if ok else Text("BAD", style="bold red")
        health.add_row(mark, name, detail)
    for notice in report.notices:
        health.add_row(Text("fixed", style="yellow"), "repair", Text(notice))

    e = report.embedder
    emb = Table.grid(padding=(0, 2))
    emb.add_column(style="dim")
    emb.add_column()
    emb.add_row("model", f"{e.get('name')} ({e.get('dim')}-d, {e.get('backend')})")
    if e.get("path"):
        emb.add_row("from", Text(e["path"]))
    if e.get("loaded") is not None:
        emb.add_row("loaded", "yes" if e["loaded"] else "not yet (on the first search or add)")

    engines = Table.grid(padding=(0, 2))
    engines.add_column(no_wrap=True)
    engines.add_column()
    stage_runs = dict(report.stages)
    for served, tasks, line, ok in engine_groups(report.engines):
        style = "bold red" if not ok else _SERVED_STYLE.get(served, "green")
        engines.add_row(Text(served, style=style), Text(", ".join(tasks)))
        engines.add_row("", Text(line, style="dim"))
        if served == "unavailable":  # the model task is; its read stage may run without it
            runs = stage_fallbacks(tasks, stage_runs)
            if runs:
                engines.add_row("", Text(f"without a model, search uses: {runs}", style="cyan"))

    stages = Text(" → ".join(f"{name}[{label}]" for name, label in report.stages))
    return [
        section("Store"),
        store,
        Text(),
        section("Health"),
        health,
        Text(),
        section("Embedder"),
        emb,
        Text(),
        section("Model tasks"),
        engines,
        Text(),
        section("Read pipeline"),
        stages,
    ]


class StatusPane(VerticalScroll):
    """The status of the store and the models; r reloads it."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("r", "reload", "Reload")]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.report: StatusReport | None = None

    def compose(self) -> ComposeResult:
        yield Static(Text("Reading the store…", style="dim"), id="status-body")

    def on_mount(self) -> None:
        self.reload()

    def action_reload(self) -> None:
        self.reload()

    def reload(self) -> None:
        """Gather the status again (in a worker)."""
        memory = self.app.memory
        background(self, lambda: gather(memory), done=self._show, group="status", exclusive=True)

    def _show(self, report: StatusReport) -> None:
        from rich.console import Group

        self.report = report
        self.query_one("#status-body", Static).update(Group(*render(report)))
