"""loky's reusable workers, as every local pool of a run gets them, and their end.

Every local pool of a run is made by :func:`local_parallel`, so that the run's own call reuses the
workers :mod:`.early_workers` started (loky replaces a pool whose initializer differs). Once a run
is over the workers are killed rather than asked to exit (:func:`stop_local_workers`): the
results are stored, and a graceful exit would have each worker run its interpreter's teardown
while the driver waits.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

from kernbench.runner.execution.cell_task import CELL_MODULES

__all__ = ["local_parallel", "preload_cell_modules", "stop_local_workers"]


def local_parallel(n_jobs: int, **options: Any) -> Any:
    """joblib's ``Parallel`` on loky's reusable workers, each of which runs
    :func:`kernbench.runner.lifecycle.worker_setup.worker_start` before its first task (it ends
    with its parent, even a killed one)."""
    from joblib import Parallel, parallel_config

    from kernbench.runner.lifecycle.worker_setup import worker_start

    with parallel_config(backend="loky", initializer=worker_start):
        return Parallel(n_jobs=n_jobs, **options)


def preload_cell_modules() -> int:
    """Import :data:`~kernbench.runner.execution.cell_task.CELL_MODULES` in this process; return
    its pid."""
    for name in CELL_MODULES:
        importlib.import_module(name)
    return os.getpid()


def stop_local_workers() -> None:
    """Kill loky's reusable workers now, if there are any.

    Left alone, loky ends them when this interpreter exits: each gets a sentinel and runs its
    own interpreter's teardown while this process waits. Once a run has its results nothing in
    them is needed. loky's public ``get_reusable_executor(reuse=True)`` hands back the pool as it
    is (a new, empty one, which starts no process, when there is none).
    """
    if "joblib.externals.loky.reusable_executor" not in sys.modules:
        return  # loky never imported here: it has started no pool
    from joblib.externals.loky import get_reusable_executor

    get_reusable_executor(reuse=True).shutdown(wait=True, kill_workers=True)
