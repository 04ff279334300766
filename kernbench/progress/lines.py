"""Progress and time estimates as the sentences the command line prints.

Every line here is plain text (no markup): ``kernbench run``'s closing summary, the estimate of
a plan's time (``validate``, ``run --dry-run``) and the lines under ``kernbench status``'s table.
The numbers come from :mod:`kernbench.progress.status` (a store's done cells) and
:mod:`kernbench.progress.cost` (the cost model); the command line only prints them.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kernbench.progress.status import Progress, format_seconds, format_time

FAILED_SHOWN = 20  # unfinished cells listed after a run; the rest are counted


def run_summary_lines(name: str, summary: Any) -> tuple[list[str], list[str]]:
    """What a finished ``kernbench run`` says: its notes and summary line, and its failures.

    Parameters
    ----------
    name : str
        The spec's name.
    summary : RunSummary
        What :func:`kernbench.runner.run.run_experiment` returned.

    Returns
    -------
    (lines, failed) : tuple of list of str
        The notes, the summary line and the warnings; then the unfinished cells (empty when every
        cell finished), to be printed under a heading that counts them.
    """
    lines = [f"note: {note}" for note in summary.notes]
    counts = ", ".join(f"{n} {k}" for k, n in sorted(summary.counts.items())) or "nothing to do"
    reused = f", {summary.reused} reused from --reuse" if summary.reused else ""
    cpu = f" (cells: {summary.cpu_seconds:.1f} s of CPU)" if summary.cpu_seconds else ""
    lines.append(
        f"{name}: {summary.planned} cells planned, {summary.skipped_done} already finished"
        f"{reused}; this run: {counts} in {summary.seconds:.1f} s{cpu} -> {summary.out_dir}"
    )
    for (category, message), n in summary.warned.most_common(3):
        lines.append(f"note: {n} cell(s) warned {category}: {message}")
    if summary.warned:
        lines.append(
            f"note: each cell's warnings are in {summary.out_dir}/cells.csv (column 'warnings')"
        )
    failed = [
        f"  {dataset} / r={r} / {method}: {message}"
        for dataset, r, method, message in summary.failed[:FAILED_SHOWN]
    ]
    if len(summary.failed) > FAILED_SHOWN:
        more = len(summary.failed) - FAILED_SHOWN
        failed.append(f"  ... and {more} more (see {summary.out_dir}/cells.csv)")
    return lines, failed


def plan_counts_line(statuses: Mapping[str, str]) -> str:
    """``3 done, 5 pending``: a plan's cells counted by status."""
    counts: dict[str, int] = {}
    for st in statuses.values():
        counts[st] = counts.get(st, 0) + 1
    return ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))


def to_run(cells: Sequence[Any], statuses: Mapping[str, str], fresh: bool) -> list[Any]:
    """The cells a run would compute: all with ``--fresh``, else those not finished."""
    return [c for c in cells if fresh or statuses[c.cell_id] not in ("done", "skipped")]


def plan_estimate_lines(
    cells: Sequence[Any], statuses: Mapping[str, str], target: Path, fresh: bool, jobs: int
) -> list[str]:
    """The time the cells to run will take: from the store's done cells in ``target`` where they
    have timed peers (a pilot run's), else from the cost model (:mod:`kernbench.progress.cost`)."""
    from kernbench.store import STORE_FILE, Store

    running = to_run(cells, statuses, fresh)
    if not running:
        return []
    rows: list = []
    if (target / STORE_FILE).exists():
        with Store(target) as store:
            rows = store.summaries()
    return estimate_lines(running, rows, jobs)


def estimate_lines(cells: Sequence[Any], rows: Sequence[Any], jobs: int) -> list[str]:
    """What ``cells`` will take, as an estimate: cell time, wall time at ``--jobs``, idle and
    under this machine's load, and where the numbers come from.

    Parameters
    ----------
    cells : sequence of Cell
        The planned cells to run.
    rows : sequence of dict
        The store's cell summaries (``Store.summaries()``); empty for the cost model alone.
    jobs : int
        Cells at once (``--jobs``; -1: all cores).
    """
    from kernbench.progress.cost import plan_cost

    cost = plan_cost(cells, rows, jobs=jobs)
    model = cost.cells - cost.from_store
    source = (
        f"{cost.from_store} from the store's done cells, {model} from the cost model"
        if cost.from_store
        else "from the cost model, calibrated on recorded cells"
    )
    lines = [
        f"estimate, not a measurement: the {cost.cells} cell(s) to run need ≈ "
        f"{format_seconds(cost.cpu_seconds)} of CPU ({source}); ≈ "
        f"{format_seconds(cost.wall_seconds)} at --jobs {jobs} on an idle machine "
        f"({cost.workers} at once, start-up included)"
    ]
    if cost.loaded_wall_seconds > 1.2 * cost.wall_seconds:  # the cores are busy with other work
        lines.append(
            f"  ≈ {format_seconds(cost.loaded_wall_seconds)} at this machine's load "
            f"({cost.load:.1f} on {cost.cores} cores)"
        )
    if cost.uncalibrated:
        lines.append(
            f"  no recorded cells of {', '.join(cost.uncalibrated)}: costed as a median "
            "method (a pilot run, e.g. --realisations 1, times them)"
        )
    return lines


def remaining_cell(seconds: float | None, unestimated: int) -> str:
    """The ``est. remaining`` column of ``kernbench status``'s table."""
    if seconds is None:
        return "no estimate" if unestimated else "-"
    return format_seconds(seconds) + (f" (+{unestimated} unknown)" if unestimated else "")


def status_lines(p: Progress) -> list[str]:
    """The lines under ``kernbench status``'s table: totals, times, the estimate, notes."""
    lines = [totals_line(p)]
    if p.finished:
        ago = format_seconds(max(0.0, time.time() - p.last_finish))
        lines.append(
            f"cell time of finished cells: {format_seconds(p.cell_seconds)}; run span: "
            f"{format_seconds(p.wall_seconds)} ({format_time(p.first_start)} to "
            f"{format_time(p.last_finish)}; last cell finished {ago} ago)"
        )
        if p.cpu_seconds is not None:
            of = "" if p.cpu_cells == p.finished else f" (the {p.cpu_cells} cells that record it)"
            lines.append(f"CPU time of finished cells: {format_seconds(p.cpu_seconds)}{of}")
    lines += remaining_lines(p)
    lines += [f"note: {n}" for n in p.notes]
    return lines


def totals_line(p: Progress) -> str:
    """``12 of 40 cells finished (30.0 %), 1 failed, 27 pending``."""
    parts = [f"{p.counts['failed']} failed"]
    parts += [
        f"{p.counts[s]} {w}"
        for s, w in (("timeout", "timed out"), ("interrupted", "interrupted"))
        if p.counts[s]
    ]
    parts.append(f"{p.counts['pending']} pending")
    return f"{p.finished} of {p.plan_size} cells finished ({p.percent:.1f} %), " + ", ".join(parts)


def remaining_lines(p: Progress) -> list[str]:
    """The estimate of what remains: the run going on first, then the whole spec."""
    est = p.estimate
    run = p.running
    asked = running_lines(p)  # what the run going on was asked to do, first
    if run and run["fresh"] and run["left"]:  # finished cells being computed again
        return [
            f"a --fresh run (pid {run['pid']}) is computing {run['cells']} cell(s) again: "
            f"{run['left']} of them not yet recorded",
            *asked,
        ]
    if asked:
        asked.append("the whole spec, this run's cells included:")
    if not est.cells:
        return [*asked, "nothing remains to run"]
    methods = ", ".join(est.unestimated_methods)
    why = f"no done cell yet of {methods}" if methods else "their methods are unknown, see the note"
    if est.cells == est.unestimated:
        return [*asked, f"estimate: none possible yet ({why})"]
    lines = [
        *asked,
        f"estimate, not a measurement: {est.cells - est.unestimated} of {est.cells} unfinished "
        f"cell(s) need ≈ {format_seconds(est.cell_seconds)} of cell time, "
        f"≈ {format_seconds(est.wall_seconds)} at --jobs {est.jobs}",
        f"  ({est.by_dataset_mean} from the mean time of the same method and dataset, "
        f"{est.by_scaled} from the method's times scaled to the dataset by other methods' "
        f"cells on it, {est.by_method_mean} from the method's mean over other datasets)",
    ]
    if est.unestimated:
        lines.append(f"  no estimate for {est.unestimated} cell(s): {why}")
    return lines


def running_lines(p: Progress) -> list[str]:
    """The run going on: how many of the cells it was asked for (its --realisations, --only)
    are left, and what they need (an estimate), before the whole spec's figures."""
    run, est = p.running, p.run_estimate
    if run is None or est is None:
        return []
    head = (
        f"the run going on (pid {run['pid']}) was asked for {run['cells']} cell(s): "
        f"{est.cells} not yet recorded"
    )
    if not est.cells or est.cells == est.unestimated:
        return [head + ("" if not est.cells else "; no estimate yet (no done cell of them)")]
    some = "" if not est.unestimated else f" ({est.cells - est.unestimated} of them)"
    return [
        f"{head}; estimate, not a measurement{some}: ≈ {format_seconds(est.cell_seconds)} of "
        f"cell time, ≈ {format_seconds(est.wall_seconds)} at --jobs {est.jobs}"
    ]
