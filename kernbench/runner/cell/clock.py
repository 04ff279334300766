"""The CPU time of the threads that compute a cell, not of the whole process that hosts it.

A cell's own CPU is the process's CPU less what the process's *other* Python threads spent
meanwhile. Those are the host's: a Dask worker's event loop, its profiler and its system
monitor, the driver's progress and death-watch threads when a cell runs inline. On a loaded
machine a Dask worker waits long for a core while those threads keep ticking, and the process
CPU of a cell there overstates the same cell's CPU in one process by much (the measurement is
in benchmarks/logs/performance.md, section 11b). What stays counted:
the thread that runs the cell, the threads of kernbench's kernel pool (named
:data:`POOL_PREFIX` ``…``, see :mod:`kernbench.solvers.threads`), and threads no Python code
started (BLAS, OpenMP), which work for the cell.

Per-thread clocks need ``pthread_getcpuclockid`` (Linux, the BSDs, macOS); elsewhere the
clock falls back to the process's CPU.
"""

from __future__ import annotations

import threading
import time

__all__ = ["POOL_PREFIX", "CellClock"]

#: name prefix of the kernel pool's threads (``ThreadPoolExecutor(thread_name_prefix=...)``)
POOL_PREFIX = "kernbench_"


def _host_threads_cpu() -> dict[int, float]:
    """CPU seconds so far of every live Python thread that does not work for the calling one."""
    me = threading.get_ident()
    spent: dict[int, float] = {}
    for thread in threading.enumerate():
        ident = thread.ident
        if ident is None or ident == me or thread.name.startswith(POOL_PREFIX):
            continue
        try:
            spent[ident] = time.clock_gettime(time.pthread_getcpuclockid(ident))
        except (AttributeError, OSError, ValueError, OverflowError):
            continue  # ended meanwhile, or no per-thread clock here: counted with the cell
    return spent


class CellClock:
    """Started at construction; :meth:`seconds` is the cell's CPU so far (see module doc)."""

    def __init__(self) -> None:
        self._process = time.process_time()
        self._host = _host_threads_cpu()

    def seconds(self) -> float:
        """CPU seconds of the cell's threads since the clock started (never negative)."""
        process = time.process_time() - self._process
        host = 0.0
        for ident, now in _host_threads_cpu().items():
            host += now - self._host.get(ident, 0.0)  # a host thread started meanwhile: all of it
        return max(process - host, 0.0)
