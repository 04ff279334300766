"""What every worker of a local pool or of kernbench's own Dask LocalCluster does first.

loky runs :func:`worker_start` as each worker's initializer (see
:func:`kernbench.runner.execution.local_workers.local_parallel`); Dask imports this module as a
worker
preload and calls :func:`dask_setup`. A worker then ends with its parent process, even a killed
one (:func:`kernbench.runner.lifecycle.reaping.watch_parent`), and a loky worker tells a Ctrl-C
from a method's own ``KeyboardInterrupt`` (:func:`kernbench.runner.lifecycle.stop.note_interrupts`).
"""

from __future__ import annotations

import contextlib

from kernbench.runner.lifecycle.reaping import watch_parent
from kernbench.runner.lifecycle.stop import note_interrupts

__all__ = ["dask_setup", "worker_start"]


def worker_start() -> None:
    """What every local worker does before its first task: watch its parent, and note a SIGINT
    as a stop (see :func:`kernbench.runner.lifecycle.stop.note_interrupts`). Never raises: loky
    would mark the whole pool broken."""
    with contextlib.suppress(Exception):
        watch_parent()
    with contextlib.suppress(Exception):
        note_interrupts()


def dask_setup(worker: object) -> None:
    """Dask's hook for a preload module: each worker of kernbench's LocalCluster watches its
    parent (the fork server, or the process that spawned it). Its signals stay Dask's: cells
    run in a worker thread, where no signal lands."""
    with contextlib.suppress(Exception):
        watch_parent()
