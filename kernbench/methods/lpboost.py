"""LPBoost by column generation on the soft-margin LP (4)/(5) (Demiriz, Bennett & Shawe-Taylor 2002;
CGENS paper Sec. III; METHODS.md §3)."""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from kernbench.methods.column_generation import ColumnGenerationClassifier, MasterStep
from kernbench.methods.registry import register
from kernbench.solvers.lp import IncrementalLPMaster, LPResult, solve_lpboost_cvxpy
from kernbench.weak.base import Pick


@register("lpboost")
class LPBoost(ColumnGenerationClassifier):
    """LPBoost (binary): min ||w||₁ + C·Σξ over w ≥ 0 by column generation, no bias.

    The weak-learner space is negation-complete and includes the constant stump (it plays the bias).

    Parameters
    ----------
    C : float or None, default=None
        Slack penalty of (4). When None, C = 1/(ν·m) from ``nu`` (Demiriz's ν-parametrisation,
        the grid form of PROTOCOLS.md §1); a given C takes precedence over ``nu``.
    nu : float, default=0.1
        ν ∈ (0, 1] used when ``C`` is None.
    max_iter : int, default=500
        J_max (the path parameter).
    tol : float, default=1e-9
        ε: stop when the best edge Σ_i y_i α_i h(x_i) ≤ 1 + ε (no violated dual constraint).
    solver : {"highs", "cvxpy"}, default="highs"
        ``highs``: one highspy model grown by ``addCol`` and re-solved from the previous basis;
        ``cvxpy``: the restricted LP rebuilt and solved through cvxpy each iteration.
    cvxpy_solver : str, default="HIGHS"
        The cvxpy back end when ``solver="cvxpy"``.
    weak_learner : {"stump", "perceptron", "fourier"}, default="stump"
    n_candidates : int, default=2000
    sigma : float, default=1.0
    random_state : int, RandomState or None, default=None

    Attributes
    ----------
    C_ : float
        The penalty used. ``dual_coef_``: final α. Others as in the column-generation base.
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
        "random_state": ["random_state"],
    }
    _binary_only = True
    _include_constant = True  # bias-free model: the constant stump acts as the bias (§0.1)
    _absolute_pricing = False  # criterion (6)
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
        self.random_state = random_state

    def _init_master(self, X: np.ndarray, y: np.ndarray) -> None:
        m = X.shape[0]
        self.C_ = float(self.C) if self.C is not None else 1.0 / (self.nu * m)
        self._y = y
        self._alpha = np.full(m, self.C_)  # §3.2 step 1: the empty restricted dual's solution
        self._w = np.zeros(0)
        self._master = IncrementalLPMaster(y, self.C_) if self.solver == "highs" else None

    def _pricing_weights(self) -> np.ndarray:
        return self._y * self._alpha  # criterion (6): Σ_i y_i α_i h(x_i)

    def _price(self, g: np.ndarray) -> list[Pick]:
        # restricted-dual feasibility keeps selected columns at score ≤ 1: no exclusion needed
        return [self._space.best(g, absolute=False, exclude=None, rng=self._rng)]

    def _stop_threshold(self) -> float:
        return 1.0 + self.tol  # no dual constraint of (5) violated by more than ε

    def _add_columns(self, picks: Sequence[Pick]) -> None:
        if self._master is not None:
            for p in picks:
                self._master.add_column(p.column)

    def _solve_master(self) -> MasterStep:
        if self._master is not None:
            res: LPResult = self._master.solve()
        else:
            res = solve_lpboost_cvxpy(self.H_W, self._y, self.C_, solver=self.cvxpy_solver)
        self._alpha, self._w = res.alpha, res.w
        return MasterStep(
            objective=res.primal,
            gap=res.primal - res.dual,  # strong duality: 0 at every restricted optimum
            solver_stop=res.status,
            solver_iter=res.n_iter,
            extra={"dual_objective": res.dual},
        )

    def _coefficients(self) -> tuple[np.ndarray, float]:
        return self._w.copy(), 0.0

    def _finish_fit(self) -> None:
        self.dual_coef_ = self._alpha.copy()
        del self._master
