"""Hyper-parameter selection by inner k-fold CV on the training part, then refit and test.

Two savings make a grid cheap without knowing any method's internals:

* an estimator with :class:`~kernbench.methods.base.IterativeMixin` is fitted ONCE per fold and
  per setting of the other parameters, with the largest value of its ``path_param``; every smaller
  value is scored from ``staged_decision_function`` along that one path;
* an estimator with :class:`~kernbench.methods.base.WarmPathMixin` (while its switch is on)
  fits the grid's values of its ``warm_path_param`` for one fold along ONE warm-started path
  (``fit_warm_path``, values ascending), with a model per value of its ``path_param``; the refit
  runs the same path up to the chosen value, so the tested model is the one that was scored;
* an estimator with :class:`~kernbench.methods.base.PrecomputedKernelMixin` gets its base matrix
  computed ONCE (rows: the realisation's training and test points; columns: its training points);
  every grid point and fold slices it.

Ties in CV error go to the simpler model: smaller values of the grid parameters, in grid order with
the path parameter first (docs/choices.md).

The error is the misclassified fraction for a classifier and the root mean squared error for a
regressor (``sklearn.base.is_regressor``): selection, the refit's train/test values and the staged
traces all use it (:attr:`Outcome.metric` names it).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from numbers import Real
from typing import Any

import numpy as np
from sklearn.base import clone, is_regressor
from sklearn.model_selection import KFold, StratifiedKFold

from kernbench.methods.base import IterativeMixin, PrecomputedKernelMixin, WarmPathMixin


@dataclass
class Outcome:
    """Result of selecting, refitting and testing one method on one realisation."""

    params: dict[str, Any]
    test_error: float
    train_error: float
    cv: list[dict[str, Any]] = field(default_factory=list)
    fit_time_s: float = 0.0
    predict_time_s: float = 0.0
    select_time_s: float = 0.0
    model_size: int | None = None
    trace: dict[str, list[Any]] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    #: what ``test_error``/``train_error`` (and the CV errors, the traces) measure: ``"error"``
    #: (misclassified fraction) or ``"rmse"`` (a regressor's root mean squared error)
    metric: str = "error"


def _misclassified(pred: np.ndarray, y: np.ndarray) -> float:
    return float(np.mean(pred != y))


def _rmse(pred: np.ndarray, y: np.ndarray) -> float:
    return float(np.sqrt(np.mean((np.asarray(pred, float) - y) ** 2)))


def _loss(est: Any):
    """``(metric name, loss(pred, y))`` of an estimator: RMSE for regressors, else 0/1 error."""
    return ("rmse", _rmse) if is_regressor(est) else ("error", _misclassified)


def _grid_points(grid: dict[str, list[Any]], skip: str | None) -> list[dict[str, Any]]:
    names = [n for n in grid if n != skip]
    combos = itertools.product(*(grid[n] for n in names))
    return [dict(zip(names, combo, strict=True)) for combo in combos]


def _simplicity_key(point: dict[str, Any], grid: dict[str, list[Any]], path: str | None):
    """Smaller parameter values first (path parameter first), grid order for non-numbers."""
    order = ([path] if path in point else []) + [n for n in grid if n != path]
    key = []
    for name in order:
        value = point[name]
        if isinstance(value, Real) and not isinstance(value, bool):
            key.append((0, float(value)))
        else:
            key.append((1, float(grid[name].index(value))))
    return tuple(key)


def _cv_row(params: dict[str, Any], fold_errors: list[float]) -> dict[str, Any]:
    """A row of the CV table: the grid point, its mean error and its fold errors."""
    return {"params": params, "mean_error": float(np.mean(fold_errors)), "fold_errors": fold_errors}


def _best(cv_table: list[dict[str, Any]], grid: dict[str, list[Any]], path: str | None):
    """The grid point of least mean CV error, ties to the simpler model."""
    return min(
        cv_table,
        key=lambda r: (round(r["mean_error"], 12), _simplicity_key(r["params"], grid, path)),
    )["params"]


class _Data:
    """Training/test arrays plus an optional shared base kernel matrix (train ∪ test) × train."""

    def __init__(self, est: Any, X_train: np.ndarray, X_test: np.ndarray) -> None:
        self.X_train = X_train
        self.X_test = X_test
        self.m = X_train.shape[0]
        self.kernel = isinstance(est, PrecomputedKernelMixin)
        self.base = None
        self._gram_cache: dict[tuple, np.ndarray] = {}
        if self.kernel:
            # rows: train then test; columns: train only (every fit and prediction slices
            # K[rows, training rows], so the test × test block is never needed)
            X_all = np.vstack([X_train, X_test]) if X_test.shape[0] else X_train
            self.base = est.base_matrix(X_all, X_train)

    def gram(self, est: Any) -> np.ndarray:
        key = tuple((p, repr(est.get_params()[p])) for p in type(est).kernel_params)
        if key not in self._gram_cache:
            self._gram_cache[key] = est.gram_from_base(self.base)
        return self._gram_cache[key]

    # training rows are 0..m-1 of the base matrix, test rows m..
    def fit(self, est: Any, rows: np.ndarray, y: np.ndarray) -> Any:
        if self.kernel:
            K = self.gram(est)
            return est.fit_gram(K[np.ix_(rows, rows)], y)
        return est.fit(self.X_train[rows], y)

    def decision(self, est: Any, fit_rows: np.ndarray, rows: np.ndarray) -> np.ndarray:
        if self.kernel:
            K = self.gram(est)
            return est.decision_function_gram(K[np.ix_(rows, fit_rows)])
        return est.decision_function(self._X(rows))

    def decision_at(self, est: Any, X_new: np.ndarray) -> np.ndarray:
        """Decision values of a model fitted on all training rows at new points (a regressor:
        its predictions)."""
        if self.kernel:
            K = est.gram_from_base(est.base_matrix(X_new, self.X_train))
            return est.decision_function_gram(K)
        if is_regressor(est):
            return est.predict(X_new)
        return est.decision_function(X_new)

    def predict(self, est: Any, fit_rows: np.ndarray, rows: np.ndarray) -> np.ndarray:
        if self.kernel:
            K = self.gram(est)
            return est.predict_gram(K[np.ix_(rows, fit_rows)])
        return est.predict(self._X(rows))

    def staged(self, est: Any, rows: np.ndarray) -> Iterator[np.ndarray]:
        return est.staged_predict(self._X(rows))

    def _X(self, rows: np.ndarray) -> np.ndarray:
        if rows.size and rows.min() >= self.m:
            return self.X_test[rows - self.m]
        return self.X_train[rows]


def _path_errors(
    est: Any, data: _Data, rows: np.ndarray, y: np.ndarray, values: list[int]
) -> dict[int, float]:
    """Error at each requested path value from one staged pass (last stage reused past the end)."""
    wanted = sorted(set(int(v) for v in values))
    loss = _loss(est)[1]
    errors: dict[int, float] = {}
    last = None
    for t, pred in enumerate(data.staged(est, rows), start=1):
        last = pred
        if t in wanted:
            errors[t] = loss(pred, y)
        if len(errors) == len(wanted):
            break
    if last is None:  # no iteration at all: the model predicts from its initial state
        last = est.predict(data._X(rows))
    final = loss(last, y)
    return {v: errors.get(v, final) for v in wanted}


def _fold_errors(
    estimator: Any,
    folds: list[tuple[np.ndarray, np.ndarray]],
    data: _Data,
    y_train: np.ndarray,
    path: str | None,
    path_values: list[int],
    loss: Any,
) -> dict[Any, list[float]]:
    """One grid point's validation errors, per fold: ``{value of path: errors}`` along the path
    of one fit per fold, else ``{None: errors}``. Each fold fits a clone of ``estimator``."""
    fold_errors: dict[Any, list[float]] = {}
    for tr, va in folds:
        est = clone(estimator)
        if path:
            est.set_params(**{path: max(path_values)})
            data.fit(est, tr, y_train[tr])
            for v, err in _path_errors(est, data, va, y_train[va], path_values).items():
                fold_errors.setdefault(v, []).append(err)
        else:
            data.fit(est, tr, y_train[tr])
            pred = data.predict(est, tr, va)
            fold_errors.setdefault(None, []).append(loss(pred, y_train[va]))
    return fold_errors


def select_fit_score(
    estimator: Any,
    grid: dict[str, list[Any]],
    X_train: np.ndarray,
    y_train: np.ndarray,
    X_test: np.ndarray,
    y_test: np.ndarray,
    *,
    cv_folds: int = 5,
    stratify: bool = True,
    cv_seed: int = 0,
    trace: bool = True,
    probe: np.ndarray | None = None,
) -> Outcome:
    """Inner CV over ``grid`` on the training part, refit the best, score on the test part.

    Parameters
    ----------
    estimator : estimator
        Carries the fixed parameters (and ``random_state``); cloned for every fit.
    grid : dict
        Parameter name -> list of values. A parameter equal to the estimator's ``path_param`` is
        scored along the path of one fit.
    cv_folds : int
        1 (or an empty grid with at most one point) skips cross-validation.
    probe : ndarray of shape (n_probe, D), optional
        Extra points where the final model's decision values are recorded
        (``outcome.extra["probe_decision"]``), e.g. a plotting grid.

    Returns
    -------
    Outcome
    """
    X_train = np.asarray(X_train, dtype=np.float64)
    X_test = np.asarray(X_test, dtype=np.float64)
    y_train = np.asarray(y_train)
    y_test = np.asarray(y_test)
    iterative = isinstance(estimator, IterativeMixin)
    metric, loss = _loss(estimator)
    path = type(estimator).path_param if iterative and type(estimator).path_param in grid else None
    warm = _warm_param(estimator, grid)
    if warm is not None:
        return _select_warm(
            estimator, grid, warm, path, X_train, y_train, X_test, y_test,
            cv_folds=cv_folds, stratify=stratify, cv_seed=cv_seed, trace=trace, probe=probe,
        )  # fmt: skip
    points = _grid_points(grid, path)
    path_values = [int(v) for v in grid[path]] if path else []
    n_candidates = len(points) * max(1, len(path_values))
    data = _Data(estimator, X_train, X_test)
    train_rows = np.arange(X_train.shape[0])

    t0 = time.perf_counter()
    cv_table: list[dict[str, Any]] = []
    if n_candidates > 1 and cv_folds > 1:
        folds = _folds(y_train, cv_folds, stratify and metric == "error", cv_seed)
        for point in points:
            est = clone(estimator).set_params(**point)
            fold_errors = _fold_errors(est, folds, data, y_train, path, path_values, loss)
            for v, errs in fold_errors.items():
                full = dict(point) if v is None else {path: v, **point}
                cv_table.append(_cv_row(full, errs))
        best = _best(cv_table, grid, path)
    else:
        best = dict(points[0]) if points else {}
        if path:
            best[path] = path_values[0]
    select_time = time.perf_counter() - t0

    final = clone(estimator).set_params(**best)
    t1 = time.perf_counter()
    data.fit(final, train_rows, y_train)
    fit_time = time.perf_counter() - t1
    return _outcome(
        final, best, data, cv_table, select_time, fit_time, X_train, y_train, X_test, y_test,
        trace=trace, probe=probe,
    )  # fmt: skip


def _outcome(
    final: Any,
    best: dict[str, Any],
    data: _Data,
    cv_table: list[dict[str, Any]],
    select_time: float,
    fit_time: float,
    X_train: np.ndarray,
    y_train: np.ndarray,
    X_test: np.ndarray,
    y_test: np.ndarray,
    *,
    trace: bool,
    probe: np.ndarray | None,
) -> Outcome:
    """Test the refitted ``final`` and collect the :class:`Outcome`."""
    metric, loss = _loss(final)
    iterative = isinstance(final, IterativeMixin)
    m = X_train.shape[0]
    train_rows = np.arange(m)
    test_rows = np.arange(m, m + X_test.shape[0])
    t2 = time.perf_counter()
    test_pred = data.predict(final, train_rows, test_rows) if test_rows.size else np.array([])
    predict_time = time.perf_counter() - t2
    train_pred = data.predict(final, train_rows, train_rows)
    outcome = Outcome(
        params=best,
        test_error=loss(test_pred, y_test) if test_rows.size else float("nan"),
        train_error=loss(train_pred, y_train),
        cv=cv_table,
        fit_time_s=fit_time,
        predict_time_s=predict_time,
        select_time_s=select_time,
        model_size=_model_size(final),
        metric=metric,
    )
    if iterative and trace:
        outcome.trace = _trace(final, data, train_rows, y_train, test_rows, y_test)
    for attr in ("stop_reason_", "n_iter_"):
        if hasattr(final, attr):
            outcome.extra[attr.rstrip("_")] = getattr(final, attr)
    fitted = fitted_params(final)
    if fitted:
        outcome.extra["fitted"] = fitted
    if probe is not None:
        outcome.extra["probe_decision"] = data.decision_at(final, np.asarray(probe, float))
    usage = getattr(final, "feature_usage_", None)  # stump ensembles: Fig. 5 of Shen & Liu
    if usage is not None:
        outcome.extra["feature_usage"] = [float(v) for v in usage]
    return outcome


def fitted_params(est: Any) -> dict[str, Any]:
    """The values a fit actually used for its parameters: ``{name: value}`` for every parameter
    ``name`` whose fitted attribute ``name_`` holds a number, string or bool (the scikit-learn
    convention: DRM's and LPBoost's ``nu_``, a ν raised above the ν floor; LPBoost's ``C_``;
    CG-Boost's ``solver_``, the back end ``"auto"`` chose). Recorded as ``result["fitted"]``
    beside the chosen ``params``."""
    out: dict[str, Any] = {}
    for name in est.get_params(deep=False):
        value = getattr(est, f"{name}_", None)
        if isinstance(value, (bool, np.bool_)):
            out[name] = bool(value)
        elif isinstance(value, (Real, np.integer)):
            out[name] = value.item() if isinstance(value, np.generic) else value
        elif isinstance(value, str):
            out[name] = value
    return out


def _warm_param(estimator: Any, grid: dict[str, list[Any]]) -> str | None:
    """The estimator's warm-path parameter when the grid has several values of it and the
    estimator's switch is on, else None."""
    if not isinstance(estimator, WarmPathMixin) or not estimator.warm_path_active():
        return None
    name = type(estimator).warm_path_param
    return name if len(grid.get(name, [])) > 1 else None


def _select_warm(
    estimator: Any,
    grid: dict[str, list[Any]],
    warm: str,
    path: str | None,
    X_train: np.ndarray,
    y_train: np.ndarray,
    X_test: np.ndarray,
    y_test: np.ndarray,
    *,
    cv_folds: int,
    stratify: bool,
    cv_seed: int,
    trace: bool,
    probe: np.ndarray | None,
) -> Outcome:
    """:func:`select_fit_score` for a warm-path estimator: per setting of the other parameters
    and per fold, one ``fit_warm_path`` over the values of ``warm`` (ascending), scored at every
    value of ``path``; the refit runs the path up to the chosen value."""
    metric, loss = _loss(estimator)
    values = sorted(grid[warm])
    points = _grid_points({n: v for n, v in grid.items() if n != path}, warm)
    if path:
        stages = [int(v) for v in grid[path]]
    else:
        stages = [int(estimator.get_params()[type(estimator).path_param])]
    data = _Data(estimator, X_train, X_test)
    t0 = time.perf_counter()
    cv_table: list[dict[str, Any]] = []
    if cv_folds > 1:
        folds = _folds(y_train, cv_folds, stratify and metric == "error", cv_seed)
        for point in points:
            est = clone(estimator).set_params(**point)
            fold_errors = _warm_fold_errors(est, folds, X_train, y_train, values, stages, loss)
            for (value, stage), errs in fold_errors.items():
                full = {warm: value, **point}
                if path:
                    full = {path: stage, **full}
                cv_table.append(_cv_row(full, errs))
        best = _best(cv_table, grid, path)
    else:
        best = {warm: values[0], **(points[0] if points else {})}
        if path:
            best[path] = stages[0]
    select_time = time.perf_counter() - t0
    est = clone(estimator).set_params(**{k: v for k, v in best.items() if k not in (warm, path)})
    stage = int(best[path]) if path else stages[0]
    t1 = time.perf_counter()
    upto = values[: values.index(best[warm]) + 1]
    final = est.fit_warm_path(X_train, y_train, upto, [stage])[-1][stage]
    fit_time = time.perf_counter() - t1
    outcome = _outcome(
        final, best, data, cv_table, select_time, fit_time, X_train, y_train, X_test, y_test,
        trace=trace, probe=probe,
    )  # fmt: skip
    outcome.extra["warm_path"] = {warm: list(upto)}
    return outcome


def _warm_fold_errors(
    estimator: Any,
    folds: list[tuple[np.ndarray, np.ndarray]],
    X_train: np.ndarray,
    y_train: np.ndarray,
    values: list[Any],
    stages: list[int],
    loss: Any,
) -> dict[tuple[Any, int], list[float]]:
    """One setting's validation errors per (warm value, stage), one ``fit_warm_path`` per fold
    (each of a clone of ``estimator``)."""
    fold_errors: dict[tuple[Any, int], list[float]] = {}
    for tr, va in folds:
        fits = clone(estimator).fit_warm_path(X_train[tr], y_train[tr], values, stages)
        for value, by_stage in zip(values, fits):
            for stage, model in by_stage.items():
                err = loss(model.predict(X_train[va]), y_train[va])
                fold_errors.setdefault((value, stage), []).append(err)
    return fold_errors


def _folds(y: np.ndarray, k: int, stratify: bool, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    _, counts = np.unique(y, return_counts=True)
    if stratify and counts.min() >= k:
        splitter: Any = StratifiedKFold(n_splits=k, shuffle=True, random_state=seed)
    else:
        splitter = KFold(n_splits=min(k, len(y)), shuffle=True, random_state=seed)
    return [(tr, va) for tr, va in splitter.split(np.zeros((len(y), 1)), y)]


def _model_size(est: Any) -> int | None:
    size = getattr(est, "model_size_", None)
    return int(size) if size is not None else None


def _trace(
    est: Any,
    data: _Data,
    train_rows: np.ndarray,
    y_train: np.ndarray,
    test_rows: np.ndarray,
    y_test: np.ndarray,
) -> dict[str, list[Any]]:
    """The method's own per-iteration trace plus staged train/test error along the final fit
    (a regressor: staged RMSE)."""
    loss = _loss(est)[1]
    out: dict[str, list[Any]] = {}
    train_err = [loss(p, y_train) for p in data.staged(est, train_rows)]
    out["iteration"] = list(range(1, len(train_err) + 1))
    out["train_error"] = train_err
    if test_rows.size:
        out["test_error"] = [loss(p, y_test) for p in data.staged(est, test_rows)]
    for key, values in (getattr(est, "trace_", None) or {}).items():
        if key in out:
            key = f"method_{key}"
        out[key] = list(values)
    return out
