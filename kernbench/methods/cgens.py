"""CGENS: column generation for SVM ensembles (Shen & Liu, Alg. 1;
docs/methods/column_generation.md).

Solves SVM (1) with the explicit feature map Φ(x) = [h_1(x), …, h_J(x)] of weak learners,
growing the working set 𝒲 by the KKT-violation rule (8) and re-solving the restricted SVM
warm-started from the previous α (:class:`kernbench.solvers.restricted_svm.RestrictedLinearSVM`).
"""

from __future__ import annotations

import copy
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.base import clone
from sklearn.utils._param_validation import Interval, StrOptions

from kernbench.methods.base import WarmPathMixin, generator_from
from kernbench.methods.column_generation import (
    ColumnGenerationClassifier,
    LoopRun,
    MasterStep,
    PricingRule,
    WorkingSet,
    weak_learner_space,
)
from kernbench.methods.constraints import MAX_BINS_NEEDS_STUMPS, check_cross_constraints
from kernbench.methods.registry import register
from kernbench.solvers.restricted_svm import RestrictedLinearSVM, SolveInfo
from kernbench.weak.base import Pick, WeakLearnerSpace
from kernbench.weak.stumps import MAX_BINS_LIMIT, StumpSpace, feature_usage


@register("cgens")
class CGENS(WarmPathMixin, ColumnGenerationClassifier):
    """CGENS (binary): boosting-like column generation that solves the SVM problem (1).

    Parameters
    ----------
    C : float, default=1.0
        SVM regularisation parameter of (1).
    max_iter : int, default=500
        J_max, the maximum number of weak learners (the path parameter).
    tol : float or None, default=None
        ε: stop when the best pricing score |Σ_i y_i α_i h(x_i)| ≤ ε. None means 1e-6·C·m.
    bias_mode : {"exact", "liblinear"}, default="exact"
        Unregularised bias (SMO with yᵀα = 0) or LIBLINEAR-style bias feature (faster, approximate).
    weak_learner : {"stump", "perceptron", "fourier"}, default="stump"
        Exhaustive decision stumps, or the best of ``n_candidates`` sampled perceptrons / Fourier
        features per iteration (docs/methods/column_generation.md).
    n_candidates : int, default=2000
        P, the fresh candidates per oracle call of the sampled spaces.
    sigma : float, default=1.0
        Bandwidth of the Fourier features (θ ~ N(0, σ⁻² I)).
    max_bins : int or None, default=None
        ``weak_learner="stump"`` only. None: every threshold between consecutive distinct
        values. An integer B: the binned (histogram) stump search, at most B − 1 thresholds per
        feature near its B-quantiles, as in :class:`~kernbench.methods.adaboost.AdaBoost`; the
        option for data of 10⁵ rows and more (docs/performance.md).
    solver_tol : float, default=1e-3
        Projected-gradient tolerance of each restricted solve (1e-8 for invariant checks).
    solver_max_epochs : int, default=1000
        Epoch cap of each restricted solve (of the final one when ``solver_inner_epochs`` is set).
    solver_inner_epochs : int or None, default=None
        Inexact column generation: cap the intermediate restricted solves at this many epochs
        (``exact``: this many · m SMO steps); the final solve gets ``solver_tol`` and
        ``solver_max_epochs``, and a "converged" stop is only accepted after a full solve (the
        pricing is repeated at the fully solved α). The path ``coef_path_`` holds the inexact
        iterates except its last entry. None: every solve gets the full budget.
    gap_trace : bool, default=True
        With stumps, trace Claim 4.1's gap ½Σ_{j∉𝒲}(Σ_i y_i α_i h_j(x_i))² over the canonical set.
    warm_path : bool, default=True
        Model selection fits a grid's values of C along one path per fold
        (:meth:`fit_warm_path`: ascending C, each fit starting from the previous one's columns
        and α). False: one cold fit per value of C (``fit`` alone is not affected).
    path_inner_epochs : int or None, default=1
        The fits of :meth:`fit_warm_path` (model selection's path along C) cap their
        intermediate restricted solves at this many epochs, as ``solver_inner_epochs`` does
        (which takes precedence when set), and solve the restricted SVM to ``solver_tol`` at
        every stage, so every model the path returns is the optimum of (1) over its columns.
        None: every solve of the path gets the full budget (``fit`` alone is not affected).
    random_state : int, RandomState or None, default=None
        Seeds the sampled weak learners and the coordinate order.

    Attributes
    ----------
    classes_, learners_, coef_ (w), intercept_ (b), coef_path_, intercept_path_, n_iter_,
    stop_reason_, trace_ (objective, gap, restricted_gap, score, train_error, time_s,
    solver_stop_reason, ...), dual_coef_ (α at the end), final_objective_ (restricted primal (1)
    of the final model), model_size_.

    See Also
    --------
    CGENSSLS : the multi-class form on the simplex least-squares SVM.
    LPBoost : column generation for the 1-norm problem (4).
    SVMStump : the same SVM over all stumps at once, through the stump kernel.
    RFFSVM : a linear SVM on random Fourier features (the Table II baseline).

    References
    ----------
    .. [1] C. Shen and F. Liu, "From Kernel Machines to Ensemble Learning", arXiv preprint, 2014:
       the SVM (1) and its dual (2), the KKT condition (7), the pricing rule (8) and
       Algorithm 1 (CGENS).

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(n_samples=60, random_state=0)
    >>> from kernbench.methods import CGENS
    >>> clf = CGENS(max_iter=10).fit(X, y)
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
        "C": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left"), None],
        "bias_mode": [StrOptions({"exact", "liblinear"})],
        "weak_learner": [StrOptions({"stump", "perceptron", "fourier"})],
        "n_candidates": [Interval(Integral, 1, None, closed="left")],
        "sigma": [Interval(Real, 0, None, closed="neither")],
        "max_bins": [Interval(Integral, 2, MAX_BINS_LIMIT, closed="both"), None],
        "solver_tol": [Interval(Real, 0, None, closed="neither")],
        "solver_max_epochs": [Interval(Integral, 1, None, closed="left")],
        "solver_inner_epochs": [Interval(Integral, 1, None, closed="left"), None],
        "gap_trace": ["boolean"],
        "warm_path": ["boolean"],
        "path_inner_epochs": [Interval(Integral, 1, None, closed="left"), None],
        "random_state": ["random_state"],
    }
    _cross_constraints = (MAX_BINS_NEEDS_STUMPS,)
    _binary_only = True
    _pricing = PricingRule(absolute=True)  # criterion (8)

    def __init__(
        self,
        C: float = 1.0,
        max_iter: int = 500,
        tol: float | None = None,
        bias_mode: str = "exact",
        weak_learner: str = "stump",
        n_candidates: int = 2000,
        sigma: float = 1.0,
        max_bins: int | None = None,
        solver_tol: float = 1e-3,
        solver_max_epochs: int = 1000,
        solver_inner_epochs: int | None = None,
        gap_trace: bool = True,
        warm_path: bool = True,
        path_inner_epochs: int | None = 1,
        random_state=None,
    ) -> None:
        self.C = C
        self.max_iter = max_iter
        self.tol = tol
        self.bias_mode = bias_mode
        self.weak_learner = weak_learner
        self.n_candidates = n_candidates
        self.sigma = sigma
        self.max_bins = max_bins
        self.solver_tol = solver_tol
        self.solver_max_epochs = solver_max_epochs
        self.solver_inner_epochs = solver_inner_epochs
        self.gap_trace = gap_trace
        self.warm_path = warm_path
        self.path_inner_epochs = path_inner_epochs
        self.random_state = random_state

    def _make_space(self, X: np.ndarray, rng: np.random.Generator) -> WeakLearnerSpace | None:
        return weak_learner_space(
            X,
            self.weak_learner,
            include_constant=False,  # the model has a bias: no constant column
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
    ) -> CGENSMaster:
        # Alg. 1 line 1: α_i = C/2
        return self._master(y, (space, ws, rng), self.C / 2.0, self.solver_inner_epochs)

    def _master(
        self,
        y: np.ndarray,
        parts: tuple[Any, WorkingSet, np.random.Generator],
        alpha0: Any,
        inner_epochs: int | None,
    ) -> CGENSMaster:
        """The master at this C on the ±1 labels ``y``, with ``parts`` = (space, working set,
        generator), the restricted SVM's α starting at ``alpha0`` (a float or per point) and its
        intermediate solves capped at ``inner_epochs`` epochs (None: full solves)."""
        space, ws, rng = parts
        eps = 1e-6 * self.C * y.shape[0] if self.tol is None else float(self.tol)
        svm = RestrictedLinearSVM(
            y,
            self.C,
            bias_mode=self.bias_mode,
            tol=self.solver_tol,
            max_epochs=self.solver_max_epochs,
            alpha0=alpha0,
            seed=int(rng.integers(2**31 - 1)),
        )
        gap = None
        if self.gap_trace and ws.stump_ids is not None:
            gap = (space, ws.stump_ids.first)  # the canonical stump set
        return CGENSMaster(svm, y, self.C, eps, inner_epochs, gap)

    def _finish_fit(
        self, master: CGENSMaster, ws: WorkingSet, last: MasterStep, priced: Any
    ) -> None:
        self.final_objective_ = master.svm.primal_objective()

    # ------------------------------------------------------------------ the path along C
    def warm_path_active(self) -> bool:
        """Whether model selection fits the values of C along one path (``warm_path``)."""
        return bool(self.warm_path)

    def fit_warm_path(
        self, X: Any, y: Any, values: Sequence[float], stages: Sequence[int]
    ) -> list[dict[int, CGENS]]:
        """Fit the values of C in the order given, each fit starting from the previous one.

        The first value is an ordinary fit with ``max_iter`` = max(stages). Each next value C
        starts from the previous fit: its columns re-enter the working set in their order and
        the restricted SVM (1) at C is solved, warm-started from the previous α scaled by the
        ratio of the two values of C, once at every stage below the number of those columns and
        once over all of them; column generation at C then continues until it converges or the
        model holds max(stages) columns. Every solve is the optimum of (1) at C over its
        columns; a fit that converges at C (no column violates (8)) is the optimum over the whole
        weak-learner space, the model a cold fit at C converges to. A stage below the number of
        reused columns is the SVM at C over the first ``stage`` columns of the previous fit
        (a cold fit would have chosen its own).

        Parameters
        ----------
        X : array-like of shape (m, D)
        y : array-like of shape (m,)
        values : sequence of float
            Values of C (ascending: the cheapest path first, and each fit's columns a good
            start for a less regularised one).
        stages : sequence of int
            Values of ``max_iter`` to keep a model for.

        Returns
        -------
        list of dict
            Per value of C, ``{stage: fitted CGENS}``: the model with at most ``stage`` columns
            (params ``C`` and ``max_iter`` = the stage; ``coef_path_`` and ``trace_`` hold one
            entry per restricted solve made at that C).
        """
        self._validate_params()
        stages = sorted({int(t) for t in stages})
        inner = self.solver_inner_epochs
        if inner is None:
            inner = self.path_inner_epochs
        out: list[dict[int, CGENS]] = []
        point = None
        for C in values:
            est = clone(self).set_params(C=C, max_iter=stages[-1])
            point = est._fit_from(X, y, point, stages, inner)
            out.append({t: point.fit._stage(t) for t in stages})
        return out

    def _fit_from(
        self, X: Any, y: Any, prev: PathPoint | None, stages: list[int], inner: int | None
    ) -> PathPoint:
        """The fit at this C starting from ``prev``, a fit on the same (X, y) at another C, or
        from the empty working set (``prev`` None: with ``inner`` None, the cold fit), its
        intermediate restricted solves capped at ``inner`` epochs and the solve at every stage
        complete (see :meth:`fit_warm_path`). Returns this fit as the next one's start."""
        check_cross_constraints(self)
        X, y, y_enc = self._prepare_targets(X, y)
        rng = generator_from(self.random_state)
        t0 = time.perf_counter()
        space = self._make_space(X, rng)
        ws = self._make_working_set(X.shape[0], space)
        coef_path: list[np.ndarray] = []
        intercept_path: list[Any] = []
        trace: dict[str, list] = defaultdict(list)
        if prev is None:
            master = self._master(y_enc, (space, ws, rng), self.C / 2.0, inner)  # Alg. 1 line 1
            step = master.start()
        else:
            fit, cands = prev.fit, prev.candidates  # the same space: the same candidate indices
            alpha0 = np.clip(fit.dual_coef_ * (self.C / fit.C), 0.0, self.C)
            master = self._master(y_enc, (space, ws, rng), alpha0, inner)
            step = master.resume()
            H = fit._learner_matrix(X)
            n_prev = H.shape[1]
            for end in [t for t in stages if t < n_prev] + [n_prev]:
                if end <= ws.n_columns:
                    continue
                picks = [
                    Pick(fit.learners_[j], H[:, j], 0.0, candidate=cands[j])
                    for j in range(ws.n_columns, end)
                ]
                ws.add(picks, [0] * len(picks))
                master.add_columns(picks, [0] * len(picks))
                step = master.solve(ws)
                if not step.exact:  # a scored model: solved to tolerance
                    step = master.complete(ws)
                self._record(step, None, ws, y, t0, coef_path, intercept_path, trace)
        priced = None
        stop, final_score = "max_iter", float("nan")
        pricer = self._make_pricer(space, master, rng) if space is not None else None
        # column generation at this C goes on, one segment per stage: each ends on a complete
        # solve (the loop completes an inexact last solve), which the next continues from
        for end in [t for t in stages if t > ws.n_columns]:
            run = self._loop(master, pricer, ws, y, t0, step=step, n_iter=end - ws.n_columns)
            step, priced = run.step, run.priced
            if run.coef_path:
                run.trace["objective"][-1] = float(step.objective)  # the completed solve's
            coef_path += run.coef_path
            intercept_path += run.intercept_path
            for key, values in run.trace.items():
                trace[key] += values
            stop, final_score = run.stop_reason, run.final_score
            if stop != "max_iter":
                break
        self._set_path(
            LoopRun(step, priced, coef_path, intercept_path, dict(trace), stop, final_score)
        )
        self.learners_ = ws.learners
        self.model_size_ = len(ws.learners)
        self.feature_usage_ = feature_usage(ws.learners, X.shape[1])
        self.fit_time_ = time.perf_counter() - t0
        self.dual_coef_ = step.dual_coef
        self._finish_fit(master, ws, step, priced)
        return PathPoint(self, list(ws.candidates))

    def _stage(self, stage: int) -> CGENS:
        """This fit with at most ``stage`` columns: its path cut after the last solve with at
        most that many (the fit itself when every solve has)."""
        n_columns = self.trace_.get("n_columns", [])
        k = int(np.searchsorted(n_columns, stage, side="right"))
        snap = copy.copy(self)
        snap.max_iter = stage
        if k == len(n_columns) or k == 0:
            return snap
        J = n_columns[k - 1]
        snap.coef_path_, snap.intercept_path_ = self.coef_path_[:k], self.intercept_path_[:k]
        snap.coef_, snap.intercept_ = snap.coef_path_[-1], snap.intercept_path_[-1]
        snap.trace_ = {key: values[:k] for key, values in self.trace_.items()}
        snap.n_iter_ = k
        snap.stop_reason_ = "max_iter"
        snap.learners_ = self.learners_[:J]
        snap.model_size_ = J
        snap.feature_usage_ = feature_usage(snap.learners_, self.n_features_in_)
        snap.final_objective_ = snap.trace_["objective"][-1]
        del snap.dual_coef_  # α of the whole fit, not of this stage
        return snap


@dataclass(frozen=True)
class PathPoint:
    """A fit along the path in C, as the next value's fit starts from it
    (:meth:`CGENS.fit_warm_path`).

    Attributes
    ----------
    fit : CGENS
        The fit at the previous value of C.
    candidates : list of int or None
        Each of its learners' candidate index in the weak-learner space (every fit of the path
        builds the same space on the same X), so its columns re-enter the working set without
        hashing them.
    """

    fit: CGENS
    candidates: list[int | None]


class CGENSMaster:
    """CGENS's restricted master: the SVM (1) on the selected columns, warm-started from the
    previous α (:class:`~kernbench.solvers.restricted_svm.RestrictedLinearSVM`).

    Parameters
    ----------
    svm : RestrictedLinearSVM
    y : ndarray of shape (m,)
        ±1 labels.
    C : float
    eps : float
        ε of Alg. 1 line 4: the pricing threshold.
    inner_epochs : int or None
        Inexact column generation: cap each solve at this many epochs (the loop completes the
        solve before it accepts convergence, and at the end).
    gap : (StumpSpace, ndarray) or None
        The stump space and its canonical set (one candidate per distinct column), over which
        Claim 4.1's gap is traced (None: no gap).
    """

    def __init__(
        self,
        svm: RestrictedLinearSVM,
        y: np.ndarray,
        C: float,
        eps: float,
        inner_epochs: int | None,
        gap: tuple[StumpSpace, np.ndarray] | None,
    ) -> None:
        self.svm = svm
        self.y = y
        self.C = C
        self.eps = eps
        self.inner_epochs = inner_epochs
        self.gap = gap

    def start(self) -> MasterStep:
        alpha = np.full(self.y.size, self.C / 2.0)  # Alg. 1 line 1: α_i = const = C/2
        return self._step(float("nan"), alpha, exact=True)

    def resume(self) -> MasterStep:
        """The state at the restricted SVM's current α (a master started from another α)."""
        return self._step(float("nan"), self.svm.alpha, exact=True)

    def add_columns(self, picks: Sequence[Pick], columns: Sequence[int]) -> None:
        self.svm.add_columns(np.column_stack([p.column for p in picks]))

    def solve(self, ws: WorkingSet) -> MasterStep:
        inner = self.inner_epochs
        # Alg. 1 line 6, warm start from the previous α (capped at `inner` epochs if inexact)
        info = self.svm.solve(max_epochs=inner) if inner is not None else self.svm.solve()
        return self._solved(ws, info, exact=inner is None or info.stop_reason == "tol")

    def complete(self, ws: WorkingSet) -> MasterStep:
        """The full solve after capped ones (``solver_tol``, ``solver_max_epochs``)."""
        return self._solved(ws, self.svm.solve(), exact=True)

    def _solved(self, ws: WorkingSet, info: SolveInfo, exact: bool) -> MasterStep:
        """The step after a restricted solve that reported ``info``."""
        step = self._step(info.primal, self.svm.alpha, exact=exact)
        step.gap, step.scores = self._claim41_gap(ws.H, step.g)
        step.solver_stop_reason = info.stop_reason
        step.solver_iter = info.n_iter
        step.extra = {
            "restricted_gap": info.gap,
            "dual_objective": info.dual,
            "violation": info.violation,
        }
        return step

    def _step(self, objective: float, alpha: np.ndarray, exact: bool) -> MasterStep:
        return MasterStep(
            objective=objective,
            g=self.y * alpha,  # g = y∘α; score (8) = |gᵀh|
            threshold=self.eps,  # Alg. 1 line 4
            coef=self.svm.w,
            intercept=self.svm.b,
            exact=exact,
            dual_coef=self.svm.alpha.copy(),
        )

    def _claim41_gap(self, H: np.ndarray, g: np.ndarray) -> tuple[float, np.ndarray | None]:
        """½·Σ_{j∉𝒲} (Σ_i y_i α_i h_j(x_i))² over the canonical stump set (Claim 4.1) at the
        pricing weights g = y∘α, and the scores of every stump at g (the next pricing's; None
        and a NaN gap without the trace)."""
        if self.gap is None:
            return float("nan"), None
        space, canonical = self.gap
        scores = space.scores(g)
        s_all = scores[canonical]
        s_sel = H.T @ g  # selected columns are members of the canonical set (up to sign)
        return 0.5 * max(0.0, float(s_all @ s_all) - float(s_sel @ s_sel)), scores
