"""Random Fourier features + linear SVM (Rahimi & Recht 2007; CGENS paper Table II;
docs/methods/rff.md).

z(x) = √(2/D_f)·cos(Ωᵀx + β), Ω_k ~ N(0, σ⁻²I), β_k ~ U[0, 2π], so that
E[z(x)ᵀz(x')] = exp(−‖x − x'‖²/(2σ²)), the Gaussian RBF kernel. A linear SVM is trained on z:
scikit-learn's ``LinearSVC`` (LIBLINEAR, hinge loss, dual coordinate descent), which — like the
LIBLINEAR the CGENS paper used — appends the bias as a constant feature (so the bias is lightly
regularised) and handles K > 2 classes one-vs-rest. The random map needs no warm start, so the
project's own warm-started solver brings nothing here.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
from sklearn.base import _fit_context
from sklearn.svm import LinearSVC
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted, validate_data

from kernbench.methods.base import KernbenchClassifier
from kernbench.methods.registry import register


def sample_fourier_map(
    n_features: int, n_components: int, sigma: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Draw Ω (D × D_f) with N(0, σ⁻²) entries and β (D_f,) uniform on [0, 2π]."""
    omega = rng.standard_normal((n_features, n_components)) / sigma
    beta = rng.uniform(0.0, 2.0 * np.pi, n_components)
    return omega, beta


def fourier_features(X: np.ndarray, omega: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """z(x) = √(2/D_f)·cos(Ωᵀx + β) for every row of X, shape (n, D_f).

    Raises
    ------
    ValueError
        When the projections Ωᵀx overflow float64 (features near the largest double), which
        would make cos return NaN.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        Z = X @ omega
    if not np.isfinite(Z).all():
        big = float(np.max(np.abs(X))) if X.size else 0.0
        raise ValueError(
            f"feature values too large for random Fourier features: the projections Ωᵀx "
            f"overflow float64 (largest |feature| {big:.3g}); rescale the features, e.g. "
            "protocol.preprocess: minmax"
        )
    Z += beta
    np.cos(Z, out=Z)
    Z *= np.sqrt(2.0 / omega.shape[1])
    return Z


@register("rff_svm")
class RFFSVM(KernbenchClassifier):
    """Linear SVM on D_f random Fourier features approximating the Gaussian RBF kernel.

    Parameters
    ----------
    n_components : int, default=2000
        D_f, the number of random features [P: 2000].
    sigma : float, default=1.0
        Kernel width: k(x, x') = exp(−‖x − x'‖²/(2σ²)).
    gamma : float or None, default=None
        Alternative parameterisation k = exp(−γ‖x − x'‖²); when set it overrides ``sigma``
        (σ = 1/√(2γ)).
    C : float, default=1.0
        SVM regularisation parameter.
    tol : float, default=1e-4
        LIBLINEAR stopping tolerance.
    max_iter : int, default=10000
        LIBLINEAR iteration cap.
    random_state : int, RandomState instance or None, default=None
        Seeds Ω, β and LIBLINEAR's coordinate order.

    Attributes
    ----------
    classes_ : ndarray of shape (K,)
    omega_ : ndarray of shape (D, D_f)
    phase_ : ndarray of shape (D_f,)
    coef_ : ndarray of shape (1, D_f) or (K, D_f)
    intercept_ : ndarray of shape (1,) or (K,)
    model_size_ : int
        D_f (the explicit feature map's size, comparable to an ensemble's number of learners).
    n_iter_ : int
        LIBLINEAR iterations (the maximum over one-vs-rest problems).

    See Also
    --------
    SVMGauss : the exact Gaussian-kernel SVM this approximates.
    CGENS : with ``weak_learner="fourier"``, Fourier features chosen by column generation.

    References
    ----------
    .. [1] C. Shen and F. Liu, "From Kernel Machines to Ensemble Learning", arXiv preprint, 2014:
       the random-Fourier-feature baseline of Table II.
    .. [2] A. Rahimi and B. Recht, "Random Features for Large-Scale Kernel Machines", Advances in
       Neural Information Processing Systems (NIPS), 2007.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(n_samples=60, random_state=0)
    >>> from kernbench.methods import RFFSVM
    >>> clf = RFFSVM(n_components=50, random_state=0).fit(X, y)
    >>> clf.classes_
    array([0, 1])
    >>> clf.decision_function(X[:5]).shape
    (5,)
    >>> clf.model_size_
    50
    >>> bool(clf.score(X, y) > 0.8)
    True
    """

    _parameter_constraints: ClassVar[dict] = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "sigma": [Interval(Real, 0, None, closed="neither")],
        "gamma": [Interval(Real, 0, None, closed="neither"), None],
        "C": [Interval(Real, 0, None, closed="neither")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_components: int = 2000,
        sigma: float = 1.0,
        gamma: float | None = None,
        C: float = 1.0,
        tol: float = 1e-4,
        max_iter: int = 10000,
        random_state: Any = None,
    ) -> None:
        self.n_components = n_components
        self.sigma = sigma
        self.gamma = gamma
        self.C = C
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state

    def _sigma(self) -> float:
        return float(self.sigma) if self.gamma is None else 1.0 / np.sqrt(2.0 * self.gamma)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any) -> RFFSVM:
        """Draw the feature map and train the linear SVM on z(X).

        Parameters
        ----------
        X : array-like of shape (m, D)
        y : array-like of shape (m,)

        Returns
        -------
        self
        """
        X, y, _ = self._check_training_data(X, y)
        rng = self._make_rng()
        self.omega_, self.phase_ = sample_fourier_map(
            X.shape[1], self.n_components, self._sigma(), rng
        )
        svm = LinearSVC(
            C=self.C,
            loss="hinge",
            dual=True,
            tol=self.tol,
            max_iter=self.max_iter,
            random_state=int(rng.integers(np.iinfo(np.int32).max)),
        )
        svm.fit(fourier_features(X, self.omega_, self.phase_), y)
        self.coef_, self.intercept_ = svm.coef_, svm.intercept_
        self.n_iter_ = int(svm.n_iter_)
        self.model_size_ = int(self.n_components)
        return self

    def decision_function(self, X: Any) -> np.ndarray:
        """wᵀz(x) + b: shape (n,) (positive ↔ classes_[1]) or (n, K) one-vs-rest scores."""
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        scores = fourier_features(X, self.omega_, self.phase_) @ self.coef_.T + self.intercept_
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def predict(self, X: Any) -> np.ndarray:
        """Sign of the decision (binary, sign(0) = +1) or the argmax of the one-vs-rest scores."""
        return self._labels_from_decision(self.decision_function(X))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = True
        return tags
