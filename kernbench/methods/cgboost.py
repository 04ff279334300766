"""CG-Boost: column-generation boosting over a mixture of kernels (Bi, Zhang & Bennett, Alg. 5.1).

The model is a mixture f(x) = Σ_{(p,k)∈𝒲} α_pk K_p(x, x_k) + b over a library of kernels
(:mod:`kernbench.weak.kernel_columns`). The restricted master over the working set 𝒲 is

* 2-norm (default), free α, unregularised b — QP (11): min ½‖α‖² + C·Σξ;
* 2-norm with α ≥ 0 — QP (7);  1-norm — LP (4) (α ≥ 0) or its free-α form (α = α⁺ − α⁻);

solved by a back end of :mod:`kernbench.solvers.masters` (SMO or OSQP warm-started, HiGHS grown by
``addCol``, or cvxpy). Algorithm 5.1 with the step-6 correction (a column is added only if its
violation exceeds ``tol``):

.. code-block:: text

    𝒲 = {b}; solve the master -> û, ξ̂                               # steps 1-2
    for t = 1..max_iter:                                             # TR4 at the cap
        g = y∘û  (regression: û − v̂)
        E = {k : ξ̂_k > tol}                                          # margin-error points
        for p in priority order: τ_p = max over k∈E, (p,k)∉𝒲 of |gᵀK_p(·,x_k)|   # (12) on E ∩ K^p
            if τ_p > thr: add the argmax column; go to solve          # step 5
        if none: stop (TR1) if termination == "TR1"                   # step 6
        for p in priority order: same over all (p,k)∉𝒲                # step 7, full scan
            if τ_p > thr: add the argmax column; go to solve
        if none: stop, optimal (TR2)                                  # step 8
        solve the master warm-started; trace; TR3: stop when the validation error has not
        improved for ``patience`` iterations, keep the best-validation model

thr = 1 + tol for the 1-norm (the LP's reduced cost). For the 2-norm, Prop. 4.1 bounds the full
problem's duality gap by ½·Σ_{j∉𝒲} s_j², so with ``tol=None`` a column is violated when
s_j² > 2·gap_tol·P/|N| (P the restricted objective, |N| the columns outside 𝒲): when none is,
the objective is within gap_tol·P of the full QP's whatever the scale of the kernels; an explicit
``tol`` is an absolute threshold on the score. The score is |s| for free α (Remark 4.1), s for
α ≥ 0 (Remark 3.1). ``stratified=False`` is regular CG: every iteration scans all columns and adds
the overall best one. Single-kernel and composite-kernel baselines are the same estimator with
``kernels=("rbf",)`` or ``composite=True``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
from sklearn.base import _fit_context
from sklearn.model_selection import train_test_split
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from kernbench.methods.column_generation import (
    ColumnGeneration,
    ColumnGenerationClassifier,
    MasterStep,
    PricingResult,
    PricingRule,
    WorkingSet,
)
from kernbench.methods.constraints import CrossConstraint, check_cross_constraints
from kernbench.methods.registry import register
from kernbench.solvers.column_buffer import ColumnBuffer
from kernbench.solvers.masters import (
    CvxpyKernelMaster,
    IncrementalKernelLPMaster,
    KernelMaster,
    KernelMasterResult,
    OSQPKernelMaster,
    RowForm,
    SMOKernelMaster,
    SVMKernelMaster,
)
from kernbench.weak.base import Pick
from kernbench.weak.kernel_columns import KernelColumnSpace, make_kernel

TERMINATION_RULES = ("TR1", "TR2", "TR3")


def _smo_form(params: Mapping[str, Any]) -> bool:
    """The QP (11) / (13) with free α and free b: an SVM / ε-SVR dual on the selected columns."""
    return params["norm"] == "l2" and params["alpha_sign"] == "free" and params["bias"] == "free"


def _svm_form(params: Mapping[str, Any], classification: bool) -> bool:
    """The classification QP (11): an SVM on the selected columns (2-norm, free α, free b)."""
    return classification and _smo_form(params)


def _tr3_needs_validation(params: Mapping[str, Any]) -> str | None:
    if params["termination"] == "TR3" and params["validation_fraction"] == 0:
        return "termination='TR3' needs validation_fraction > 0 (a validation set)"
    return None


def _solver_fits_norm(params: Mapping[str, Any]) -> str | None:
    if params["solver"] == "osqp" and params["norm"] == "l1":
        return "solver='osqp' solves the 2-norm QP; use 'highs' or 'cvxpy' for l1"
    if params["solver"] == "highs" and params["norm"] == "l2":
        return "solver='highs' solves the 1-norm LP; use 'osqp' or 'cvxpy' for l2"
    return None


def _svm_solver_needs_qp11(classification: bool) -> CrossConstraint:
    def violation(params: Mapping[str, Any]) -> str | None:
        solver = params["solver"]
        if solver == "smo" and not _smo_form(params):
            return "solver='smo' solves the QPs (11) and (13) only (l2, free α, free bias)"
        if solver == "svm" and not _svm_form(params, classification):
            return "solver='svm' solves the classification QP (11) only (l2, free α, free bias)"
        return None

    return CrossConstraint(("solver", "norm", "alpha_sign", "bias"), violation)


def cgboost_constraints(classification: bool) -> tuple[CrossConstraint, ...]:
    """The parameter combinations CG-Boost refuses (a classifier, or the regressor)."""
    return (
        CrossConstraint(("termination", "validation_fraction"), _tr3_needs_validation),
        CrossConstraint(("solver", "norm"), _solver_fits_norm),
        _svm_solver_needs_qp11(classification),
    )


@dataclass(frozen=True)
class CGBoostMasterSettings:
    """What CG-Boost's master reads of the estimator's parameters (:class:`CGBoostMaster`).

    Attributes
    ----------
    C : float
    norm : {"l2", "l1"}
    alpha_sign : {"free", "nonneg"}
    bias : {"free", "regularized", "none"}
    solver : {"osqp", "smo", "svm", "highs", "cvxpy"}
        The back end (``auto`` resolved).
    solver_tol : float
    termination : {"TR1", "TR2", "TR3"}
    patience : int
    """

    C: float
    norm: str
    alpha_sign: str
    bias: str
    solver: str
    solver_tol: float
    termination: str
    patience: int

    @classmethod
    def from_estimator(cls, est: CGBoostBase, solver: str) -> CGBoostMasterSettings:
        return cls(
            C=est.C,
            norm=est.norm,
            alpha_sign=est.alpha_sign,
            bias=est.bias,
            solver=solver,
            solver_tol=est.solver_tol,
            termination=est.termination,
            patience=est.patience,
        )

    def back_end(self, rows: RowForm) -> KernelMaster:
        """The restricted master's back end on the rows ``rows``."""
        kw = dict(alpha_sign=self.alpha_sign, bias=self.bias == "free")
        if self.solver == "osqp":
            return OSQPKernelMaster(rows, self.C, eps=self.solver_tol, **kw)
        if self.solver == "smo":
            return SMOKernelMaster(rows, self.C, tol=self.solver_tol)
        if self.solver == "svm":
            return SVMKernelMaster(rows, self.C, tol=self.solver_tol)
        if self.solver == "highs":
            return IncrementalKernelLPMaster(rows, self.C, **kw)
        return CvxpyKernelMaster(rows, self.C, norm=self.norm, **kw)


@dataclass(frozen=True)
class CGBoostPricingSettings:
    """What CG-Boost's pricer reads of the estimator's parameters (:class:`CGBoostPricer`).

    Attributes
    ----------
    C : float
    norm : {"l2", "l1"}
    alpha_sign : {"free", "nonneg"}
    tol : float or None
    gap_tol : float
    stratified : bool
    termination : {"TR1", "TR2", "TR3"}
    """

    C: float
    norm: str
    alpha_sign: str
    tol: float | None
    gap_tol: float
    stratified: bool
    termination: str

    @classmethod
    def from_estimator(cls, est: CGBoostBase) -> CGBoostPricingSettings:
        return cls(
            C=est.C,
            norm=est.norm,
            alpha_sign=est.alpha_sign,
            tol=est.tol,
            gap_tol=est.gap_tol,
            stratified=est.stratified,
            termination=est.termination,
        )


class CGBoostBase(ColumnGeneration):
    """The CG-Boost machinery shared by :class:`CGBoost` and ``CGBoostRegressor``.

    Subclasses supply the row form of the master (:meth:`_row_form`), the validation split and
    metric (:meth:`_split_validation`, :meth:`_validation_error`) and the target handling of their
    task; the kernel space, the stratified pricer (:class:`CGBoostPricer`), the termination rules,
    the master (:class:`CGBoostMaster`) and prediction live here.
    """

    _pricing = PricingRule(absolute=True, exclude=False)  # the working set: per-group masks
    _common_constraints: ClassVar[dict] = {
        "C": [Interval(Real, 0, None, closed="neither")],
        "kernels": [list, tuple],
        "composite": ["boolean"],
        "norm": [StrOptions({"l2", "l1"})],
        "alpha_sign": [StrOptions({"free", "nonneg"})],
        "bias": [StrOptions({"free", "regularized", "none"})],
        "stratified": ["boolean"],
        "termination": [StrOptions(set(TERMINATION_RULES))],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "validation_fraction": [
            Interval(Real, 0, 1, closed="left"),
            Interval(Integral, 1, None, closed="left"),
        ],
        "patience": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left"), None],
        "gap_tol": [Interval(Real, 0, None, closed="neither")],
        "sigma": [Interval(Real, 0, None, closed="neither"), None],
        "solver": [StrOptions({"auto", "osqp", "smo", "svm", "highs", "cvxpy"})],
        "solver_tol": [Interval(Real, 0, None, closed="neither")],
        "cache_mb": [Interval(Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
    }

    # ------------------------------------------------------------------ subclass hooks
    def _row_form(self, y: np.ndarray) -> RowForm:
        raise NotImplementedError

    def _validation_error(self, f: np.ndarray, y: np.ndarray) -> float:
        raise NotImplementedError

    def _split_validation(self, X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, ...]:
        raise NotImplementedError

    # ------------------------------------------------------------------ set-up
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any) -> CGBoostBase:
        """Run Algorithm 5.1 on (X, y) (a ``validation_fraction`` of it held out for TR3).

        Parameters
        ----------
        X : array-like of shape (m, D)
        y : array-like of shape (m,)

        Returns
        -------
        self
        """
        check_cross_constraints(self)
        val = None
        if self.validation_fraction > 0:
            X, y, val = self._split_validation(X, y)
        return self._fit(X, y, val)

    def _make_space(self, X: np.ndarray, rng: np.random.Generator) -> KernelColumnSpace:
        kernels = [make_kernel(k, X, self.sigma) for k in self.kernels]
        if not kernels:
            raise ValueError("kernels must name at least one kernel")
        return KernelColumnSpace(
            X,
            kernels,
            composite=self.composite,
            constant=self.bias == "regularized",
            cache_bytes=int(self.cache_mb * 2**20),
        )

    def _make_working_set(self, m: int, space: KernelColumnSpace) -> WorkingSet:
        sizes = [space.n_candidates(p) for p in range(len(space.groups))]
        return WorkingSet(m, space, self._pricing, group_sizes=sizes)

    def _make_master(
        self,
        X: np.ndarray,
        y: np.ndarray,
        space: KernelColumnSpace,
        ws: WorkingSet,
        rng: np.random.Generator,
        context: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> CGBoostMaster:
        rows = self._row_form(y)
        solver = self.solver
        if solver == "auto":
            # the warm-started SMO master for the QPs (11) and (13) with free α and free b, the
            # OSQP lifted-dual master for the other 2-norm variants, HiGHS for the 1-norm (the
            # fastest exact back ends that benchmarks/bench_cgboost.py measures, with equal
            # objectives)
            smo_form = _smo_form(self.get_params(deep=False))
            solver = "highs" if self.norm == "l1" else ("smo" if smo_form else "osqp")
        self.solver_ = solver
        settings = CGBoostMasterSettings.from_estimator(self, solver)
        return CGBoostMaster(
            rows,
            settings.back_end(rows),
            settings,
            [k.name for k in space.kernels],  # the library the space was built on
            val=context,
            validation_error=self._validation_error,
        )

    def _make_pricer(
        self, space: KernelColumnSpace, master: CGBoostMaster, rng: np.random.Generator
    ) -> CGBoostPricer:
        return CGBoostPricer(space, master.rows.sample, CGBoostPricingSettings.from_estimator(self))

    def _finish_fit(
        self,
        master: CGBoostMaster,
        ws: WorkingSet,
        last: MasterStep,
        priced: PricingResult | None,
    ) -> None:
        if self.stop_reason_ == "max_iter" and all(w.all() for w in ws.in_group):
            self.stop_reason_ = "exhausted"  # the cap fell on the last column: the full problem
        if self.stop_reason_ == "converged":
            self.termination_rule_ = priced.rule
        elif self.stop_reason_ == "exhausted":
            self.termination_rule_ = "TR2"
        elif self.stop_reason_ == "max_iter":
            self.termination_rule_ = "TR4"
        else:
            self.termination_rule_ = self.stop_reason_
        if self.termination == "TR3" and master.best_index >= 0:
            best = master.best_index  # the best-validation model (TR3)
            self.coef_, self.intercept_ = self.coef_path_[best], self.intercept_path_[best]
            self.best_iteration_ = best + 1
        if self.stop_reason_ == "precision_floor":
            last = master.certified  # the last restricted optimum that was certified
            self.coef_ = np.array(last.coef, dtype=np.float64)
            self.intercept_ = np.array(last.intercept, dtype=np.float64)
            self.dual_coef_ = last.dual_coef
        self.final_objective_ = float(
            self.trace_["objective"][len(self.coef_) - 1] if self.coef_.size else last.objective
        )
        J = self.coef_.shape[0]
        self.n_columns_per_kernel_ = columns_per_kernel(
            ws.learners[:J], master.kernel_names, self.coef_
        )
        self.model_size_ = int(np.count_nonzero(self.coef_))
        self.kernel_evaluations_ = int(ws.space.n_evaluated)
        self.kernel_computations_ = int(ws.space.n_computed)
        self.master_fallbacks_ = master.fallbacks()

    # ------------------------------------------------------------------ prediction
    def _learner_matrix(self, X: np.ndarray) -> np.ndarray:
        out = np.empty((X.shape[0], len(self.learners_)))
        groups: dict[int, list[int]] = {}
        for j, lrn in enumerate(self.learners_):
            groups.setdefault(lrn.group, []).append(j)
        for idx in groups.values():
            first = self.learners_[idx[0]]
            if not first.kernels:
                out[:, idx] = 1.0
                continue
            C = np.stack([self.learners_[j].centre for j in idx])
            out[:, idx] = sum(k(X, C) for k in first.kernels)
        return out

    def _decision_values(self, X: Any) -> np.ndarray:
        """f(x) = Σ_p Σ_k α_pk K_p(x, x_k) + b, one Gram block per kernel (linear collapsed)."""
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        J = self.coef_.shape[0]
        f = np.full(X.shape[0], float(self.intercept_))
        groups: dict[int, list[int]] = {}
        for j, lrn in enumerate(self.learners_[:J]):
            groups.setdefault(lrn.group, []).append(j)
        for idx in groups.values():
            coef = self.coef_[idx]
            first = self.learners_[idx[0]]
            if not first.kernels:
                f += coef.sum()
                continue
            C = np.stack([self.learners_[j].centre for j in idx])
            for k in first.kernels:
                f += k.weighted_sum(X, C, coef)
        return f


def columns_per_kernel(
    learners: Sequence[Any], kernel_names: Sequence[str], coef: np.ndarray | None = None
) -> dict[str, int]:
    """Selected columns per library kernel, only those with a non-zero coefficient when ``coef``
    is given (a composite column counts once for each of its kernels; the constant column is not
    a kernel column)."""
    out = {name: 0 for name in kernel_names}
    for j, lrn in enumerate(learners):
        if coef is not None and coef[j] == 0:
            continue
        for k in lrn.kernels:
            out[k.name] += 1
    return out


class CGBoostPricer:
    """Algorithm 5.1's pricing (steps 5-8): stratified over margin-error points and kernels.

    Parameters
    ----------
    space : KernelColumnSpace
    sample : ndarray of shape (n_rows,)
        The training point of every row of the master (a regression point has two rows).
    settings : CGBoostPricingSettings
        The estimator's parameters the pricing reads.
    """

    def __init__(
        self, space: KernelColumnSpace, sample: np.ndarray, settings: CGBoostPricingSettings
    ) -> None:
        self.space = space
        self.sample = sample
        self.alpha_sign = settings.alpha_sign
        self.stratified = settings.stratified
        self.tr1 = settings.termination == "TR1"
        self.gap_tol = settings.gap_tol
        self.thr_base = 1.0 if settings.norm == "l1" else 0.0
        tol = settings.tol
        self.eps = 1e-6 * max(1.0, settings.C) if tol is None else float(tol)
        self.gap_rule = settings.norm == "l2" and tol is None  # the threshold of Prop. 4.1

    def threshold(self, n_free: int, primal: float) -> float:
        """The score a column outside 𝒲 must exceed to be added (fixed for one pricing)."""
        if not self.gap_rule:
            return self.thr_base + self.eps
        # Prop. 4.1: gap ≤ ½·Σ_{j∉𝒲} s_j² ≤ ½·|N|·thr² = gap_tol·P when no |s_j| > thr
        return float(np.sqrt(2.0 * self.gap_tol * max(primal, 0.0) / n_free))

    def violation(self, s: np.ndarray) -> np.ndarray:
        return np.abs(s) if self.alpha_sign == "free" else s  # Remark 4.1 / Remark 3.1

    def price(self, step: MasterStep, ws: WorkingSet) -> PricingResult:
        """Steps 5-8 on the master's multipliers (``step.result``): the first violated column,
        error-point columns first; stop ("converged", rule TR1 or TR2) when none is violated."""
        space = self.space
        res: KernelMasterResult = step.result
        g = res.g  # y∘u (classification), u − v (regression)
        ev0, comp0 = space.n_evaluated, space.n_computed
        free = [np.flatnonzero(~w) for w in ws.in_group]
        n_free = sum(f.size for f in free)
        if not n_free:
            return PricingResult([], [], -np.inf, np.nan, stop_reason="exhausted")
        thr = self.threshold(n_free, res.primal)
        pick, phase, rule = None, 0.0, ""
        if self.stratified or self.tr1:
            err = np.unique(self.sample[res.xi > self.eps])  # E: the margin-error points
            on_err = [
                f if not space.groups[p] else f[np.isin(f, err, assume_unique=True)]
                for p, f in enumerate(free)
            ]
            if self.stratified:
                pick = self._scan(g, on_err, thr, first=True)  # step 5: E ∩ K^p by priority
                phase = 1.0
            if self.tr1 and (
                pick is None if self.stratified else self._scan(g, on_err, thr, first=False) is None
            ):
                rule = "TR1"  # step 6: no error-point column is violated
        if pick is None and not rule:
            phase = 0.0
            pick = self._scan(g, free, thr, first=self.stratified)  # step 7 (regular CG: best)
            if pick is None:
                rule = "TR2"  # step 8: optimal
        extra = {
            "kernel_evals": float(space.n_evaluated - ev0),
            "kernel_computed": float(space.n_computed - comp0),
            "error_scan": phase,
        }
        if pick is None:
            return PricingResult(
                [], [], -np.inf, thr, stop_reason="converged", rule=rule, extra=extra
            )
        score = float(self.violation(np.array([pick.score]))[0])
        return PricingResult([pick], [0], score, thr, extra=extra)

    def _scan(
        self, g: np.ndarray, candidates: list[np.ndarray], thr: float, first: bool
    ) -> Pick | None:
        """Best column with a score above ``thr`` over per-group candidate sets: the first
        violated group in priority order (``first``) or the overall best (regular CG); None if
        none is violated."""
        space = self.space
        best: tuple[float, int, int, float] | None = None
        for p, idx in enumerate(candidates):
            if idx.size == 0:
                continue
            s = space.scores(p, g, idx)
            v = self.violation(s)
            j = int(np.argmax(v))
            if v[j] > thr and (best is None or v[j] > best[0]):
                best = (float(v[j]), p, int(idx[j]), float(s[j]))
                if first:
                    break
        if best is None:
            return None
        _, p, k, s = best
        return Pick(space.learner(p, k), space.column(p, k), s)


class CGBoostMaster:
    """CG-Boost's restricted master over the selected kernel columns, with the validation
    bookkeeping of TR3.

    Parameters
    ----------
    rows : RowForm
        The rows of the master (classification or the ε-tube's two rows per point).
    lp : KernelMaster
        The back end (SMO, OSQP, LIBSVM, HiGHS or cvxpy), fed the selected columns.
    settings : CGBoostMasterSettings
        The estimator's parameters the master reads (``termination``, ``patience``).
    kernel_names : list of str
        The library's kernels (the ``columns_<kernel>`` trace).
    val : (X_val, y_val) or None
        The held-out validation set.
    validation_error : callable
        ``validation_error(f, y_val)``: the validation metric.
    """

    def __init__(
        self,
        rows: RowForm,
        lp: KernelMaster,
        settings: CGBoostMasterSettings,
        kernel_names: list[str],
        *,
        val: tuple[np.ndarray, np.ndarray] | None,
        validation_error: Callable[[np.ndarray, np.ndarray], float],
    ) -> None:
        self.rows, self.lp, self.settings = rows, lp, settings
        self.kernel_names = kernel_names
        self.val = val
        self.validation_error = validation_error
        self.val_cols = ColumnBuffer(0 if val is None else val[0].shape[0])
        self.best_error, self.best_index = np.inf, -1  # the best validation error so far
        self.n_solves = 0
        self.certified: MasterStep | None = None  # the last step solved to its tolerance

    def _step(self, res: KernelMasterResult) -> MasterStep:
        return MasterStep(
            objective=res.primal,
            g=res.g,
            threshold=np.nan,  # the pricer's threshold depends on the columns left (Prop. 4.1)
            coef=res.alpha.copy(),
            intercept=float(res.b),
            solver_stop_reason=res.stop_reason,
            solver_iter=res.n_iter,
            dual_coef=res.w.copy(),
            result=res,
        )

    def start(self) -> MasterStep:
        step = self._step(self.lp.solve())  # steps 1-2: 𝒲 = {b}, α = 0
        self.certified = step
        return step

    def fallbacks(self) -> dict[str, int]:
        """Restricted solves the back end did not certify by itself, by reason (SMO: its
        ``fallbacks``; OSQP: ``clarabel``, the solves Clarabel finished)."""
        return dict(self.lp.fallbacks)

    def add_columns(self, picks: Sequence[Pick], columns: Sequence[int]) -> None:
        for p in picks:
            self.lp.add_column(p.column)
            if self.val is not None:
                self.val_cols.append(p.learner.predict(self.val[0]))

    def solve(self, ws: WorkingSet) -> MasterStep:
        res = self.lp.solve()
        step = self._step(res)
        index, self.n_solves = self.n_solves, self.n_solves + 1
        for name, count in columns_per_kernel(ws.learners, self.kernel_names).items():
            step.extra[f"columns_{name}"] = float(count)
        val = float("nan")
        if self.val is not None:
            Hv = self.val_cols.view()
            val = self.validation_error(Hv @ res.alpha + res.b, self.val[1])
            if val < self.best_error:
                self.best_error, self.best_index = val, index
            tr3 = self.settings.termination == "TR3"
            if tr3 and index - self.best_index >= self.settings.patience:
                step.stop_reason = "TR3"
        step.extra["validation_error"] = val
        if res.stop_reason.endswith("@floor"):
            # the master could not be solved to its tolerance: the columns' scale puts the
            # gradient's rounding noise above it (SMOKernelMaster's precision floor); the fit
            # ends and keeps the last certified restricted optimum (``certified``)
            step.stop_reason = "precision_floor"
        else:
            self.certified = step
        return step


@register("cgboost")
class CGBoost(CGBoostBase, ColumnGenerationClassifier):
    """CG-Boost classifier (binary): a mixture-of-kernels SVM grown by column generation.

    Parameters
    ----------
    C : float, default=1.0
        Slack penalty of the master.
    kernels : sequence, default=("linear", "quadratic", "rbf")
        The kernel library in priority order: ``linear``, ``quadratic`` ((xᵀx′+1)²), ``rbf``
        (exp(−‖x−x′‖²/σ)), callables ``k(A, B)`` or ``(name, callable)`` pairs.
    composite : bool, default=False
        Use the single summed kernel Σ_p K_p (the composite-kernel baseline, all μ_p = 1).
    norm : {"l2", "l1"}, default="l2"
        2-norm QP (7)/(11) or 1-norm LP (4) regularisation of α.
    alpha_sign : {"free", "nonneg"}, default="free"
        Free α (11) (Remark 4.1 pricing) or α ≥ 0 (4)/(7) (Remark 3.1).
    bias : {"free", "regularized", "none"}, default="free"
        Unregularised b kept in every restricted master, the constant column in the library
        (regularised like any α), or no bias.
    stratified : bool, default=True
        Stratified CG (error-point columns first, kernels in priority order) or regular CG (all
        columns scanned, the overall best added).
    termination : {"TR1", "TR2", "TR3"}, default="TR2"
        TR1: stop when no error-point column is violated; TR2: optimality; TR3: stop when the
        validation error has not improved for ``patience`` iterations and keep the best model.
        TR4 (the ``max_iter`` cap) always applies.
    max_iter : int, default=1000
        Maximum columns generated (the path parameter).
    validation_fraction : float or int, default=0.0
        Stratified fraction of the training data held out as the validation set (TR3, and the
        ``validation_error`` trace); an integer >= 1 is a number of points (the paper's fixed
        2000-point validation set whatever the training size, Table 5).
    patience : int, default=25
        TR3: iterations without a new best validation error before stopping.
    tol : float or None, default=None
        The margin-error threshold ξ > tol, and the 1-norm's pricing tolerance: a column is
        violated when its score exceeds 1 + tol. None: 1e-6·max(1, C). Given with the 2-norm, an
        absolute threshold on the score instead of ``gap_tol``'s.
    gap_tol : float, default=1e-6
        2-norm with ``tol=None``: TR2 stops when the full problem's duality gap (Prop. 4.1) is
        at most gap_tol times the objective: a column is violated when s² > 2·gap_tol·P/|N|
        (P the restricted objective, |N| the columns outside the working set). Relative, so it
        does not depend on the scale of the kernels.
    sigma : float or None, default=None
        RBF width; None = mean squared pairwise distance of the training points.
    solver : {"auto", "osqp", "smo", "svm", "highs", "cvxpy"}, default="auto"
        Master back end: OSQP (2-norm, warm-started), SMO (2-norm, classification or
        regression, free α and free bias, warm-started across columns), LIBSVM (classification,
        the same problem from scratch), HiGHS (1-norm, grown incrementally), or cvxpy/Clarabel
        (either norm, rebuilt each time). ``auto``: HiGHS for the 1-norm, SMO for the 2-norm QPs
        (11) and (13) (free α, free bias), OSQP for the other 2-norm variants (the fastest exact
        back ends measured by benchmarks/bench_cgboost.py).
    solver_tol : float, default=1e-7
        OSQP tolerance (solutions are polished), the SMO's maximal violating pair gap, or
        LIBSVM's tolerance.
    cache_mb : float, default=512
        Memory for computed kernel columns.
    random_state : int, RandomState or None, default=None
        Seeds the validation split.

    Attributes
    ----------
    coef_, intercept_ : the final α and b; learners_ : the selected columns (kernel, centre);
    n_columns_per_kernel_ : dict, kernel name -> columns with α ≠ 0; termination_rule_ : TR1..TR4
    or ``precision_floor``; trace_ : per iteration objective, train_error, validation_error,
    kernel_evals (columns scored), kernel_computed (cache misses), columns_<kernel>, time_s, ...;
    model_size_ : non-zero α; final_objective_, dual_coef_ (row multipliers), kernel_evaluations_,
    kernel_computations_; master_fallbacks_ : dict, reason -> restricted solves the back end did
    not certify by itself (SMO: ``step_cap``, ``clarabel_rescaled``, ``clarabel_failed``,
    ``precision_floor``; OSQP: ``clarabel``). A solve at the precision floor (columns so large,
    e.g. the quadratic kernel on unscaled features of magnitude 100, that the SMO gradient's
    rounding noise exceeds max(10·``solver_tol``, 1)) ends the fit: ``termination_rule_`` is then
    ``"precision_floor"`` and the model is the last certified one (scale the features).

    See Also
    --------
    CGBoostRegressor : the same column generation for ε-insensitive regression.
    CGENS : column generation over weak learners that solves the SVM (1) of Shen & Liu.
    LPBoost : 1-norm column generation over weak learners.
    SVMGauss : one kernel SVM (the single-kernel baseline).

    References
    ----------
    .. [1] J. Bi, T. Zhang and K. P. Bennett, "Column-Generation Boosting Methods for Mixture of
       Kernels", Proc. 10th ACM SIGKDD Int. Conf. on Knowledge Discovery and Data Mining (KDD),
       2004:
       the 1-norm LP (4), the 2-norm QPs (7) and (11), the termination rules and
       Algorithm 5.1 (stratified column generation).

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(n_samples=60, random_state=0)
    >>> from kernbench.methods import CGBoost
    >>> clf = CGBoost(max_iter=10).fit(X, y)
    >>> clf.classes_
    array([0, 1])
    >>> clf.decision_function(X[:5]).shape
    (5,)
    >>> clf.n_iter_ <= 10
    True
    >>> bool(clf.score(X, y) > 0.8)
    True
    """

    _parameter_constraints: dict = dict(CGBoostBase._common_constraints)
    _cross_constraints = cgboost_constraints(classification=True)

    def __init__(
        self,
        C: float = 1.0,
        kernels: Sequence[Any] = ("linear", "quadratic", "rbf"),
        composite: bool = False,
        norm: str = "l2",
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

    def _row_form(self, y: np.ndarray) -> RowForm:
        return RowForm.classification(y)

    def decision_function(self, X: Any) -> np.ndarray:
        """Decision values f(x) (positive ↔ ``classes_[1]``)."""
        return self._decision_values(X)

    def _split_validation(self, X: Any, y: Any) -> tuple[Any, Any, tuple[np.ndarray, np.ndarray]]:
        X, y = validate_data(self, X, y, dtype=np.float64)
        classes = np.unique(y)
        try:
            Xt, Xv, yt, yv = train_test_split(
                X, y, test_size=self.validation_fraction, random_state=_seed(self), stratify=y
            )
        except ValueError:
            Xt, Xv, yt, yv = train_test_split(
                X, y, test_size=self.validation_fraction, random_state=_seed(self)
            )
        yv_enc = np.where(yv == classes[-1], 1.0, -1.0)
        return Xt, yt, (Xv, yv_enc)

    def _validation_error(self, f: np.ndarray, y: np.ndarray) -> float:
        return float(np.mean(np.where(f >= 0, 1.0, -1.0) != y))


def _seed(est: Any) -> int | None:
    rs = est.random_state
    if rs is None or isinstance(rs, Integral):
        return rs
    return int(np.random.RandomState(rs.randint(2**31 - 1)).randint(2**31 - 1))


__all__ = [
    "CGBoost",
    "CGBoostBase",
    "CGBoostMaster",
    "CGBoostMasterSettings",
    "CGBoostPricer",
    "CGBoostPricingSettings",
    "TERMINATION_RULES",
    "columns_per_kernel",
]
