"""Workers started while the driver reads the spec, so that their start-up is not on the clock.

A parallel run pays twice for the numerical stack before its first cell: the driver imports the
methods to check the spec (most of it scikit-learn and SciPy), and then each worker starts and
imports them again. Done one after the other, the two sit end to end on the critical path
(measured in benchmarks/logs/performance.md, section 11b). :func:`start_early` starts the
workers first, in a background thread, and lets them import the cell's modules
(:data:`~kernbench.runner.execution.cell_task.CELL_MODULES`) while the driver reads the spec and
plans its cells. The caller hands the :class:`EarlyWorkers` to the run
(:func:`kernbench.runner.run.run_experiment`'s ``early``), whose executor then finds them ready.

- ``local``: joblib's loky workers are kept by loky between ``Parallel`` calls (the *reusable
  executor*), so a first ``Parallel`` call that only imports the modules leaves workers that the
  run's own call reuses (:func:`~kernbench.runner.execution.local_workers.local_parallel`),
  provided it asks for the same number of workers. It asks for fewer when the run has fewer
  cells than workers: loky then shrinks the pool, nothing else.
- ``dask`` without a scheduler: the LocalCluster itself is started in the background
  (:func:`~kernbench.runner.execution.local_cluster.local_cluster`); the Dask executor takes it
  (:meth:`EarlyWorkers.take_cluster`) instead of starting one. A cluster that no run took (the
  spec was refused) is closed by :meth:`EarlyWorkers.close`.

Once the run is over, both kinds of workers are killed rather than asked to exit: the results
are stored, and a graceful exit would have each worker run its interpreter's teardown while the
driver waits.

No thread of this module outlives the run in a process that goes on: :meth:`EarlyWorkers.close`
joins it. A thread left running would keep running library code beside whatever the process
does next (in-process callers, the test suite): on CPython 3.11.0-3.11.7 two threads converting
ASTs at once (``ast.parse``, ``ast.literal_eval``; joblib evaluates ``pre_dispatch`` with one)
share one recursion-depth counter, and either may fail with "SystemError: AST constructor
recursion depth mismatch" (gh-106905, fixed in 3.11.8 and 3.12). A refused spec then waits for
the workers' imports the first time in a process (later runs reuse the warm pool). The
``kernbench`` command line (``ends_with_command=True``) and a stop do not wait: the process ends
at once, and the thread with it.

Nothing here changes a number: it only moves imports earlier. Whatever fails in the background
is left for the run to meet where it would have met it anyway (the executor starts its own
workers, or the cluster start raises there).
"""

from __future__ import annotations

import threading
from typing import Any

from kernbench.runner.execution.local_cluster import close_local_cluster, local_cluster
from kernbench.runner.execution.local_workers import (
    local_parallel,
    preload_cell_modules,
    stop_local_workers,
)

__all__ = ["EarlyWorkers", "start_early"]

#: the early-start threads of this process (loky's pool is shared by all of them); written and
#: read by this module alone
_THREADS: list[threading.Thread] = []


class EarlyWorkers:
    """Workers being started in a background thread (see the module doc).

    Parameters
    ----------
    backend : "local" | "dask"
    workers : int
        The workers to start (≥ 2 for ``local``; ≥ 1 for ``dask``).
    ends_with_command : bool
        This process ends once its command returns (the ``kernbench`` command line): a command
        that fails then does not wait for the workers' imports (see :meth:`__exit__`).
    """

    def __init__(self, backend: str, workers: int, *, ends_with_command: bool = False) -> None:
        self.backend = backend
        self.workers = workers
        self.ends_with_command = ends_with_command
        self._cluster: Any = None
        self._taken = False
        self._used = False  # a run waited for the local workers (its own Parallel call uses them)
        self._closing = threading.Event()  # set: a thread not yet at its Parallel call skips it
        self._thread = threading.Thread(
            target=self._start, name="kernbench-early-workers", daemon=True
        )
        _THREADS[:] = [t for t in _THREADS if t.is_alive()] + [self._thread]
        self._thread.start()

    def _start(self) -> None:
        try:
            if self.backend == "dask":
                self._cluster = local_cluster(self.workers)
            else:
                from joblib import delayed

                if self._closing.is_set():
                    return
                tasks = (delayed(preload_cell_modules)() for _ in range(self.workers))
                # pre_dispatch "all": the few tasks are sent at once, and joblib does not
                # ast.parse its default "2*n_jobs" in this thread while the driver runs on (see
                # the module doc: gh-106905)
                local_parallel(self.workers, batch_size=1, pre_dispatch="all")(tasks)
        except BaseException:  # noqa: BLE001 - met again, and reported, by the run
            pass

    def join(self) -> None:
        """Wait until the workers have started (or failed to)."""
        self._thread.join()

    def take_cluster(self, workers: int) -> Any:
        """The started LocalCluster, once, if it has ``workers`` workers; else None."""
        if self.backend != "dask" or self._taken:
            return None
        self.join()
        if self._cluster is None or self.workers != workers:
            return None
        self._taken = True
        return self._cluster

    def wait_for_local_workers(self) -> None:
        """Return once the early ``local`` workers have started (no-op for ``dask``); the run's
        own pool then uses them, and :meth:`close` ends them."""
        if self.backend == "local":
            self._used = True
            self.join()

    def close(self, wait: bool = True) -> None:
        """Join the thread, then end the workers: loky's at once
        (:func:`~kernbench.runner.execution.local_workers.stop_local_workers`) if a run used
        them, a LocalCluster only if no run took it (the run closes its own).

        The thread is joined, so that nothing of this module runs on once the run (or the
        refusal of its spec) returns (see the module doc). A thread not yet at its ``Parallel``
        call skips it; one inside it waits for the workers' imports (the first time in a
        process; little once loky's pool is warm). ``wait=False`` (the process ends at once)
        neither joins a ``local`` thread still running nor kills a pool it may dispatch to; a
        LocalCluster being started is still waited for, and closed.
        """
        self._closing.set()
        if wait or self.backend != "local":
            self.join()
        elif self._thread.is_alive():
            return
        if self.backend == "local":
            # Killed only when no early thread is still dispatching to the pool: loky's
            # shutdown racing a dispatch from another thread can deadlock. Workers no run used
            # (a refused spec, a run of one worker) are left, imports done, for a later run of
            # this process to reuse, and to loky's own end (idle timeout, or this
            # interpreter's exit).
            if self._used and not any(t.is_alive() for t in _THREADS):
                stop_local_workers()
        elif not self._taken and self._cluster is not None:
            close_local_cluster(self._cluster)
            self._cluster = None

    def __enter__(self) -> EarlyWorkers:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        # Neither a stop (SIGINT, SIGTERM: KeyboardInterrupt) nor a command that fails (a
        # refused spec) in a process that ends with it waits for the workers' imports: the
        # thread ends with the process. A caller that goes on (in-process) waits.
        failed = exc_type is not None and (
            self.ends_with_command or issubclass(exc_type, KeyboardInterrupt)
        )
        self.close(wait=not failed)


def start_early(
    backend: str,
    workers: int,
    scheduler: str | None = None,
    *,
    ends_with_command: bool = False,
) -> EarlyWorkers | None:
    """Start the ``workers`` a run on ``backend`` will use (see
    :func:`kernbench.runner.execution.executor.worker_count`), in the background; pass what it
    returns to the run (``run_experiment(..., early=...)``) and use it as a context manager
    around the spec's reading and the run.

    Returns None where there is nothing to start: ``local`` with one worker (cells run in the
    driver), ``dask`` with a scheduler (its workers are the cluster's), or a Dask that is not
    installed (the run says so). ``ends_with_command``: see :class:`EarlyWorkers`.
    """
    if scheduler is not None or backend not in ("local", "dask"):
        return None
    if backend == "local" and workers < 2:
        return None
    if backend == "dask":
        import importlib.util

        if importlib.util.find_spec("distributed") is None:
            return None
    return EarlyWorkers(backend, workers, ends_with_command=ends_with_command)
