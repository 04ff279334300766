"""The backends by name: ``local`` (inline, or loky workers) and ``dask``, checked and opened.

:func:`open_executor` turns ``--backend``, ``--jobs``, ``--scheduler``, ``--timeout`` and
``--threads`` into one :class:`~kernbench.runner.execution.executor.Executor`: an
:class:`~.inline.InlineExecutor` at one worker, a :class:`~.local_pool.LocalPoolExecutor`
otherwise, a :class:`~.dask_executor.DaskExecutor` for ``dask``. What was started early
(:mod:`.early_workers`) is passed in, never looked up.
"""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING

from kernbench.runner.execution.dask_client import DASK_MISSING, check_scheduler_address
from kernbench.runner.execution.executor import (
    BACKENDS,
    BackendError,
    Executor,
    threads_per_cell,
    worker_count,
)
from kernbench.runner.execution.inline import InlineExecutor
from kernbench.runner.execution.local_pool import LocalPoolExecutor

if TYPE_CHECKING:
    from kernbench.runner.execution.early_workers import EarlyWorkers

__all__ = ["open_executor"]


def open_executor(
    backend: str = "local",
    *,
    jobs: int = -1,
    scheduler: str | None = None,
    timeout_s: float | None = None,
    threads: int | None = None,
    early: EarlyWorkers | None = None,
) -> Executor:
    """The executor of ``backend`` (enter it with ``with`` before any work).

    Parameters
    ----------
    backend : "local" | "dask"
    jobs : int
        ``local``: joblib ``n_jobs`` (-1 all cores; 1 runs inline; at most the cores and the
        cells to run, see :func:`~kernbench.runner.execution.executor.worker_count`). ``dask``:
        workers of the LocalCluster started when no scheduler is given (-1: one per core).
    scheduler : str, optional
        ``dask`` only: address of a running scheduler (``tcp://HOST:PORT``).
    timeout_s : float, optional
        Per-cell wall-clock limit (see
        :func:`kernbench.runner.execution.cell_task.compute_cell`).
    threads : int, optional
        Threads per cell (see :func:`~kernbench.runner.execution.executor.threads_per_cell`;
        None: cores ÷ cells at once).
    early : EarlyWorkers, optional
        Workers started while the spec was read (:func:`.early_workers.start_early`).

    Raises
    ------
    BackendError
        An unknown backend, ``scheduler`` without ``dask``, a malformed address, Dask missing.
    """
    if backend not in BACKENDS:
        choices = ", ".join(BACKENDS)
        raise BackendError(f"unknown backend {backend!r} (expected one of {choices})")
    if scheduler is not None and backend != "dask":
        raise BackendError("--scheduler needs --backend dask")
    jobs = jobs if jobs != 0 else 1
    if backend == "local":
        per_cell = threads_per_cell(jobs, threads)
        if worker_count(jobs) == 1:
            return InlineExecutor(timeout_s=timeout_s, threads=per_cell)
        return LocalPoolExecutor(jobs=jobs, timeout_s=timeout_s, threads=per_cell, early=early)
    if importlib.util.find_spec("distributed") is None:
        raise BackendError(DASK_MISSING)
    if scheduler is not None:
        check_scheduler_address(scheduler)
    from kernbench.runner.execution.dask_executor import DaskExecutor

    per_cell = threads_per_cell(jobs, threads, remote=scheduler is not None)
    return DaskExecutor(
        jobs=jobs, scheduler=scheduler, timeout_s=timeout_s, threads=per_cell, early=early
    )
