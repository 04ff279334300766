"""LPBoost by column generation, in the C-form (4)/(5) of the CGENS paper (Sec. III) or in the
ν-form of Demiriz, Bennett & Shawe-Taylor (2002) (docs/methods/column_generation.md).

C-form (``C`` given):

    min_{w≥0, ξ≥0} ||w||₁ + C·1ᵀξ  s.t.  y_i Σ_j w_j h_j(x_i) + ξ_i ≥ 1;
    dual (5): max 1ᵀα  s.t.  0 ≤ α ≤ C,  Σ_i y_i α_i h_j(x_i) ≤ 1.

ν-form (``C=None``), D = 1/(ν·m), ν ∈ (0, 1]:

    max_{ρ, a≥0, ξ≥0} ρ − D·1ᵀξ  s.t.  y_i Σ_j a_j h_j(x_i) + ξ_i ≥ ρ,  1ᵀa = 1;
    dual: min β  s.t.  Σ_i u_i y_i h_j(x_i) ≤ β,  1ᵀu = 1,  0 ≤ u ≤ D.

The two are one family. Let (a*, ρ*, ξ*) and u* solve the ν-form, with optimal value
β* = ρ* − D·1ᵀξ* > 0. Then w = a*/ρ*, ξ*/ρ* and α = u*/β* solve (4)/(5) with C = D/β*, optimal
value 1/β* (the KKT conditions map one to one). When no point has ξ*_i > 0, β* = ρ* and this is the
familiar C = D/ρ*; with margin errors C = D/ρ* is a different (smaller) C. The C-form with the fixed
C = 1/(νm) = D is therefore NOT the ν-form (it would need β* = 1): with β* ≈ 0.1 it is a ~10×
over-regularised corner of the C-path. LP optima need not be unique, so column generation on
the two forms may return different optimal ensembles with equal objective values.

Both price with criterion (6) on the current dual weights (α or u) and stop when no dual constraint
is violated by more than ε: the best edge ≤ 1 + ε (C-form) or ≤ β + ε (ν-form, whose first column is
always added: the empty restricted ν-LP is infeasible, β = −∞).
"""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from kernbench.methods.column_generation import ColumnGenerationClassifier, MasterStep
from kernbench.methods.constraints import MAX_BINS_NEEDS_STUMPS
from kernbench.methods.registry import register
from kernbench.solvers.lp import (
    IncrementalLPCutMaster,
    IncrementalNuLPCutMaster,
    LPResult,
    NuLPResult,
    solve_lpboost_cvxpy,
    solve_lpboost_nu_cvxpy,
)
from kernbench.weak.base import Pick
from kernbench.weak.stumps import MAX_BINS_LIMIT


@register("lpboost")
class LPBoost(ColumnGenerationClassifier):
    """LPBoost (binary) by column generation: the C-form (4) when ``C`` is given, else the ν-form.

    C-form: min ||w||₁ + C·Σξ over w ≥ 0 (margin 1). ν-form (Demiriz et al. 2002): max ρ − D·Σξ
    over a ≥ 0 with Σa = 1 and D = 1/(ν·m); then #{i: ξ_i > 0} ≤ ν·m ≤ #{i: u_i > 0}. A ν-form
    optimum (a*, ρ*, ξ*) of value β* = ρ* − D·Σξ* > 0 gives the C-form optimum w = a*/ρ* for
    C = D/β* (= D/ρ* when Σξ* = 0; see the module docstring). Prediction is
    sign(Σ_j w_j h_j(x)) (C-form) or sign(Σ_j a_j h_j(x)) (ν-form); no bias: the weak-learner space
    is negation-complete and includes the constant stump (it plays the bias).

    Parameters
    ----------
    C : float or None, default=None
        Slack penalty of the C-form (4). None selects the ν-form with ``nu``; a given C takes
        precedence over ``nu``.
    nu : float, default=0.1
        ν ∈ (0, 1] of the ν-form, used when ``C`` is None: D = 1/(ν·m). ν bounds the fraction of
        margin errors (ξ_i > 0) from above and the fraction of points with u_i > 0 from below.
    max_iter : int, default=500
        J_max (the path parameter).
    tol : float, default=1e-9
        ε: stop when the best edge is ≤ 1 + ε (C-form: Σ_i y_i α_i h(x_i)) or ≤ β + ε (ν-form:
        Σ_i y_i u_i h(x_i)), i.e. no dual constraint is violated by more than ε.
    solver : {"highs", "cvxpy"}, default="highs"
        ``highs``: one highspy model grown by ``addCol`` and re-solved from the previous basis;
        ``cvxpy``: the restricted LP rebuilt and solved through cvxpy each iteration.
    cvxpy_solver : str, default="HIGHS"
        The cvxpy back end when ``solver="cvxpy"``.
    weak_learner : {"stump", "perceptron", "fourier"}, default="stump"
    n_candidates : int, default=2000
    sigma : float, default=1.0
    max_bins : int or None, default=None
        ``weak_learner="stump"`` only: the binned (histogram) stump search with at most
        ``max_bins`` − 1 thresholds per feature (None: every threshold), as in CGENS and AdaBoost.
    random_state : int, RandomState or None, default=None

    Attributes
    ----------
    C_ : float
        C-form only: the penalty used.
    rho_ : float
        ν-form only: the margin ρ of the final restricted solve (NaN if no column was added).
    dual_coef_ : ndarray of shape (m,)
        The final dual weights: α (C-form) or u (ν-form).

    Other attributes as in the column-generation base; ``trace_["objective"]`` is the restricted
    primal of the form that ran (||w||₁ + C·Σξ, or ρ − D·Σξ), ``trace_["dual_objective"]`` its dual
    (1ᵀα, or β), and the ν-form also traces ``rho``.
    """

    _parameter_constraints: dict = {
        "C": [Interval(Real, 0, None, closed="neither"), None],
        "nu": [Interval(Real, 0, 1, closed="right")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "solver": [StrOptions({"highs", "cvxpy"})],
        "cvxpy_solver": [str],
        "weak_learner": [StrOptions({"stump", "perceptron", "fourier"})],
        "n_candidates": [Interval(Integral, 1, None, closed="left")],
        "sigma": [Interval(Real, 0, None, closed="neither")],
        "max_bins": [Interval(Integral, 2, MAX_BINS_LIMIT, closed="both"), None],
        "random_state": ["random_state"],
    }
    _cross_constraints = (MAX_BINS_NEEDS_STUMPS,)

    _binary_only = True
    _include_constant = True  # bias-free model: the constant stump acts as the bias
    _absolute_pricing = False  # criterion (6)
    # the ν-LP master class (HiGHS path): the dual grown by cuts and re-solved by dual simplex
    # (1.45-1.5x faster per Table I fit in total, restricted optima equal to 1e-10), or the primal
    # grown by columns (IncrementalNuLPMaster); both return the same NuLPResult
    _nu_master_class: type = IncrementalNuLPCutMaster
    # the C-form master class (HiGHS path): the dual (5) grown by cuts (dual simplex on a J-row
    # basis), or the primal (4) grown by columns (IncrementalLPMaster, an m-row basis)
    _c_master_class: type = IncrementalLPCutMaster
    _exclude_selected = False  # restricted-dual feasibility keeps selected columns at score ≤ 1

    def __init__(
        self,
        C: float | None = None,
        nu: float = 0.1,
        max_iter: int = 500,
        tol: float = 1e-9,
        solver: str = "highs",
        cvxpy_solver: str = "HIGHS",
        weak_learner: str = "stump",
        n_candidates: int = 2000,
        sigma: float = 1.0,
        max_bins: int | None = None,
        random_state=None,
    ) -> None:
        self.C = C
        self.nu = nu
        self.max_iter = max_iter
        self.tol = tol
        self.solver = solver
        self.cvxpy_solver = cvxpy_solver
        self.weak_learner = weak_learner
        self.n_candidates = n_candidates
        self.sigma = sigma
        self.max_bins = max_bins
        self.random_state = random_state

    def _init_master(self, X: np.ndarray, y: np.ndarray) -> None:
        m = X.shape[0]
        self._y = y
        self._nu_form = self.C is None
        for stale in ("C_", "rho_"):  # a refit in the other form must not keep them
            self.__dict__.pop(stale, None)
        if self._nu_form:
            self._D = 1.0 / (self.nu * m)
            self._dual = np.full(m, 1.0 / m)  # u₀ = 1/m (Demiriz et al.)
            self._beta = -np.inf  # the empty ν-LP is infeasible: the first pick is always added
            self._rho = float("nan")
            self._master = self._nu_master_class(y, self._D) if self.solver == "highs" else None
        else:
            self.C_ = float(self.C)
            self._dual = np.full(m, self.C_)  # the empty restricted dual's solution
            self._master = self._c_master_class(y, self.C_) if self.solver == "highs" else None
        self._w = np.zeros(0)

    def _pricing_weights(self) -> np.ndarray:
        return self._y * self._dual  # criterion (6): Σ_i y_i α_i h(x_i), or with u

    def _stop_threshold(self) -> float:
        # no dual constraint violated by more than ε
        return (self._beta if self._nu_form else 1.0) + self.tol

    def _add_columns(self, picks: Sequence[Pick]) -> None:
        if self._master is not None:
            for p in picks:
                self._master.add_column(p.column)

    def _solve_master(self) -> MasterStep:
        if self._nu_form:
            return self._solve_nu_master()
        if self._master is not None:
            res: LPResult = self._master.solve()
        else:
            res = solve_lpboost_cvxpy(self.H_W, self._y, self.C_, solver=self.cvxpy_solver)
        self._dual, self._w = res.alpha, res.w
        return MasterStep(
            objective=res.primal,
            gap=res.primal - res.dual,  # strong duality: 0 at every restricted optimum
            solver_stop=res.status,
            solver_iter=res.n_iter,
            extra={"dual_objective": res.dual},
        )

    def _solve_nu_master(self) -> MasterStep:
        if self._master is not None:
            res: NuLPResult = self._master.solve()
        else:
            res = solve_lpboost_nu_cvxpy(self.H_W, self._y, self._D, solver=self.cvxpy_solver)
        self._dual, self._w, self._beta, self._rho = res.u, res.a, res.beta, res.rho
        return MasterStep(
            objective=res.primal,
            gap=res.primal - res.dual,  # ρ − DΣξ − β: 0 at every restricted optimum
            solver_stop=res.status,
            solver_iter=res.n_iter,
            extra={"dual_objective": res.dual, "rho": res.rho},
        )

    def _coefficients(self) -> tuple[np.ndarray, float]:
        return self._w.copy(), 0.0

    def _finish_fit(self) -> None:
        self.dual_coef_ = self._dual.copy()
        if self._nu_form:
            self.rho_ = float(self._rho)
        del self._master
