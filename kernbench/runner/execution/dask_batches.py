"""Cells on a Dask cluster: a few cells per task, a few tasks per worker thread.

One Dask task per cell costs each cell a round trip through the scheduler (driver, scheduler,
worker, scheduler, driver), and a worker whose next task has not yet come idles meanwhile. So
the driver keeps :data:`TASKS_PER_THREAD` tasks per worker thread submitted (one computing, the
next waiting on the worker) and, once the run's own cells show them to be short, puts several
consecutive cells of the longest-first order into one task (:func:`batch_size`): as many as take
about :data:`BATCH_TARGET_S` together, by the median wall time of the last
:data:`RECENT_CELLS` cells returned, at most :data:`MAX_BATCH_CELLS`, and at most the cells left
÷ twice the tasks in flight, so that batches shrink towards the end and the tail stays short. The
first cells, the longest, go one per task. Batching is scheduling only: every cell's seeds come
from its identity, so its numbers are those of a cell run alone.

On the worker (:func:`compute_batch`) each cell of a batch is computed as on its own, and a cell
that raises is recorded as ``failed`` while the batch goes on. The driver yields a batch's records
as the batch returns (they reach the store in one transaction). A worker that dies loses only the
batch it held: Dask runs that task again on another worker. A task that killed every worker it
was given (``KilledWorker``) fails the cell it was computing, named by the worker's note in the
driver's marks directory (workers on the driver's host; see
:func:`kernbench.runner.execution.lost_workers.note_pid`); the other cells of its batch run again,
one per task, and a task of one cell that killed its workers is that cell's failure.
"""

from __future__ import annotations

import contextlib
import statistics
import tempfile
import traceback
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import Any
from uuid import uuid4

from kernbench.cells.records import CellRecord
from kernbench.runner.cell.compute import cell_record
from kernbench.runner.execution.lost_workers import forget_pid, note_pid, noted_pid
from kernbench.runner.lifecycle.stop import raise_if_stopping
from kernbench.runner.plan.cells import Cell

__all__ = [
    "BATCH_TARGET_S",
    "MAX_BATCH_CELLS",
    "TASKS_PER_THREAD",
    "DaskBatches",
    "batch_size",
    "compute_batch",
]

#: tasks submitted per worker thread: one computing, one waiting on the worker
TASKS_PER_THREAD = 2
#: seconds of cells one task aims at, once cells are known to be short
BATCH_TARGET_S = 0.5
#: cells one task holds at most
MAX_BATCH_CELLS = 32
#: returned cells whose median wall time sizes the next batch
RECENT_CELLS = 16


def batch_size(recent_s: Sequence[float], remaining: int, tasks: int) -> int:
    """Cells the next task takes.

    Parameters
    ----------
    recent_s : sequence of float
        Wall seconds of the cells returned most recently (empty: none yet).
    remaining : int
        Cells not yet submitted.
    tasks : int
        Tasks kept in flight (worker threads × :data:`TASKS_PER_THREAD`).

    Returns
    -------
    int
        1 while no cell has returned; else about :data:`BATCH_TARGET_S` of cells at the median of
        ``recent_s``, at most :data:`MAX_BATCH_CELLS` and ``remaining // (2 * tasks)``, at least 1.
    """
    if not recent_s or remaining <= 0:
        return 1
    typical = statistics.median(recent_s)
    by_time = int(BATCH_TARGET_S / typical) if typical > 0 else MAX_BATCH_CELLS
    return max(1, min(by_time, MAX_BATCH_CELLS, remaining // (2 * max(tasks, 1))))


def compute_batch(
    cells: Sequence[Cell], compute: Callable[[Cell], CellRecord], marks: str
) -> list[CellRecord]:
    """On a worker: ``compute(cell)`` for each cell, in order (the backend's
    :func:`kernbench.runner.execution.cell_task.compute_cell` with the run's time limit and
    threads). The
    worker notes its pid for a cell while it computes it; a cell that raises is a ``failed``
    record and the next cell runs."""
    records = []
    for cell in cells:
        note_pid(marks, cell.cell_id)
        try:
            rec = compute(cell)
        except Exception as exc:  # noqa: BLE001 - recorded: the batch's other cells go on
            raise_if_stopping(exc)
            rec = cell_record(
                cell,
                "failed",
                error=f"{type(exc).__name__}: {exc}",
                traceback=traceback.format_exc(),
            )
        forget_pid(marks, cell.cell_id)
        records.append(rec)
    return records


class DaskBatches:
    """Run cells on a ``dask.distributed`` client in batches; yield records as batches return.

    Parameters
    ----------
    client : distributed.Client
        With at least one worker (more may join; the tasks kept in flight follow the threads
        the cluster has when the run starts).
    compute : callable
        ``compute(cell) -> CellRecord`` on the worker (picklable).
    in_flight : dict
        ``cell_id -> Cell``, the caller's: a cell enters when its task is submitted and leaves
        once its record has been taken (the generator resumed after yielding it).
    """

    def __init__(
        self,
        client: Any,
        compute: Callable[[Cell], CellRecord],
        in_flight: dict[str, Cell],
    ) -> None:
        self.client = client
        self.compute = compute
        self.in_flight = in_flight
        self._left = 0  # records of the batch being yielded, after the current one
        self._done: Any = None  # the as_completed of the running call

    def arrived(self) -> int:
        """Records that have arrived and wait to be yielded (0: the next one means waiting)."""
        return self._left + int(self._done is not None and self._done.has_ready())

    def run(self, cells: Sequence[Cell]) -> Iterator[CellRecord]:
        """Yield one record per cell, a batch at a time, as batches finish."""
        from distributed import as_completed

        queue = deque(cells)
        recent: deque[float] = deque(maxlen=RECENT_CELLS)
        futures: dict[Any, list[Cell]] = {}
        submitted = 0  # tasks so far: an earlier task has the higher priority
        self._done = done = as_completed(with_results=True, raise_errors=False)
        tasks = TASKS_PER_THREAD * self._threads()

        with tempfile.TemporaryDirectory(prefix="kernbench-cells-") as marks:

            def submit(batch: list[Cell]) -> None:
                nonlocal submitted
                submitted += 1
                for cell in batch:
                    self.in_flight[cell.cell_id] = cell
                future = self.client.submit(
                    compute_batch,
                    batch,
                    self.compute,
                    marks,
                    key=f"kernbench-cells-{uuid4().hex}",
                    pure=False,
                    priority=-submitted,  # longest first, as submitted
                )
                futures[future] = batch
                done.add(future)

            def top_up() -> None:
                while queue and len(futures) < tasks:
                    n = batch_size(recent, len(queue), tasks)
                    submit([queue.popleft() for _ in range(min(n, len(queue)))])

            try:
                top_up()
                while futures:
                    future, result = next(done)  # a batch's records come with its future
                    batch = futures.pop(future)
                    records = self._records(future, result, batch, marks, submit)
                    top_up()  # the workers get their next tasks before the store is written
                    for i, rec in enumerate(records):
                        self._left = len(records) - i - 1
                        if rec.started_at is not None and rec.finished_at is not None:
                            recent.append(max(rec.finished_at - rec.started_at, 0.0))
                        yield rec
                        self.in_flight.pop(rec.cell_id, None)
                    self._left = 0
            finally:
                self._done, self._left = None, 0
                if futures:  # stopped early: the cluster drops what is still queued
                    with contextlib.suppress(Exception):
                        self.client.cancel(list(futures))

    # -- internals ---------------------------------------------------------------------------
    def _threads(self) -> int:
        """Worker threads of the cluster (at least 1)."""
        workers = self.client.scheduler_info()["workers"].values()
        return max(sum(int(w.get("nthreads", 1)) for w in workers), 1)

    def _records(
        self, future: Any, result: Any, batch: list[Cell], marks: str, submit: Any
    ) -> list[CellRecord]:
        """The records of a returned task (``result``: what it returned); a task that killed its
        workers is split up (see the module doc). A cancelled task (the scheduler was lost)
        raises."""
        if future.status == "finished":
            return result
        if future.status != "error":
            future.result()  # cancelled: raises CancelledError for the backend to report
        exc = future.exception()
        from distributed.scheduler import KilledWorker

        if not isinstance(exc, KilledWorker):  # the task itself failed: so do its cells
            return [
                cell_record(cell, "failed", error=f"{type(exc).__name__}: {exc}") for cell in batch
            ]
        noted = [c for c in batch if noted_pid(marks, c.cell_id)]
        lost = batch if len(batch) == 1 else noted if len(noted) == 1 else []
        failed = {c.cell_id for c in lost}
        for cell in batch:
            forget_pid(marks, cell.cell_id)
            if cell.cell_id not in failed:
                submit([cell])
        why = (str(exc).splitlines() or [""])[0][:200]
        return [
            cell_record(
                cell,
                "failed",
                error="WorkerDied: every Dask worker computing this cell died (out of memory, "
                f"killed from outside, or ended by the method itself): {type(exc).__name__}: "
                f"{why}",
            )
            for cell in lost
        ]
