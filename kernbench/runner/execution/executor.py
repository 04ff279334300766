"""The one shape of every place cells run (:class:`Executor`), and the counts it is sized by.

Three executors have this shape, each in a module of its own: :mod:`.inline` (cells in this
process), :mod:`.local_pool` (loky workers through joblib) and :mod:`.dask_executor` (a
``dask.distributed`` cluster); :func:`kernbench.runner.execution.backends.open_executor` picks one
by name. Workers only compute and return :class:`~kernbench.cells.records.CellRecord` objects; the
driving process writes the store.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import Protocol, runtime_checkable

from kernbench.cells.records import CellRecord
from kernbench.errors import KernbenchError
from kernbench.runner.plan.cells import Cell
from kernbench.solvers.threads import available_cores, resolve_threads

__all__ = ["BACKENDS", "BackendError", "Executor", "threads_per_cell", "worker_count"]

BACKENDS: tuple[str, ...] = ("local", "dask")


class BackendError(KernbenchError):
    """A backend that cannot be used (missing extra, unreachable scheduler, bad address)."""


@runtime_checkable
class Executor(Protocol):
    """Runs cells somewhere and yields their records as they finish (in completion order).

    Attributes
    ----------
    in_flight : dict
        ``cell_id -> Cell`` handed to the backend whose record the consumer has not yet taken (a
        cell stays in flight until the generator is resumed after yielding its record), so that
        a stopped run records exactly those as ``interrupted``.
    """

    in_flight: dict[str, Cell]

    def __enter__(self) -> Executor:
        """Connect to the backend (Dask: the scheduler, or a LocalCluster) before any work."""
        ...

    def __exit__(self, *exc: object) -> None:
        """Let go of the backend (a LocalCluster is closed, a cell's child ended)."""
        ...

    def run(self, cells: Sequence[Cell]) -> Iterator[CellRecord]:
        """Yield one record per cell as cells finish (call inside ``with executor:``)."""
        ...

    def arrived(self) -> int:
        """Records that have arrived and wait to be yielded (0 when the next one means waiting):
        a consumer may hold the records it has until then and store them together."""
        ...


def worker_count(jobs: int, cells: int | None = None) -> int:
    """Workers for ``--jobs``: -1 means one per core; never more than the cores, nor than the
    ``cells`` to run (a worker costs an interpreter with the numerical stack loaded; see
    docs/performance.md)."""
    cores = os.cpu_count() or 1
    n = cores if jobs < 1 else min(jobs, cores)
    return max(1, min(n, cells) if cells is not None else n)


def threads_per_cell(jobs: int, threads: int | None = None, *, remote: bool = False) -> int:
    """Threads each cell's compiled kernels may use: ``threads`` when given, else the cores of
    this machine ÷ the cells run at once (``jobs``, joblib's convention: −1 one per core), at
    least 1; 1 on a remote Dask scheduler (``remote``), whose workers' cores are unknown here."""
    if threads is not None:
        return resolve_threads(threads)
    if remote:
        return 1
    return max(available_cores() // resolve_threads(jobs), 1)
