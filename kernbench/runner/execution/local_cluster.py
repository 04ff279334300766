"""kernbench's own Dask LocalCluster on 127.0.0.1: quiet, its workers forked from a fork server
that imported the methods once, killed (not asked to exit) once the run is over."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
from collections.abc import Iterator
from typing import Any

from kernbench.runner.execution.cell_task import CELL_MODULES
from kernbench.stop_signals import stop_signal

__all__ = [
    "QUIET_LOCAL_CLUSTER",
    "close_local_cluster",
    "local_cluster",
    "quiet_logger",
    "start_fork_server",
]

#: Dask settings of the LocalCluster kernbench starts. It has no dashboard, so nothing reads the
#: stacks its workers' profilers sample, the ticks its event loops time or the system figures it
#: polls: those are turned off or slowed down (what they cost an idle cluster is in
#: benchmarks/logs/performance.md, "Dask in batches"). The memory monitor that restarts a worker
#: near its memory limit stays on, polled less often. The workers' environment keeps Dask's one
#: BLAS thread per worker but not its ``MALLOC_TRIM_THRESHOLD_``: setting that turns off glibc's
#: adaptive mmap threshold, and each temporary array above 128 KiB is then mapped and
#: page-faulted anew. The workers import :data:`CELL_MODULES` before they join, and each watches
#: its parent process (:mod:`kernbench.runner.lifecycle.worker_setup`): none outlives a killed
#: run.
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
    "distributed.worker.preload": [*CELL_MODULES, "kernbench.runner.lifecycle.worker_setup"],
}


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
    loggers, levels = _silence(name)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)


def _silence(name: str) -> tuple[list[logging.Logger], list[int]]:
    """Set logger ``name`` and its children above CRITICAL; return them and their former levels."""
    names = [name] + [n for n in logging.root.manager.loggerDict if n.startswith(name + ".")]
    loggers = [logging.getLogger(n) for n in names]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL + 1)
    return loggers, levels


def close_local_cluster(cluster: Any) -> None:
    """Close a cluster of :func:`local_cluster` at once: its worker processes are killed, then it
    is closed.

    A graceful close asks each worker to close its connections and exit, and each then runs its
    interpreter's teardown (timed in benchmarks/logs/performance.md, 11c) while this process
    waits. Once a run has its results nothing in the workers is needed, as for loky's
    (:func:`kernbench.runner.execution.local_workers.stop_local_workers`). Each nanny is first
    told that the cluster is closing, so that it does not start a new worker in place of the one
    killed. What Dask logs meanwhile (the
    traceback of a nanny whose restart of a worker is cancelled) is not shown: the run is over.
    """
    if stop_signal() is not None:  # the process ends next: Dask's loop, still winding down
        _silence("distributed")  # (a comm it finds closed), says nothing of the run's after it
        _close_local_cluster(cluster)
        return
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
