"""CG-Boost regression: ε-insensitive mixture-of-kernels regression by column generation (13).

    min_{α, b, ξ, η ≥ 0}  ½‖α‖² + C·Σ_i (ξ_i + η_i)
    s.t.  Σ_j K_ij α_j + b + ξ_i ≥ y_i − ε,   −(Σ_j K_ij α_j + b) + η_i ≥ −y_i − ε          (13)

With multipliers u (first rows) and v (second rows), α_j = Σ_i (u_i − v_i) K_ij; Remark 4.2 prices a
column by s_j = Σ_i (û_i − v̂_i) K_ij and adds the one farthest from 0. The loop, stratification,
termination rules and masters are those of :class:`kernbench.methods.cgboost.CGBoost`; the
margin-error points are the points outside the ε-tube (ξ_i > tol or η_i > tol).

The default penalty is the 1-norm (‖α‖₁, an LP), the classifier's is the 2-norm (11). Under the
2-norm every column carries α_j = Σ_i (u_i − v_i) K_ij ≠ 0 at the optimum, so TR2 brings in nearly
every column of the mixture (about 600 restricted solves on 200 points and three kernels); the
1-norm optimum is sparse and column generation reaches it in a few dozen columns. The 2-norm
regression (13) is ``norm="l2"``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from numbers import Real
from typing import Any

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.model_selection import train_test_split
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import validate_data

from kernbench.methods.cgboost import CGBoostBase, _seed, cgboost_constraints
from kernbench.methods.registry import register
from kernbench.solvers.masters import RowForm


@register("cgboost_regressor")
class CGBoostRegressor(RegressorMixin, CGBoostBase):
    """CG-Boost regressor: ε-insensitive regression (13) over a mixture of kernels.

    Parameters
    ----------
    C : float, default=1.0
    epsilon : float, default=0.1
        Half-width ε of the insensitive tube.
    kernels, composite : various
        As for :class:`~kernbench.methods.cgboost.CGBoost`.
    norm : {"l1", "l2"}, default="l1"
        The penalty on α: ‖α‖₁ (an LP, sparse) or ½‖α‖² (the QP (13)).
    alpha_sign, bias, stratified, termination, max_iter, \
    validation_fraction, patience, tol, gap_tol, sigma, solver, solver_tol, cache_mb, \
    random_state : various
        As for :class:`~kernbench.methods.cgboost.CGBoost` (``solver="svm"`` is not available;
        the validation metric of TR3 is the RMSE).

    Attributes
    ----------
    As for :class:`~kernbench.methods.cgboost.CGBoost`; ``trace_["train_error"]`` and
    ``trace_["validation_error"]`` are root mean squared errors.

    See Also
    --------
    CGBoost : the classifier.

    References
    ----------
    .. [1] J. Bi, T. Zhang and K. P. Bennett, "Column-Generation Boosting Methods for Mixture of
       Kernels", Proc. 10th ACM SIGKDD Int. Conf. on Knowledge Discovery and Data Mining (KDD),
       2004:
       ε-insensitive regression (13) and column generation for it (Remark 4.2).

    Examples
    --------
    >>> from sklearn.datasets import make_regression
    >>> from kernbench.methods import CGBoostRegressor
    >>> X, y = make_regression(n_samples=60, n_features=5, noise=1.0, random_state=0)
    >>> reg = CGBoostRegressor(max_iter=10).fit(X, y)
    >>> reg.predict(X[:5]).shape
    (5,)
    >>> reg.n_iter_ <= 10
    True
    >>> bool(reg.score(X, y) > 0.9)
    True
    """

    _parameter_constraints: dict = {
        **CGBoostBase._common_constraints,
        "epsilon": [Interval(Real, 0, None, closed="left")],
    }
    _cross_constraints = cgboost_constraints(classification=False)

    def __init__(
        self,
        C: float = 1.0,
        epsilon: float = 0.1,
        kernels: Sequence[Any] = ("linear", "quadratic", "rbf"),
        composite: bool = False,
        norm: str = "l1",
        alpha_sign: str = "free",
        bias: str = "free",
        stratified: bool = True,
        termination: str = "TR2",
        max_iter: int = 1000,
        validation_fraction: float = 0.0,
        patience: int = 25,
        tol: float | None = None,
        gap_tol: float = 1e-6,
        sigma: float | None = None,
        solver: str = "auto",
        solver_tol: float = 1e-7,
        cache_mb: float = 512,
        random_state=None,
    ) -> None:
        self.C = C
        self.epsilon = epsilon
        self.kernels = kernels
        self.composite = composite
        self.norm = norm
        self.alpha_sign = alpha_sign
        self.bias = bias
        self.stratified = stratified
        self.termination = termination
        self.max_iter = max_iter
        self.validation_fraction = validation_fraction
        self.patience = patience
        self.tol = tol
        self.gap_tol = gap_tol
        self.sigma = sigma
        self.solver = solver
        self.solver_tol = solver_tol
        self.cache_mb = cache_mb
        self.random_state = random_state

    # ------------------------------------------------------------------ regression
    def _prepare_targets(self, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        y = np.asarray(y, dtype=np.float64)
        return X, y, y

    def _train_error(self, dec: np.ndarray, y: np.ndarray) -> float:
        """The root mean squared error."""
        return float(np.sqrt(np.mean((dec - y) ** 2)))

    def _row_form(self, y: np.ndarray) -> RowForm:
        return RowForm.regression(y, self.epsilon)  # (13)

    def _split_validation(self, X: Any, y: Any) -> tuple[Any, Any, tuple[np.ndarray, np.ndarray]]:
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        Xt, Xv, yt, yv = train_test_split(
            X, y, test_size=self.validation_fraction, random_state=_seed(self)
        )
        return Xt, yt, (Xv, np.asarray(yv, dtype=np.float64))

    def _validation_error(self, f: np.ndarray, y: np.ndarray) -> float:
        return float(np.sqrt(np.mean((f - y) ** 2)))

    def predict(self, X: Any) -> np.ndarray:
        """Predicted values f(x) = Σ α_pk K_p(x, x_k) + b."""
        return self._decision_values(X)

    def staged_predict(self, X: Any) -> Iterator[np.ndarray]:
        """Predicted values after iterations 1..n_iter_."""
        yield from self._staged_values(X)
