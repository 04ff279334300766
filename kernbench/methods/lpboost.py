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

The ν floor. With a negation-complete space β* ≥ 0, and β* = 0 exactly when some u with
0 ≤ u ≤ D, 1ᵀu = 1 gives every weak learner a zero edge: the class-weighted data carry no signal
the space can see at that cap. Then ρ* − D·1ᵀξ* = 0, an ensemble summing to zero everywhere is
optimal, and the ensemble the solver returns predicts by rounding noise (or one class). That
happens for every ν ≤ ν_min, the largest ν whose cap D = 1/(νm) still lets some u cancel every
edge (:mod:`kernbench.solvers.nu_floor`; on data with few distinct values per feature, such as
flare-solar, ν_min is 0.65–0.77). The ν-form therefore fits with ν itself when ν > ν_min, else
with ν_min + 0.1·(1 − ν_min). ν_max is 1 here: Σa = 1 keeps the ν-LP bounded for every
ν ∈ (0, 1]. ν_min = 1 happens only when the uniform weights already cancel every edge (equal
classes, no signal); the fit at ν = 1 then has optimal value 0 and no class is larger.
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
from kernbench.methods.constraints import MAX_BINS_NEEDS_STUMPS
from kernbench.methods.registry import register
from kernbench.solvers.lp import (
    IncrementalLP,
    IncrementalLPCutMaster,
    IncrementalNuLPCutMaster,
    LPResult,
    NuLPResult,
    solve_lpboost_cvxpy,
    solve_lpboost_nu_cvxpy,
)
from kernbench.solvers.nu_floor import nu_floor_duplicates, nu_floor_groups, usable_nu
from kernbench.weak.base import Pick, WeakLearnerSpace
from kernbench.weak.stumps import MAX_BINS_LIMIT, StumpSpace

#: ν_max of the ν-form: Σa = 1 keeps the ν-LP bounded for every ν ∈ (0, 1]
NU_MAX = 1.0


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
        A ν at or below ν_min, the largest ν at which the ν-LP on the training data has the
        optimal value 0 (there the zero ensemble is optimal and the fit predicts by rounding
        noise), is raised to ν_min + 0.1·(1 − ν_min)
        (:mod:`kernbench.solvers.nu_floor`); ``nu_`` holds the ν used.
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
    nu_ : float
        ν-form only: the ν used (``nu``, or the raised value when ``nu`` ≤ ν_min).
    nu_min_ : float
        ν-form only: ν_min on the training data over the weak-learner space (0 when every ν > 0
        gives a non-zero optimal value): one LP over groups of training points whose signed
        weights must each cancel (stumps: the points between consecutive cuts of each feature;
        perceptrons and Fourier functions: identical points).
    dual_coef_ : ndarray of shape (m,)
        The final dual weights: α (C-form) or u (ν-form).

    Other attributes as in the column-generation base; ``trace_["objective"]`` is the restricted
    primal of the form that ran (||w||₁ + C·Σξ, or ρ − D·Σξ), ``trace_["dual_objective"]`` its dual
    (1ᵀα, or β), and the ν-form also traces ``rho``.

    See Also
    --------
    CGENS : column generation for the 2-norm SVM (1) over the same weak learners.
    AdaBoost : stage-wise boosting with the same stumps.
    CGBoost : 1- and 2-norm column generation over kernel columns.

    References
    ----------
    .. [1] C. Shen and F. Liu, "From Kernel Machines to Ensemble Learning", arXiv preprint, 2014:
       the C-form LP (4), its dual (5) and the pricing rule (6).
    .. [2] A. Demiriz, K. P. Bennett and J. Shawe-Taylor, "Linear Programming Boosting via
       Column Generation", Machine Learning 46(1-3), 2002 (the ν-form).

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(n_samples=60, random_state=0)
    >>> from kernbench.methods import LPBoost
    >>> clf = LPBoost(max_iter=10).fit(X, y)
    >>> clf.classes_
    array([0, 1])
    >>> clf.decision_function(X[:5]).shape
    (5,)
    >>> clf.n_iter_ <= 10
    True
    >>> bool(clf.score(X, y) > 0.8)
    True
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
    #: criterion (6); no exclusion: restricted-dual feasibility keeps selected columns at
    #: score ≤ 1 (ν-form: ≤ β)
    _pricing = PricingRule(absolute=False, exclude=False)
    # the ν-LP master class (HiGHS path): the dual grown by cuts and re-solved by dual simplex
    # (the faster of the two, benchmarks/bench_cgens_vs_lpboost.py; the restricted optima agree),
    # or the primal grown by columns (benchmarks/lp_primal_masters.py); the same NuLPResult
    _nu_master_class: type = IncrementalNuLPCutMaster
    # the C-form master class (HiGHS path): the dual (5) grown by cuts (dual simplex on a J-row
    # basis), or the primal (4) grown by columns (an m-row basis, benchmarks/lp_primal_masters.py)
    _c_master_class: type = IncrementalLPCutMaster

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

    def _make_space(self, X: np.ndarray, rng: np.random.Generator) -> WeakLearnerSpace | None:
        return weak_learner_space(
            X,
            self.weak_learner,
            include_constant=True,  # bias-free model: the constant stump acts as the bias
            rng=rng,
            n_candidates=self.n_candidates,
            sigma=self.sigma,
            max_bins=self.max_bins,
        )

    def _make_master(
        self,
        X: np.ndarray,
        y: np.ndarray,
        space: WeakLearnerSpace | None,
        ws: WorkingSet,
        rng: np.random.Generator,
        context: Any = None,
    ) -> LPBoostMaster:
        for stale in ("C_", "rho_", "nu_", "nu_min_"):  # a refit in the other form must not
            self.__dict__.pop(stale, None)  # keep them
        if self.C is None:
            # ν at or below ν_min: the zero ensemble is optimal (β* = 0)
            self.nu_min_ = self._nu_floor(X, y, space)
            self.nu_ = usable_nu(self.nu, self.nu_min_, NU_MAX)
            D = 1.0 / (self.nu_ * X.shape[0])
            lp = self._nu_master_class(y, D) if self.solver == "highs" else None
            return LPBoostMaster(y, None, D, self.tol, lp, self.cvxpy_solver)
        self.C_ = float(self.C)
        lp = self._c_master_class(y, self.C_) if self.solver == "highs" else None
        return LPBoostMaster(y, self.C_, None, self.tol, lp, self.cvxpy_solver)

    def _nu_floor(self, X: np.ndarray, y: np.ndarray, space: WeakLearnerSpace | None) -> float:
        """ν_min of the ν-LP over this fit's weak-learner space on (X, y ∈ {±1})."""
        if isinstance(space, StumpSpace):  # with the constant: one group row per value or bin
            return nu_floor_groups(space.feature_groups(), y)
        if space is None:  # no candidate at all: nothing to fit, nothing to raise
            return 0.0
        return nu_floor_duplicates(X, y)  # perceptrons, Fourier: groups of identical points

    def _finish_fit(
        self, master: LPBoostMaster, ws: WorkingSet, last: MasterStep, priced: Any
    ) -> None:
        if self.C is None:
            self.rho_ = float(last.extra.get("rho", float("nan")))


class LPBoostMaster:
    """LPBoost's restricted LP, in the C-form (``C`` given) or the ν-form (``D`` given).

    Parameters
    ----------
    y : ndarray of shape (m,)
        ±1 labels.
    C, D : float or None
        The C-form's slack penalty, or the ν-form's D = 1/(ν·m) (exactly one is given).
    tol : float
        ε: no dual constraint may be violated by more than ε.
    lp : IncrementalLP or None
        The master grown column by column (None: the restricted LP rebuilt through cvxpy on the
        working set's columns, with ``cvxpy_solver``).
    cvxpy_solver : str
    """

    def __init__(
        self,
        y: np.ndarray,
        C: float | None,
        D: float | None,
        tol: float,
        lp: IncrementalLP | None,
        cvxpy_solver: str,
    ) -> None:
        self.y, self.C, self.D, self.tol = y, C, D, tol
        self.lp = lp
        self.cvxpy_solver = cvxpy_solver

    def start(self) -> MasterStep:
        m = self.y.size
        if self.D is not None:
            # u₀ = 1/m (Demiriz et al.); the empty ν-LP is infeasible (β = −∞): the first pick
            # is always added
            return self._step(float("nan"), np.full(m, 1.0 / m), np.zeros(0), -np.inf)
        return self._step(float("nan"), np.full(m, self.C), np.zeros(0), 1.0)

    def add_columns(self, picks: Sequence[Pick], columns: Sequence[int]) -> None:
        if self.lp is not None:
            for p in picks:
                self.lp.add_column(p.column)

    def solve(self, ws: WorkingSet) -> MasterStep:
        if self.D is not None:
            if self.lp is not None:
                nu: NuLPResult = self.lp.solve()
            else:
                nu = solve_lpboost_nu_cvxpy(ws.H, self.y, self.D, solver=self.cvxpy_solver)
            step = self._step(nu.primal, nu.u, nu.a, nu.beta)
            step.gap = nu.primal - nu.dual  # ρ − DΣξ − β: 0 at every restricted optimum
            step.solver_stop_reason, step.solver_iter = nu.stop_reason, nu.n_iter
            step.extra = {"dual_objective": nu.dual, "rho": nu.rho}
            return step
        if self.lp is not None:
            res: LPResult = self.lp.solve()
        else:
            res = solve_lpboost_cvxpy(ws.H, self.y, self.C, solver=self.cvxpy_solver)
        step = self._step(res.primal, res.alpha, res.w, 1.0)
        step.gap = res.primal - res.dual  # strong duality: 0 at every restricted optimum
        step.solver_stop_reason, step.solver_iter = res.stop_reason, res.n_iter
        step.extra = {"dual_objective": res.dual}
        return step

    def _step(self, objective: float, dual: np.ndarray, w: np.ndarray, level: float) -> MasterStep:
        return MasterStep(
            objective=objective,
            g=self.y * dual,  # criterion (6): Σ_i y_i α_i h(x_i), or with u
            threshold=level + self.tol,  # no dual constraint violated by more than ε
            coef=w.copy(),
            intercept=0.0,
            dual_coef=dual.copy(),
        )
