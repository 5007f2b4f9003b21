"""Run: ingest a file and run the registered experiments, in workers, with progress bars."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Input, Label, Log, ProgressBar, Select, Static

from localmem.config import localmem_home
from localmem.errors import InputError
from localmem_tui.common import background

if TYPE_CHECKING:
    from lab.command import Experiment

    from localmem.ingest import IngestReport
    from localmem.memory import Memory

ProgressFn = Callable[[int, int], None]


def ingest(
    memory: Memory,
    path: str,
    *,
    user_id: str | None,
    chunker: str = "paragraph",
    progress: ProgressFn,
) -> IngestReport:
    """Ingest one file into the open store (JSONL lines as memories, documents as chunks)."""
    from localmem.ingest import ingest_file

    if not path.strip():
        raise InputError("name a file to ingest")
    defaults = {"user_id": user_id} if user_id else {}
    return ingest_file(
        memory, Path(path.strip()).expanduser(), chunker=chunker, progress=progress, **defaults
    )


def chunker_names() -> list[str]:
    """The chunking strategies of this build (paragraph first: the default)."""
    from localmem.ingest import CHUNKERS

    return sorted(CHUNKERS, key=lambda name: (name != "paragraph", name))


def lab_experiments() -> dict[str, Experiment]:
    """The lab's experiments, when localmem runs from a checkout (``scripts/lab`` beside the
    package); none otherwise: the lab is a research tool that is not installed with localmem."""
    try:
        from lab.registry import EXPERIMENTS
    except ImportError:
        import localmem

        scripts = Path(localmem.__file__).resolve().parents[1] / "scripts"
        if not (scripts / "lab" / "registry.py").is_file():
            return {}
        sys.path.append(str(scripts))  # after everything installed: it shadows nothing
        try:
            from lab.registry import EXPERIMENTS
        except ImportError:
            return {}
    return EXPERIMENTS


def experiment_names() -> list[str]:
    """The experiments this app can run (the lab's, from a checkout)."""
    return list(lab_experiments())


class _Parser(argparse.ArgumentParser):
    """An argument parser that raises instead of exiting the process."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise InputError(message)

    def exit(self, status: int = 0, message: str | None = None) -> None:  # type: ignore[override]
        raise InputError(message or f"arguments ended the command (status {status})")


def experiment_args(name: str, line: str, *, store_in_use: Path) -> argparse.Namespace:
    """The arguments of experiment ``name`` from a command-line string.

    An experiment gets its own store (``$LOCALMEM_HOME/experiments/NAME`` unless ``--store``
    names one): the store open in the app is locked by it.
    """
    from localmem.console import store_options

    experiments = lab_experiments()
    if name not in experiments:
        known = ", ".join(experiments) or "none: experiments run from a checkout of localmem"
        raise InputError(f"no experiment {name!r}; known: {known}")
    parser = _Parser(prog=f"experiment {name}", parents=[store_options()])
    experiments[name].configure(parser)
    try:
        args = parser.parse_args(shlex.split(line))
    except ValueError as exc:  # unbalanced quotes
        raise InputError(f"cannot read the arguments: {exc}") from None
    if args.store is None:
        args.store = str(localmem_home() / "experiments" / name)
    if Path(args.store).expanduser().resolve() == store_in_use.resolve():
        raise InputError(
            "an experiment cannot use the store open in this app; name another --store"
        )
    args.func = experiments[name].run
    return args


@contextmanager
def progress_to(listener: Callable[[str, int, int], None]) -> Iterator[None]:
    """Send every CLI progress update to ``listener`` while the block runs."""
    from localmem.console import PROGRESS_LISTENERS

    PROGRESS_LISTENERS.append(listener)
    try:
        yield
    finally:
        PROGRESS_LISTENERS.remove(listener)


class RunPane(VerticalScroll):
    """Ingestion of a file, and the experiments; the interface stays usable while they run."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.last_ingest: IngestReport | None = None
        self.last_exit: int | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="ingest-box", classes="box") as box:
            box.border_title = "Ingest a file"
            yield Label("A text or markdown document (chunked) or JSON lines (one memory each)")
            with Horizontal(classes="form-row"):
                yield Input(placeholder="path of the file", id="ingest-path")
                yield Input(placeholder="user (optional)", id="ingest-user", classes="narrow")
                yield Select(
                    ((n, n) for n in chunker_names()),
                    value="paragraph",
                    allow_blank=False,
                    id="ingest-chunker",
                    tooltip="how a document is cut into chunks",
                )
                yield Button("Ingest", id="ingest-go", variant="primary")
            yield ProgressBar(id="ingest-progress", show_eta=False, classes="idle")
            yield Static(id="ingest-result")
        with Vertical(id="experiment-box", classes="box") as box:
            box.border_title = "Experiments"
            names = experiment_names()
            with Horizontal(classes="form-row"):
                yield Select(
                    ((n, n) for n in names),
                    prompt="experiment" if names else "none in this build",
                    id="experiment-name",
                    disabled=not names,
                )
                yield Input(placeholder="arguments (optional)", id="experiment-args")
                yield Button("Run", id="experiment-go", variant="primary", disabled=not names)
            yield ProgressBar(id="experiment-progress", show_eta=False, classes="idle")
            yield Log(id="experiment-log", max_lines=2000)

    # -- ingestion -------------------------------------------------------------------------------
    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if event.input.id in ("ingest-path", "ingest-user"):
            self.start_ingest()
        elif event.input.id == "experiment-args":
            self.start_experiment()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "ingest-go":
            self.start_ingest()
        elif event.button.id == "experiment-go":
            self.start_experiment()

    def start_ingest(self) -> None:
        """Ingest the named file in a worker, moving the bar as batches are stored."""
        path = self.query_one("#ingest-path", Input).value
        user = self.query_one("#ingest-user", Input).value.strip() or None
        chunker = str(self.query_one("#ingest-chunker", Select).value)
        bar = self.query_one("#ingest-progress", ProgressBar)
        bar.update(total=None, progress=0)
        bar.remove_class("idle")
        self.query_one("#ingest-result", Static).update(Text(f"ingesting {path}…", style="dim"))
        button = self.query_one("#ingest-go", Button)
        button.disabled = True
        memory = self.app.memory
        app = self.app

        def progress(done: int, total: int) -> None:
            app.call_from_thread(bar.update, total=total, progress=done)

        background(
            self,
            lambda: ingest(memory, path, user_id=user, chunker=chunker, progress=progress),
            done=self._ingested,
            after=lambda: setattr(button, "disabled", False),
            group="ingest",
        )

    def _ingested(self, report: IngestReport) -> None:
        self.last_ingest = report
        text = Text(f"{report.path}: ", style="bold")
        text.append(f"{report.memories} memories from {report.documents} document(s)")
        if report.skipped:
            text.append(f", {report.skipped} line(s) skipped", style="yellow")
            for error in (report.errors or [])[:5]:
                text.append(f"\n  {error}", style="dim")
        self.query_one("#ingest-result", Static).update(text)
        self.app.notify(f"ingested {report.memories} memories", title="Ingest")
        self.app.store_changed()

    # -- experiments -----------------------------------------------------------------------------
    def start_experiment(self) -> None:
        """Run the chosen experiment in a worker; its output goes to the log below."""
        select = self.query_one("#experiment-name", Select)
        if select.is_blank():
            self.app.notify("choose an experiment first", severity="warning")
            return
        name = str(select.value)
        line = self.query_one("#experiment-args", Input).value
        bar = self.query_one("#experiment-progress", ProgressBar)
        bar.update(total=None, progress=0)
        bar.remove_class("idle")
        log = self.query_one("#experiment-log", Log)
        log.clear()
        log.write(f"$ python scripts/experiment.py {name} {line}".rstrip() + "\n")
        button = self.query_one("#experiment-go", Button)
        button.disabled = True
        app = self.app
        store_path = self.app.memory.path

        def listener(label: str, done: int, total: int) -> None:
            app.call_from_thread(bar.update, total=total, progress=done)

        def job() -> int:
            args = experiment_args(name, line, store_in_use=store_path)
            with progress_to(listener):
                return int(args.func(args) or 0)

        self.begin_capture_print()

        def finish() -> None:
            self.end_capture_print()
            button.disabled = False

        background(self, job, done=self._experiment_done, after=finish, group="experiment")

    def _experiment_done(self, code: int) -> None:
        self.last_exit = code
        bar = self.query_one("#experiment-progress", ProgressBar)
        if bar.total is None:  # the experiment reported no progress of its own: it is done
            bar.update(total=1, progress=1)
        log = self.query_one("#experiment-log", Log)
        log.write(f"\n[exit {code}]\n")
        severity = "information" if code == 0 else "warning"
        self.app.notify(f"experiment finished with exit code {code}", severity=severity)

    def on_print(self, event: events.Print) -> None:
        # Log captures print while an experiment runs; terminal progress bars are redrawn with
        # \r and would flood it, the bar above shows them instead
        if "\r" not in event.text:
            self.query_one("#experiment-log", Log).write(event.text)
