"""Cells on a ``dask.distributed`` cluster: a scheduler's address, or kernbench's LocalCluster.

Cells go out in batches (:mod:`.dask_batches`). Dask reschedules the task of a worker that dies,
so a lost worker loses no cell; a task that killed every worker it was given fails the cell it
was computing when its worker shares the driver's file system. Cells never raise (a failing cell
is a ``failed`` record), so whatever Dask raises is the cluster's: a lost scheduler becomes one
:class:`~kernbench.runner.execution.executor.BackendError`.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from kernbench.cells.records import CellRecord
from kernbench.errors import KernbenchError
from kernbench.runner.execution.cell_task import compute_cell
from kernbench.runner.execution.dask_client import (
    check_worker_plugins,
    check_worker_versions,
    dask_client,
    wait_for_a_worker,
)
from kernbench.runner.execution.executor import BackendError
from kernbench.runner.plan.cells import Cell

if TYPE_CHECKING:
    from kernbench.runner.execution.dask_batches import DaskBatches
    from kernbench.runner.execution.early_workers import EarlyWorkers

__all__ = ["DaskExecutor"]


class DaskExecutor:
    """An :class:`~kernbench.runner.execution.executor.Executor` on a Dask cluster.

    Parameters
    ----------
    jobs : int
        Workers of the LocalCluster started when no scheduler is given (-1: one per core).
    scheduler : str, optional
        Address of a running scheduler (``tcp://HOST:PORT``).
    timeout_s : float, optional
        Per-cell wall-clock limit.
    threads : int, optional
        Threads of each cell's kernels.
    early : EarlyWorkers, optional
        A LocalCluster started while the spec was read: taken instead of starting one.
    """

    def __init__(
        self,
        *,
        jobs: int = -1,
        scheduler: str | None = None,
        timeout_s: float | None = None,
        threads: int | None = None,
        early: EarlyWorkers | None = None,
    ) -> None:
        self.jobs = jobs
        self.scheduler = scheduler
        self.timeout_s = timeout_s
        self.threads = threads
        self.early = early
        self.in_flight: dict[str, Cell] = {}
        self._where = scheduler or "the local Dask cluster"
        self._stack = contextlib.ExitStack()
        self._client: Any = None
        self._batches: DaskBatches | None = None  # the Dask run now yielding records

    def __enter__(self) -> DaskExecutor:
        """Connect to the scheduler (or start a LocalCluster) and check its workers' version."""
        try:
            client = self._stack.enter_context(dask_client(self.scheduler, self.jobs, self.early))
            check_worker_versions(client, self._where)
            self._client = client
        except BaseException:
            self._stack.close()  # `with` never entered: disconnect now, not at collection
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._client = None
        self._stack.close()

    def run(self, cells: Sequence[Cell]) -> Iterator[CellRecord]:
        """Yield one record per cell as batches finish (connecting for this call alone when used
        outside ``with``)."""
        if not cells:
            return
        if self._client is None:
            with self:
                yield from self._run_guarded(cells)
        else:
            yield from self._run_guarded(cells)

    def arrived(self) -> int:
        """Records of returned batches not yet yielded (see :mod:`.dask_batches`)."""
        return self._batches.arrived() if self._batches is not None else 0

    def _run_guarded(self, cells: Sequence[Cell]) -> Iterator[CellRecord]:
        from kernbench.runner.execution.dask_batches import DaskBatches

        check_worker_plugins(self._client, cells, self._where)
        wait_for_a_worker(self._client, self._where)
        compute = functools.partial(compute_cell, timeout_s=self.timeout_s, threads=self.threads)
        self._batches = DaskBatches(self._client, compute, self.in_flight)
        try:
            yield from self._batches.run(cells)
        except (KernbenchError, KeyboardInterrupt, GeneratorExit):
            raise
        except Exception as exc:
            first = (str(exc).splitlines() or [""])[0][:200]
            raise BackendError(
                f"lost the Dask scheduler at {self._where} ({type(exc).__name__}: {first}); "
                "finished cells are saved: restart the scheduler and rerun the same command"
            ) from exc
        finally:
            self._batches = None
