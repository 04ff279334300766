"""AdaBoost.MO with a one-vs-all output code and class-wise stumps (Schapire & Singer 1999).

The code matrix is M = 2I − 11ᵀ (L = K columns): column ℓ relabels the data as Y_iℓ = M(y_i, ℓ) =
+1 if y_i = ℓ and −1 otherwise. In each round every column ℓ gets its own stump and its own α from
its own weights D(·, ℓ), exactly as discrete binary AdaBoost; the exponential loss
Σ_{i,ℓ} exp(−Y_iℓ f_ℓ(x_i)) separates over columns, so the fit is K independent binary AdaBoost
runs sharing one presorted stump pass per round. Like MultiBoost_cw, the model has a separate
learner set per class.

Loss-based decoding picks argmin_y Σ_ℓ exp(−M(y, ℓ) f_ℓ(x)); with the one-vs-all code this is
exp(−f_y) − exp(f_y) + Σ_ℓ exp(f_ℓ), decreasing in f_y, so it is argmax_y f_y(x).

A column whose weak learner has no edge stops (as binary AdaBoost does), one with zero weighted
error gets α = ½ ln((1 + δ)/δ) and stops; the others go on. ``max_time`` is the wall-clock cap the
MultiBoost_cw paper gives AdaBoost.MO (1000 s there): the rounds finished within it are kept (the
same parameter and stop reason as the column-generation methods' cap, which lives in their base;
this is not a column-generation loop, so it checks the cap itself).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted, validate_data

from kernbench.methods.adaboost import EDGE_TOL, ZERO_ERROR_DELTA
from kernbench.methods.base import IterativeMixin, KernbenchClassifier
from kernbench.methods.registry import register
from kernbench.weak.stumps import StumpSpace, predict_stumps, stump_arrays


@register("adaboost_mo")
class AdaBoostMO(IterativeMixin, KernbenchClassifier):
    """AdaBoost.MO, one-vs-all output code, K discrete stumps per round (one per class column).

    Parameters
    ----------
    n_estimators : int, default=500
        Rounds T (the path parameter); each round adds up to K stumps.
    max_time : float or None, default=None
        Stop after the round during which ``max_time`` seconds of fitting have elapsed
        (stop_reason_ "max_time"); None: no cap.

    Attributes
    ----------
    classes_ : ndarray of shape (K,)
    weak_learners_ : list of Stump
        All stumps in round order.
    learner_class_ : ndarray of int, shape (J,)
        The code column (class) of every stump.
    estimator_weights_ : ndarray of shape (J,)
        α of every stump (from its own column's weighted error).
    round_end_ : ndarray of int, shape (n_iter_,)
        Number of stumps after each round.
    sample_weight_ : ndarray of shape (m, K)
        The K column distributions D(·, ℓ) after the last round.
    n_iter_, model_size_ : int
        Rounds run; stumps in the model.
    trace_ : dict of lists
        Per round: ``objective`` Σ_{i,ℓ} exp(−Y_iℓ f_ℓ(x_i)), ``train_error`` (argmax decoding),
        ``n_active`` (columns still boosting), ``time_s`` (cumulative).
    stop_reason_ : str
        "max_iter", "max_time" or "columns_done" (every column stopped: no edge or zero error).

    See Also
    --------
    AdaBoostMH : shared stumps voting on every class.
    AdaBoostECC : AdaBoost with error-correcting output codes.
    MultiBoostCW : class-wise learner sets solved totally correctively.

    References
    ----------
    .. [1] R. E. Schapire and Y. Singer, "Improved Boosting Algorithms Using Confidence-rated
       Predictions", Machine Learning 37(3), 1999 (output codes, AdaBoost.MO).
    .. [2] G. Lin, C. Shen, A. van den Hengel and D. Suter, "Fast Training of Effective Multi-class
       Boosting Using Coordinate Descent Optimization", Proc. Asian Conf. on Computer Vision
       (ACCV), 2012:
       the AdaBoost.MO baseline of Sec. 3.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(
    ...     n_samples=60, n_classes=3, n_informative=4, random_state=0
    ... )
    >>> from kernbench.methods import AdaBoostMO
    >>> clf = AdaBoostMO(n_estimators=10).fit(X, y)
    >>> clf.classes_
    array([0, 1, 2])
    >>> clf.decision_function(X[:5]).shape
    (5, 3)
    >>> clf.n_iter_ <= 10
    True
    >>> bool(clf.score(X, y) > 0.7)
    True
    """

    path_param: ClassVar[str] = "n_estimators"
    _parameter_constraints: ClassVar[dict] = {
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "max_time": [Interval(Real, 0, None, closed="neither"), None],
    }

    def __init__(self, n_estimators: int = 500, max_time: float | None = None) -> None:
        self.n_estimators = n_estimators
        self.max_time = max_time

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any) -> AdaBoostMO:
        """Run up to T rounds on (X, y).

        Parameters
        ----------
        X : array-like of shape (m, D)
        y : array-like of shape (m,)

        Returns
        -------
        self
        """
        X, y, y_index = self._check_training_data(X, y)
        t0 = time.perf_counter()
        K, m = self.classes_.size, X.shape[0]
        Y = np.where(np.arange(K)[None, :] == y_index[:, None], 1.0, -1.0)  # Y_iℓ = M(y_i, ℓ)
        D = np.full((m, K), 1.0 / m)  # one binary AdaBoost distribution per column
        active = np.ones(K, dtype=bool)
        space = StumpSpace(X, include_constant=True)
        F = np.zeros((m, K))
        learners: list[Any] = []
        classes: list[int] = []
        alphas: list[float] = []
        ends: list[int] = []
        trace: dict[str, list] = {k: [] for k in ("objective", "train_error", "n_active", "time_s")}
        self.stop_reason_ = "max_iter"
        for _ in range(self.n_estimators):
            cols = np.flatnonzero(active)
            if cols.size == 0:
                self.stop_reason_ = "columns_done"
                break
            picks = space.best_many(D[:, cols] * Y[:, cols], absolute=True)  # edge per column
            added = 0
            for ell, pick in zip(cols, picks):
                h = pick.column
                eps = float(D[h != Y[:, ell], ell].sum())  # ε of column ℓ
                if 1.0 - 2.0 * eps <= EDGE_TOL:  # no edge: this column's AdaBoost stops
                    active[ell] = False
                    continue
                if eps == 0.0:  # zero error: capped α, the column stops
                    alpha = 0.5 * np.log((1.0 + ZERO_ERROR_DELTA) / ZERO_ERROR_DELTA)
                    active[ell] = False
                else:
                    alpha = 0.5 * np.log((1.0 - eps) / eps)
                    D[:, ell] *= np.exp(-alpha * Y[:, ell] * h)
                    D[:, ell] /= D[:, ell].sum()
                F[:, ell] += alpha * h
                learners.append(pick.learner)
                classes.append(int(ell))
                alphas.append(float(alpha))
                added += 1
            if added == 0:
                self.stop_reason_ = "columns_done"
                break
            ends.append(len(learners))
            elapsed = time.perf_counter() - t0
            trace["objective"].append(float(np.exp(-Y * F).sum()))
            trace["train_error"].append(float(np.mean(np.argmax(F, axis=1) != y_index)))
            trace["n_active"].append(int(active.sum()))
            trace["time_s"].append(elapsed)
            if self.max_time is not None and elapsed >= self.max_time:
                self.stop_reason_ = "max_time"
                break
        self.weak_learners_ = learners
        self.learner_class_ = np.asarray(classes, dtype=np.intp)
        self.estimator_weights_ = np.asarray(alphas, dtype=np.float64)
        self.round_end_ = np.asarray(ends, dtype=np.intp)
        self.sample_weight_ = D
        self.n_iter_ = len(ends)
        self.model_size_ = len(learners)
        self.trace_ = trace
        self.fit_time_ = time.perf_counter() - t0
        return self

    def _weighted_columns(self, X: np.ndarray) -> np.ndarray:
        """α_j h_j(X) for every stump, shape (n, J)."""
        if not self.weak_learners_:
            return np.empty((X.shape[0], 0))
        return predict_stumps(X, *stump_arrays(self.weak_learners_)) * self.estimator_weights_

    def _as_binary(self, F: np.ndarray) -> np.ndarray:
        return F[:, 1] - F[:, 0] if F.shape[1] == 2 else F

    def decision_function(self, X: Any) -> np.ndarray:
        """f_ℓ(x) = Σ_{j in column ℓ} α_j h_j(x), shape (n, K); binary: f_2 − f_1, shape (n,)."""
        check_is_fitted(self, "estimator_weights_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        F = np.zeros((X.shape[0], self.classes_.size))
        np.add.at(F.T, self.learner_class_, self._weighted_columns(X).T)
        return self._as_binary(F)

    def staged_decision_function(self, X: Any) -> Iterator[np.ndarray]:
        """Decision values after rounds 1..n_iter_ (stumps evaluated once on X)."""
        check_is_fitted(self, "estimator_weights_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        G = self._weighted_columns(X)
        F = np.zeros((X.shape[0], self.classes_.size))
        if self.n_iter_ == 0:
            yield self._as_binary(F)
        start = 0
        for end in self.round_end_:
            for j in range(start, end):
                F[:, self.learner_class_[j]] += G[:, j]
            start = end
            yield self._as_binary(F.copy())

    def predict(self, X: Any) -> np.ndarray:
        """Loss-based decoding, argmax_y f_y(x) for the one-vs-all code."""
        return self._labels_from_decision(self.decision_function(X))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = True
        return tags
