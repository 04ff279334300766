"""CGENS-SLS: simplex-coding multi-class ensembles (Shen & Liu, Alg. 2, App. A;
docs/methods/column_generation.md).

Column generation on the simplex least-squares SVM (10). The restricted master has the closed form
(11): with S = HᵀH + C⁻¹I, b = (1ᵀS⁻¹L / 1ᵀS⁻¹1)ᵀ, U = S⁻¹(L − 1bᵀ), W = HU. S⁻¹[L, 1] is updated
by the rank-one formula (20) when a column is added, with S⁻¹ itself kept either densely
(Sherman–Morrison) or in the Woodbury form (:mod:`kernbench.solvers.incremental_inverse`). Pricing
(13) is one stump search per code coordinate τ with weights U_{:τ} (all sharing one presort), and
prediction (15) decodes F(x) = Wᵀ Φ(x) + b by the nearest simplex vertex in inner product.
"""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from kernbench.methods.column_generation import ColumnGenerationClassifier, MasterStep
from kernbench.methods.registry import register
from kernbench.solvers.incremental_inverse import make_inverse
from kernbench.solvers.simplex import SLSSolution, simplex_code, simplex_labels, sls_closed_form
from kernbench.weak.base import Pick


@register("cgens_sls")
class CGENSSLS(ColumnGenerationClassifier):
    """CGENS-SLS: multi-class column generation on the simplex least-squares SVM (10).

    Parameters
    ----------
    C : float, default=1.0
        Regularisation parameter of (10).
    max_iter : int, default=500
        J_max, the maximum number of weak learners (the path parameter).
    tol : float, default=1e-6
        ε of Alg. 2 line 4: stop when max_τ |Σ_i U_iτ ĥ(x_i)| ≤ ε.
    inverse : {"auto", "sherman_morrison", "woodbury"}, default="auto"
        How S⁻¹ is kept: dense with (20), or the Woodbury form (J × J factor); "auto" takes
        Woodbury when ``max_iter`` < m (see ``incremental_inverse.make_inverse``).
    init_dual : {"closed_form", "constant"}, default="closed_form"
        Initial U: the J = 0 closed form U = C(L − 1 mean(L)ᵀ) [our default], or the paper's
        literal "a positive constant in each element" (all ones).
    weak_learner : {"stump", "perceptron", "fourier"}, default="stump"
    n_candidates : int, default=2000
        Candidates per oracle call of the sampled spaces.
    sigma : float, default=1.0
        Fourier bandwidth.
    random_state : int, RandomState or None, default=None
        Seeds the sampled weak-learner spaces.

    Attributes
    ----------
    classes_, learners_, coef_ (W, shape (J, K − 1)), intercept_ (b, shape (K − 1,)),
    coef_path_, intercept_path_, n_iter_, stop_reason_, trace_, model_size_
        See :class:`~kernbench.methods.column_generation.ColumnGenerationClassifier`.
    codes_ : ndarray of shape (K − 1, K)
        The simplex code vectors c_1..c_K (columns).
    dual_coef_ : ndarray of shape (m, K − 1)
        U at the end of the fit (residuals O = U/C).
    """

    _parameter_constraints: dict = {
        "C": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "inverse": [StrOptions({"auto", "sherman_morrison", "woodbury"})],
        "init_dual": [StrOptions({"closed_form", "constant"})],
        "weak_learner": [StrOptions({"stump", "perceptron", "fourier"})],
        "n_candidates": [Interval(Integral, 1, None, closed="left")],
        "sigma": [Interval(Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
    }
    _binary_only = False
    _include_constant = False  # the model has biases b_τ: no constant column
    _absolute_pricing = True  # (13) with the modulus (negation-complete space)
    _exhausted_reason = "converged"  # every column in 𝒲: the restricted problem is the full one

    def __init__(
        self,
        C: float = 1.0,
        max_iter: int = 500,
        tol: float = 1e-6,
        inverse: str = "auto",
        init_dual: str = "closed_form",
        weak_learner: str = "stump",
        n_candidates: int = 2000,
        sigma: float = 1.0,
        random_state: Any = None,
    ) -> None:
        self.C = C
        self.max_iter = max_iter
        self.tol = tol
        self.inverse = inverse
        self.init_dual = init_dual
        self.weak_learner = weak_learner
        self.n_candidates = n_candidates
        self.sigma = sigma
        self.random_state = random_state

    # ------------------------------------------------------------------ hooks
    def _init_master(self, X: np.ndarray, y: np.ndarray) -> None:
        m = X.shape[0]
        C = float(self.C)
        self.codes_ = simplex_code(self.classes_.size)
        L = simplex_labels(y, self.codes_)  # Alg. 2 line 1: L_i = spx(y_i)ᵀ
        self._l = L.shape[1]
        self._inv = make_inverse(self.inverse, m, C, self.max_iter)
        self._R = np.hstack([L, np.ones((m, 1))])  # right-hand sides [L, 1] of (11)
        self._P = C * self._R  # S⁻¹[L, 1] with S⁻¹ = C·I at J = 0
        self._sol = self._closed_form()
        if self.init_dual == "constant":
            self._U = np.ones((m, self._l))  # the paper's literal initialisation
        else:
            self._U = self._sol.U  # J = 0 closed form: U = C(L − 1bᵀ), b = column means of L

    def _closed_form(self) -> SLSSolution:
        l = self._l
        return sls_closed_form(self._P[:, :l], self._P[:, l], self.H_W.T, float(self.C))  # (11)

    def _pricing_weights(self) -> np.ndarray:
        return self._U  # (13): one search per τ with g = U_{:τ}

    def _stop_threshold(self) -> float:
        return float(self.tol)  # Alg. 2 line 4

    def _add_columns(self, picks: Sequence[Pick]) -> None:
        for pick in picks:
            s, denom = self._inv.add_column(pick.column)  # (20) on S⁻¹
            self._P -= np.outer(s, (s @ self._R) / denom)  # (20) applied to S⁻¹[L, 1]

    def _solve_master(self) -> MasterStep:
        self._sol = self._closed_form()
        self._U = self._sol.U
        return MasterStep(
            objective=self._sol.objective,
            solver_stop="closed_form",
            extra={"bias_kkt": float(np.abs(self._U.sum(axis=0)).max())},  # (18b): 1ᵀU = 0
        )

    def _coefficients(self) -> tuple[np.ndarray, np.ndarray]:
        return self._sol.W, self._sol.b

    def _decision_from_columns(self, Hx: np.ndarray, W: np.ndarray, b: Any) -> np.ndarray:
        F = Hx @ W + b  # (14): F(x) = Wᵀ Φ(x) + b ∈ R^l
        scores = F @ self.codes_  # (15): ⟨F(x), c_y⟩ for y = 1..K
        return scores[:, 1] - scores[:, 0] if scores.shape[1] == 2 else scores

    def _finish_fit(self) -> None:
        self.dual_coef_ = self._sol.U
        del self._inv, self._P, self._R, self._U, self._sol
