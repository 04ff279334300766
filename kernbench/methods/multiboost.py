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

from kernbench.methods.column_generation import (
    ColumnGenerationClassifier,
    MasterStep,
    PricingRule,
    WorkingSet,
    weak_learner_space,
)
from kernbench.methods.registry import register
from kernbench.solvers.exp_loss_newton import solve_shared_newton
from kernbench.solvers.fcd import SortedColumns, fcd_solve
from kernbench.solvers.multiclass_exp_loss import (
    LBFGSBSettings,
    pricing_weights,
    solve_shared_lbfgsb,
)
from kernbench.solvers.stump_products import StumpProducts
from kernbench.weak.base import Pick, WeakLearnerSpace
from kernbench.weak.stumps import Stump


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

    See Also
    --------
    MultiBoostCW : class-wise learner sets and the FCD solver.
    CGENSSLS : multi-class column generation on the simplex least-squares SVM.
    AdaBoostMH : a stage-wise multi-class baseline.

    References
    ----------
    .. [1] C. Shen and Z. Hao, "A Direct Formulation for Totally-Corrective Multi-class Boosting",
       Proc. IEEE Conf. on Computer Vision and Pattern Recognition (CVPR), 2011.
    .. [2] G. Lin, C. Shen, A. van den Hengel and D. Suter, "Fast Training of Effective Multi-class
       Boosting Using Coordinate Descent Optimization", Proc. Asian Conf. on Computer Vision
       (ACCV), 2012:
       MultiBoost's primal (2), its dual (3) and the pricing rule (6), the baseline of
       Sec. 3.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(
    ...     n_samples=60, n_classes=3, n_informative=4, random_state=0
    ... )
    >>> from kernbench.methods import MultiBoost
    >>> clf = MultiBoost(C=100.0, max_iter=10, solver="newton").fit(X, y)
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
    #: (6) with W ≥ 0: h and −h are different columns (selecting h leaves −h available); every
    #: column in 𝒲: the restricted problem is the full one
    _pricing = PricingRule(absolute=False, signed=True, exhausted="converged")

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

    def _make_space(self, X: np.ndarray, rng: np.random.Generator) -> WeakLearnerSpace | None:
        # no bias: the constant learner gives each class an offset
        return weak_learner_space(X, "stump", include_constant=True, rng=rng)

    def _make_master(
        self,
        X: np.ndarray,
        y: np.ndarray,
        space: WeakLearnerSpace | None,
        ws: WorkingSet,
        rng: np.random.Generator,
        context: Any = None,
    ) -> SharedExpLossMaster:
        return SharedExpLossMaster(
            X,
            y,
            self.classes_.size,
            float(self.C),
            tol=float(self.tol),
            rel_tol=self.rel_tol,
            solver=self.solver,
            lbfgs=LBFGSBSettings(self.lbfgs_maxiter, self.lbfgs_ftol, self.lbfgs_gtol),
            fcd_eps=float(self.fcd_eps),
            fcd_tau_max=self.fcd_tau_max,
            newton_tol=self.newton_tol,
        )

    def _time_cap(self) -> float | None:
        return self.max_time

    def _decision_from_columns(self, Hx: np.ndarray, W: np.ndarray, b: Any) -> np.ndarray:
        F = Hx @ W  # F(x, c) = w_cᵀ h(x); predict argmax_c
        return F[:, 1] - F[:, 0] if F.shape[1] == 2 else F


class SharedExpLossMaster:
    """MultiBoost's restricted master: problem (2) with learners shared by the K classes, W ≥ 0,
    warm-started from the previous W with a zero row for each new learner.

    Parameters
    ----------
    X : ndarray of shape (m, D)
        Training points (L-BFGS-B's products read stump columns through X's thresholds).
    y : ndarray of shape (m,)
        Class indices.
    K : int
    C, tol : float
        Regularisation, and ε: the pricing stops when no dual constraint (3b) is violated by more
        than ε (threshold 1 + ε).
    rel_tol : float or None
        Stop ("objective_stalled") when the restricted objective changes by less than this
        (relative) between solves.
    solver : {"lbfgsb", "fcd", "newton"}
    lbfgs : LBFGSBSettings
        L-BFGS-B's ``maxiter``, ``ftol``, ``gtol``.
    fcd_eps, fcd_tau_max, newton_tol
        FCD's tolerance and pass cap; Newton's KKT tolerance.
    """

    def __init__(
        self,
        X: np.ndarray,
        y: np.ndarray,
        K: int,
        C: float,
        *,
        tol: float,
        rel_tol: float | None,
        solver: str,
        lbfgs: LBFGSBSettings,
        fcd_eps: float,
        fcd_tau_max: int | None,
        newton_tol: float,
    ) -> None:
        m = y.size
        self.y, self.K, self.C = y, K, C
        self.tol, self.rel_tol = tol, rel_tol
        self.solver = solver
        self.lbfgs = lbfgs
        self.fcd_eps, self.fcd_tau_max, self.newton_tol = fcd_eps, fcd_tau_max, newton_tol
        lam = np.ones((m, K))  # λ_(i,y) = 1 [MultiBoost_cw Alg. 1 line 2]
        lam[np.arange(m), y] = 0.0
        self.lam0 = lam
        self.W = np.zeros((0, K))  # the last solution: the warm start of the next solve
        self.objective = float("nan")
        # L-BFGS-B's products through the stumps' thresholds; None once a column is no stump
        self.products: StumpProducts | None = StumpProducts(X) if solver == "lbfgsb" else None
        if solver == "fcd":
            self.columns = SortedColumns(y, K)  # FCD's int8 layout of the columns, grown with them
            self.mu = lam.copy()  # μ of (15) at W = 0 (0 on the true class)

    def start(self) -> MasterStep:
        return self._step(float("nan"), self.W, self.lam0)

    def add_columns(self, picks: Sequence[Pick], columns: Sequence[int]) -> None:
        if self.solver == "fcd":
            self.columns.append(np.column_stack([p.column for p in picks]))  # μ is unchanged

    def solve(self, ws: WorkingSet) -> MasterStep:
        n_new = ws.n_columns - self.W.shape[0]  # the learners added since the last solve
        self.W = np.vstack([self.W, np.zeros((n_new, self.K))])  # warm start, new rows 0
        if self.solver == "fcd":
            return self._solve_fcd(n_new)
        if self.solver == "newton":
            res = solve_shared_newton(ws.H, self.y, self.C, self.W, tol=self.newton_tol)
        else:
            lb = self.lbfgs
            res = solve_shared_lbfgsb(
                ws.H, self.y, self.C, self.W, maxiter=lb.maxiter, ftol=lb.ftol, gtol=lb.gtol,
                products=self._stump_products(ws),
            )  # fmt: skip
        return self._accept(res.objective, res.W, res.lam, res.stop_reason, res.n_iter, res.kkt)

    def _stump_products(self, ws: WorkingSet) -> StumpProducts | None:
        """The products kept up to date with the working set's columns (None: not all stumps)."""
        products = self.products
        if products is not None:
            for j in range(products.n_columns, ws.n_columns):
                h, column = ws.learners[j], ws.H[:, j]
                if not (
                    isinstance(h, Stump) and products.add(h.feature, h.threshold, h.sign, column)
                ):
                    self.products = products = None
                    break
        return products

    def _solve_fcd(self, n_learners: int) -> MasterStep:
        J, K = self.W.shape
        m = self.y.size
        n_new = n_learners * K
        var_col = np.repeat(np.arange(J), K)  # variable v = j·K + c: W.ravel() order
        var_class = np.tile(np.arange(K), J)
        res = fcd_solve(
            None, self.y, self.C, self.W.ravel(), var_col, var_class, K,
            np.arange(J * K - n_new, J * K),  # line 2: S = the new learners' K variables
            eps=self.fcd_eps, tau_max=self.fcd_tau_max, seed=J,  # a fixed pass order
            columns=self.columns, mu0=self.mu,
        )  # fmt: skip
        self.mu = res.mu
        lam = self.C / (m * (K - 1)) * res.mu  # (5): λ = (C/p)·μ
        W = res.w.reshape(J, K)
        return self._accept(res.objective, W, lam, res.stop_reason, res.n_passes, res.max_violation)

    def _accept(
        self, objective: float, W: np.ndarray, lam: np.ndarray, stop: str, n_iter: int, kkt: float
    ) -> MasterStep:
        """A restricted solution (any solver's) as a step: the stall test, W, and the pricing
        weights of the next iteration from λ."""
        previous, self.objective = self.objective, objective
        stalled = False
        if self.rel_tol is not None and np.isfinite(previous):
            stalled = abs(previous - objective) <= self.rel_tol * abs(previous)
        self.W = W
        step = self._step(objective, W, lam)
        step.solver_stop_reason, step.solver_iter = stop, n_iter
        step.extra = {"kkt": kkt, "n_nonzero": int(np.count_nonzero(W))}
        # the relative change of the primal objective fell below rel_tol
        # (docs/methods/multiboost.md, step 4)
        step.stop_reason = "objective_stalled" if stalled else None
        return step

    def _step(self, objective: float, W: np.ndarray, lam: np.ndarray) -> MasterStep:
        return MasterStep(
            objective=objective,
            g=pricing_weights(lam, self.y),  # column c is u^c of (6), λ by the KKT conditions (5)
            threshold=1.0 + self.tol,  # no dual constraint (3b) violated by more than ε
            coef=W,
            intercept=np.zeros(self.K),
            dual_coef=lam,
        )
