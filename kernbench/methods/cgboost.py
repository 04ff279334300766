"""CG-Boost: column-generation boosting over a mixture of kernels (Bi, Zhang & Bennett, Alg. 5.1).

The model is a mixture f(x) = Σ_{(p,k)∈𝒲} α_pk K_p(x, x_k) + b over a library of kernels
(:mod:`kernbench.weak.kernel_columns`). The restricted master over the working set 𝒲 is

* 2-norm (default), free α, unregularised b — QP (11): min ½‖α‖² + C·Σξ;
* 2-norm with α ≥ 0 — QP (7);  1-norm — LP (4) (α ≥ 0) or its free-α form (α = α⁺ − α⁻);

solved by :mod:`kernbench.solvers.kernel_masters` (SMO or OSQP warm-started, HiGHS grown by
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

from collections.abc import Mapping, Sequence
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
from sklearn.base import _fit_context
from sklearn.model_selection import train_test_split
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from kernbench.methods.column_generation import ColumnGenerationClassifier, MasterStep
from kernbench.methods.constraints import CrossConstraint, check_cross_constraints
from kernbench.methods.registry import register
from kernbench.solvers.column_buffer import ColumnBuffer
from kernbench.solvers.kernel_masters import (
    IncrementalKernelLPMaster,
    KernelMasterResult,
    OSQPKernelMaster,
    RowForm,
    SMOKernelMaster,
    SVMKernelMaster,
    solve_kernel_master_cvxpy,
)
from kernbench.weak.base import Pick
from kernbench.weak.kernel_columns import KernelColumnSpace, make_kernel
from kernbench.weak.stumps import SpaceExhaustedError

TERMINATION_RULES = ("TR1", "TR2", "TR3")


def _svm_form(params: Mapping[str, Any], classification: bool) -> bool:
    """The classification QP (11): an SVM on the selected columns (2-norm, free α, free b)."""
    return (
        classification
        and params["norm"] == "l2"
        and params["alpha_sign"] == "free"
        and params["bias"] == "free"
    )


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
        if solver in ("svm", "smo") and not _svm_form(params, classification):
            return (
                f"solver={solver!r} solves the classification QP (11) only (l2, free α, free bias)"
            )
        return None

    return CrossConstraint(("solver", "norm", "alpha_sign", "bias"), violation)


def cgboost_constraints(classification: bool) -> tuple[CrossConstraint, ...]:
    """The parameter combinations CG-Boost refuses (a classifier, or the regressor)."""
    return (
        CrossConstraint(("termination", "validation_fraction"), _tr3_needs_validation),
        CrossConstraint(("solver", "norm"), _solver_fits_norm),
        _svm_solver_needs_qp11(classification),
    )


class CGBoostBase(ColumnGenerationClassifier):
    """The CG-Boost machinery shared by :class:`CGBoost` and ``CGBoostRegressor``.

    Subclasses supply the row form of the master (:meth:`_row_form`) and the validation metric
    (:meth:`_validation_error`); everything else (kernel space, stratified pricing, termination
    rules, masters, prediction) lives here.
    """

    _absolute_pricing: ClassVar[bool] = True
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
    def _make_space(self, X: np.ndarray) -> KernelColumnSpace:
        kernels = [make_kernel(k, X, self.sigma) for k in self.kernels]
        if not kernels:
            raise ValueError("kernels must name at least one kernel")
        self.kernels_ = kernels
        return KernelColumnSpace(
            X,
            kernels,
            composite=self.composite,
            constant=self.bias == "regularized",
            cache_bytes=int(self.cache_mb * 2**20),
        )

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
        self._val = None
        if self.validation_fraction > 0:
            X, y, self._val = self._split_validation(X, y)
        return super().fit(X, y)

    def _init_master(self, X: np.ndarray, y: np.ndarray) -> None:
        space: KernelColumnSpace = self._space
        self._Xtr = X
        self._rows = self._row_form(y)
        self._thr_base = 1.0 if self.norm == "l1" else 0.0
        self._eps = 1e-6 * max(1.0, self.C) if self.tol is None else float(self.tol)
        self._gap_rule = self.norm == "l2" and self.tol is None  # the threshold of (Prop. 4.1)
        self._thr = self._thr_base + self._eps
        solver = self.solver
        svm_form = _svm_form(self.get_params(deep=False), self._rows.n_rows == self._rows.m)
        if solver == "auto":
            # measured (benchmarks/bench_cgboost.py --parts master, pendigits, the first 100
            # columns of a 2-norm fit, paired per solve): the warm-started SMO master's median
            # restricted solve of (11) is 6.4x (m = 300) and 9.2x (m = 1000) faster than the
            # warm-started OSQP master, objectives equal to 3e-9; whole fits: --parts fit.
            # Otherwise the OSQP lifted-dual master (2.8-2.9x faster per median solve than
            # cvxpy + Clarabel at m = 300 and 1000, objectives within 3e-9)
            solver = "highs" if self.norm == "l1" else ("smo" if svm_form else "osqp")
        self.solver_ = solver
        kw = dict(alpha_sign=self.alpha_sign, bias=self.bias == "free")
        if solver == "osqp":
            self._master = OSQPKernelMaster(self._rows, self.C, eps=self.solver_tol, **kw)
        elif solver == "smo":
            self._master = SMOKernelMaster(self._rows, self.C, tol=self.solver_tol)
        elif solver == "svm":
            self._master = SVMKernelMaster(self._rows, self.C, tol=self.solver_tol)
        elif solver == "highs":
            self._master = IncrementalKernelLPMaster(self._rows, self.C, **kw)
        else:
            self._master = None
        self._in_W = [np.zeros(space.n_candidates(p), dtype=bool) for p in range(len(space.groups))]
        self._val_cols = ColumnBuffer(0 if self._val is None else self._val[0].shape[0])
        self._best_val = (np.inf, -1)
        self._res = self._solve()  # steps 1-2: 𝒲 = {b}, α = 0
        self._tr1 = False
        self._last_evals = self._last_computed = 0
        self._last_phase = 0.0

    def _solve(self) -> KernelMasterResult:
        if self._master is not None:
            return self._master.solve()
        return solve_kernel_master_cvxpy(
            self.H_W,
            self._rows,
            self.C,
            norm=self.norm,
            alpha_sign=self.alpha_sign,
            bias=self.bias == "free",
        )

    # ------------------------------------------------------------------ pricing (Alg. 5.1)
    def _pricing_weights(self) -> np.ndarray:
        return self._res.g  # y∘u (classification), u − v (regression)

    def _stop_threshold(self) -> float:
        return self._thr

    def _column_threshold(self, n_free: int) -> float:
        """The score a column outside 𝒲 must exceed to be added (fixed for one pricing)."""
        if not self._gap_rule:
            return self._thr_base + self._eps
        # Prop. 4.1: gap ≤ ½·Σ_{j∉𝒲} s_j² ≤ ½·|N|·thr² = gap_tol·P when no |s_j| > thr
        return float(np.sqrt(2.0 * self.gap_tol * max(self._res.primal, 0.0) / n_free))

    def _violation(self, s: np.ndarray) -> np.ndarray:
        return np.abs(s) if self.alpha_sign == "free" else s  # Remark 4.1 / Remark 3.1

    def _scan(self, g: np.ndarray, candidates: list[np.ndarray], first: bool) -> Pick | None:
        """Best violated column over per-group candidate sets: the first violated group in
        priority order (``first``) or the overall best (regular CG); None if none is violated."""
        space: KernelColumnSpace = self._space
        best: tuple[float, int, int, float] | None = None
        thr = self._stop_threshold()
        for p, idx in enumerate(candidates):
            if idx.size == 0:
                continue
            s = space.scores(p, g, idx)
            v = self._violation(s)
            j = int(np.argmax(v))
            if v[j] > thr and (best is None or v[j] > best[0]):
                best = (float(v[j]), p, int(idx[j]), float(s[j]))
                if first:
                    break
        if best is None:
            return None
        _, p, k, s = best
        return Pick(space.learner(p, k), space.column(p, k), s)

    def _price(self, g: np.ndarray) -> list[Pick]:
        space: KernelColumnSpace = self._space
        ev0, comp0 = space.n_evaluated, space.n_computed
        free = [np.flatnonzero(~w) for w in self._in_W]
        n_free = sum(f.size for f in free)
        if not n_free:
            raise SpaceExhaustedError("every kernel column is in the working set")
        self._thr = self._column_threshold(n_free)
        pick = None
        if self.stratified or self.termination == "TR1":
            err = self._error_points()  # E: columns centred at margin-error points
            on_err = [
                f if not space.groups[p] else f[np.isin(f, err, assume_unique=True)]
                for p, f in enumerate(free)
            ]
            if self.stratified:
                pick = self._scan(g, on_err, first=True)  # step 5: E ∩ K^p in priority order
                self._last_phase = 1.0
            if self.termination == "TR1" and (
                pick is None if self.stratified else self._scan(g, on_err, first=False) is None
            ):
                self._tr1 = True  # step 6: no error-point column is violated
                pick = None
        if pick is None and not self._tr1:
            self._last_phase = 0.0
            pick = self._scan(g, free, first=self.stratified)  # step 7 (regular CG: best of all)
        self._last_evals = space.n_evaluated - ev0
        self._last_computed = space.n_computed - comp0
        if pick is None:  # TR1 or TR2 (step 8): report a non-violating score
            return [Pick(None, np.zeros(space.m), -np.inf)]
        self._in_W[pick.learner.group][pick.learner.index] = True
        return [pick]

    def _pricing_score(self, picks: Sequence[Pick]) -> float:
        p = picks[0]
        return -np.inf if p.learner is None else float(self._violation(np.array([p.score]))[0])

    def _error_points(self) -> np.ndarray:
        xi = self._res.xi
        err = self._rows.sample[xi > self._eps]
        return np.unique(err)

    # ------------------------------------------------------------------ master
    def _add_columns(self, picks: Sequence[Pick]) -> None:
        for p in picks:
            if self._master is not None:
                self._master.add_column(p.column)
            if self._val is not None:
                self._val_cols.append(p.learner.predict(self._val[0]))

    def _solve_master(self) -> MasterStep:
        self._res = res = self._solve()
        extra: dict[str, float] = {
            "kernel_evals": float(self._last_evals),
            "kernel_computed": float(self._last_computed),
            "error_scan": self._last_phase,
        }
        for name, count in self._columns_per_kernel(len(self.learners_)).items():
            extra[f"columns_{name}"] = float(count)
        val = float("nan")
        if self._val is not None:
            Hv = self._val_cols.view()
            val = self._validation_error(Hv @ res.alpha + res.b, self._val[1])
            if val < self._best_val[0]:
                self._best_val = (val, len(self.coef_path_))
        extra["validation_error"] = val
        return MasterStep(
            objective=res.primal, solver_stop=res.status, solver_iter=res.n_iter, extra=extra
        )

    def _should_stop(self, step: MasterStep) -> str | None:
        if self.termination == "TR3" and self._val is not None:
            if len(self.coef_path_) - 1 - self._best_val[1] >= self.patience:
                return "TR3"
        return None

    def _coefficients(self) -> tuple[np.ndarray, float]:
        return self._res.alpha.copy(), float(self._res.b)

    def _columns_per_kernel(self, n: int, coef: np.ndarray | None = None) -> dict[str, int]:
        """Selected columns per library kernel among the first n, only those with a non-zero
        coefficient when ``coef`` is given (a composite column counts once for each of its
        kernels; the constant column is not a kernel column)."""
        out = {k.name: 0 for k in self.kernels_}
        for j, lrn in enumerate(self.learners_[:n]):
            if coef is not None and coef[j] == 0:
                continue
            for k in lrn.kernels:
                out[k.name] += 1
        return out

    def _finish_fit(self) -> None:
        if self.stop_reason_ == "max_iter" and all(w.all() for w in self._in_W):
            self.stop_reason_ = "exhausted"  # the cap fell on the last column: the full problem
        if self.stop_reason_ == "converged":
            self.termination_rule_ = "TR1" if self._tr1 else "TR2"
        elif self.stop_reason_ == "exhausted":
            self.termination_rule_ = "TR2"
        elif self.stop_reason_ == "max_iter":
            self.termination_rule_ = "TR4"
        else:
            self.termination_rule_ = self.stop_reason_
        if self.termination == "TR3" and self._best_val[1] >= 0:
            best = self._best_val[1]  # the best-validation model (TR3)
            self.coef_, self.intercept_ = self.coef_path_[best], self.intercept_path_[best]
            self.best_iteration_ = best + 1
        self.final_objective_ = float(
            self.trace_["objective"][len(self.coef_) - 1] if self.coef_.size else self._res.primal
        )
        J = self.coef_.shape[0]
        self.n_columns_per_kernel_ = self._columns_per_kernel(J, self.coef_)
        self.model_size_ = int(np.count_nonzero(self.coef_))
        self.dual_coef_ = self._res.w.copy()
        self.kernel_evaluations_ = int(self._space.n_evaluated)
        self.kernel_computations_ = int(self._space.n_computed)
        del self._master, self._val, self._val_cols, self._Xtr

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

    def decision_function(self, X: Any) -> np.ndarray:
        """Decision values f(x) (positive ↔ ``classes_[1]``)."""
        return self._decision_values(X)


@register("cgboost")
class CGBoost(CGBoostBase):
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
        Master back end: OSQP (2-norm, warm-started), SMO (2-norm classification with free α
        and free bias, warm-started across columns), LIBSVM (the same problem from scratch),
        HiGHS (1-norm, grown incrementally), or cvxpy/Clarabel (either norm, rebuilt each
        time). ``auto``: HiGHS for the 1-norm, SMO for the 2-norm QP (11) (free α, free bias),
        OSQP for the other 2-norm variants (the fastest exact back ends measured by
        benchmarks/bench_cgboost.py).
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
    n_columns_per_kernel_ : dict, kernel name -> columns with α ≠ 0; termination_rule_ : TR1..TR4;
    trace_ : per iteration objective, train_error, validation_error, kernel_evals (columns scored),
    kernel_computed (cache misses), columns_<kernel>, time_s, ...; model_size_ : non-zero α;
    final_objective_, dual_coef_ (row multipliers), kernel_evaluations_, kernel_computations_.
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


__all__ = ["CGBoost", "CGBoostBase", "TERMINATION_RULES"]
