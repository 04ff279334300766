"""How far a run has got, read from its results store (``kernbench status``).

Counts the cells of the store's plan by status, per method and per dataset; sums the time of the
finished cells (and the CPU time they record); spans the run from its first start to its last
finish; and estimates the cell time the unfinished cells still need: for each, the mean time of
the ``done`` cells of the same method and dataset; else, when the dataset has ``done`` cells of
other methods, the method's time scaled to that dataset (a model log t = a_method + b_dataset
fitted to the ``done`` cells); else the mean of the same method; else no estimate.

Nothing here writes. The store is opened read-only and without the run lock, so a run may keep
writing while this reads: all reads happen in one read transaction (one consistent state). A store
no process has open (no ``-wal`` file) is read as an immutable file, because sqlite would leave
``-wal`` and ``-shm`` files behind a read-only connection; if a run opens it meanwhile, it is
read again through the WAL.

A cell the store has no row for yet is ``pending`` (queued, or running now: the runner writes a
cell's row when the cell ends). Its dataset and method come from the stored spec, which planned
``n_realisations`` realisations of every method on every dataset.
"""

from __future__ import annotations

import os
import socket
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kernbench.cells.records import FINAL_STATUSES
from kernbench.store.sqlite import ACTIVE_RUN, STORE_FILE, Store

#: the status columns, in display order (``pending``: in the plan, no row yet)
COLUMNS = ("done", "skipped", "failed", "timeout", "interrupted", "pending")
#: statuses whose cells ``--failed`` lists
FAILED = ("failed", "timeout")

Key = tuple[str, int, str]  # (dataset, realisation, method)


@dataclass
class Group:
    """The cells of one method (or one dataset).

    Attributes
    ----------
    label : str
    counts : dict
        ``status -> cells`` for every status of :data:`COLUMNS`.
    cell_seconds : float
        Summed time (finished_at - started_at) of its finished cells.
    cpu_seconds : float or None
        Summed CPU time of its finished cells that record one (None when none does: cells
        stored before kernbench recorded it). Unlike the cell time it does not count time a
        cell spent waiting: for a core, or stopped (SIGSTOP) with its run.
    mean_seconds : float or None
        Mean time of its ``done`` cells (None before the first).
    estimate_seconds : float or None
        Estimated cell time of its unfinished cells (None when none of them has an estimate).
    unestimated : int
        Unfinished cells without an estimate.
    """

    label: str
    counts: dict[str, int]
    cell_seconds: float = 0.0
    cpu_seconds: float | None = None
    mean_seconds: float | None = None
    estimate_seconds: float | None = None
    unestimated: int = 0

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def finished(self) -> int:
        return sum(self.counts[s] for s in FINAL_STATUSES)


@dataclass
class Estimate:
    """What the unfinished cells of the plan still need: an estimate, not a measurement.

    Attributes
    ----------
    cells : int
        Unfinished cells (pending, failed, timeout, interrupted: a rerun runs them all).
    by_dataset_mean, by_scaled, by_method_mean, unestimated : int
        How many were estimated from the mean of the same (method, dataset), from the method's
        time scaled to the dataset by the other methods' cells on it (:func:`cell_time_model`),
        from the method's mean alone, and how many have no estimate (their method has no
        ``done`` cell yet).
    unestimated_methods : list of str
        Those methods.
    cell_seconds : float
        Estimated cell time of the estimated cells.
    jobs : int
        Cells assumed to run at once.
    wall_seconds : float
        ``cell_seconds / jobs``.
    """

    cells: int
    by_dataset_mean: int
    by_scaled: int
    by_method_mean: int
    unestimated: int
    unestimated_methods: list[str]
    cell_seconds: float
    jobs: int
    wall_seconds: float


@dataclass
class FailedCell:
    dataset: str
    realisation: int
    method: str
    status: str
    attempts: int
    error: str


@dataclass
class Progress:
    """The progress of one results directory (see the module docstring).

    Attributes
    ----------
    directory : Path
    name : str
        The stored spec's name (the directory name without one).
    plan_size : int
        Cells of the spec last run into the store.
    counts : dict
        ``status -> cells`` over the whole plan.
    by_method, by_dataset : list of Group
        In spec order, then labels only the store knows (sorted).
    cell_seconds : float
        Summed time of the finished cells.
    cpu_seconds : float or None
        Summed CPU time of the finished cells that record one (see :class:`Group`).
    cpu_cells : int
        How many finished cells record one.
    first_start, last_finish : float or None
        Unix times: the earliest start and the latest finish of a cell of the plan.
    estimate : Estimate
    failed : list of FailedCell
        Failed and timed-out cells, with the first line of their error.
    notes : list of str
        What the numbers leave out.
    """

    directory: Path
    name: str
    plan_size: int
    counts: dict[str, int]
    by_method: list[Group]
    by_dataset: list[Group]
    cell_seconds: float
    first_start: float | None
    last_finish: float | None
    estimate: Estimate
    cpu_seconds: float | None = None
    cpu_cells: int = 0
    failed: list[FailedCell] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: a run going on in the directory: ``{"pid", "host", "fresh", "cells", "left"}`` (its cells to
    #: compute, and how many of them it has not recorded yet), else None
    running: dict[str, Any] | None = None
    #: what that run still has to do, estimated (:func:`run_estimate`), else None
    run_estimate: Estimate | None = None

    @property
    def finished(self) -> int:
        return sum(self.counts[s] for s in FINAL_STATUSES)

    @property
    def unfinished(self) -> int:
        return self.plan_size - self.finished

    @property
    def percent(self) -> float:
        return 100.0 * self.finished / self.plan_size if self.plan_size else 100.0

    @property
    def wall_seconds(self) -> float | None:
        if self.first_start is None or self.last_finish is None:
            return None
        return max(0.0, self.last_finish - self.first_start)

    def to_dict(self) -> dict[str, Any]:
        """The numbers as JSON-ready data (``kernbench status --json``)."""

        def groups(gs: list[Group]) -> dict[str, Any]:
            return {g.label: {**asdict(g), "total": g.total, "finished": g.finished} for g in gs}

        return {
            "directory": str(self.directory),
            "name": self.name,
            "plan_size": self.plan_size,
            "finished": self.finished,
            "unfinished": self.unfinished,
            "percent_finished": round(self.percent, 2),
            "counts": self.counts,
            "cell_seconds": self.cell_seconds,
            "cpu_seconds": self.cpu_seconds,
            "cpu_cells": self.cpu_cells,
            "first_start": self.first_start,
            "last_finish": self.last_finish,
            "wall_seconds": self.wall_seconds,
            "estimate": asdict(self.estimate),
            "by_method": groups(self.by_method),
            "by_dataset": groups(self.by_dataset),
            "failed": [asdict(f) for f in self.failed],
            "notes": self.notes,
            "running": self.running,
            "run_estimate": asdict(self.run_estimate) if self.run_estimate else None,
        }


def read_progress(directory: str | os.PathLike[str], *, jobs: int = 1) -> Progress:
    """The progress of the run in ``directory`` (read-only; see the module docstring).

    Raises
    ------
    StoreError
        No store, or a damaged one (one line naming the file and what to do).
    """
    directory = Path(directory)
    spec, plan, rows, active = read_store(directory)
    progress = progress_of(spec, plan, rows, directory=directory, jobs=jobs)
    progress.running = _running(directory, active, rows)
    if progress.running is not None:
        progress.run_estimate = run_estimate(active, rows, jobs=jobs)
    return progress


def read_store(
    directory: str | os.PathLike[str],
) -> tuple[dict[str, Any], set[str] | None, list[dict[str, Any]], dict[str, Any] | None]:
    """``(spec, plan ids, cell rows, active run)`` of the store in ``directory``, read in one
    read transaction without the run lock (see the module docstring); what
    :func:`read_progress` and ``benchmarks/reproduce_profile.py`` count from."""
    directory = Path(directory)
    wal = directory / f"{STORE_FILE}-wal"
    immutable = not wal.exists()
    while True:
        with Store(directory, readonly=True, immutable=immutable) as store, store.snapshot():
            spec = store.get_meta("spec") or {}
            plan = store.plan_ids()
            rows = store.summaries()
            active = store.get_meta(ACTIVE_RUN)
        if not immutable or not wal.exists():
            break
        immutable = False  # a run opened the store while we read it: read again, through the WAL
    return spec, plan, rows, active


def run_estimate(
    active: dict[str, Any], rows: list[dict[str, Any]], *, jobs: int = 1
) -> Estimate | None:
    """The estimate of what the run going on was asked to do (its ``--realisations`` and
    ``--only``): its cells not recorded since it started, timed as :func:`progress_of` times the
    plan's; None for a run that did not record its cells' keys (an older kernbench).

    Parameters
    ----------
    active : dict
        The store's ``active_run`` record: ``cells`` (ids), ``keys`` (dataset, realisation,
        method of each), ``started_at``.
    rows : list of dict
        The store's cell rows (:meth:`Store.summaries`).
    jobs : int
    """
    ids, keys = active.get("cells") or [], active.get("keys")
    if not isinstance(keys, list) or len(keys) != len(ids):
        return None
    started = float(active.get("started_at") or 0.0)
    recorded = {r["cell_id"] for r in rows if (r.get("finished_at") or 0.0) >= started}
    left = [
        (str(d), str(m)) for cid, (d, _, m) in zip(ids, keys, strict=True) if cid not in recorded
    ]
    estimate_of = cell_time_estimator(done_times(rows))
    timed = [(m, estimate_of(m, d)) for d, m in left]
    seconds = sum(t for _, (t, _) in timed if t is not None)
    sources = [src for _, (t, src) in timed if t is not None]
    missing = [m for m, (t, _) in timed if t is None]
    return Estimate(
        cells=len(left),
        by_dataset_mean=sources.count("pair"),
        by_scaled=sources.count("scaled"),
        by_method_mean=sources.count("method"),
        unestimated=len(missing),
        unestimated_methods=sorted(set(missing)),
        cell_seconds=seconds,
        jobs=jobs,
        wall_seconds=seconds / jobs,
    )


def _running(
    directory: Path, active: dict[str, Any] | None, rows: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """The run recorded as going on in ``directory`` if its process still holds the lock."""
    from kernbench.store.lock import pid_alive, read_holder

    if not isinstance(active, dict):
        return None
    holder = read_holder(directory)
    if holder.get("pid") != active.get("pid") or holder.get("host") != socket.gethostname():
        return None
    if not isinstance(holder.get("pid"), int) or not pid_alive(holder["pid"]):
        return None
    started = float(active.get("started_at") or 0.0)
    todo = set(active.get("cells") or ())
    done = {
        r["cell_id"]
        for r in rows
        if r["cell_id"] in todo and (r.get("finished_at") or 0.0) >= started
    }
    return {
        "pid": holder["pid"],
        "host": holder["host"],
        "fresh": bool(active.get("fresh")),
        "cells": len(todo),
        "left": len(todo - done),
    }


def progress_of(
    spec: dict[str, Any],
    plan: set[str] | None,
    rows: list[dict[str, Any]],
    *,
    directory: Path,
    jobs: int = 1,
) -> Progress:
    """The :class:`Progress` of a store's spec, plan and cell rows (:meth:`Store.summaries`)."""
    notes: list[str] = []
    expected = _planned_keys(spec)
    if plan is not None:
        current = [r for r in rows if r["cell_id"] in plan]
        if len(current) < len(rows):
            notes.append(
                f"{len(rows) - len(current)} stored cell(s) of other specs (or earlier versions "
                "of this one) are not counted."
            )
        plan_size = len(plan)
    else:
        current = _latest_by_key(rows)
        plan_size = max(len(expected or ()), len(current))
        notes.append(
            "this store predates recorded plans: its cells are counted by dataset, method and "
            "realisation labels."
        )

    recorded = {_key(r) for r in current}
    n_pending = plan_size - len(current)
    pending: list[Key] = []
    if n_pending:
        missing = [k for k in expected or () if k not in recorded]
        if len(missing) == n_pending:
            pending = missing
        else:
            notes.append(
                f"{n_pending} pending cell(s) could not be attributed to a method and dataset "
                "(the stored spec does not match the plan); they have no estimate."
            )

    durations = _durations(current)
    done = done_times(current, durations)
    method_mean = _means((m, seconds) for m, _, seconds in done)
    dataset_mean = _means((d, seconds) for _, d, seconds in done)
    estimate_of = cell_time_estimator(done)

    cells = [
        _Cell(
            r["dataset"],
            r["method"],
            r["status"] if r["status"] in COLUMNS else "pending",
            durations[r["cell_id"]],
            cpu=_cpu(r),
        )
        for r in current
    ]
    cells += [_Cell(d, m, "pending") for d, _, m in pending]
    for c in cells:
        if c.status not in FINAL_STATUSES:
            c.estimate, c.source = estimate_of(c.method, c.dataset)

    methods = _ordered(_labels(spec, "methods"), {c.method for c in cells})
    datasets = _ordered(_labels(spec, "datasets"), {c.dataset for c in cells})
    by_method = [
        _group(m, [c for c in cells if c.method == m], method_mean.get(m)) for m in methods
    ]
    by_dataset = [
        _group(d, [c for c in cells if c.dataset == d], dataset_mean.get(d)) for d in datasets
    ]

    unattributed = n_pending - len(pending)
    counts = Counter({s: 0 for s in COLUMNS})
    counts.update(c.status for c in cells)
    counts["pending"] += unattributed
    unfinished = [c for c in cells if c.status not in FINAL_STATUSES]
    estimated = sum(c.estimate for c in unfinished if c.estimate is not None)
    no_estimate = [c for c in unfinished if c.estimate is None]
    estimate = Estimate(
        cells=len(unfinished) + unattributed,
        by_dataset_mean=sum(1 for c in unfinished if c.source == "pair"),
        by_scaled=sum(1 for c in unfinished if c.source == "scaled"),
        by_method_mean=sum(1 for c in unfinished if c.source == "method"),
        unestimated=len(no_estimate) + unattributed,
        unestimated_methods=[m for m in methods if any(c.method == m for c in no_estimate)],
        cell_seconds=estimated,
        jobs=jobs,
        wall_seconds=estimated / jobs,
    )
    starts = [r["started_at"] for r in current if r["started_at"] is not None]
    finishes = [r["finished_at"] for r in current if r["finished_at"] is not None]
    failed = [
        FailedCell(
            dataset=r["dataset"],
            realisation=int(r["realisation"]),
            method=r["method"],
            status=r["status"],
            attempts=int(r["attempts"] or 1),
            error=_first_line(r["error"]),
        )
        for r in sorted(current, key=lambda r: (r["dataset"], r["method"], r["realisation"]))
        if r["status"] in FAILED
    ]
    return Progress(
        directory=directory,
        name=str(spec.get("name") or directory.name),
        plan_size=plan_size,
        counts=dict(counts),
        by_method=by_method,
        by_dataset=by_dataset,
        cell_seconds=_finished_seconds(cells),
        cpu_seconds=_finished_cpu(cells),
        cpu_cells=sum(1 for c in cells if c.status in FINAL_STATUSES and c.cpu is not None),
        first_start=min(starts, default=None),
        last_finish=max(finishes, default=None),
        estimate=estimate,
        failed=failed,
        notes=notes,
    )


@dataclass
class _Cell:
    """One cell of the plan while counting: its status, its time (finished, with both times
    recorded) and, unfinished, its estimated time and where that came from."""

    dataset: str
    method: str
    status: str
    seconds: float | None = None
    cpu: float | None = None
    estimate: float | None = None
    source: str = ""  # "pair": same method and dataset, "scaled": cell_time_model, "method": mean


def _group(label: str, cells: list[_Cell], mean: float | None) -> Group:
    counts = {s: 0 for s in COLUMNS}
    for c in cells:
        counts[c.status] += 1
    unfinished = [c for c in cells if c.status not in FINAL_STATUSES]
    estimates = [c.estimate for c in unfinished if c.estimate is not None]
    return Group(
        label=label,
        counts=counts,
        cell_seconds=_finished_seconds(cells),
        cpu_seconds=_finished_cpu(cells),
        mean_seconds=mean,
        estimate_seconds=sum(estimates) if estimates else None,
        unestimated=len(unfinished) - len(estimates),
    )


def _finished_seconds(cells: list[_Cell]) -> float:
    return sum(c.seconds for c in cells if c.status in FINAL_STATUSES and c.seconds is not None)


def _finished_cpu(cells: list[_Cell]) -> float | None:
    cpu = [c.cpu for c in cells if c.status in FINAL_STATUSES and c.cpu is not None]
    return sum(cpu) if cpu else None


def _cpu(row: dict[str, Any]) -> float | None:
    """The CPU seconds a stored row records (``cpu_seconds`` of :meth:`Store.summaries`)."""
    value = row.get("cpu_seconds")
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _labels(spec: dict[str, Any], key: str) -> list[str]:
    """The labels of the stored spec's ``methods`` or ``datasets``, in spec order."""
    entries = spec.get(key) or []
    return [str(e["label"]) for e in entries if isinstance(e, dict) and "label" in e]


def _planned_keys(spec: dict[str, Any]) -> list[Key] | None:
    """The (dataset, realisation, method) of every cell the stored spec plans (None without a
    readable spec): ``n_realisations`` of the dataset's protocol (else the spec's) per method."""
    try:
        methods = [str(m["label"]) for m in spec["methods"]]
        default = spec["protocol"]
        keys = []
        for d in spec["datasets"]:
            n = int((d.get("protocol") or default)["n_realisations"])
            keys += [(str(d["label"]), r, m) for r in range(n) for m in methods]
        return keys
    except (KeyError, TypeError, ValueError):
        return None


def _key(row: dict[str, Any]) -> Key:
    return (row["dataset"], int(row["realisation"]), row["method"])


def _latest_by_key(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (dataset, realisation, method): the one finished last."""
    latest: dict[Key, dict[str, Any]] = {}
    for r in sorted(rows, key=lambda r: r["finished_at"] or 0.0):
        latest[_key(r)] = r
    return list(latest.values())


def _means(pairs: Iterable[tuple[Any, float]]) -> dict[Any, float]:
    """``key -> mean of its values`` over ``(key, value)`` pairs."""
    values: dict[Any, list[float]] = {}
    for key, value in pairs:
        values.setdefault(key, []).append(value)
    return {key: sum(v) / len(v) for key, v in values.items()}


def cell_time_estimator(
    done: list[tuple[str, str, float]],
) -> Callable[[str, str], tuple[float | None, str]]:
    """``(method, dataset) -> (estimated seconds or None, where it came from)``: the mean time of
    the done cells of the same method and dataset (``"pair"``); else the method's time scaled to
    the dataset (``"scaled"``, :func:`cell_time_model`); else the method's mean (``"method"``);
    else ``(None, "")``. ``kernbench status`` and the runner's longest-first order both use it.

    Parameters
    ----------
    done : list of (method, dataset, seconds)
        One entry per done cell (:func:`done_times`).
    """
    pair_mean = _means(((m, d), seconds) for m, d, seconds in done)
    method_mean = _means((m, seconds) for m, _, seconds in done)
    scaled = cell_time_model(done)

    def estimate(method: str, dataset: str) -> tuple[float | None, str]:
        if (method, dataset) in pair_mean:
            return pair_mean[method, dataset], "pair"
        if (t := scaled(method, dataset)) is not None:
            return t, "scaled"
        if method in method_mean:
            return method_mean[method], "method"
        return None, ""

    return estimate


def plan_estimate(
    to_run: list[tuple[str, str]], rows: list[dict[str, Any]]
) -> tuple[float, int, int]:
    """Cell time the ``(method, dataset)`` cells of ``to_run`` need, from a store's ``rows``
    (:meth:`kernbench.store.Store.summaries`): ``(seconds of the estimated cells, how many were
    estimated, the done cells it came from)``, by :func:`cell_time_estimator`. What a run will
    take before it starts, from a pilot run (fewer realisations) or an earlier run in the store.
    """
    done = done_times(rows)
    estimate = cell_time_estimator(done)
    times = [t for m, d in to_run if (t := estimate(m, d)[0]) is not None]
    return float(sum(times)), len(times), len(done)


def cell_time_model(done: list[tuple[str, str, float]]) -> Callable[[str, str], float | None]:
    """``(method, dataset) -> estimated seconds`` from a model fitted to the ``done`` cells.

    Cell times span orders of magnitude across datasets (rows, features) and methods (grids,
    solvers), roughly as a product of the two, so the model is log t = a_method + b_dataset,
    fitted by least squares to the log times of the done cells; exp(a + b) is multiplied by the
    mean of exp(residual) (Duan's smearing: the mean time, not the geometric one). A pair gets an
    estimate only when its method and its dataset have done cells and are linked through them
    (the same connected part of the method-dataset graph): otherwise a + b is not determined.

    Parameters
    ----------
    done : list of (method, dataset, seconds)
        One entry per done cell.

    Returns
    -------
    callable
        ``estimate(method, dataset)``: the modelled mean cell time in seconds, or None.
    """
    if not done:
        return lambda method, dataset: None
    import numpy as np  # status without done cells needs no numpy

    methods = sorted({m for m, _, _ in done})
    datasets = sorted({d for _, d, _ in done})
    mi = {m: i for i, m in enumerate(methods)}
    di = {d: len(methods) + i for i, d in enumerate(datasets)}
    A = np.zeros((len(done), len(methods) + len(datasets)))
    rows = np.arange(len(done))
    A[rows, [mi[m] for m, _, _ in done]] = 1.0
    A[rows, [di[d] for _, d, _ in done]] = 1.0
    logt = np.log(np.maximum([t for _, _, t in done], 1e-3))
    coef = np.linalg.lstsq(A, logt, rcond=None)[0]  # minimum norm; a + b unique where linked
    smear = float(np.mean(np.exp(logt - A @ coef)))
    parent = list(range(A.shape[1]))  # union-find over methods and datasets

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for m, d, _ in done:
        parent[root(mi[m])] = root(di[d])

    def estimate(method: str, dataset: str) -> float | None:
        if method not in mi or dataset not in di or root(mi[method]) != root(di[dataset]):
            return None
        return float(np.exp(coef[mi[method]] + coef[di[dataset]])) * smear

    return estimate


def done_times(
    rows: list[dict[str, Any]], durations: dict[str, float | None] | None = None
) -> list[tuple[str, str, float]]:
    """``(method, dataset, seconds)`` of the ``done`` rows with both times recorded (what the
    estimates are made from); ``durations``: :func:`_durations` of ``rows`` if already known."""
    durations = _durations(rows) if durations is None else durations
    return [
        (r["method"], r["dataset"], seconds)
        for r in rows
        if r["status"] == "done" and (seconds := durations[r["cell_id"]]) is not None
    ]


def _durations(rows: list[dict[str, Any]]) -> dict[str, float | None]:
    """``cell_id -> finished_at - started_at`` (None without both times)."""
    out: dict[str, float | None] = {}
    for r in rows:
        start, end = r["started_at"], r["finished_at"]
        ok = start is not None and end is not None and end >= start
        out[r["cell_id"]] = float(end - start) if ok else None
    return out


def _ordered(spec_labels: list[str], seen: set[str]) -> list[str]:
    """The spec's labels that have cells, in spec order, then the others sorted."""
    return [x for x in dict.fromkeys(spec_labels) if x in seen] + sorted(seen - set(spec_labels))


def _first_line(text: str | None) -> str:
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[0] if lines else "(no error recorded)"


def format_seconds(seconds: float | None) -> str:
    """A duration for people: ``42 s``, ``12 min 5 s``, ``3 h 12 min``, ``2 d 5 h``."""
    if seconds is None:
        return "-"
    s = round(seconds)
    if s < 60:
        return f"{seconds:.1f} s" if seconds < 10 else f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    if s < 48 * 3600:
        return f"{s // 3600} h {s % 3600 // 60} min"
    return f"{s // 86400} d {s % 86400 // 3600} h"


def format_time(stamp: float | None) -> str:
    """A Unix time as local ``YYYY-MM-DD HH:MM``."""
    return "-" if stamp is None else time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp))
