"""Workers started while the driver reads the spec, so that their start-up is not on the clock.

A parallel run pays twice for the numerical stack before its first cell: the driver imports the
methods to check the spec (about 2.5 s here, most of it scikit-learn and SciPy), and then each
worker starts and imports them again. Done one after the other, the two sit end to end on the
critical path. :func:`start_early` starts the workers first, in a background thread, and lets
them import the cell's modules (:data:`CELL_MODULES`) while the driver reads the spec and plans
its cells; the executor then finds them ready.

- ``local``: joblib's loky workers are kept by loky between ``Parallel`` calls (the *reusable
  executor*), so a first ``Parallel`` call that only imports the modules leaves workers that the
  run's own call reuses, provided it asks for the same number of workers. It asks for fewer when
  the run has fewer cells than workers: loky then shrinks the pool, nothing else.
- ``dask`` without a scheduler: the LocalCluster itself is started in the background, its workers
  forked from a fork server that imported :data:`CELL_MODULES` once (:func:`start_fork_server`;
  spawned workers import them as Dask *preloads* before they join);
  :func:`kernbench.runner.backends.dask_client` takes that cluster (:func:`take_cluster`) instead
  of starting one. A cluster that no run took (the spec was refused) is closed by
  :meth:`EarlyWorkers.close`.

Once the run is over, both kinds of workers are killed rather than asked to exit
(:func:`stop_local_workers`, :func:`close_local_cluster`): the results are stored, and a
graceful exit would have each worker run its interpreter's teardown while the driver waits.

No thread of this module outlives the run in a process that goes on: :meth:`EarlyWorkers.close`
joins it. A thread left running would keep running library code beside whatever the process
does next (in-process callers, the test suite): on CPython 3.11.0-3.11.7 two threads converting
ASTs at once (``ast.parse``, ``ast.literal_eval``; joblib evaluates ``pre_dispatch`` with one)
share one recursion-depth counter, and either may fail with "SystemError: AST constructor
recursion depth mismatch" (gh-106905, fixed in 3.11.8 and 3.12). A refused spec then waits for
the workers' imports the first time in a process (seconds; later runs reuse the warm pool). The
``kernbench`` command line (:func:`ends_with_command`) and a stop do not wait: the process ends
at once, and the thread with it.

Nothing here changes a number: it only moves imports earlier. Whatever fails in the background
is left for the run to meet where it would have met it anyway (the executor starts its own
workers, or the cluster start raises there).
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any

__all__ = [
    "CELL_MODULES",
    "EarlyWorkers",
    "QUIET_LOCAL_CLUSTER",
    "close_local_cluster",
    "ends_with_command",
    "local_cluster",
    "local_parallel",
    "preload_cell_modules",
    "quiet_logger",
    "start_early",
    "start_fork_server",
    "stop_local_workers",
    "take_cluster",
    "wait_for_local_workers",
]

#: what a worker imports before its first cell (the methods import scikit-learn and SciPy)
CELL_MODULES = ("kernbench.datasets", "kernbench.methods", "kernbench.runner.select")

#: Dask settings of the LocalCluster kernbench starts. It has no dashboard, so nothing reads the
#: stacks its workers' profilers sample every 10 ms, the ticks its event loops time every 20 ms
#: or the system figures polled every 0.5 s; on a 2-core machine those took 15 % of a core
#: (idle, 2 workers), 2.4 % with these settings. The memory monitor that restarts a worker
#: near its memory limit stays on, at 0.5 s instead of 0.1 s. The workers' environment keeps
#: Dask's one BLAS thread per worker but not its ``MALLOC_TRIM_THRESHOLD_``: setting that turns
#: off glibc's adaptive mmap threshold, and each temporary array above 128 KiB is then mapped
#: and page-faulted anew. The workers import :data:`CELL_MODULES` before they join, and each
#: watches its parent process (:mod:`kernbench.runner.worker_setup`): none outlives a killed run.
QUIET_LOCAL_CLUSTER: dict[str, Any] = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.worker.memory.monitor-interval": "500ms",
    "distributed.deploy.cluster-repr-interval": "5s",
    "distributed.nanny.pre-spawn-environ": {
        "OMP_NUM_THREADS": 1,
        "MKL_NUM_THREADS": 1,
        "OPENBLAS_NUM_THREADS": 1,
    },
    "distributed.worker.preload": [*CELL_MODULES, "kernbench.runner.worker_setup"],
}


def local_parallel(n_jobs: int, **options: Any) -> Any:
    """joblib's ``Parallel`` on loky's reusable workers, each of which runs
    :func:`kernbench.runner.worker_setup.worker_start` before its first task (it ends with its
    parent, even a killed one). Every local pool of a run is made here, so that the run's own call
    reuses the workers the early call started (loky replaces a pool whose initializer differs).
    """
    from joblib import Parallel, parallel_config

    from kernbench.runner.worker_setup import worker_start

    with parallel_config(backend="loky", initializer=worker_start):
        return Parallel(n_jobs=n_jobs, **options)


def preload_cell_modules() -> int:
    """Import :data:`CELL_MODULES` in this process; return its pid."""
    for name in CELL_MODULES:
        importlib.import_module(name)
    return os.getpid()


def start_fork_server() -> bool:
    """Start this process's multiprocessing fork server with Dask and :data:`CELL_MODULES`
    imported, and the environment of :data:`QUIET_LOCAL_CLUSTER`'s workers; True if it runs.

    A worker forked from it starts with the numerical stack loaded: one import in all instead of
    one per worker, each a few seconds of CPU that on a small machine delay the first cell (the
    driver imports the same modules meanwhile). The server is a fresh single-threaded process
    (started as :mod:`multiprocessing`'s ``spawn`` starts one), so nothing of the driver's
    threads is forked. Its environment is what each worker's would be: Dask's one BLAS thread
    per worker and its fixed hash seed, set as Dask's nanny sets them (a value this process
    has wins), before NumPy loads its BLAS in the server. False where the platform has no fork
    server (workers are then spawned as before). A server already running is used as it is.
    """
    import multiprocessing
    from multiprocessing import forkserver

    if "forkserver" not in multiprocessing.get_all_start_methods():
        return False
    environ = QUIET_LOCAL_CLUSTER["distributed.nanny.pre-spawn-environ"]
    for key, value in environ.items():
        os.environ.setdefault(key, str(value))
    if os.environ.get("PYTHONHASHSEED") in (None, "0"):  # as the nanny: one hash seed for all
        os.environ["PYTHONHASHSEED"] = "6640"
    forkserver.set_forkserver_preload(["distributed", *CELL_MODULES])
    forkserver.ensure_running()
    return True


def local_cluster(workers: int) -> Any:
    """A Dask LocalCluster on 127.0.0.1: ``workers`` processes of one thread each, quiet
    (:data:`QUIET_LOCAL_CLUSTER`), no dashboard; its workers are forked from
    :func:`start_fork_server`'s server where the platform has one."""
    import dask
    from dask.distributed import LocalCluster

    config = dict(QUIET_LOCAL_CLUSTER)
    if start_fork_server():
        config["distributed.worker.multiprocessing-method"] = "forkserver"
    with dask.config.set(config):  # read as its servers start
        return LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            silence_logs=logging.ERROR,
        )


@contextlib.contextmanager
def quiet_logger(name: str) -> Iterator[None]:
    """Silence logger ``name`` and its children (distributed sets levels on each of them)."""
    names = [name] + [n for n in logging.root.manager.loggerDict if n.startswith(name + ".")]
    loggers = [logging.getLogger(n) for n in names]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)


def close_local_cluster(cluster: Any) -> None:
    """Close a cluster of :func:`local_cluster` at once: its worker processes are killed, then it
    is closed.

    A graceful close asks each worker to close its connections and exit, and each then runs its
    interpreter's teardown (about a second with the numerical stack loaded) while this process
    waits. Once a run has its results nothing in the workers is needed, as for loky's
    (:func:`stop_local_workers`). Each nanny is first told that the cluster is closing, so that
    it does not start a new worker in place of the one killed. What Dask logs meanwhile (the
    traceback of a nanny whose restart of a worker is cancelled) is not shown: the run is over.
    """
    with quiet_logger("distributed"):  # a nanny restarting a worker that a method ended
        _close_local_cluster(cluster)


def _close_local_cluster(cluster: Any) -> None:
    nannies = list(getattr(cluster, "workers", {}).values())
    for nanny in nannies:
        with contextlib.suppress(Exception):
            nanny.close_gracefully(reason="kernbench-run-done")
    for nanny in nannies:
        pid = getattr(nanny, "pid", None)
        if pid:
            with contextlib.suppress(OSError):
                os.kill(pid, getattr(signal, "SIGKILL", signal.SIGTERM))
    cluster.close()


#: the early-start threads of this process (loky's pool is shared by all of them)
_THREADS: list[threading.Thread] = []


class EarlyWorkers:
    """Workers being started in a background thread (see the module doc).

    Parameters
    ----------
    backend : "local" | "dask"
    workers : int
        The workers to start (≥ 2 for ``local``; ≥ 1 for ``dask``).
    """

    def __init__(self, backend: str, workers: int) -> None:
        self.backend = backend
        self.workers = workers
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

    def close(self, wait: bool = True) -> None:
        """Join the thread, then end the workers: loky's at once (:func:`stop_local_workers`) if
        a run used them, a LocalCluster only if no run took it (the run closes its own).

        The thread is joined, so that nothing of this module runs on once the run (or the
        refusal of its spec) returns (see the module doc). A thread not yet at its ``Parallel``
        call skips it; one inside it waits for the workers' imports (seconds the first time in
        a process, milliseconds once loky's pool is warm). ``wait=False`` (the process ends at
        once) neither joins a ``local`` thread still running nor kills a pool it may dispatch
        to; a LocalCluster being started is still waited for, and closed.
        """
        global _EARLY
        if _EARLY is self:
            _EARLY = None
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
            _ENDS_WITH_COMMAND or issubclass(exc_type, KeyboardInterrupt)
        )
        self.close(wait=not failed)


_EARLY: EarlyWorkers | None = None

#: whether this process ends once its command returns (:func:`ends_with_command`)
_ENDS_WITH_COMMAND = False


def ends_with_command() -> None:
    """Note that this process ends once its command returns (the ``kernbench`` command line).

    A run whose spec is refused then returns without joining an early thread still waiting for
    the workers' imports (seconds on a busy machine): the process ends at once, and the thread
    with it, as it did before the thread was joined. Elsewhere (in-process callers, the tests)
    the thread is always joined, so that none runs on beside the caller (see the module doc).
    """
    global _ENDS_WITH_COMMAND
    _ENDS_WITH_COMMAND = True


def stop_local_workers() -> None:
    """Kill loky's reusable workers now, if there are any.

    Left alone, loky ends them when this interpreter exits: each gets a sentinel and runs its
    own interpreter's teardown (about a second with the numerical stack loaded) while this
    process waits. Once a run has its results nothing in them is needed.
    """
    reusable_executor = sys.modules.get("joblib.externals.loky.reusable_executor")
    lock = getattr(reusable_executor, "_executor_lock", None)
    if lock is None:  # loky never imported (or not yet whole) here: it has started no pool
        return
    with lock:
        executor = reusable_executor._executor
    if executor is not None:
        executor.shutdown(wait=True, kill_workers=True)


def start_early(backend: str, workers: int, scheduler: str | None = None) -> EarlyWorkers | None:
    """Start the ``workers`` a run on ``backend`` will use (see
    :func:`kernbench.runner.backends.worker_count`), in the background.

    Returns None where there is nothing to start: ``local`` with one worker (cells run in the
    driver), ``dask`` with a scheduler (its workers are the cluster's), or a Dask that is not
    installed (the run says so).
    """
    global _EARLY
    if scheduler is not None or backend not in ("local", "dask"):
        return None
    if backend == "local" and workers < 2:
        return None
    if backend == "dask":
        import importlib.util

        if importlib.util.find_spec("distributed") is None:
            return None
    _EARLY = EarlyWorkers(backend, workers)
    return _EARLY


def take_cluster(workers: int) -> Any:
    """The LocalCluster :func:`start_early` started, if it has ``workers`` workers and no run
    took it yet; else None."""
    return _EARLY.take_cluster(workers) if _EARLY is not None else None


def wait_for_local_workers() -> None:
    """Return once the early ``local`` workers have started (no-op when none were started)."""
    if _EARLY is not None and _EARLY.backend == "local":
        _EARLY._used = True
        _EARLY.join()
