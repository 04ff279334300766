"""Cells on local loky workers through joblib, one cell per task.

A worker that dies (the OOM killer, a kill from outside) breaks loky's whole pool: the cell it
was computing is recorded as ``failed`` and the others run again on a new pool (see
:mod:`.lost_workers`). A cell in flight at two losses that could not be attributed is recorded as
``failed`` too. A wave of one cell (or a machine of one core) runs inline instead.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from kernbench.cells.records import CellRecord
from kernbench.runner.cell.compute import cell_record
from kernbench.runner.execution.cell_task import compute_marked
from kernbench.runner.execution.executor import worker_count
from kernbench.runner.execution.inline import InlineExecutor
from kernbench.runner.execution.local_workers import local_parallel
from kernbench.runner.execution.lost_workers import DeathWatch, worker_lost_errors
from kernbench.runner.lifecycle.stop import raise_if_stopping
from kernbench.runner.plan.cells import Cell

if TYPE_CHECKING:
    from kernbench.runner.execution.early_workers import EarlyWorkers

__all__ = ["LocalPoolExecutor"]


class LocalPoolExecutor:
    """An :class:`~kernbench.runner.execution.executor.Executor` on loky's reusable workers.

    Parameters
    ----------
    jobs : int
        joblib ``n_jobs`` (-1 all cores; at most the cores and the cells of a wave, see
        :func:`~kernbench.runner.execution.executor.worker_count`; one worker runs inline).
    timeout_s : float, optional
        Per-cell wall-clock limit.
    threads : int, optional
        Threads of each cell's kernels.
    early : EarlyWorkers, optional
        Workers started while the spec was read (:mod:`.early_workers`): the pool waits for
        them, and reuses them.
    """

    def __init__(
        self,
        *,
        jobs: int = -1,
        timeout_s: float | None = None,
        threads: int | None = None,
        early: EarlyWorkers | None = None,
    ) -> None:
        self.jobs = jobs
        self.timeout_s = timeout_s
        self.threads = threads
        self.early = early
        self.in_flight: dict[str, Cell] = {}
        self._inline = InlineExecutor(
            timeout_s=timeout_s, threads=threads, in_flight=self.in_flight
        )
        self._parallel: Any = None  # the joblib call now yielding records
        self._taken = 0  # records of that call the consumer has taken

    def __enter__(self) -> LocalPoolExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def run(self, cells: Sequence[Cell]) -> Iterator[CellRecord]:
        """Yield one record per cell as cells finish."""
        if not cells:
            return
        n_jobs = worker_count(self.jobs, len(cells))
        if n_jobs == 1:
            yield from self._inline.run(cells)
        else:
            yield from self._run_pool(cells, n_jobs)

    def arrived(self) -> int:
        """Finished tasks of the running joblib call whose records are not yet taken (joblib
        counts them in ``Parallel.n_completed_tasks``; 0 when it does not say)."""
        completed = getattr(self._parallel, "n_completed_tasks", None)
        if not isinstance(completed, int):
            return 0
        return max(completed - self._taken, 0)

    # -- internals ---------------------------------------------------------------------------
    def _tasks(self, cells: Iterable[Cell], marks: str) -> Iterator[Any]:
        """joblib pulls this lazily as it dispatches: what was pulled is in flight."""
        from joblib import delayed

        for cell in cells:
            self.in_flight[cell.cell_id] = cell
            yield delayed(compute_marked)(cell, self.timeout_s, self.threads, marks)

    def _run_pool(self, cells: Sequence[Cell], n_jobs: int) -> Iterator[CellRecord]:
        """Cells on joblib's workers, a new pool after each lost worker (module doc)."""
        if self.early is not None:
            self.early.wait_for_local_workers()  # started while the spec was read (reused)
        pending = {c.cell_id: c for c in cells}
        suspect: Counter[str] = Counter()
        with DeathWatch() as watch:
            while pending:
                parallel = local_parallel(n_jobs, return_as="generator_unordered", batch_size=1)
                self._parallel, self._taken = parallel, 0
                try:
                    for rec in parallel(self._tasks(list(pending.values()), watch.marks)):
                        self._taken += 1
                        yield rec
                        self.in_flight.pop(rec.cell_id, None)  # the consumer has taken it
                        pending.pop(rec.cell_id, None)
                    return
                except worker_lost_errors() as exc:
                    self._parallel = None
                    raise_if_stopping(exc)  # a signal that also reached the workers: a stop
                    for rec in self._lost(exc, watch, suspect):
                        yield rec
                        self.in_flight.pop(rec.cell_id, None)
                        pending.pop(rec.cell_id, None)
                    self.in_flight.clear()  # the others are dispatched again
                finally:
                    self._parallel = None

    def _lost(
        self, exc: BaseException, watch: DeathWatch, suspect: Counter[str]
    ) -> list[CellRecord]:
        """``failed`` records of the cells a broken pool's lost worker was computing: the one
        whose worker ended first, else those in flight at a second loss."""
        lost = watch.lost_cells(self.in_flight)
        if not lost:
            suspect.update(list(self.in_flight))  # the ids, counted once each
            lost = [c for i, c in self.in_flight.items() if suspect[i] >= 2]
        why = (str(exc).splitlines() or [""])[0].split(". ")[0][:200]
        return [
            cell_record(
                cell,
                "failed",
                error="WorkerDied: the worker process computing this cell died (out of memory, "
                f"killed from outside, or ended by the method itself): {type(exc).__name__}: {why}",
            )
            for cell in lost
        ]
