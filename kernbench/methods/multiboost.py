"""MultiBoost (Shen & Hao, CVPR 2011) with the exponential loss (docs/methods/multiboost.md).

Totally-corrective multi-class boosting with learners shared by all K classes and non-negative
class coefficients W ∈ R^{J×K}: problem (2) of the MultiBoost_cw paper with 𝕙_c = h for every c.
Column generation: the pricing problem (6) is one stump search per class with the weights u^c built
from the KKT dual λ (5); the restricted master is solved, warm-started from the previous W with a
zero row for the new learner, by L-BFGS-B on the bound-constrained smooth problem
(:mod:`kernbench.solvers.multiclass_exp_loss`, the paper's solver), by projected Newton
(:mod:`kernbench.solvers.exp_loss_newton`) or by FCD (Alg. 2 of the
MultiBoost_cw paper, :mod:`kernbench.solvers.fcd`): every shared learner column j is K variables
(j, c), one per class, all reading the one stored int8 column; the closed form (12) holds because
the columns are ±1.
"""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from kernbench.methods.column_generation import ColumnGenerationClassifier, MasterStep
from kernbench.methods.registry import register
from kernbench.solvers.exp_loss_newton import solve_shared_newton
from kernbench.solvers.fcd import SortedColumns, fcd_solve
from kernbench.solvers.multiclass_exp_loss import pricing_weights, solve_shared_lbfgsb
from kernbench.weak.base import Pick


@register("multiboost")
class MultiBoost(ColumnGenerationClassifier):
    """MultiBoost (exponential loss), column generation; L-BFGS-B, Newton or FCD restricted master.

    Parameters
    ----------
    C : float, default=1000.0
        Regularisation parameter of (2) (the papers search 10²..10⁵).
    max_iter : int, default=500
        T, the maximum number of weak learners (the path parameter).
    tol : float, default=1e-6
        ε: stop (optimal) when the best pricing score (6) is ≤ 1 + ε, i.e. no dual constraint (3b)
        is violated.
    rel_tol : float or None, default=1e-6
        Also stop when the restricted objective changes by less than ``rel_tol`` (relative) between
        iterations [our default]; None disables this rule.
    lbfgs_maxiter, lbfgs_ftol, lbfgs_gtol : default 15000, 2.2e-9, 1e-5
        L-BFGS-B options of each restricted solve (scipy's defaults: the paper's "default converge
        setting").
    solver : {"lbfgsb", "fcd", "newton"}, default="lbfgsb"
        Restricted solver: L-BFGS-B (the MultiBoost paper's, and what Lin et al. ran), FCD
        (Alg. 2 of the MultiBoost_cw paper) with K variables per shared learner column, or
        projected Newton with the exact Hessian (:mod:`kernbench.solvers.exp_loss_newton`: a
        tight optimum in a handful of iterations).
    fcd_eps : float, default=1e-2
        FCD's tolerance ε of (17)-(18): it stops when the largest KKT violation θ (16), the
        projected gradient's ∞-norm, is ≤ ε. L-BFGS-B with scipy's defaults stops on ``ftol``
        with a residual of ~1e-2..2e-1 at C = 1e4 (vowel); FCD at ε = 1e-2 reaches its objective
        or a lower one (docs/performance.md §7).
    fcd_tau_max : int or None, default=None
        FCD's cap on working-set passes (None: until (18) holds).
    newton_tol : float, default=1e-6
        ``solver="newton"``: stop at this KKT residual (projected gradient, ∞-norm).
    max_time : float or None, default=None
        Wall-clock cap in seconds: stop (stop_reason_ "max_time") after the iteration during which
        it was reached; the model of the iterations done is kept. None: no cap.

    Attributes
    ----------
    classes_, learners_, coef_ (W, shape (J, K)), intercept_ (zeros (K,)), coef_path_,
    intercept_path_, n_iter_, trace_, model_size_
        See :class:`~kernbench.methods.column_generation.ColumnGenerationClassifier`; the trace adds
        ``kkt`` (KKT residual of each restricted solve) and ``n_nonzero`` (non-zero W entries).
    stop_reason_ : str
        "converged" (no violated constraint), "objective_stalled" (``rel_tol``), "max_iter",
        "max_time" or "empty_space".
    dual_coef_ : ndarray of shape (m, K)
        λ of (5) at the end (0 on the true class).
    """

    _parameter_constraints: dict = {
        "C": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "rel_tol": [Interval(Real, 0, None, closed="left"), None],
        "lbfgs_maxiter": [Interval(Integral, 1, None, closed="left")],
        "lbfgs_ftol": [Interval(Real, 0, None, closed="neither")],
        "lbfgs_gtol": [Interval(Real, 0, None, closed="neither")],
        "solver": [StrOptions({"lbfgsb", "fcd", "newton"})],
        "fcd_eps": [Interval(Real, 0, None, closed="neither")],
        "fcd_tau_max": [Interval(Integral, 1, None, closed="left"), None],
        "newton_tol": [Interval(Real, 0, None, closed="neither")],
        "max_time": [Interval(Real, 0, None, closed="neither"), None],
    }
    _binary_only = False
    _include_constant = True  # no bias: the constant learner gives each class an offset
    _absolute_pricing = False  # (6), W ≥ 0: h and −h are different columns
    _signed_columns = True  # selecting h leaves −h available (the base's sign-aware exclusion)
    _exhausted_reason = "converged"  # every column in 𝒲: the restricted problem is the full one

    def __init__(
        self,
        C: float = 1000.0,
        max_iter: int = 500,
        tol: float = 1e-6,
        rel_tol: float | None = 1e-6,
        lbfgs_maxiter: int = 15000,
        lbfgs_ftol: float = 2.220446049250313e-09,
        lbfgs_gtol: float = 1e-5,
        solver: str = "lbfgsb",
        fcd_eps: float = 1e-2,
        fcd_tau_max: int | None = None,
        newton_tol: float = 1e-6,
        max_time: float | None = None,
    ) -> None:
        self.C = C
        self.max_iter = max_iter
        self.tol = tol
        self.rel_tol = rel_tol
        self.lbfgs_maxiter = lbfgs_maxiter
        self.lbfgs_ftol = lbfgs_ftol
        self.lbfgs_gtol = lbfgs_gtol
        self.solver = solver
        self.fcd_eps = fcd_eps
        self.fcd_tau_max = fcd_tau_max
        self.newton_tol = newton_tol
        self.max_time = max_time

    # ------------------------------------------------------------------ hooks
    def _init_master(self, X: np.ndarray, y: np.ndarray) -> None:
        m, K = X.shape[0], self.classes_.size
        self._y = y
        lam = np.ones((m, K))  # λ_(i,y) = 1 [MultiBoost_cw Alg. 1 line 2]
        lam[np.arange(m), y] = 0.0
        self._lam = lam
        self._U = pricing_weights(lam, y)
        self._W = np.zeros((0, K))
        self._objective = float("nan")
        self._stalled = False
        if self.solver == "fcd":
            self._columns = SortedColumns(y, K)  # FCD's int8 layout of H_W, grown with it
            self._mu = lam.copy()  # μ of (15) at W = 0 (0 on the true class)

    def _pricing_weights(self) -> np.ndarray:
        return self._U  # column c is u^c of (6): the base takes argmax over h ∉ 𝒲 and c

    def _stop_threshold(self) -> float:
        return 1.0 + float(self.tol)  # no dual constraint (3b) violated by more than ε

    def _should_stop(self, step: MasterStep) -> str | None:
        # the relative change of the primal objective fell below rel_tol
        # (docs/methods/multiboost.md, step 4)
        return "objective_stalled" if self._stalled else None

    def _add_columns(self, picks: Sequence[Pick]) -> None:
        self._W = np.vstack([self._W, np.zeros((len(picks), self._W.shape[1]))])  # new row: 0
        self._n_new = len(picks)
        if self.solver == "fcd":
            self._columns.append(np.column_stack([p.column for p in picks]))  # μ is unchanged

    def _solve_master(self) -> MasterStep:
        if self.solver == "fcd":
            return self._solve_master_fcd()
        if self.solver == "newton":
            res = solve_shared_newton(
                self.H_W, self._y, float(self.C), self._W, tol=self.newton_tol
            )
            return self._accept(res.objective, res.W, res.lam, res.stop, res.n_iter, res.kkt)
        res = solve_shared_lbfgsb(
            self.H_W,
            self._y,
            float(self.C),
            self._W,
            maxiter=self.lbfgs_maxiter,
            ftol=self.lbfgs_ftol,
            gtol=self.lbfgs_gtol,
        )
        return self._accept(res.objective, res.W, res.lam, res.stop, res.n_iter, res.kkt)

    def _solve_master_fcd(self) -> MasterStep:
        J, K = self._W.shape
        m = self._y.size
        n_new = self._n_new * K
        var_col = np.repeat(np.arange(J), K)  # variable v = j·K + c: W.ravel() order
        var_class = np.tile(np.arange(K), J)
        res = fcd_solve(
            None, self._y, float(self.C), self._W.ravel(), var_col, var_class, K,
            np.arange(J * K - n_new, J * K),  # line 2: S = the new learners' K variables
            eps=float(self.fcd_eps), tau_max=self.fcd_tau_max, seed=J,  # a fixed pass order
            columns=self._columns, mu0=self._mu,
        )  # fmt: skip
        self._mu = res.mu
        lam = float(self.C) / (m * (K - 1)) * res.mu  # (5): λ = (C/p)·μ
        W = res.w.reshape(J, K)
        return self._accept(res.objective, W, lam, res.stop, res.n_passes, res.max_violation)

    def _accept(
        self, objective: float, W: np.ndarray, lam: np.ndarray, stop: str, n_iter: int, kkt: float
    ) -> MasterStep:
        """Take a restricted solution (either solver's): the stall test, W, λ and the pricing
        weights of the next iteration."""
        previous, self._objective = self._objective, objective
        if self.rel_tol is not None and np.isfinite(previous):
            self._stalled = abs(previous - objective) <= self.rel_tol * abs(previous)
        self._W, self._lam = W, lam
        self._U = pricing_weights(lam, self._y)  # λ by the KKT conditions (5)
        return MasterStep(
            objective=objective,
            solver_stop=stop,
            solver_iter=n_iter,
            extra={"kkt": kkt, "n_nonzero": int(np.count_nonzero(W))},
        )

    def _coefficients(self) -> tuple[np.ndarray, np.ndarray]:
        return self._W, np.zeros(self._W.shape[1])

    def _decision_from_columns(self, Hx: np.ndarray, W: np.ndarray, b: Any) -> np.ndarray:
        F = Hx @ W  # F(x, c) = w_cᵀ h(x); predict argmax_c
        return F[:, 1] - F[:, 0] if F.shape[1] == 2 else F

    def _finish_fit(self) -> None:
        self.dual_coef_ = self._lam
        del self._lam, self._U, self._W, self._y, self._n_new
        if self.solver == "fcd":
            del self._columns, self._mu
