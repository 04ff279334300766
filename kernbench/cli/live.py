"""``kernbench run``'s live progress: a bar on a terminal, timed lines without one (the clock
and the lines are :mod:`kernbench.progress.live`'s)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from kernbench.errors import printable
from kernbench.progress.live import MovingEtaColumn, ProgressLines, RunClock, progress_mode
from kernbench.runner.options import RunHooks


def _bar(err: Console, shown: bool) -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("done {task.fields[done]} · failed {task.fields[failed]}"),
        TimeElapsedColumn(),
        MovingEtaColumn(),
        console=err,
        transient=False,
        disable=not shown,
    )


def with_progress(err: Console, name: str, run: Callable[[RunHooks], Any]) -> Any:
    """``run(hooks)`` with the progress of its cells shown on ``err`` (the hooks report each
    start, cell and data download); what ``run`` returns."""
    mode, every = progress_mode(err.is_terminal)
    clock = RunClock()

    def say(line: str) -> None:
        err.print(escape(printable(line)), highlight=False)

    with contextlib.ExitStack() as stack:
        progress = stack.enter_context(_bar(err, mode == "bar"))
        task = progress.add_task(name, total=None, done=0, failed=0, clock=clock)
        if mode == "lines":
            stack.enter_context(ProgressLines(clock, name, say, every))

        def on_data(line: str) -> None:  # a dataset about to be downloaded
            progress.update(task, description=f"{name}: fetching data")
            say(line)

        def on_start(n: int) -> None:
            clock.begin(n)
            progress.update(task, total=n, description=name)
            if mode == "lines" and n:  # nothing to run: the summary line says so
                say(clock.line(name))

        def on_cell(rec: Any) -> None:
            clock.finished(rec.status in ("done", "skipped"))
            progress.update(task, advance=1, done=clock.done, failed=clock.failed)

        return run(RunHooks(on_cell=on_cell, on_start=on_start, on_data=on_data))
