"""What a worker runs for one cell: its kernels' thread default, and its time limit in a child.

Every executor computes a cell through :func:`compute_cell`; the local pool's workers first note
which process computes it (:func:`compute_marked`, see :mod:`.lost_workers`).
"""

from __future__ import annotations

import time
import traceback

from kernbench.cells.records import CellRecord
from kernbench.runner.cell.compute import cell_record, run_cell
from kernbench.runner.execution.isolation import CellTimeout, ChildDied, call_with_timeout
from kernbench.runner.execution.lost_workers import note_pid
from kernbench.runner.plan.cells import Cell
from kernbench.solvers.threads import thread_default

__all__ = ["CELL_MODULES", "compute_cell", "compute_marked"]

#: what a worker imports before its first cell (the methods import scikit-learn and SciPy)
CELL_MODULES = ("kernbench.datasets", "kernbench.methods", "kernbench.runner.cell.select")


def _run_cell_threaded(cell: Cell, threads: int | None) -> CellRecord:
    with thread_default(threads):
        return run_cell(cell)


def compute_cell(
    cell: Cell,
    timeout_s: float | None = None,
    threads: int | None = None,
    *,
    isolate: bool = False,
) -> CellRecord:
    """Compute one cell, in a killable child process when ``timeout_s`` is set or ``isolate``
    (no limit then), with ``threads`` as its kernels' thread default (None: leave the process
    default).

    Returns a ``timeout`` record when the limit passes and a ``failed`` one when the child dies
    without a result (a method that called ``os._exit`` too); otherwise whatever
    :func:`kernbench.runner.cell.compute.run_cell` returns.
    """
    if timeout_s is None and not isolate:
        return _run_cell_threaded(cell, threads)
    started = time.time()
    try:
        return call_with_timeout(
            _run_cell_threaded, (cell, threads), timeout_s, preload=CELL_MODULES
        )
    except (CellTimeout, ChildDied) as exc:
        return cell_record(
            cell,
            "timeout" if isinstance(exc, CellTimeout) else "failed",
            error=f"{type(exc).__name__}: {exc}",
            traceback=traceback.format_exc() if isinstance(exc, ChildDied) else None,
            result={"timeout_s": timeout_s},
            started_at=started,
        )


def compute_marked(
    cell: Cell, timeout_s: float | None, threads: int | None, marks: str
) -> CellRecord:
    """:func:`compute_cell` on a worker that first notes which process computes the cell."""
    note_pid(marks, cell.cell_id)
    return compute_cell(cell, timeout_s, threads)
