"""The cell record, declared once: its statuses, its stored columns and the values tables show.

Every part that reads or writes a cell uses these definitions: the runner builds
:class:`CellRecord`, the store keeps its :data:`CELL_COLUMNS` and exports :data:`FRAME_COLUMNS`,
the spec accepts a ``table.value`` from :data:`VALUES`, and the report reads a value with
:func:`row_value` and labels it with ``VALUES[name].label``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from kernbench.errors import KernbenchError

STATUSES = ("done", "failed", "timeout", "interrupted", "skipped", "pending")
#: statuses that count as finished: a rerun does not recompute them
FINAL_STATUSES = ("done", "skipped")


@dataclass
class CellRecord:
    """What the runner reports for one cell (one row of the store's ``cells`` table).

    Attributes
    ----------
    cell_id : str
        The cell's identity hash (everything that changes its result).
    dataset, realisation, method, estimator : str, int, str, str
        The spec's dataset label, the 0-based realisation, the method label and its estimator.
    status : str
        One of :data:`STATUSES`.
    test_error, train_error : float or None
        Fractions in [0, 1] (None for a regressor: its RMSEs are ``result["test_rmse"]`` and
        ``result["train_rmse"]``).
    params : dict
        The chosen hyper-parameters.
    result : dict
        Everything else (CV table, timings, model size, trace, seeds, versions, split info ...).
    error, traceback : str or None
        Why a cell did not finish.
    started_at, finished_at : float or None
        Unix times.
    """

    cell_id: str
    dataset: str
    realisation: int
    method: str
    estimator: str
    status: str
    test_error: float | None = None
    train_error: float | None = None
    params: dict[str, Any] = field(default_factory=dict)
    result: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    traceback: str | None = None
    started_at: float | None = None
    finished_at: float | None = None


#: the columns of a stored cell row, in table order (:class:`CellRecord` plus ``attempts``)
CELL_COLUMNS = (*CellRecord.__dataclass_fields__, "attempts")


@dataclass(frozen=True)
class Value:
    """A number a table can show for each cell.

    Attributes
    ----------
    name : str
        The ``table.value`` key.
    label : str
        How tables name it.
    in_result : bool
        Stored in the JSON ``result`` (True) or as a column of the row (False).
    percent : bool
        A fraction shown in percent.
    """

    name: str
    label: str
    in_result: bool
    percent: bool = False


#: every tabulable value, by ``table.value`` name (the spec, the report and the CLI read this)
VALUES: dict[str, Value] = {
    v.name: v
    for v in (
        Value("test_error", "Test error", in_result=False, percent=True),
        Value("train_error", "Training error", in_result=False, percent=True),
        Value("fit_time_s", "Fit time (s)", in_result=True),
        Value("predict_time_s", "Predict time (s)", in_result=True),
        Value("select_time_s", "Selection time (s)", in_result=True),
        Value("cpu_time_s", "Cell CPU time (s)", in_result=True),
        Value("model_size", "Model size", in_result=True),
        Value("n_iter", "Iterations", in_result=True),
        Value("test_rmse", "Test RMSE", in_result=True),
        Value("train_rmse", "Training RMSE", in_result=True),
    )
}
PERCENT_VALUES = tuple(n for n, v in VALUES.items() if v.percent)

#: the tidy one-row-per-cell export (``cells.csv``): identity, status, values, then provenance;
#: the chosen parameters follow as ``param.<name>`` columns, then the values the fit used for
#: them as ``fitted.<name>`` (``result["fitted"]``: a ν raised above the ν floor, say)
FRAME_COLUMNS = (
    "dataset", "realisation", "method", "estimator", "status", *VALUES,
    "n_train", "n_test", "split", "error", "warnings", "cell_id", "attempts",
)  # fmt: skip


def row_value(row: dict[str, Any], value: str) -> float | None:
    """The value ``value`` of one stored row (percent for errors), ``None`` when absent.

    Raises
    ------
    KernbenchError
        ``value`` is not in :data:`VALUES` (the message lists them).
    """
    spec = VALUES.get(value)
    if spec is None:
        known = ", ".join(VALUES)
        raise KernbenchError(f"unknown table value {value!r}; expected one of: {known}")
    x = (row.get("result") or {}).get(value) if spec.in_result else row.get(value)
    if x is None:
        return None
    x = float(x)
    if not math.isfinite(x):
        return None
    return 100.0 * x if spec.percent else x


def frame_record(row: dict[str, Any]) -> dict[str, Any]:
    """One stored row flattened into the :data:`FRAME_COLUMNS` (plus ``param.<name>`` and
    ``fitted.<name>``)."""
    res = row.get("result") or {}
    rec = {c: row.get(c) for c in FRAME_COLUMNS}
    for name, v in VALUES.items():
        rec[name] = res.get(name) if v.in_result else row.get(name)
    rec["n_train"], rec["n_test"] = res.get("n_train"), res.get("n_test")
    rec["split"] = (res.get("split_info") or {}).get("split")
    rec["warnings"] = (
        "; ".join(
            f"{w['category']}×{w['count']}: {w['message']}" for w in res.get("warnings") or ()
        )
        or None
    )
    for k, v in (row.get("params") or {}).items():
        rec[f"param.{k}"] = v
    for k, v in (res.get("fitted") or {}).items():  # the values the fit used
        rec[f"fitted.{k}"] = v
    return rec


#: trace keys that stores hold under an earlier name, ``{earlier name: name}``
RENAMED_TRACE_KEYS = {"solver_stop": "solver_stop_reason"}
#: ``stop_reason`` values that stores hold under an earlier name, ``{earlier name: name}`` (the
#: names: :data:`kernbench.methods.base.STOP_REASONS`)
RENAMED_STOP_REASONS = {"max_rounds": "max_iter", "perfect": "zero_error", "tol": "converged"}


def current_result(result: dict[str, Any]) -> dict[str, Any]:
    """A stored ``result`` with its trace keys and its ``stop_reason`` under their current names
    (:data:`RENAMED_TRACE_KEYS`, :data:`RENAMED_STOP_REASONS`), so that every store reads alike
    whenever it was written; ``result`` itself is not changed."""
    out = result
    trace = result.get("trace")
    if trace and any(k in trace for k in RENAMED_TRACE_KEYS):
        out = {**out, "trace": {RENAMED_TRACE_KEYS.get(k, k): v for k, v in trace.items()}}
    reason = result.get("stop_reason")
    if isinstance(reason, str) and reason in RENAMED_STOP_REASONS:
        out = {**out, "stop_reason": RENAMED_STOP_REASONS[reason]}
    return out
