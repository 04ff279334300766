"""MultiBoost_cw (Lin, Shen, van den Hengel & Suter, ACCV 2012): class-wise learner sets and FCD.

Problem (2): min_{w ≥ 0} ‖w‖₁ + (C/p) Σ_i Σ_{y≠y_i} exp(−γ_(i,y)), p = m(K − 1), with the margins
(1) γ_(i,y) = w_{y_i}ᵀ𝕙_{y_i}(x_i) − w_yᵀ𝕙_y(x_i): every class c has its own learner set 𝓗_c.

Alg. 1 (column generation):

.. code-block:: text

    λ_(i,y) = 1 for y ≠ y_i                                    line 2
    repeat
        for every class c: ĥ_c = argmax_{h ∉ 𝓗_c} Σ_i u^c_i h(x_i)   (4), add to 𝓗_c (w = 0)
        solve (2) on 𝓗_1..𝓗_K, warm-started                  FCD (Alg. 2) or L-BFGS-B
        λ from the KKT conditions (5)
    until the relative objective change < rel_tol, no constraint of (3) is violated, or T

The K searches of (4) share one presorted stump pass (the column-generation base's per-column
pricing, each class with its own working set; W ≥ 0, so h and −h are different columns).
CW-1, the paper's stage-wise setting, is ``tau_max=1, C=1e8`` (only the K new coefficients are
set, once each). Prediction: argmax_y w_yᵀ𝕙_y(x).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
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
from kernbench.solvers.exp_loss_newton import solve_classwise_newton
from kernbench.solvers.fcd import RULES, SortedColumns, fcd_solve
from kernbench.solvers.multiclass_exp_loss import (
    LBFGSBSettings,
    classwise_scores,
    pricing_weights,
    solve_classwise_lbfgsb,
)
from kernbench.weak.base import Pick, WeakLearnerSpace


@register("multiboost_cw")
class MultiBoostCW(ColumnGenerationClassifier):
    """MultiBoost_cw: K class-wise stumps per iteration, restricted problem solved by FCD.

    Parameters
    ----------
    C : float, default=1000.0
        Regularisation parameter of (2) (the paper selects it from 10²..10⁵; CW-1 uses 10⁸).
    max_iter : int, default=500
        T, column-generation iterations (K learners each; the path parameter).
    solver : {"fcd", "fcd+newton", "newton", "lbfgsb"}, default="fcd"
        Restricted solver: FCD (Alg. 2, the paper's); FCD followed by a projected-Newton finish
        to ``newton_tol`` (a tight optimum at a fraction of FCD's passes); projected Newton alone
        (:mod:`kernbench.solvers.exp_loss_newton`); or L-BFGS-B (comparison).
    tau_max : int or None, default=2
        FCD's maximum working-set iterations (1: stage-wise, CW-1; None: until (18)).
    eps : float, default=0.1
        FCD tolerance ε of (17)-(18) (the paper's 0.1).
    rule : {"exact", "large_c"}, default="exact"
        FCD coordinate step: closed form (12) or its large-C form (13).
    tol : float, default=1e-6
        Stop (converged) when no class has a learner with pricing score (4) above 1 + tol.
    rel_tol : float or None, default=1e-6
        Alg. 1 line 7: stop when the objective changes by less than this (relative); None: never.
    lbfgs_maxiter, lbfgs_ftol, lbfgs_gtol : default 15000, 2.2e-9, 1e-5
        L-BFGS-B options (``solver="lbfgsb"``; scipy's defaults).
    newton_tol : float, default=1e-6
        KKT residual (projected gradient, ∞-norm) at which the Newton solvers stop.
    random_state : int, RandomState or None
        Seed of FCD's random picks (passes τ ≥ 2).
    max_time : float or None, default=None
        Wall-clock cap in seconds: stop (stop_reason_ "max_time") after the iteration during which
        it was reached; the model of the iterations done is kept. None: no cap.

    Attributes
    ----------
    classes_, learners_, n_iter_, trace_, model_size_, coef_path_, stop_reason_
        See :class:`~kernbench.methods.column_generation.ColumnGenerationClassifier`. ``coef_`` is
        w, shape (J,): one coefficient per learner, of class ``learner_class_[j]``; the trace adds
        ``solver_time_s`` (cumulative restricted-solver time), ``max_violation`` (FCD's max θ,
        NaN when τ_max ended the pass; L-BFGS-B: its KKT residual) and ``n_nonzero``.
    learner_class_ : ndarray of int, shape (J,)
        The class (index into ``classes_``) each learner belongs to.
    dual_coef_ : ndarray of shape (m, K)
        λ of (5) at the end (0 on the true class).

    See Also
    --------
    MultiBoost : one learner shared by every class per iteration.
    AdaBoostMO : stage-wise one-vs-all boosting, a stump per class.
    AdaBoostECC, AdaBoostMH : the other multi-class baselines of the paper.

    References
    ----------
    .. [1] G. Lin, C. Shen, A. van den Hengel and D. Suter, "Fast Training of Effective Multi-class
       Boosting Using Coordinate Descent Optimization", Proc. Asian Conf. on Computer Vision
       (ACCV), 2012:
       the primal (1)-(2), the pricing rule (4), Algorithm 1 (column generation) and
       Algorithm 2 (FCD, (12)-(18)); ``tau_max=1`` is the stage-wise MultiBoost_cw-1.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(
    ...     n_samples=60, n_classes=3, n_informative=4, random_state=0
    ... )
    >>> from kernbench.methods import MultiBoostCW
    >>> clf = MultiBoostCW(max_iter=10).fit(X, y)
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
        "solver": [StrOptions({"fcd", "fcd+newton", "newton", "lbfgsb"})],
        "tau_max": [Interval(Integral, 1, None, closed="left"), None],
        "eps": [Interval(Real, 0, None, closed="left")],
        "rule": [StrOptions(set(RULES))],
        "tol": [Interval(Real, 0, None, closed="left")],
        "rel_tol": [Interval(Real, 0, None, closed="left"), None],
        "lbfgs_maxiter": [Interval(Integral, 1, None, closed="left")],
        "lbfgs_ftol": [Interval(Real, 0, None, closed="neither")],
        "lbfgs_gtol": [Interval(Real, 0, None, closed="neither")],
        "newton_tol": [Interval(Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
        "max_time": [Interval(Real, 0, None, closed="neither"), None],
    }
    _binary_only = False
    #: (4) with w ≥ 0: h and −h are different columns of 𝓗_c; K learners per iteration, one per
    #: class, class-wise working sets; every column in every 𝓗_c: the full problem is solved
    _pricing = PricingRule(absolute=False, signed=True, per_column=True, exhausted="converged")

    def __init__(
        self,
        C: float = 1000.0,
        max_iter: int = 500,
        solver: str = "fcd",
        tau_max: int | None = 2,
        eps: float = 0.1,
        rule: str = "exact",
        tol: float = 1e-6,
        rel_tol: float | None = 1e-6,
        lbfgs_maxiter: int = 15000,
        lbfgs_ftol: float = 2.220446049250313e-09,
        lbfgs_gtol: float = 1e-5,
        newton_tol: float = 1e-6,
        random_state=None,
        max_time: float | None = None,
    ) -> None:
        self.C = C
        self.max_iter = max_iter
        self.solver = solver
        self.tau_max = tau_max
        self.eps = eps
        self.rule = rule
        self.tol = tol
        self.rel_tol = rel_tol
        self.lbfgs_maxiter = lbfgs_maxiter
        self.lbfgs_ftol = lbfgs_ftol
        self.lbfgs_gtol = lbfgs_gtol
        self.newton_tol = newton_tol
        self.random_state = random_state
        self.max_time = max_time

    def _make_space(self, X: np.ndarray, rng: np.random.Generator) -> WeakLearnerSpace | None:
        return weak_learner_space(X, "stump", include_constant=True, rng=rng)

    def _make_master(
        self,
        X: np.ndarray,
        y: np.ndarray,
        space: WeakLearnerSpace | None,
        ws: WorkingSet,
        rng: np.random.Generator,
        context: Any = None,
    ) -> ClasswiseExpLossMaster:
        settings = ClasswiseSettings.from_estimator(self)
        return ClasswiseExpLossMaster(settings, y, self.classes_.size, rng)

    def _time_cap(self) -> float | None:
        return self.max_time

    def _learner_matrix(self, X: np.ndarray) -> np.ndarray:
        # column-major: classwise_scores multiplies by Hxᵀ, which is then row-major for every
        # prefix of columns, so each stage of a staged pass reads it in place; row-major, every
        # stage copied its transpose (n × J per stage: 95 % of a CW-1 cell's time on letter)
        return np.asfortranarray(super()._learner_matrix(X))

    def _decision_from_columns(self, Hx: np.ndarray, W: np.ndarray, b: Any) -> np.ndarray:
        J = W.shape[0]
        F = classwise_scores(
            W, Hx[:, :J], np.arange(J), self.learner_class_[:J], self.classes_.size
        )
        return F[:, 1] - F[:, 0] if F.shape[1] == 2 else F  # argmax_y w_yᵀ𝕙_y(x)

    def _finish_fit(
        self, master: ClasswiseExpLossMaster, ws: WorkingSet, last: MasterStep, priced: Any
    ) -> None:
        self.learner_class_ = np.asarray(ws.classes, dtype=np.int64)


@dataclass(frozen=True)
class ClasswiseSettings:
    """What MultiBoost_cw's master reads of the estimator's parameters
    (:class:`ClasswiseExpLossMaster`; each as the estimator documents it).

    Attributes
    ----------
    C : float
    solver : {"fcd", "fcd+newton", "newton", "lbfgsb"}
    eps : float
    tau_max : int or None
    rule : str
    tol : float
    rel_tol : float or None
    lbfgs : LBFGSBSettings
    newton_tol : float
    """

    C: float
    solver: str
    eps: float
    tau_max: int | None
    rule: str
    tol: float
    rel_tol: float | None
    lbfgs: LBFGSBSettings
    newton_tol: float

    @classmethod
    def from_estimator(cls, est: MultiBoostCW) -> ClasswiseSettings:
        return cls(
            C=est.C,
            solver=est.solver,
            eps=est.eps,
            tau_max=est.tau_max,
            rule=est.rule,
            tol=est.tol,
            rel_tol=est.rel_tol,
            lbfgs=LBFGSBSettings(est.lbfgs_maxiter, est.lbfgs_ftol, est.lbfgs_gtol),
            newton_tol=est.newton_tol,
        )


class ClasswiseExpLossMaster:
    """MultiBoost_cw's restricted master: problem (2) over the class-wise learner sets, one
    coefficient per learner (w ≥ 0), warm-started from the previous w with 0 for the new ones.

    Parameters
    ----------
    settings : ClasswiseSettings
        The estimator's parameters the master reads.
    y : ndarray of shape (m,)
        Class indices.
    K : int
    rng : numpy Generator
        Seeds FCD's coordinate order at each solve.
    """

    def __init__(
        self, settings: ClasswiseSettings, y: np.ndarray, K: int, rng: np.random.Generator
    ) -> None:
        m = y.size
        self.settings = settings
        self.y, self.K, self.rng = y, K, rng
        self.C = float(settings.C)
        lam = np.ones((m, K))  # Alg. 1 line 2: λ_(i,y) = 1
        lam[np.arange(m), y] = 0.0
        self.lam0 = lam
        self.w = np.zeros(0)  # the last solution: the warm start of the next solve
        self.objective = float("nan")
        self.solver_time = 0.0
        self.columns = SortedColumns(y, K)  # FCD's layout of the columns, grown with them
        self.mu = lam.copy()  # μ of (15) at w = 0 (0 on the true class)

    def start(self) -> MasterStep:
        return self._step(float("nan"), self.w, self.lam0)

    def add_columns(self, picks: Sequence[Pick], columns: Sequence[int]) -> None:
        self.columns.append(np.column_stack([p.column for p in picks]))  # μ is unchanged

    def solve(self, ws: WorkingSet) -> MasterStep:
        p = self.settings
        y, K, C = self.y, self.K, self.C
        J0, J = self.w.size, ws.n_columns
        new = np.arange(J0, J)  # Alg. 2 line 2: S = the variables added since the last solve
        var_class = np.asarray(ws.classes, dtype=np.int64)  # the class of every variable
        self.w = np.concatenate([self.w, np.zeros(J - J0)])  # Alg. 1 line 4: w = 0
        cols = np.arange(J)
        t0 = time.perf_counter()
        p_scale = y.size * (K - 1) / C  # μ = λ·p/C, (5)
        solver = p.solver
        if solver in ("fcd", "fcd+newton"):
            res = fcd_solve(  # reads self.columns, FCD's own layout, not the (m, J) matrix ws.H
                None, y, C, self.w, cols, var_class, K, new,
                eps=p.eps, tau_max=p.tau_max, rule=p.rule,
                seed=int(self.rng.integers(2**31 - 1)), columns=self.columns, mu0=self.mu,
            )  # fmt: skip
            w, objective, self.mu = res.w, res.objective, res.mu
            lam = res.mu / p_scale
            stop, n_iter, violation = res.stop_reason, res.n_passes, res.max_violation
        if solver in ("fcd+newton", "newton", "lbfgsb"):
            w0 = w if solver == "fcd+newton" else self.w
            if solver == "lbfgsb":
                sol = solve_classwise_lbfgsb(
                    ws.H, y, C, w0, cols, var_class, K,
                    maxiter=p.lbfgs.maxiter, ftol=p.lbfgs.ftol, gtol=p.lbfgs.gtol,
                )  # fmt: skip
            else:
                sol = solve_classwise_newton(ws.H, y, C, w0, cols, var_class, K, tol=p.newton_tol)
            w, objective, lam = sol.W, sol.objective, sol.lam
            self.mu = lam * p_scale
            stop, n_iter, violation = sol.stop_reason, sol.n_iter, sol.kkt
        self.solver_time += time.perf_counter() - t0
        previous, self.objective = self.objective, objective
        stalled = False
        if p.rel_tol is not None and np.isfinite(previous):
            stalled = abs(previous - objective) <= p.rel_tol * abs(previous)
        self.w = w
        step = self._step(objective, w, lam)
        step.solver_stop_reason, step.solver_iter = stop, n_iter
        step.extra = {
            "solver_time_s": self.solver_time,
            "max_violation": float(violation),
            "n_nonzero": int(np.count_nonzero(w)),
        }
        step.stop_reason = "objective_stalled" if stalled else None  # Alg. 1 line 7
        # log μ_iy = F_iy − F_{i,y_i} (15): the class scores shifted per row, so the same argmax,
        # without a pass over the J learner columns
        with np.errstate(divide="ignore"):
            D = np.log(self.mu)
        D[np.arange(D.shape[0]), y] = 0.0
        step.decision = D[:, 1] - D[:, 0] if D.shape[1] == 2 else D
        return step

    def _step(self, objective: float, w: np.ndarray, lam: np.ndarray) -> MasterStep:
        return MasterStep(
            objective=objective,
            g=pricing_weights(lam, self.y),  # column c: u^c of (4), searched over 𝓗 \ 𝓗_c
            # no dual constraint (3b) of any class violated
            threshold=1.0 + float(self.settings.tol),
            coef=w,
            intercept=np.zeros(self.K),
            dual_coef=lam,
        )
