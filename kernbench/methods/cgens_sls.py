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

from kernbench.methods.column_generation import (
    ColumnGenerationClassifier,
    MasterStep,
    PricingRule,
    WorkingSet,
    weak_learner_space,
)
from kernbench.methods.registry import register
from kernbench.solvers.incremental_inverse import IncrementalInverse, make_inverse
from kernbench.solvers.simplex import SLSSolution, simplex_code, simplex_labels, sls_closed_form
from kernbench.weak.base import Pick, WeakLearnerSpace


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

    See Also
    --------
    CGENS : the binary form.
    MultiBoost : multi-class column generation with the exponential loss.
    AdaBoostMH : a stage-wise multi-class baseline.

    References
    ----------
    .. [1] C. Shen and F. Liu, "From Kernel Machines to Ensemble Learning", arXiv preprint, 2014:
       the simplex-coded least-squares SVM (10), its closed form (11), the inverse
       update (20) and Algorithm 2 (CGENS-SLS).

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(
    ...     n_samples=60, n_classes=3, n_informative=4, random_state=0
    ... )
    >>> from kernbench.methods import CGENSSLS
    >>> clf = CGENSSLS(max_iter=10).fit(X, y)
    >>> clf.classes_
    array([0, 1, 2])
    >>> clf.decision_function(X[:5]).shape
    (5, 3)
    >>> clf.n_iter_ <= 10
    True
    >>> bool(clf.score(X, y) > 0.7)
    True
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
    #: (13) with the modulus (negation-complete space); every column in 𝒲: the restricted
    #: problem is the full one
    _pricing = PricingRule(absolute=True, exhausted="converged")

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

    def _make_space(self, X: np.ndarray, rng: np.random.Generator) -> WeakLearnerSpace | None:
        return weak_learner_space(
            X,
            self.weak_learner,
            include_constant=False,  # the model has biases b_τ: no constant column
            rng=rng,
            n_candidates=self.n_candidates,
            sigma=self.sigma,
        )

    def _make_master(
        self,
        X: np.ndarray,
        y: np.ndarray,
        space: WeakLearnerSpace | None,
        ws: WorkingSet,
        rng: np.random.Generator,
        context: Any = None,
    ) -> SLSMaster:
        self.codes_ = simplex_code(self.classes_.size)
        L = simplex_labels(y, self.codes_)  # Alg. 2 line 1: L_i = spx(y_i)ᵀ
        inverse = make_inverse(self.inverse, X.shape[0], float(self.C), self.max_iter)
        return SLSMaster(L, float(self.C), float(self.tol), inverse, self.init_dual)

    def _decision_from_columns(self, Hx: np.ndarray, W: np.ndarray, b: Any) -> np.ndarray:
        F = Hx @ W + b  # (14): F(x) = Wᵀ Φ(x) + b ∈ R^l
        scores = F @ self.codes_  # (15): ⟨F(x), c_y⟩ for y = 1..K
        return scores[:, 1] - scores[:, 0] if scores.shape[1] == 2 else scores


class SLSMaster:
    """CGENS-SLS's restricted master: the closed form (11) of the simplex least-squares SVM.

    S⁻¹[L, 1] (S = HᵀH + C⁻¹I) is kept up to date by the rank-one formula (20) as columns are
    added, with S⁻¹ itself held by ``inverse`` (dense or Woodbury).

    Parameters
    ----------
    L : ndarray of shape (m, K − 1)
        The simplex codes of the labels.
    C, tol : float
        Regularisation, and ε of Alg. 2 line 4 (the pricing threshold).
    inverse : incremental inverse of S
    init_dual : {"closed_form", "constant"}
        The pricing weights before any column: the J = 0 closed form, or all ones.
    """

    def __init__(
        self, L: np.ndarray, C: float, tol: float, inverse: IncrementalInverse, init_dual: str
    ) -> None:
        m = L.shape[0]
        self.C, self.tol = C, tol
        self.l = L.shape[1]
        self.inv = inverse
        self.R = np.hstack([L, np.ones((m, 1))])  # right-hand sides [L, 1] of (11)
        self.P = C * self.R  # S⁻¹[L, 1] with S⁻¹ = C·I at J = 0
        self.init_dual = init_dual

    def start(self) -> MasterStep:
        sol = self._closed_form(np.empty((self.R.shape[0], 0)))
        step = self._step(sol)
        if self.init_dual == "constant":
            step.g = np.ones_like(sol.U)  # the paper's literal initialisation
        return step  # else the J = 0 closed form: U = C(L − 1bᵀ), b = column means of L

    def add_columns(self, picks: Sequence[Pick], columns: Sequence[int]) -> None:
        for pick in picks:
            s, denom = self.inv.add_column(pick.column)  # (20) on S⁻¹
            self.P -= np.outer(s, (s @ self.R) / denom)  # (20) applied to S⁻¹[L, 1]

    def solve(self, ws: WorkingSet) -> MasterStep:
        step = self._step(self._closed_form(ws.H))
        step.solver_stop_reason = "closed_form"
        step.extra = {"bias_kkt": float(np.abs(step.g.sum(axis=0)).max())}  # (18b): 1ᵀU = 0
        return step

    def _closed_form(self, H: np.ndarray) -> SLSSolution:
        l = self.l
        return sls_closed_form(self.P[:, :l], self.P[:, l], H.T, self.C)  # (11)

    def _step(self, sol: SLSSolution) -> MasterStep:
        return MasterStep(
            objective=sol.objective,
            g=sol.U,  # (13): one search per τ with g = U_{:τ}
            threshold=self.tol,  # Alg. 2 line 4
            coef=sol.W,
            intercept=sol.b,
            dual_coef=sol.U,
        )
