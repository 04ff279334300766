"""AdaBoost.MH with factorised discrete decision stumps (Schapire & Singer 1999;
docs/methods/adaboost.md).

Each round picks one stump φ shared by all K labels and a vote vector v ∈ {±1}^K,
h(x, ℓ) = v_ℓ φ(x). For a candidate φ the per-label edges are γ_ℓ = Σ_i D(i, ℓ) Y_iℓ φ(x_i); the
best votes are v_ℓ = sign(γ_ℓ) and the round's edge is r = Σ_ℓ |γ_ℓ|. All candidates' γ come from
ONE gather of the K columns of D∘Y in presorted order plus K prefix sums per feature
(``StumpSpace.scores``).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from numbers import Integral
from typing import Any, ClassVar

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted, validate_data

from kernbench.methods.base import IterativeMixin, KernbenchClassifier
from kernbench.methods.registry import register
from kernbench.weak.stumps import StumpSpace, predict_stumps

#: an edge this close to 1 is a perfect round: α is capped through the δ smoothing and fit stops
_PERFECT_EDGE = 1.0 - 1e-12
_DELTA = 1e-10


def factorised_stump_search(space: StumpSpace, DY: np.ndarray) -> tuple[int, np.ndarray, float]:
    """The stump and votes maximising the AdaBoost.MH edge r = Σ_ℓ |Σ_i D(i,ℓ) Y_iℓ φ(x_i)|.

    Parameters
    ----------
    space : StumpSpace
        Stumps on the training set (polarity +1; the votes absorb the polarity).
    DY : ndarray of shape (m, K)
        D∘Y, the signed weights of every (example, label) pair.

    Returns
    -------
    index : int
        Candidate index in ``space`` (first maximiser in candidate order).
    gamma : ndarray of shape (K,)
        Per-label edges γ_ℓ of that candidate (polarity +1).
    r : float
        Its edge Σ_ℓ |γ_ℓ|.
    """
    gamma = space.scores(DY)  # (n_candidates, K): γ_ℓ = G_ℓ − 2 G_<ℓ(t) for every stump
    r = np.abs(gamma).sum(axis=1)  # r = Σ_ℓ |γ_ℓ| with v_ℓ = sign(γ_ℓ)
    index = int(np.argmax(r))
    return index, gamma[index], float(r[index])


@register("adaboost_mh")
class AdaBoostMH(IterativeMixin, KernbenchClassifier):
    """AdaBoost.MH with discrete factorised decision stumps.

    Parameters
    ----------
    n_estimators : int, default=500
        Number of boosting rounds T (the path parameter). Fewer are run when a round has edge 1.

    Attributes
    ----------
    classes_ : ndarray of shape (K,)
    stump_features_, stump_thresholds_ : ndarray of shape (T,)
        The shared stumps φ_t(x) = sign(x[feature] − threshold) (threshold −inf: constant +1).
    votes_ : ndarray of shape (T, K)
        v_t ∈ {±1}^K.
    alphas_ : ndarray of shape (T,)
        α_t = ½ ln((1 + r_t)/(1 − r_t)).
    sample_weight_ : ndarray of shape (m, K)
        The distribution D over (example, label) pairs after the last round.
    n_iter_, model_size_ : int
        Rounds run; stumps in the model (equal).
    trace_ : dict of lists
        Per round: ``edge`` r_t, ``z`` Z_t (normaliser, = √(1 − r_t²)), ``objective`` Π_s Z_s
        (the Hamming-loss bound), ``hamming_loss``, ``train_error``, ``time_s`` (cumulative).
    stop_reason_ : str
        "max_iter", "zero_error" (r = 1) or "no_edge" (r = 0).

    See Also
    --------
    AdaBoostECC : AdaBoost with error-correcting output codes.
    AdaBoostMO : one-vs-all output code, a stump per class column.
    AdaBoost : the binary algorithm.
    CGENSSLS : multi-class column generation on the simplex least-squares SVM.

    References
    ----------
    .. [1] R. E. Schapire and Y. Singer, "Improved Boosting Algorithms Using Confidence-rated
       Predictions", Machine Learning 37(3), 1999 (Sec. 7, AdaBoost.MH).
    .. [2] C. Shen and F. Liu, "From Kernel Machines to Ensemble Learning", arXiv preprint, 2014:
       the AdaBoost.MH baseline of Table III.
    .. [3] G. Lin, C. Shen, A. van den Hengel and D. Suter, "Fast Training of Effective Multi-class
       Boosting Using Coordinate Descent Optimization", Proc. Asian Conf. on Computer Vision
       (ACCV), 2012:
       the AdaBoost.MH baseline of Sec. 3.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(
    ...     n_samples=60, n_classes=3, n_informative=4, random_state=0
    ... )
    >>> from kernbench.methods import AdaBoostMH
    >>> clf = AdaBoostMH(n_estimators=10).fit(X, y)
    >>> clf.classes_
    array([0, 1, 2])
    >>> clf.decision_function(X[:5]).shape
    (5, 3)
    >>> clf.votes_.shape
    (10, 3)
    >>> bool(clf.score(X, y) > 0.7)
    True
    """

    path_param: ClassVar[str] = "n_estimators"
    _parameter_constraints: ClassVar[dict] = {
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, n_estimators: int = 500) -> None:
        self.n_estimators = n_estimators

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any) -> AdaBoostMH:
        """Run T rounds of AdaBoost.MH on (X, y).

        Parameters
        ----------
        X : array-like of shape (m, D)
        y : array-like of shape (m,)

        Returns
        -------
        self
        """
        X, y, y_index = self._check_training_data(X, y)
        K = self.classes_.size
        m = X.shape[0]
        t0 = time.perf_counter()
        Y = -np.ones((m, K))
        Y[np.arange(m), y_index] = 1.0  # Y_iℓ = +1 iff ℓ = y_i
        D = np.full((m, K), 1.0 / (m * K))
        space = StumpSpace(X, include_constant=True)
        F = np.zeros((m, K))
        feats, thrs, votes, alphas = [], [], [], []
        trace: dict[str, list] = {
            k: [] for k in ("edge", "z", "objective", "hamming_loss", "train_error", "time_s")
        }
        bound = 1.0
        self.stop_reason_ = "max_iter"
        for _ in range(self.n_estimators):
            index, gamma, r = factorised_stump_search(space, D * Y)
            if r <= 0.0:
                self.stop_reason_ = "no_edge"
                break
            v = np.where(gamma >= 0.0, 1.0, -1.0)  # v_ℓ = sign(γ_ℓ), sign(0) = +1
            perfect = r >= _PERFECT_EDGE
            if perfect:
                alpha = 0.5 * np.log((1.0 + r + _DELTA) / (1.0 - r + _DELTA))
            else:
                alpha = 0.5 * np.log((1.0 + r) / (1.0 - r))  # α_t = ½ ln((1 + r)/(1 − r))
            phi = space.column(index)
            h = np.outer(phi, v)  # h_t(x_i, ℓ) = v_ℓ φ(x_i)
            D = D * np.exp(-alpha * Y * h)
            Z = float(D.sum())  # Z_t
            D /= Z
            F += alpha * h
            bound *= Z
            feats.append(space.candidate_features[index])
            thrs.append(space.candidate_thresholds[index])
            votes.append(v)
            alphas.append(alpha)
            trace["edge"].append(r)
            trace["z"].append(Z)
            trace["objective"].append(bound)
            trace["hamming_loss"].append(float(np.mean(Y * F <= 0.0)))
            trace["train_error"].append(float(np.mean(np.argmax(F, axis=1) != y_index)))
            trace["time_s"].append(time.perf_counter() - t0)
            if perfect:
                self.stop_reason_ = "zero_error"
                break
        self.stump_features_ = np.asarray(feats, dtype=np.intp)
        self.stump_thresholds_ = np.asarray(thrs, dtype=np.float64)
        self.votes_ = np.asarray(votes, dtype=np.float64).reshape(-1, K)
        self.alphas_ = np.asarray(alphas, dtype=np.float64)
        self.sample_weight_ = D
        self.n_iter_ = self.model_size_ = int(self.alphas_.size)
        self.trace_ = trace
        self.fit_time_ = time.perf_counter() - t0
        return self

    def _stumps(self, X: np.ndarray) -> np.ndarray:
        T = self.alphas_.size
        return predict_stumps(X, self.stump_features_, self.stump_thresholds_, np.ones(T))

    @staticmethod
    def _as_binary(F: np.ndarray) -> np.ndarray:
        return F[:, 1] - F[:, 0] if F.shape[1] == 2 else F

    def decision_function(self, X: Any) -> np.ndarray:
        """F(x, ℓ) = Σ_t α_t v_tℓ φ_t(x), shape (n, K); binary: F(x, 2) − F(x, 1), shape (n,)."""
        check_is_fitted(self, "alphas_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        F = self._stumps(X) @ (self.alphas_[:, None] * self.votes_)
        return self._as_binary(F)

    def staged_decision_function(self, X: Any) -> Iterator[np.ndarray]:
        """Decision values after rounds 1..n_iter_ (stumps evaluated once on X)."""
        check_is_fitted(self, "alphas_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        Phi = self._stumps(X)
        F = np.zeros((X.shape[0], self.classes_.size))
        if self.n_iter_ == 0:
            yield self._as_binary(F)
        for t in range(self.n_iter_):
            F = F + self.alphas_[t] * np.outer(Phi[:, t], self.votes_[t])
            yield self._as_binary(F)

    def predict(self, X: Any) -> np.ndarray:
        """argmax_ℓ F(x, ℓ) (binary: classes_[1] iff F(x, 2) − F(x, 1) ≥ 0)."""
        return self._labels_from_decision(self.decision_function(X))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = True
        return tags
