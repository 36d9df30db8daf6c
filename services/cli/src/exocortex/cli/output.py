"""Everything the CLI prints. Rich leaves colours out when the output is not a terminal (and
when ``NO_COLOR`` is set); ``--json`` output is plain JSON on stdout for scripts."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table
from rich.text import Text

stdout = Console(highlight=False)
ID_WIDTH = 26  # a ULID
SIDE_WIDTH = 24
stderr = Console(stderr=True, highlight=False)


def emit_json(data: Any) -> None:
    """Machine-readable output: exactly one JSON document on stdout, never wrapped."""
    print(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def error(detail: str, hint: str | None = None) -> None:
    # Soft wrap: the terminal folds long lines, so a message stays one line to copy or grep.
    stderr.print(Text.assemble(("error: ", "bold red"), detail), soft_wrap=True)
    if hint:
        stderr.print(Text.assemble(("  fix: ", "yellow"), hint), soft_wrap=True)


def note(message: str) -> None:
    stderr.print(Text(message, style="dim"), soft_wrap=True)


def preview(text: str, width: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def table(
    columns: Sequence[str], rows: Iterable[Sequence[Any]], *, title: str | None = None
) -> None:
    """A table as wide as the terminal: ids stay whole, the last column (usually text) takes
    the room left and folds, the others stay narrow."""
    out = Table(title=title, expand=False, header_style="bold", show_lines=False)
    for i, name in enumerate(columns):
        if i == len(columns) - 1:
            out.add_column(name, overflow="fold", min_width=min(20, stdout.width // 4), ratio=1)
        elif name.endswith("id"):
            out.add_column(name, no_wrap=True, min_width=ID_WIDTH)
        else:
            out.add_column(name, overflow="ellipsis", max_width=SIDE_WIDTH)
    for row in rows:
        out.add_row(*("" if v is None else str(v) for v in row))
    stdout.print(out)


def fields(pairs: Iterable[tuple[str, Any]]) -> None:
    """Label/value lines of one record."""
    out = Table.grid(padding=(0, 2))
    out.add_column(style="bold", no_wrap=True)
    out.add_column(overflow="fold")
    for label, value in pairs:
        if value not in (None, "", [], {}):
            shown = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
            out.add_row(label, shown)
    stdout.print(out)


def _rate(task: Task) -> float | None:
    """Items per second: rich's recent-window speed, else the average so far (a job whose steps
    take longer than the window would otherwise never show one)."""
    if task.finished_speed or task.speed:
        return task.finished_speed or task.speed
    elapsed = task.elapsed
    if task.completed and elapsed:
        return task.completed / elapsed
    return None


class RateColumn(ProgressColumn):
    """Items per second (or megabytes per second for a download)."""

    def __init__(self, unit: str) -> None:
        super().__init__()
        self.unit = unit

    def render(self, task: Task) -> Text:
        speed = _rate(task)
        if speed is None:
            return Text(f"– {self.unit}/s", style="cyan")
        if self.unit == "B":
            return Text(f"{speed / 1_000_000:.1f} MB/s", style="cyan")
        return Text(f"{speed:,.1f} {self.unit}/s", style="cyan")


class EtaColumn(ProgressColumn):
    """Time left at the current rate."""

    def render(self, task: Task) -> Text:
        speed = _rate(task)
        if task.finished or task.total is None or not speed:
            return Text("eta –" if not task.finished else "", style="yellow")
        seconds = int((task.total - task.completed) / speed)
        return Text(
            f"eta {seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}", style="yellow"
        )


def progress(unit: str = "memories") -> Progress:
    """A progress bar with count, rate, elapsed time and ETA, on stderr (stdout stays clean
    for --json)."""
    return Progress(
        SpinnerColumn(),
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn() if unit != "B" else TaskProgressColumn(),
        TaskProgressColumn() if unit != "B" else TextColumn(""),
        RateColumn(unit),
        TimeElapsedColumn(),
        EtaColumn(),
        console=stderr,
        # The rate and ETA follow the pace of the last minute.
        speed_estimate_period=60.0,
    )
