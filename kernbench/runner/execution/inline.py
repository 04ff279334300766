"""Cells computed one after the other in the driving process (``--jobs 1``).

A method from outside the package (a plug-in) runs in :mod:`.isolation`'s child even without a
time limit, so that nothing it does (``os._exit``, a crash) can end the run.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from kernbench.cells.records import CellRecord
from kernbench.runner.execution.cell_task import compute_cell
from kernbench.runner.execution.isolation import close_children
from kernbench.runner.plan.cells import Cell

__all__ = ["InlineExecutor"]


class InlineExecutor:
    """An :class:`~kernbench.runner.execution.executor.Executor` computing cells in this process.

    Parameters
    ----------
    timeout_s : float, optional
        Per-cell wall-clock limit (the cell then runs in a killable child).
    threads : int, optional
        Threads of each cell's kernels.
    in_flight : dict, optional
        The dict to keep the cells in flight in (an executor that delegates shares its own).
    """

    def __init__(
        self,
        *,
        timeout_s: float | None = None,
        threads: int | None = None,
        in_flight: dict[str, Cell] | None = None,
    ) -> None:
        self.timeout_s = timeout_s
        self.threads = threads
        self.in_flight: dict[str, Cell] = {} if in_flight is None else in_flight

    def __enter__(self) -> InlineExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def run(self, cells: Sequence[Cell]) -> Iterator[CellRecord]:
        """Yield each cell's record in turn."""
        if not cells:
            return
        try:
            for cell in cells:
                self.in_flight[cell.cell_id] = cell
                outside = cell.method.source is not None  # a plug-in: never in the driver
                yield compute_cell(cell, self.timeout_s, self.threads, isolate=outside)
                self.in_flight.pop(cell.cell_id, None)
        finally:
            close_children()  # this process's cell child: not needed after the run

    def arrived(self) -> int:
        """Always 0: the next record is computed only when asked for."""
        return 0
