"""What a run is asked to do (:class:`RunOptions`) and whom it tells as it goes (:class:`RunHooks`).

The command line's ``kernbench run`` flags map one to one onto :class:`RunOptions`; a caller in
Python builds one the same way (``RunOptions(out_dir="results/x", jobs=2)``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

from kernbench.cells.records import CellRecord
from kernbench.runner.plan.cells import DEFAULT_MAX_CELLS

__all__ = ["RunHooks", "RunOptions"]


@dataclass(frozen=True)
class RunOptions:
    """The options of one run (:func:`kernbench.runner.run.run_experiment`).

    Parameters
    ----------
    out_dir : path, optional
        The results directory; defaults to ``results/<spec.name>``.
    jobs : int
        joblib ``n_jobs`` (-1: all cores). Workers compute; the driving process writes.
    fresh : bool
        Recompute finished cells too. A new result replaces the stored one only once it has
        finished (the old row moves to the store's history); an interrupted or failed
        recomputation leaves the finished result in place.
    realisations, only
        Plan filters (see :func:`kernbench.runner.plan.cells.plan_cells`).
    cell_ids : collection of str, optional
        Run only the planned cells with these identities (and the cells they take parameters
        from); ``kernbench verify`` reruns a sample of cells so.
    backend, scheduler : str, optional
        ``"local"`` (joblib/loky) or ``"dask"`` (a ``dask.distributed`` scheduler address, or a
        LocalCluster on 127.0.0.1); see :func:`kernbench.runner.execution.backends.open_executor`.
    timeout_s : float, optional
        Per-cell wall-clock limit; overrides ``spec.protocol.timeout_s``. A cell over it is
        killed and recorded as ``timeout``.
    wait : bool
        Queue behind another run holding the directory's lock instead of refusing (exit 2).
    reuse : sequence of paths
        Other results directories: a cell to run whose identity is stored there as ``done`` is
        copied instead of computed (``result["reused_from"]`` names the source). The identity
        covers data, realisation, method label, parameters, grid, protocol and version, so only
        the very same computation is taken (e.g. the SVM columns shared by Lin & Li's two
        tables).
    max_cells : int, optional
        Refuse a spec that plans more cells (``--max-cells``; see
        :func:`kernbench.runner.plan.cells.plan_cells`).
    threads : int, optional
        Threads of each cell's compiled kernels (``--threads``; None: the cores ÷ the cells run
        at once, 1 on a remote Dask scheduler). Results are the same for any count.
    """

    out_dir: str | os.PathLike[str] | None = None
    jobs: int = -1
    fresh: bool = False
    realisations: int | None = None
    only: Mapping[str, Sequence[str]] | None = None
    cell_ids: Collection[str] | None = None
    backend: str = "local"
    scheduler: str | None = None
    timeout_s: float | None = None
    wait: bool = False
    reuse: Sequence[str | os.PathLike[str]] = ()
    max_cells: int | None = DEFAULT_MAX_CELLS
    threads: int | None = None

    @property
    def filtered(self) -> bool:
        """Whether ``realisations`` or ``only`` narrow the plan."""
        return self.realisations is not None or any((self.only or {}).values())


@dataclass(frozen=True)
class RunHooks:
    """Progress hooks of a run, each optional.

    Parameters
    ----------
    on_start : callable
        ``on_start(n_to_run)``, once the cells to run are known.
    on_cell : callable
        ``on_cell(record)``, after each record is stored.
    on_data : callable
        Given a line before each missing dataset is downloaded (see
        :func:`kernbench.datasets.ensure_available`).
    """

    on_start: Callable[[int], None] | None = None
    on_cell: Callable[[CellRecord], None] | None = None
    on_data: Callable[[str], None] | None = None
