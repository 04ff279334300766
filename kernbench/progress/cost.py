"""What cells will cost before any has run: a size per cell and seconds per method.

A cell's size is ``training rows × features × fits × rounds`` (:func:`cell_units`): fits are
the grid's points times the CV folds plus the refit, rounds the first of :data:`ROUND_PARAMS`
the method sets. A method's CPU seconds per cell are ``c × size ** p``, with ``c`` and ``p`` per
estimator fitted to the CPU times of the cells recorded in the shipped values files
(``experiments/values/*.csv``) by ``benchmarks/calibrate_cost_model.py``, which writes
:mod:`kernbench.progress.cost_calibration` (the log: ``benchmarks/logs/cost_model.md``). An
estimator
without recorded cells (a plug-in, another package's class) gets the median estimator's ``c``
and ``p``, and is named as such. The exponents are small (0.1-0.5: at the recorded sizes a cell's
time is mostly what does not grow with it), so far beyond the recorded sizes (up to about 10^9
units, a few thousand rows) the estimate is low.

Once a store has ``done`` cells, their times take precedence (:func:`plan_cost`): the mean time
of the same method and dataset, else the method's time scaled to the dataset, else the method's
mean (:func:`kernbench.progress.status.cell_time_estimator`, which ``kernbench status`` uses
too); the model fills in the rest. The runner's longest-first order uses the same size
(:func:`kernbench.runner.plan.order.longest_first`).

The wall time at ``--jobs J`` is the start-up (interpreter, imports, workers) plus the cells'
time spread over the workers (never less than the longest cell), on an idle machine; with other
work on the machine (its load average), the cells get a share of the cores and take longer.
"""

from __future__ import annotations

import math
import os
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kernbench.specs.types import DatasetSpec, MethodSpec, Protocol

__all__ = [
    "PlanCost",
    "cell_units",
    "done_cpu_times",
    "machine_load",
    "plan_cost",
    "seconds_per_cell",
]

#: parameters that count a method's rounds (boosting iterations, solver passes), first found wins
ROUND_PARAMS = ("n_estimators", "max_iter", "n_iter", "T")
#: rows assumed for a dataset whose size the catalogue does not give
UNKNOWN_ROWS = 1000


def cell_units(dataset: DatasetSpec, method: MethodSpec, protocol: Protocol) -> float:
    """A cell's size in arbitrary units: training rows × features × fits × rounds.

    Fits are the grid's points times the CV folds, plus the refit (1 without a grid); rounds the
    first of :data:`ROUND_PARAMS` the method sets, the mean of its grid values when searched. An
    iteration cap the method scores along one fit (its ``path_param``: AdaBoost's
    ``n_estimators``, CGENS's ``max_iter``) counts its largest value once, not once per value.

    Parameters
    ----------
    dataset, method, protocol
        The cell's (a :class:`kernbench.runner.plan.cells.Cell`'s attributes of these names).

    Returns
    -------
    float
    """
    rows, features = _size(dataset, protocol)
    grid = {k: list(v) for k, v in method.grid.items()}
    name = next((k for k in ROUND_PARAMS if k in grid or k in method.params), None)
    rounds = 1.0
    if name in grid:
        values = [float(v) for v in grid[name] if _count(v)] or [1.0]
        if name == _path_param(method):
            rounds = max(values)
            del grid[name]  # one fit per fold scores every value
        else:
            rounds = sum(values) / len(values)
    elif name is not None and _count(method.params[name]):
        rounds = float(method.params[name])
    points = math.prod(len(values) for values in grid.values())
    fits = points * max(protocol.cv_folds, 1) + 1 if method.grid else 1
    return float(rows * features * fits * rounds)


def _count(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value > 0


def _path_param(method: MethodSpec) -> str | None:
    """The iteration cap the method's class scores along one fit (None when it has none)."""
    try:
        from kernbench.methods.plugins import method_class

        return getattr(method_class(method.estimator, method.source), "path_param", None)
    except Exception:  # noqa: BLE001 - an unknown class only weakens the estimate
        return None


def seconds_per_cell(estimator: str, units: float) -> tuple[float, bool]:
    """``(modelled CPU seconds of a cell of this size, whether the estimator is calibrated)``."""
    from kernbench.progress.cost_calibration import CALIBRATION

    known = CALIBRATION["estimators"]
    if estimator in known:
        c, p = known[estimator]
        return c * max(units, 1.0) ** p, True
    c = statistics.median(v[0] for v in known.values())
    p = statistics.median(v[1] for v in known.values())
    return c * max(units, 1.0) ** p, False


@dataclass
class PlanCost:
    """The estimated cost of a list of cells: an estimate, not a measurement.

    Attributes
    ----------
    cells : int
        Cells estimated.
    from_store : int
        Of them, estimated from the store's ``done`` cells; the others from the model.
    cpu_seconds : float
        Their summed cell time.
    longest_seconds : float
        The longest cell's.
    workers : int
        Cells run at once.
    startup_seconds : float
        Interpreter, imports and workers, once per run.
    wall_seconds : float
        On an idle machine: start-up + the cells over the workers (at least the longest cell).
    load : float or None
        This machine's 1-minute load average when estimated (None where unknown).
    cores : int
    loaded_wall_seconds : float
        The same divided by the run's share of the cores under that load, ``cores / (load +
        workers)`` at most 1 (= ``wall_seconds`` idle).
    uncalibrated : list of str
        Estimators without recorded cells (given the median estimator's cost).
    """

    cells: int
    from_store: int
    cpu_seconds: float
    longest_seconds: float
    workers: int
    startup_seconds: float
    wall_seconds: float
    load: float | None
    cores: int
    loaded_wall_seconds: float
    uncalibrated: list[str] = field(default_factory=list)


def plan_cost(
    cells: Sequence[Any], rows: Sequence[dict[str, Any]] = (), *, jobs: int = 1
) -> PlanCost:
    """The estimated CPU and wall time of ``cells`` (see the module docstring).

    Parameters
    ----------
    cells : sequence of Cell
        Anything with ``dataset``, ``method`` and ``protocol`` (a planned cell).
    rows : sequence of dict
        The store's cell rows (:meth:`kernbench.store.Store.summaries`): ``done`` ones time the
        estimate where they can (:func:`done_cpu_times`).
    jobs : int
        ``--jobs`` (-1: one per core).
    """
    from kernbench.progress.cost_calibration import CALIBRATION
    from kernbench.progress.status import cell_time_estimator

    done = done_cpu_times(rows)
    estimate = cell_time_estimator(done) if done else None
    times: list[float] = []
    from_store = 0
    uncalibrated: set[str] = set()
    per_cell = CALIBRATION["per_cell_s"]
    for c in cells:
        t = estimate(c.method.label, c.dataset.label)[0] if estimate is not None else None
        if t is not None:
            from_store += 1
        else:
            units = cell_units(c.dataset, c.method, c.protocol)
            t, known = seconds_per_cell(c.method.estimator, units)
            t += per_cell
            if not known:
                uncalibrated.add(c.method.estimator)
        times.append(t)
    cores = _cores()
    workers = max(1, min(cores if jobs < 1 else min(jobs, cores), len(times) or 1))
    total, longest = float(sum(times)), max(times, default=0.0)
    startup = CALIBRATION["startup_s"] if times else 0.0
    spread = max(total / workers, longest)
    load = machine_load()
    share = 1.0 if load is None else min(1.0, cores / max(load + workers, 1e-9))
    return PlanCost(
        cells=len(times),
        from_store=from_store,
        cpu_seconds=total,
        longest_seconds=longest,
        workers=workers,
        startup_seconds=startup,
        wall_seconds=startup + spread,
        load=load,
        cores=cores,
        loaded_wall_seconds=(startup + spread) / share,
        uncalibrated=sorted(uncalibrated),
    )


def done_cpu_times(rows: Sequence[dict[str, Any]]) -> list[tuple[str, str, float]]:
    """``(method, dataset, seconds)`` of the ``done`` rows: the CPU time a row records, else its
    wall time (rows stored before CPU times were). CPU, because a cell's wall time on a busy
    machine counts its waits for a core, which :func:`plan_cost` applies again from the load."""
    out = []
    for r in rows:
        if r["status"] != "done":
            continue
        cpu, start, end = r.get("cpu_seconds"), r.get("started_at"), r.get("finished_at")
        if isinstance(cpu, int | float) and not isinstance(cpu, bool):
            out.append((r["method"], r["dataset"], float(cpu)))
        elif start is not None and end is not None and end >= start:
            out.append((r["method"], r["dataset"], float(end - start)))
    return out


def machine_load() -> float | None:
    """The 1-minute load average (None where the system has none)."""
    try:
        return float(os.getloadavg()[0])
    except (AttributeError, OSError):
        return None


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _size(dataset: DatasetSpec, protocol: Protocol) -> tuple[float, float]:
    """Training rows and features of a dataset, from its options and the catalogue."""
    options = dataset.options
    n, d = options.get("n_train"), options.get("d")
    if n is None or d is None:
        try:
            from kernbench.datasets import get_dataset

            entry = get_dataset(dataset.name)
            total, d = entry.n, d if d is not None else entry.d
        except Exception:  # noqa: BLE001 - an unknown size only weakens the estimate
            total = None
        if n is None:
            n = _train_rows(total, protocol.train_size)
    return float(n or UNKNOWN_ROWS), float(d or 1)


def _train_rows(total: int | None, train_size: Any) -> float:
    if isinstance(train_size, int) and not isinstance(train_size, bool) and train_size > 1:
        return float(train_size)
    if total is None:
        return float(UNKNOWN_ROWS)
    if isinstance(train_size, float) and 0 < train_size < 1:
        return total * train_size
    return float(total)
