"""AdaBoost.ECC with random balanced colourings and real-valued stump leaves
(docs/methods/adaboost.md).

Guruswami & Sahai's output-code boosting keeps a distribution D over (example, wrong-label) pairs.
Each round draws a colouring μ: classes → {±1}, trains a stump on the induced binary problem and
gives its two leaves the confidences that minimise the exponential bound Z_t (Schapire–Singer):
α_t on the +1 leaf, −β_t on the −1 leaf. The final rule is argmax_ℓ Σ_t g_t(x) μ_t(ℓ).
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

from kernbench.methods.base import IterativeMixin, KernbenchClassifier
from kernbench.methods.registry import register
from kernbench.weak.stumps import StumpSpace, predict_stumps

#: floor replacing an exactly-zero leaf weight when no smoothing is asked for (AdaBoost's δ)
_ZERO_FLOOR = 1e-10
#: colourings drawn per round before giving up when none separates any weighted pair
_MAX_DRAWS = 100


def balanced_colouring(n_classes: int, rng: np.random.Generator) -> np.ndarray:
    """A random balanced colouring μ ∈ {±1}^K: a random permutation, the first ⌈K/2⌉ get +1."""
    mu = -np.ones(n_classes)
    mu[rng.permutation(n_classes)[: (n_classes + 1) // 2]] = 1.0
    return mu


def _half_log_ratio(num: float, den: float, delta: float) -> float:
    if num + den == 0.0:
        return 0.0  # an empty leaf: its value does not enter Z_t
    num, den = num + delta, den + delta
    return 0.5 * np.log(max(num, _ZERO_FLOOR) / max(den, _ZERO_FLOOR))


def leaf_confidences(
    h: np.ndarray, y_tilde: np.ndarray, d: np.ndarray, delta: float
) -> tuple[float, float]:
    """Leaf values (α, β) minimising Z = Σ_i d_i exp(−ỹ_i g(x_i)); g = α on h = +1, −β on h = −1.

    With W_{s,c} = Σ_{i: h_i = s, ỹ_i = c} d_i:
    α = ½ ln((W_{+,+} + δ)/(W_{+,−} + δ)) and β = ½ ln((W_{−,−} + δ)/(W_{−,+} + δ)).

    Parameters
    ----------
    h : ndarray of shape (m,)
        Stump outputs ±1.
    y_tilde : ndarray of shape (m,)
        Coloured labels ±1.
    d : ndarray of shape (m,)
        Example weights (a distribution).
    delta : float
        Smoothing δ ≥ 0; δ = 0 gives the exact minimiser (a pure leaf then gets a large finite
        value from a 1e-10 floor, an empty leaf 0).
    """
    pos, ypos = h > 0, y_tilde > 0
    W_pp = float(d[pos & ypos].sum())
    W_pm = float(d[pos & ~ypos].sum())
    W_mm = float(d[~pos & ~ypos].sum())
    W_mp = float(d[~pos & ypos].sum())
    alpha = _half_log_ratio(W_pp, W_pm, delta)  # α_t = ½ ln((W_{+,+} + δ)/(W_{+,−} + δ))
    beta = _half_log_ratio(W_mm, W_mp, delta)  # β_t = ½ ln((W_{−,−} + δ)/(W_{−,+} + δ))
    return alpha, beta


@register("adaboost_ecc")
class AdaBoostECC(IterativeMixin, KernbenchClassifier):
    """AdaBoost.ECC (Guruswami & Sahai) with decision stumps.

    Parameters
    ----------
    n_estimators : int, default=500
        Number of rounds T (the path parameter).
    ecc_discrete : bool, default=False
        False: real-valued leaves (α_t, −β_t) with smoothing δ. True: the discrete form
        g_t = α_t h_t with α_t = ½ ln((1 − ε_t)/ε_t), ε_t the weighted error of h_t.
    smoothing : float or None, default=None
        δ of the leaf confidences; None means 1/(mK) (Schapire–Singer).
    random_state : int, RandomState instance or None
        Seeds the colourings.

    Attributes
    ----------
    classes_ : ndarray of shape (K,)
    colourings_ : ndarray of shape (T, K)
        μ_t(ℓ) ∈ {±1}.
    stump_features_, stump_thresholds_, stump_signs_ : ndarray of shape (T,)
        The stumps h_t (threshold −inf: constant).
    leaf_values_ : ndarray of shape (T, 2)
        g_t on h_t = +1 (α_t) and on h_t = −1 (−β_t).
    sample_weight_ : ndarray of shape (m, K)
        The distribution D over (example, wrong-label) pairs after the last round (0 on y_i).
    n_iter_, model_size_ : int
    trace_ : dict of lists
        Per round: ``z`` Z_t, ``objective`` Π_s Z_s, ``weighted_error`` ε_t of h_t on the coloured
        problem, ``train_error``, ``time_s`` (cumulative).
    stop_reason_ : str
        "max_iter", or "no_weight" when D has collapsed (underflow) onto pairs that 100 random
        colourings in a row did not separate.

    See Also
    --------
    AdaBoostMH : shared stumps voting on every class.
    AdaBoostMO : one-vs-all output code, a stump per class column.
    MultiBoostCW : class-wise column generation (Lin et al.), which compares against this one.

    References
    ----------
    .. [1] V. Guruswami and A. Sahai, "Multiclass Learning, Boosting, and Error-Correcting Codes",
       Proc. 12th Conf. on Computational Learning Theory (COLT), 1999.
    .. [2] G. Lin, C. Shen, A. van den Hengel and D. Suter, "Fast Training of Effective Multi-class
       Boosting Using Coordinate Descent Optimization", Proc. Asian Conf. on Computer Vision
       (ACCV), 2012:
       the AdaBoost.ECC baseline of Sec. 3.
    .. [3] C. Shen and F. Liu, "From Kernel Machines to Ensemble Learning", arXiv preprint, 2014:
       the AdaBoost.ECC baseline of Table III.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(
    ...     n_samples=60, n_classes=3, n_informative=4, random_state=0
    ... )
    >>> from kernbench.methods import AdaBoostECC
    >>> clf = AdaBoostECC(n_estimators=10, random_state=0).fit(X, y)
    >>> clf.classes_
    array([0, 1, 2])
    >>> clf.decision_function(X[:5]).shape
    (5, 3)
    >>> clf.colourings_.shape
    (10, 3)
    >>> bool(clf.score(X, y) > 0.7)
    True
    """

    path_param: ClassVar[str] = "n_estimators"
    _parameter_constraints: ClassVar[dict] = {
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "ecc_discrete": ["boolean"],
        "smoothing": [Interval(Real, 0, None, closed="left"), None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_estimators: int = 500,
        ecc_discrete: bool = False,
        smoothing: float | None = None,
        random_state: Any = None,
    ) -> None:
        self.n_estimators = n_estimators
        self.ecc_discrete = ecc_discrete
        self.smoothing = smoothing
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any) -> AdaBoostECC:
        """Run T rounds of AdaBoost.ECC on (X, y).

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
        rng = self._make_rng()
        delta = 1.0 / (m * K) if self.smoothing is None else float(self.smoothing)
        t0 = time.perf_counter()
        rows = np.arange(m)
        D = np.full((m, K), 1.0 / (m * (K - 1)))  # D(i, ℓ) on wrong labels only
        D[rows, y_index] = 0.0
        space = StumpSpace(X, include_constant=True)
        F = np.zeros((m, K))
        mus, feats, thrs, signs, leaves = [], [], [], [], []
        trace: dict[str, list] = {
            k: [] for k in ("z", "objective", "weighted_error", "train_error", "time_s")
        }
        bound = 1.0
        self.stop_reason_ = "max_iter"
        for _ in range(self.n_estimators):
            for _draw in range(_MAX_DRAWS):
                mu = balanced_colouring(K, rng)
                y_tilde = mu[y_index]  # ỹ_i = μ_t(y_i)
                # w_i = Σ_{ℓ≠y_i} D(i,ℓ)[μ(ℓ) ≠ μ(y_i)]
                w = (D * (mu[None, :] != y_tilde[:, None])).sum(axis=1)
                if w.sum() > 0.0:
                    break
            else:  # D lives (after underflow) on pairs no colouring drawn could separate
                self.stop_reason_ = "no_weight"
                break
            d = w / w.sum()
            pick = space.best(d * y_tilde, absolute=True)  # max-edge stump, score ≥ 0
            h = pick.column
            eps = float(d[h != y_tilde].sum())
            if self.ecc_discrete:
                a = 0.5 * np.log((1.0 - eps + _ZERO_FLOOR) / (eps + _ZERO_FLOOR))
                g_pos, g_neg = a, -a
            else:
                alpha, beta = leaf_confidences(h, y_tilde, d, delta)
                g_pos, g_neg = alpha, -beta
            g = np.where(h > 0, g_pos, g_neg)
            # D(i,ℓ) ← D(i,ℓ) exp(½ g(x_i)(μ(ℓ) − μ(y_i))) / Z_t
            D = D * np.exp(0.5 * g[:, None] * (mu[None, :] - y_tilde[:, None]))
            Z = float(D.sum())
            D /= Z
            F += np.outer(g, mu)
            bound *= Z
            mus.append(mu)
            feats.append(pick.learner.feature)
            thrs.append(pick.learner.threshold)
            signs.append(pick.learner.sign)
            leaves.append((g_pos, g_neg))
            trace["z"].append(Z)
            trace["objective"].append(bound)
            trace["weighted_error"].append(eps)
            trace["train_error"].append(float(np.mean(np.argmax(F, axis=1) != y_index)))
            trace["time_s"].append(time.perf_counter() - t0)
        self.colourings_ = np.asarray(mus, dtype=np.float64).reshape(-1, K)
        self.stump_features_ = np.asarray(feats, dtype=np.intp)
        self.stump_thresholds_ = np.asarray(thrs, dtype=np.float64)
        self.stump_signs_ = np.asarray(signs, dtype=np.float64)
        self.leaf_values_ = np.asarray(leaves, dtype=np.float64).reshape(-1, 2)
        self.sample_weight_ = D
        self.n_iter_ = self.model_size_ = int(self.leaf_values_.shape[0])
        self.trace_ = trace
        self.fit_time_ = time.perf_counter() - t0
        return self

    def _confidences(self, X: np.ndarray) -> np.ndarray:
        """g_t(x) for every round, shape (n, T)."""
        Hx = predict_stumps(X, self.stump_features_, self.stump_thresholds_, self.stump_signs_)
        return np.where(Hx > 0, self.leaf_values_[:, 0], self.leaf_values_[:, 1])

    @staticmethod
    def _as_binary(F: np.ndarray) -> np.ndarray:
        return F[:, 1] - F[:, 0] if F.shape[1] == 2 else F

    def decision_function(self, X: Any) -> np.ndarray:
        """Σ_t g_t(x) μ_t(ℓ), shape (n, K); binary: the class-2 minus class-1 score, shape (n,)."""
        check_is_fitted(self, "leaf_values_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return self._as_binary(self._confidences(X) @ self.colourings_)

    def staged_decision_function(self, X: Any) -> Iterator[np.ndarray]:
        """Decision values after rounds 1..n_iter_ (stumps evaluated once on X)."""
        check_is_fitted(self, "leaf_values_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        G = self._confidences(X)
        F = np.zeros((X.shape[0], self.classes_.size))
        for t in range(self.n_iter_):
            F = F + np.outer(G[:, t], self.colourings_[t])
            yield self._as_binary(F)

    def predict(self, X: Any) -> np.ndarray:
        """argmax_ℓ Σ_t g_t(x) μ_t(ℓ)."""
        return self._labels_from_decision(self.decision_function(X))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = True
        return tags
