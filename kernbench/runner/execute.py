"""Run cells through joblib and record each one in the store as it finishes.

Workers compute; only the driving process writes the store (one transaction per finished cell), so
a killed run loses only cells in flight, and a rerun skips every finished cell. A cell that raises
is recorded as ``failed`` with its message and traceback while the run goes on.
"""

from __future__ import annotations

import contextlib
import functools
import os
import platform
import signal
import socket
import subprocess
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import kernbench
from kernbench.errors import DataError
from kernbench.runner.backends import CellExecutor
from kernbench.runner.lock import RunLock, describe_holder
from kernbench.runner.plan import Cell, plan_cells
from kernbench.runner.preprocess import fit_scaler
from kernbench.runner.select import select_fit_score
from kernbench.spec import spec_to_dict
from kernbench.spec_types import Spec
from kernbench.store import FINAL_STATUSES, CellRecord, Store


@dataclass
class RunSummary:
    """What a run did: counts by status of the cells it planned, and where it wrote."""

    out_dir: Path
    planned: int = 0
    skipped_done: int = 0
    reused: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    failed: list[tuple[str, int, str, str]] = field(default_factory=list)
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failed


def versions() -> dict[str, str]:
    """Versions of kernbench and the numerical stack, recorded with every cell."""
    import joblib
    import scipy
    import sklearn

    return {
        "kernbench": kernbench.__version__,
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "scikit-learn": sklearn.__version__,
        "joblib": joblib.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


@functools.cache
def git_revision() -> dict[str, str | bool] | None:
    """``{"sha", "dirty"}`` of the kernbench source checkout, or None outside a git checkout.

    Called once per run by the driving process (two fast ``git`` calls, 5 s limit each).
    """
    root = Path(kernbench.__file__).resolve().parents[1]
    if not (root / ".git").exists():
        return None
    try:
        sha = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
        dirty = (
            subprocess.run(
                ["git", "-C", str(root), "diff", "--quiet", "HEAD", "--", "kernbench"],
                capture_output=True,
                timeout=5,
            ).returncode
            != 0
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return {"sha": sha, "dirty": dirty}


def _is_unavailable(exc: BaseException) -> bool:
    return isinstance(exc, DataError) and type(exc).__name__ in {
        "RealisationUnavailable",
        "DataUnavailable",
    }


def run_cell(cell: Cell) -> CellRecord:
    """Compute one cell: realisation -> preprocessing -> CV selection -> refit -> test.

    Never raises for a problem inside the cell: it returns a ``failed`` (or ``skipped`` when the
    realisation does not exist) record carrying the error and traceback.
    """
    from kernbench.datasets import make_realisation, register_entry
    from kernbench.methods import get_method

    started = time.time()
    base = dict(
        cell_id=cell.cell_id,
        dataset=cell.dataset.label,
        realisation=cell.realisation,
        method=cell.method.label,
        estimator=cell.method.estimator,
        started_at=started,
    )
    try:
        if cell.dataset.entry is not None:  # a user's dataset: make it known in this worker
            register_entry(cell.dataset.entry, origin="cell")
        real = make_realisation(
            cell.dataset.name,
            dict(cell.dataset.options),
            cell.protocol,
            cell.realisation,
            seed=cell.protocol.seed,
        )
        if real is None:
            return CellRecord(
                **base,
                status="skipped",
                error="realisation not available (protocol.fallback: fewer)",
                finished_at=time.time(),
            )
        scale = fit_scaler(real.X_train, cell.protocol.preprocess, cell.protocol.minmax_range)
        X_train, X_test = scale(real.X_train), scale(real.X_test)
        cls = get_method(cell.method.estimator)
        est = cls(**cell.method.params)
        if "random_state" in est.get_params() and "random_state" not in cell.method.params:
            est.set_params(random_state=cell.learner_seed)
        outcome = select_fit_score(
            est,
            cell.method.grid,
            X_train,
            real.y_train,
            X_test,
            real.y_test,
            cv_folds=cell.protocol.cv_folds,
            stratify=cell.protocol.stratify,
            cv_seed=cell.cv_seed,
        )
        result = {
            "cv": outcome.cv,
            "fit_time_s": outcome.fit_time_s,
            "predict_time_s": outcome.predict_time_s,
            "select_time_s": outcome.select_time_s,
            "model_size": outcome.model_size,
            "trace": outcome.trace,
            "n_train": int(X_train.shape[0]),
            "n_test": int(X_test.shape[0]),
            "n_features": int(X_train.shape[1]),
            "split_info": dict(real.info),
            "seeds": {
                "experiment": cell.protocol.seed,
                "cv": cell.cv_seed,
                "learner": cell.learner_seed,
            },
            "fingerprint": cell.fingerprint,
            "versions": versions(),
            "host": socket.gethostname(),
            **outcome.extra,
        }
        return CellRecord(
            **base,
            status="done",
            test_error=outcome.test_error,
            train_error=outcome.train_error,
            params=outcome.params,
            result=result,
            finished_at=time.time(),
        )
    except Exception as exc:  # recorded, never propagated: the run goes on
        status = "skipped" if _is_unavailable(exc) else "failed"
        return CellRecord(
            **base,
            status=status,
            error=f"{type(exc).__name__}: {exc}",
            traceback=traceback.format_exc(),
            result={"versions": versions(), "host": socket.gethostname()},
            finished_at=time.time(),
        )


def default_out_dir(spec: Spec) -> Path:
    return Path("results") / spec.name


def cell_statuses(spec: Spec, out_dir: Path, cells: Sequence[Cell]) -> dict[str, str]:
    """Status of each planned cell in the store (``pending`` when never recorded)."""
    if not (out_dir / "results.sqlite").exists():
        return {c.cell_id: "pending" for c in cells}
    with Store(out_dir) as store:
        known = store.statuses()
    return {c.cell_id: known.get(c.cell_id, "pending") for c in cells}


def run_experiment(
    spec: Spec,
    *,
    out_dir: str | os.PathLike[str] | None = None,
    jobs: int = -1,
    fresh: bool = False,
    realisations: int | None = None,
    only: Mapping[str, Sequence[str]] | None = None,
    on_cell: Callable[[CellRecord], None] | None = None,
    on_start: Callable[[int], None] | None = None,
    backend: str = "local",
    scheduler: str | None = None,
    timeout_s: float | None = None,
    wait: bool = False,
    reuse: Sequence[str | os.PathLike[str]] = (),
) -> RunSummary:
    """Run every planned cell that is not finished; record each as it completes.

    Parameters
    ----------
    spec : Spec
    out_dir : path, optional
        Defaults to ``results/<spec.name>``.
    jobs : int
        joblib ``n_jobs`` (-1: all cores). Workers compute; this process writes.
    fresh : bool
        Recompute finished cells too.
    realisations, only
        Plan filters (see :func:`kernbench.runner.plan.plan_cells`).
    on_cell, on_start : callables, optional
        Progress hooks: ``on_start(n_to_run)`` once, ``on_cell(record)`` after each recorded cell.
    backend, scheduler : str, optional
        ``"local"`` (joblib/loky) or ``"dask"`` (a ``dask.distributed`` scheduler address, or a
        LocalCluster on 127.0.0.1); see :class:`kernbench.runner.backends.CellExecutor`.
    timeout_s : float, optional
        Per-cell wall-clock limit; overrides ``spec.protocol.timeout_s``. A cell over it is killed
        and recorded as ``timeout``.
    wait : bool
        Queue behind another run holding the directory's lock instead of refusing (exit 2).
    reuse : sequence of paths
        Other results directories: a cell to run whose identity is stored there as ``done`` is
        copied instead of computed (``result["reused_from"]`` names the source). The identity
        covers data, realisation, method label, parameters, grid, protocol and version, so only
        the very same computation is taken (e.g. the SVM columns shared by Lin & Li's two tables).

    SIGINT/SIGTERM stop the run: the cells in flight are recorded as ``interrupted`` (a rerun
    retries them) and ``KeyboardInterrupt`` propagates.
    """
    from kernbench.datasets import ensure_available

    out = Path(out_dir) if out_dir is not None else default_out_dir(spec)
    t0 = time.perf_counter()
    cells = plan_cells(spec, realisations=realisations, only=only)
    for predefined in (False, True):
        names = {
            c.dataset.name for c in cells if (c.protocol.realisations == "predefined") is predefined
        }
        if names:
            ensure_available(sorted(names), predefined=predefined)
    summary = RunSummary(out_dir=out, planned=len(cells))
    limit = timeout_s if timeout_s is not None else spec.protocol.timeout_s
    executor = CellExecutor(backend, jobs=jobs, scheduler=scheduler, timeout_s=limit)
    provenance = {"git": git_revision(), "driver_host": socket.gethostname()}
    with executor, RunLock(out, wait=wait) as lock, Store(out, create=True) as store:
        if lock.took_over is not None:
            gone = describe_holder(lock.took_over.holder)
            summary.notes.append(f"took over the lock of a run that is gone ({gone})")
        store.set_meta("spec", spec_to_dict(spec))
        store.set_meta("kernbench_version", kernbench.__version__)
        store.set_meta("provenance", provenance)
        if store.get_meta("created_at") is None:
            store.set_meta("created_at", time.time())
        known = store.statuses()
        todo = [c for c in cells if fresh or known.get(c.cell_id) not in FINAL_STATUSES]
        summary.skipped_done = len(cells) - len(todo)
        if reuse and todo and not fresh:
            taken = _reuse_finished(store, todo, reuse, out)
            summary.reused = len(taken)
            todo = [c for c in todo if c.cell_id not in taken]
        if on_start is not None:
            on_start(len(todo))
        try:
            with _sigterm_as_interrupt():
                for rec in executor.run(todo):
                    rec.result.setdefault("provenance", provenance)
                    store.record(rec)
                    summary.counts[rec.status] = summary.counts.get(rec.status, 0) + 1
                    if rec.status not in FINAL_STATUSES:
                        summary.failed.append(
                            (rec.dataset, rec.realisation, rec.method, rec.error or "")
                        )
                    if on_cell is not None:
                        on_cell(rec)
        except KeyboardInterrupt:
            _record_interrupted(store, executor.in_flight.values(), provenance)
            store.export_csv()
            raise
        store.export_csv()
    summary.seconds = time.perf_counter() - t0
    return summary


def _reuse_finished(
    store: Store, todo: Sequence[Cell], sources: Sequence[str | os.PathLike[str]], out: Path
) -> set[str]:
    """Copy the ``done`` rows of ``todo``'s identities from other stores; return the ids taken."""
    wanted = {c.cell_id for c in todo}
    taken: set[str] = set()
    for source in sources:
        if Path(source).resolve() == out.resolve() or not wanted - taken:
            continue
        with Store(source) as src:
            rows = src.finished_rows(wanted - taken)
        for row in rows:
            row["result"] = {**row["result"], "reused_from": str(source)}
        store.put_rows(rows)
        taken.update(row["cell_id"] for row in rows)
    return taken


def _record_interrupted(store: Store, cells: Iterable[Cell], provenance: dict) -> None:
    """Mark the cells in flight when the run was stopped (a rerun retries them)."""
    now = time.time()
    for cell in list(cells):
        store.record(
            CellRecord(
                cell_id=cell.cell_id,
                dataset=cell.dataset.label,
                realisation=cell.realisation,
                method=cell.method.label,
                estimator=cell.method.estimator,
                status="interrupted",
                error="the run was interrupted (SIGINT/SIGTERM) while this cell was in flight",
                result={"provenance": provenance},
                finished_at=now,
            )
        )


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """Treat SIGTERM like Ctrl-C while cells run (main thread only; restored afterwards)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
