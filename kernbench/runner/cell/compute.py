"""One cell, computed: realisation -> preprocessing -> CV selection -> refit -> test -> record.

:func:`run_cell` never raises for a problem inside the cell; :func:`cell_record` is the one place
that builds a :class:`~kernbench.cells.records.CellRecord` from a planned cell, whatever its status.
"""

from __future__ import annotations

import contextlib
import functools
import platform
import socket
import subprocess
import time
import traceback
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

import kernbench
from kernbench.cells.records import CellRecord
from kernbench.runner.cell.clock import CellClock
from kernbench.runner.cell.probes import decision_grid
from kernbench.runner.cell.state import cell_state, seed_globals
from kernbench.runner.cell.worker_cache import prepared_realisation, warm_method
from kernbench.runner.lifecycle.stop import raise_if_stopping, stop_signal
from kernbench.runner.plan.cells import Cell
from kernbench.store.faults import inside_cell


def cell_record(cell: Cell, status: str, **fields: Any) -> CellRecord:
    """The record of ``cell`` with ``status`` (its identity fields filled in; ``finished_at``
    now unless given)."""
    fields.setdefault("finished_at", time.time())
    return CellRecord(
        cell_id=cell.cell_id,
        dataset=cell.dataset.label,
        realisation=cell.realisation,
        method=cell.method.label,
        estimator=cell.method.estimator,
        status=status,
        **fields,
    )


def versions() -> dict[str, str]:
    """Versions of kernbench and the numerical stack, and the machine, recorded with every cell.

    Besides the library versions: ``machine`` and ``cpu`` (the processor's model), and the numeric
    environment (:func:`numeric_environment`: ``blas``, ``simd``, ``numba_cpu``), which decides
    how sums are rounded. The same code and versions can give other last digits under another.
    Computed once per process; each call returns a copy.
    """
    return dict(_versions())


@functools.cache
def _versions() -> dict[str, str]:
    from importlib import metadata

    import joblib
    import scipy
    import sklearn

    out = {
        "kernbench": kernbench.__version__,
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "scikit-learn": sklearn.__version__,
        "joblib": joblib.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "machine": platform.machine(),
    }
    for lib in ("numba", "highspy", "cvxpy"):
        with contextlib.suppress(metadata.PackageNotFoundError):
            out[lib] = metadata.version(lib)
    cpu = _cpu_model()
    if cpu:
        out["cpu"] = cpu
    return {**out, **numeric_environment()}


def _cpu_model() -> str | None:
    """The processor's model name (Linux: /proc/cpuinfo), else what ``platform`` knows."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text(errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("model name", "Model", "Hardware") and value.strip():
                return value.strip()
    return platform.processor() or None


@functools.cache
def numeric_environment() -> dict[str, str]:
    """What, besides the versions, picks the machine code a fit runs.

    ``blas``: each BLAS loaded (numpy's and SciPy's), its version and the architecture of the
    kernels OpenBLAS chose for this processor at run time; ``simd``: numpy's baseline and the
    dispatched CPU features in use (AVX-512 ``exp``/``log`` among them); ``numba_cpu``: the CPU
    numba compiles for (``NUMBA_CPU_NAME``, else the host's). Under another of these the same
    code, data and seeds round differently, and a method whose choices turn on near-ties
    (CGENS's pricing over thousands of stumps, AdaBoost of trees) can fit other models.
    """
    out: dict[str, str] = {}
    try:
        import scipy.linalg  # noqa: F401 - loads SciPy's BLAS, so both are listed in any process
        from threadpoolctl import threadpool_info

        blas = sorted(
            {
                f"{i.get('internal_api', '?')} {i.get('version') or '?'}"
                f" ({i.get('architecture') or '?'})"
                for i in threadpool_info()
                if i.get("user_api") == "blas"
            }
        )
        out["blas"] = " + ".join(blas) or "none loaded"
    except Exception:  # provenance only: never fail a cell for it
        out["blas"] = "unknown"
    try:
        from numpy._core import _multiarray_umath as umath

        found = [f for f in umath.__cpu_dispatch__ if umath.__cpu_features__.get(f)]
        out["simd"] = " ".join([*umath.__cpu_baseline__, *found]) or "none"
    except Exception:  # another numpy layout
        out["simd"] = "unknown"
    try:
        from numba.core import config

        cpu = config.CPU_NAME
        if not cpu:
            import llvmlite.binding as llvm

            cpu = llvm.get_host_cpu_name()
        out["numba_cpu"] = str(cpu)
    except Exception:  # numba missing or another layout
        out["numba_cpu"] = "unknown"
    return out


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


#: at most this many distinct warnings are kept per cell (each with its count)
MAX_WARNINGS = 10
#: categories Python hides by default: not a cell's concern
_HIDDEN = (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning)


def warning_summary(caught: list[warnings.WarningMessage]) -> list[dict[str, Any]]:
    """Distinct warnings (category, first line of the message) with how often each was raised,
    most frequent first, at most :data:`MAX_WARNINGS`."""
    counts = Counter(
        (w.category.__name__, (str(w.message).splitlines() or [""])[0][:300])
        for w in caught
        if not issubclass(w.category, _HIDDEN)
    )
    return [
        {"category": category, "message": message, "count": n}
        for (category, message), n in counts.most_common(MAX_WARNINGS)
    ]


def run_cell(cell: Cell) -> CellRecord:
    """Compute one cell: realisation -> preprocessing -> CV selection -> refit -> test.

    Never raises for a problem inside the cell: it returns a ``failed`` (or ``skipped`` when the
    realisation does not exist under ``protocol.fallback: fewer``) record carrying the error and
    traceback. A method that raises ``SystemExit`` (``sys.exit``) or a ``KeyboardInterrupt`` of
    its own (no stop signal came) fails its cell too: neither ends the run. Warnings raised
    inside the cell (e.g. a solver that did not converge at one grid point) are not printed:
    they are counted and kept in ``result["warnings"]``. The process state the cell may change
    (working directory, environment, ``sys.path``, signal handlers, global random generators)
    is put back afterwards, and the global generators start seeded from the cell's seed (see
    :mod:`kernbench.runner.cell.state`).
    """
    with warnings.catch_warnings(record=True) as caught, cell_state(cell.learner_seed):
        warnings.simplefilter("always")
        rec = _run_cell(cell)
    summary = warning_summary(caught)
    if summary:
        rec.result["warnings"] = summary
    return rec


def _run_cell(cell: Cell) -> CellRecord:
    from kernbench.datasets import RealisationUnavailable
    from kernbench.methods.plugins import method_class
    from kernbench.runner.cell.select import select_fit_score

    started = time.time()
    clock = CellClock()  # the CPU of the cell's threads, not of the worker hosting it
    warm_cpu = 0.0
    inside_cell()
    try:
        real = prepared_realisation(cell)  # built once per worker, copied per cell
        X_train, X_test = real.X_train, real.X_test
        cls = method_class(cell.method.estimator, cell.method.source)
        taken = dict(cell.taken)  # chosen by another method's cell (``take``)
        est = cls(**cell.method.params, **taken)
        if "random_state" in est.get_params() and "random_state" not in cell.method.params:
            est.set_params(random_state=cell.learner_seed)
        warm_wall, warm_cpu = warm_method(cell, est, X_train, real.y_train)  # once per worker
        started += warm_wall
        seed_globals(cell.learner_seed)  # again: the first cell of a worker warmed the method up
        grid = decision_grid(X_train, cell.protocol)
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
            probe=None if grid is None else grid.points,
        )
        if grid is not None:
            outcome.extra["decision_grid"] = grid.record(
                outcome.extra.pop("probe_decision"), X_train, real.y_train
            )
        result = {
            "cv": outcome.cv,
            "fit_time_s": outcome.fit_time_s,
            "predict_time_s": outcome.predict_time_s,
            "select_time_s": outcome.select_time_s,
            "cpu_time_s": max(clock.seconds() - warm_cpu, 0.0),
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
        if cell.method.source is not None:  # provenance of a plug-in method
            result["plugin"] = cell.method.source.record()
        if taken:
            result["taken"] = {"from": cell.method.take.source, "cell_id": cell.source_id}
        errors = {"test_error": outcome.test_error, "train_error": outcome.train_error}
        if outcome.metric == "rmse":  # a regressor: RMSE in the result, no error rate
            result.update(metric="rmse", test_rmse=errors["test_error"])
            result["train_rmse"] = errors["train_error"]
            errors = {"test_error": None, "train_error": None}
        return cell_record(
            cell,
            "done",
            **errors,
            params={**taken, **outcome.params},
            result=result,
            started_at=started,
        )
    except (Exception, SystemExit, KeyboardInterrupt) as exc:  # recorded: the run goes on
        if isinstance(exc, KeyboardInterrupt) and stop_signal() is not None:
            raise  # a stop signal: the cell was interrupted, not failed
        raise_if_stopping(exc)  # unless a signal stopped it: then it was interrupted, not failed
        return cell_record(
            cell,
            "skipped" if isinstance(exc, RealisationUnavailable) else "failed",
            error=_error_line(exc),
            traceback=traceback.format_exc(),
            result={
                "versions": versions(),
                "host": socket.gethostname(),
                "cpu_time_s": max(clock.seconds() - warm_cpu, 0.0),
            },
            started_at=started,
        )


def _error_line(exc: BaseException) -> str:
    """The cell's error line: ``Type: message``; what a method's ``sys.exit`` or
    ``KeyboardInterrupt`` would have done to the run is said in words."""
    if isinstance(exc, SystemExit):
        return (
            f"SystemExit: the method called sys.exit({exc.code!r}); a method may not end the "
            "process (this cell failed, the run went on)"
        )
    if isinstance(exc, KeyboardInterrupt):
        return (
            f"KeyboardInterrupt: the method raised it{f' ({exc})' if str(exc) else ''} without a "
            "stop signal (this cell failed, the run went on)"
        )
    return f"{type(exc).__name__}: {exc}"
