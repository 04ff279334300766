"""The command line's tables: a run's plan, a store's progress, its failed cells, a method's
parameters, the shipped specs. Each takes its numbers from the library and only lays them out."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kernbench.cli.state import wide
from kernbench.errors import printable


def print_lines(console: Console, lines: Iterable[str]) -> None:
    """Plain text lines, control characters and markup shown as written."""
    for line in lines:
        console.print(escape(printable(line)), highlight=False)


def plan_table(
    console: Console,
    name: str,
    cells: Sequence[Any],
    statuses: Mapping[str, str],
    target: Path,
    fresh: bool,
) -> None:
    """``run --dry-run``: every planned cell, its status and whether this run computes it."""
    table = Table(title=f"{name}: {len(cells)} cells -> {target}", show_lines=False)
    for col in ("dataset", "realisation", "method", "estimator", "status", "action", "cell"):
        table.add_column(col)
    for c in cells:
        st = statuses[c.cell_id]
        action = "run" if fresh or st not in ("done", "skipped") else "skip"
        row = (c.dataset.label, str(c.realisation), c.method.label, c.method.estimator, st)
        table.add_row(*row, action, c.cell_id[:12])
    console.print(table)


def _seconds_or_dash(seconds: float | None, shown: bool = True) -> str:
    from kernbench.progress.status import format_seconds

    return format_seconds(seconds) if shown and seconds is not None else "-"


def progress_table(console: Console, p: Any, by: str) -> None:
    """``kernbench status``: the plan's cells by status and time, per method or dataset."""
    from kernbench.progress.lines import remaining_cell
    from kernbench.progress.status import COLUMNS, format_seconds

    groups = p.by_method if by == "method" else p.by_dataset
    shown = [c for c in COLUMNS if c in ("done", "failed", "pending") or p.counts[c]]
    table = Table(title=escape(printable(f"{p.name}: {p.directory}")), show_lines=False)
    table.add_column(by)
    for col in (*shown, "total", "cell time", "CPU time", "mean/cell", "est. remaining"):
        table.add_column(col, justify="right")
    for g in groups:
        table.add_row(
            escape(g.label),
            *(str(g.counts[c]) for c in shown),
            str(g.total),
            _seconds_or_dash(g.cell_seconds, bool(g.finished)),
            _seconds_or_dash(g.cpu_seconds),
            format_seconds(g.mean_seconds),
            remaining_cell(g.estimate_seconds, g.unestimated),
            end_section=g is groups[-1],
        )
    est = p.estimate
    some = est.cell_seconds if est.cells > est.unestimated else None
    table.add_row(
        "total",
        *(str(p.counts[c]) for c in shown),
        str(p.plan_size),
        _seconds_or_dash(p.cell_seconds, bool(p.finished)),
        _seconds_or_dash(p.cpu_seconds),
        "",
        remaining_cell(some, est.unestimated),
    )
    wide(console).print(table)


def failed_table(console: Console, p: Any) -> None:
    """``kernbench status --failed``: the failed and timed-out cells with their error."""
    if not p.failed:
        console.print("no failed or timed-out cells", highlight=False)
        return
    table = Table(title="failed and timed-out cells", show_lines=False)
    for col in ("dataset", "r", "method", "status", "attempts"):
        table.add_column(col)
    table.add_column("error", no_wrap=True, overflow="ellipsis")
    for f in p.failed:
        table.add_row(
            escape(f.dataset),
            str(f.realisation),
            escape(f.method),
            f.status,
            str(f.attempts),
            escape(printable(f.error)),
        )
    wide(console).print(table)


def specs_table(console: Console, found: Sequence[Any], where: Path | None) -> None:
    """``kernbench specs``: the shipped specs, their other names and titles."""
    table = Table(title=f"shipped specs ({where})", box=None, pad_edge=False)
    for col in ("name", "also", "title"):
        table.add_column(col, overflow="fold")
    for s in found:
        table.add_row(s.path.stem, ", ".join(s.aliases) or "-", escape(s.title))
    wide(console).print(table)


def method_table(console: Console, params: Sequence[Any]) -> None:
    """``kernbench methods NAME``: each parameter's default, allowed values and meaning."""
    table = Table(show_lines=False, box=None, pad_edge=False)
    for col in ("parameter", "default", "allowed", "meaning"):
        table.add_column(col, overflow="fold")
    for p in params:
        table.add_row(p.name, escape(repr(p.default)), escape(p.allowed), escape(p.meaning))
    wide(console).print(table)
