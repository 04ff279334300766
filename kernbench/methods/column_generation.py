"""The column-generation base: the loop, tracing, stopping and staged prediction.

Every fully-corrective ensemble of kernbench (CGENS, LPBoost, CGENS-SLS, MultiBoost, MultiBoost_cw,
CG-Boost) is the same loop between two collaborators, a *restricted master* and a *pricer*, over one
:class:`~kernbench.methods.cg_pricing.WorkingSet`:

.. code-block:: text

    step = master.start()                       # α₀ / λ₀ / U₀ ..., no column: a MasterStep
    repeat (at most max_iter times):
        priced = pricer.price(step, ws)   # -> PricingResult
        if priced.stop_reason: (an inexact step is first completed and priced again) stop
        ws.add(priced.picks, priced.columns)
        master.add_columns(priced.picks, priced.columns)
        step = master.solve(ws)                 # re-solve, warm-started -> MasterStep
        path, trace += step.coef, step.intercept, step's numbers; stop if step.stop_reason

Every value travels as an argument or a returned result: the master's :class:`MasterStep` carries
the coefficients, the pricing weights ``g`` (shape (m,), or (m, K) one column per class) and the
threshold of the next pricing; the pricer's :class:`~kernbench.methods.cg_pricing.PricingResult`
carries the picks, the class each answers, the score, the threshold and the stop reason. A master
keeps only its restricted problem between calls (the warm start).

:class:`ColumnGeneration` runs the loop (:class:`ColumnGenerationClassifier` for classifiers) and
keeps:

* ``learners_``: the selected weak learners in order (a learner per column; several per iteration is
  fine, e.g. one per class for MultiBoost_cw);
* ``coef_path_`` / ``intercept_path_``: the coefficients after EVERY restricted solve (they change
  each iteration in fully-corrective methods), so ``staged_decision_function`` evaluates the
  learners once on X and takes one matrix product per iteration;
* ``trace_``: per iteration ``objective``, ``gap``, ``score`` (pricing score of the added column),
  ``train_error``, ``time_s`` (cumulative fit time, pricing included), ``n_columns``,
  ``solver_iter`` and ``solver_stop_reason`` (which stopping rule of the restricted solver
  fired), plus the pricing's and the step's ``extra`` entries; ``n_iter_``, ``stop_reason_``
  (:data:`~kernbench.methods.base.STOP_REASONS`), ``final_score_``;
* ``feature_usage_``: the fraction of the learners splitting on each feature (stump spaces; None
  for other weak learners), Shen & Liu Fig. 5.

A subclass supplies ``_make_space`` (the weak-learner space; :func:`weak_learner_space` builds the
stump / perceptron / Fourier spaces), ``_make_master`` and, unless the default
:class:`~kernbench.methods.cg_pricing.OraclePricer` with its class's ``_pricing`` rule fits,
``_make_pricer``; optionally ``_decision_from_columns`` (``Hx @ W + b``; CGENS-SLS decodes simplex
codes), ``_finish_fit`` (fitted attributes from the last step) and ``_time_cap``.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils.validation import check_is_fitted, validate_data

from kernbench.methods.base import IterativeMixin, KernbenchClassifier, generator_from
from kernbench.methods.cg_pricing import (
    OraclePricer,
    Pricer,
    PricingResult,
    PricingRule,
    StumpColumnIds,
    WorkingSet,
)
from kernbench.methods.constraints import check_cross_constraints
from kernbench.weak.base import HypothesisSpace, Pick, WeakLearnerSpace
from kernbench.weak.fourier import FourierSpace
from kernbench.weak.perceptron import PerceptronSpace
from kernbench.weak.stumps import Stump, StumpSpace, feature_usage, predict_stumps, stump_arrays


@dataclass
class MasterStep:
    """What the restricted master reports after a solve (one trace row), or at the start.

    Attributes
    ----------
    objective : float
        Restricted primal objective after the solve.
    g : ndarray of shape (m,) or (m, K)
        The pricing weights of the next pricing (signed sample weights, one column per class).
    threshold : float
        The pricing stops ("converged") when the best score is at most this value.
    coef : ndarray of shape (J,) or (J, K)
        The coefficients W of the selected columns.
    intercept : float or ndarray of shape (K,)
        The bias b.
    gap : float
        Method-defined optimality gap (CGENS: Claim 4.1's ½Σ_{j∉𝒲} s_j²); NaN if not computable.
    solver_stop_reason : str
        Which stopping rule of the restricted solver fired ("tol", "max_epochs", "optimal", ...).
    solver_iter : int
        Iterations of the restricted solver in this call.
    extra : dict
        Further per-iteration numbers, traced under their keys.
    exact : bool
        False when the solve stopped early on purpose (inexact column generation): the loop asks
        the master to ``complete`` it before accepting a "converged" pricing and at the end.
    stop_reason : str or None
        A stop reason of the master's own after this step (e.g. "objective_stalled", "TR3").
    decision : ndarray or None
        Training decision values of the step when the master has them without a pass over the
        columns (else the loop computes them from the working set).
    dual_coef : ndarray or None
        The dual variables of the step (``dual_coef_`` after the fit).
    result : object
        The restricted solver's own result, for a pricer that needs more than ``g`` (CG-Boost
        reads the slacks and the objective).
    scores : ndarray or None
        The stump space's scores Σ_i g_i h(x_i) at ``g`` (1-D), when the master computed them
        (CGENS's gap trace): the pricer uses them instead of a second pass.
    """

    objective: float
    g: np.ndarray
    threshold: float
    coef: np.ndarray
    intercept: Any
    gap: float = float("nan")
    solver_stop_reason: str = ""
    solver_iter: int = 0
    extra: dict[str, Any] = field(default_factory=dict)
    exact: bool = True
    stop_reason: str | None = None
    decision: np.ndarray | None = None
    dual_coef: np.ndarray | None = None
    result: Any = None
    scores: np.ndarray | None = None


class RestrictedMaster(Protocol):
    """The restricted master problem of one method (see the module docstring)."""

    def start(self) -> MasterStep:
        """The state before any column: coefficients, pricing weights and threshold."""
        ...

    def add_columns(self, picks: Sequence[Pick], columns: Sequence[int]) -> None:
        """Push the picked columns (``columns[i]``: the class pick i answers) into the master."""
        ...

    def solve(self, ws: WorkingSet) -> MasterStep:
        """Re-solve over the working set (warm-started) and report."""
        ...

    # A master whose ``solve`` may return ``exact=False`` also has
    # ``complete(ws) -> MasterStep``: finish that solve (the loop calls it before accepting a
    # "converged" pricing, and after the last iteration).


@dataclass
class LoopRun:
    """What one run of the loop produced (:meth:`ColumnGeneration._loop`).

    Attributes
    ----------
    step : MasterStep
        The last step (a complete solve).
    priced : PricingResult or None
        The last pricing (None when the loop priced nothing).
    coef_path, intercept_path : list
        The coefficients and bias after every restricted solve.
    trace : dict of str to list
        The trace rows (see the module docstring).
    stop_reason : str
        Why the loop stopped.
    final_score : float
        The score of the last pricing (NaN without one).
    """

    step: MasterStep
    priced: PricingResult | None
    coef_path: list[np.ndarray]
    intercept_path: list[Any]
    trace: dict[str, list]
    stop_reason: str
    final_score: float


def weak_learner_space(
    X: np.ndarray,
    kind: str,
    *,
    include_constant: bool,
    rng: np.random.Generator,
    n_candidates: int = 2000,
    sigma: float = 1.0,
    max_bins: int | None = None,
) -> WeakLearnerSpace | None:
    """The weak-learner space named ``kind`` on the training X, or None if it has no candidate.

    ``stump``: every stump (``include_constant``: with the constant column, for bias-free models;
    ``max_bins``: the binned search); ``perceptron`` / ``fourier``: ``n_candidates`` fresh samples
    per oracle call (``sigma``: the Fourier bandwidth).
    """
    if kind == "stump":
        space = StumpSpace(X, include_constant=include_constant, max_bins=max_bins)
        return space if space.n_candidates > 0 else None
    if kind == "perceptron":
        return PerceptronSpace(X, n_candidates=n_candidates, random_state=rng)
    if kind == "fourier":
        return FourierSpace(X, sigma=sigma, n_candidates=n_candidates, random_state=rng)
    raise ValueError(f"unknown weak_learner {kind!r}; expected 'stump', 'perceptron' or 'fourier'")


class ColumnGeneration(IterativeMixin, BaseEstimator):
    """The column-generation loop, for classifiers and regressors (see the module docstring).

    Subclasses define ``__init__`` with their parameters (scikit-learn style, ``max_iter`` the
    path parameter), ``_prepare_targets``, ``_train_error``, ``_make_space`` and
    ``_make_master``.
    """

    path_param: ClassVar[str] = "max_iter"
    #: how the default pricer scores and excludes columns
    _pricing: ClassVar[PricingRule] = PricingRule()

    def _prepare_targets(self, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Validated ``(X, y)`` and the targets the master is built on."""
        raise NotImplementedError

    def _train_error(self, dec: np.ndarray, y: np.ndarray) -> float:
        """The training error traced per iteration, from the decision values."""
        raise NotImplementedError

    # ------------------------------------------------------------------ collaborators
    def _make_space(self, X: np.ndarray, rng: np.random.Generator) -> HypothesisSpace | None:
        """The weak-learner space on the training X, or None if it has no candidate."""
        raise NotImplementedError

    def _make_master(
        self,
        X: np.ndarray,
        y: np.ndarray,
        space: HypothesisSpace | None,
        ws: WorkingSet,
        rng: np.random.Generator,
        context: Any,
    ) -> RestrictedMaster:
        """The restricted master for targets ``y`` (±1 floats, or class indices) on the empty
        working set ``ws``."""
        raise NotImplementedError

    def _make_pricer(
        self, space: HypothesisSpace, master: RestrictedMaster, rng: np.random.Generator
    ) -> Pricer:
        """The pricer (default: the oracle pricer with the class's ``_pricing`` rule, over a
        :class:`~kernbench.weak.base.WeakLearnerSpace`)."""
        if not isinstance(space, WeakLearnerSpace):
            raise TypeError(f"the oracle pricer needs a WeakLearnerSpace, got {type(space)}")
        return OraclePricer(space, self._pricing, rng)

    def _make_working_set(self, m: int, space: HypothesisSpace | None) -> WorkingSet:
        return WorkingSet(m, space, self._pricing)

    def _finish_fit(
        self,
        master: RestrictedMaster,
        ws: WorkingSet,
        last: MasterStep,
        priced: PricingResult | None,
    ) -> None:
        """Fitted attributes from the master, the working set, the last step and the last
        pricing (the base has set the path, trace, coefficients, ``stop_reason_`` and
        ``dual_coef_``)."""

    def _time_cap(self) -> float | None:
        """The wall-clock cap in seconds (a method with a ``max_time`` parameter), or None."""
        return None

    # ------------------------------------------------------------------ columns and values
    def _decision_from_columns(self, Hx: np.ndarray, W: np.ndarray, b: Any) -> np.ndarray:
        """Decision values from learner outputs Hx (n × J) and coefficients (default Hx W + b)."""
        return Hx @ W + b

    def _learner_matrix(self, X: np.ndarray) -> np.ndarray:
        """Outputs of all selected learners on X, shape (n, J), vectorised per learner type."""
        learners = self.learners_
        out = np.empty((X.shape[0], len(learners)))
        by_type: dict[type, list[int]] = defaultdict(list)
        for j, lrn in enumerate(learners):
            by_type[type(lrn)].append(j)
        for cls, idx in by_type.items():
            group = [learners[j] for j in idx]
            if cls is Stump:
                out[:, idx] = predict_stumps(X, *stump_arrays(group))
            elif hasattr(cls, "predict_many"):
                out[:, idx] = cls.predict_many(group, X)
            else:
                out[:, idx] = np.column_stack([lrn.predict(X) for lrn in group])
        return out

    # ------------------------------------------------------------------ the loop
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any) -> ColumnGeneration:
        """Run column generation on (X, y).

        Parameters
        ----------
        X : array-like of shape (m, D)
        y : array-like of shape (m,)

        Returns
        -------
        self
        """
        check_cross_constraints(self)
        return self._fit(X, y, None)

    def _fit(self, X: Any, y: Any, context: Any) -> ColumnGeneration:
        """The fit on (X, y); ``context`` is handed to ``_make_master`` (CG-Boost: the held-out
        validation set)."""
        X, y, y_enc = self._prepare_targets(X, y)
        rng = generator_from(self.get_params(deep=False).get("random_state"))
        t0 = time.perf_counter()
        space = self._make_space(X, rng)
        ws = self._make_working_set(X.shape[0], space)
        master = self._make_master(X, y_enc, space, ws, rng, context)
        pricer = self._make_pricer(space, master, rng) if space is not None else None
        last, priced = self._run(master, pricer, ws, y, t0)
        self.learners_ = ws.learners
        self.model_size_ = len(ws.learners)
        self.feature_usage_ = feature_usage(ws.learners, X.shape[1])  # Fig. 5 (stumps)
        self.fit_time_ = time.perf_counter() - t0
        if last.dual_coef is not None:
            self.dual_coef_ = last.dual_coef
        self._finish_fit(master, ws, last, priced)
        return self

    def _run(
        self,
        master: RestrictedMaster,
        pricer: Pricer | None,
        ws: WorkingSet,
        y: np.ndarray,
        t0: float,
        step: MasterStep | None = None,
        n_iter: int | None = None,
    ) -> tuple[MasterStep, PricingResult | None]:
        """The loop of the module docstring: sets the path, trace and stop attributes and
        returns the last step and the last pricing (see :meth:`_loop`)."""
        run = self._loop(master, pricer, ws, y, t0, step, n_iter)
        self._set_path(run)
        return run.step, run.priced

    def _loop(
        self,
        master: RestrictedMaster,
        pricer: Pricer | None,
        ws: WorkingSet,
        y: np.ndarray,
        t0: float,
        step: MasterStep | None = None,
        n_iter: int | None = None,
    ) -> LoopRun:
        """The loop of the module docstring, its path, trace and stop reason returned as a value.

        ``step``: the master's state to continue from (default ``master.start()``, the empty
        working set); ``n_iter``: the iterations at most (default ``max_iter``).
        """
        coef_path: list[np.ndarray] = []
        intercept_path: list[Any] = []
        trace: dict[str, list] = defaultdict(list)
        step = master.start() if step is None else step
        priced = None
        stop = "max_iter"
        final_score = float("nan")
        time_cap = self._time_cap()
        for _ in range(self.max_iter if n_iter is None else n_iter):
            if pricer is None:
                stop = "empty_space"
                break
            priced = pricer.price(step, ws)
            if priced.stop_reason == "converged" and not step.exact:
                # a threshold met on an inexact solve proves nothing: complete it, price again
                step = master.complete(ws)
                _replace_last(coef_path, intercept_path, step)
                priced = pricer.price(step, ws)
            final_score = float(priced.score)
            if priced.stop_reason is not None:
                stop = priced.stop_reason
                break
            ws.add(priced.picks, priced.columns)
            master.add_columns(priced.picks, priced.columns)
            step = master.solve(ws)
            self._record(step, priced, ws, y, t0, coef_path, intercept_path, trace)
            reason = step.stop_reason
            if reason is None and time_cap is not None and trace["time_s"][-1] >= time_cap:
                reason = "max_time"
            if reason is not None:
                stop = reason
                break
        if not step.exact:  # the final restricted solve is a full one
            step = master.complete(ws)
            _replace_last(coef_path, intercept_path, step)
        return LoopRun(step, priced, coef_path, intercept_path, dict(trace), stop, final_score)

    def _set_path(self, run: LoopRun) -> None:
        """The fitted path, trace, stop and final-model attributes of a run of the loop."""
        self.coef_path_, self.intercept_path_ = run.coef_path, run.intercept_path
        self.n_iter_ = len(run.coef_path)
        self.trace_ = dict(run.trace)
        self.stop_reason_ = run.stop_reason
        self.final_score_ = run.final_score
        if run.coef_path:
            self.coef_, self.intercept_ = run.coef_path[-1], run.intercept_path[-1]
        else:
            self.coef_ = np.array(run.step.coef, dtype=np.float64)
            self.intercept_ = np.array(run.step.intercept, dtype=np.float64)

    def _record(
        self,
        step: MasterStep,
        priced: PricingResult | None,
        ws: WorkingSet,
        y: np.ndarray,
        t0: float,
        coef_path: list[np.ndarray],
        intercept_path: list[Any],
        trace: dict[str, list],
    ) -> None:
        """Append a solved step to the path and its row to the trace (``priced``: the pricing
        that added the step's columns, None for columns added without one)."""
        coef_path.append(np.array(step.coef, dtype=np.float64, copy=True))
        intercept_path.append(np.array(step.intercept, dtype=np.float64, copy=True))
        dec = step.decision
        if dec is None:
            dec = self._decision_from_columns(ws.H, step.coef, step.intercept)
        trace["objective"].append(float(step.objective))
        trace["gap"].append(float(step.gap))
        trace["score"].append(float(priced.score) if priced is not None else float("nan"))
        trace["train_error"].append(self._train_error(dec, y))
        trace["time_s"].append(time.perf_counter() - t0)
        trace["n_columns"].append(ws.n_columns)
        trace["solver_iter"].append(int(step.solver_iter))
        trace["solver_stop_reason"].append(step.solver_stop_reason)
        extra = {**(priced.extra if priced is not None else {}), **step.extra}
        for key, value in extra.items():
            trace[key].append(value)

    # ------------------------------------------------------------------ prediction
    def _values(self, X: Any) -> np.ndarray:
        """Decision values F(x) of the final model."""
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        Hx = self._learner_matrix(X)
        return self._decision_from_columns(
            Hx[:, : self.coef_.shape[0]], self.coef_, self.intercept_
        )

    def _staged_values(self, X: Any) -> Iterator[np.ndarray]:
        """Decision values after iterations 1..n_iter_ (learners evaluated once on X).

        A fit that converged before adding any column yields the column-free model once.
        """
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        Hx = self._learner_matrix(X)
        if not self.coef_path_:
            yield self._decision_from_columns(Hx[:, :0], self.coef_, self.intercept_)
            return
        for W, b in zip(self.coef_path_, self.intercept_path_):
            yield self._decision_from_columns(Hx[:, : W.shape[0]], W, b)


class ColumnGenerationClassifier(ColumnGeneration, KernbenchClassifier):
    """Base class of column-generation classifiers: labels in, decision values out."""

    #: labels mapped to ±1 with +1 = ``classes_[1]``; otherwise class indices 0..K−1
    _binary_only: ClassVar[bool] = True

    def _prepare_targets(self, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        X, y, idx = self._check_training_data(X, y, binary_only=self._binary_only)
        return X, y, (np.where(idx == 1, 1.0, -1.0) if self._binary_only else idx)

    def _train_error(self, dec: np.ndarray, y: np.ndarray) -> float:
        """The misclassified fraction."""
        return float(np.mean(self._labels_from_decision(dec) != y))

    def decision_function(self, X: Any) -> np.ndarray:
        """Decision values F(x) of the final model (binary: shape (n,), positive ↔ classes_[1])."""
        return self._values(X)

    def predict(self, X: Any) -> np.ndarray:
        """Class labels: sign of F (binary, sign(0) = +1) or the argmax over classes."""
        return self._labels_from_decision(self.decision_function(X))

    def staged_decision_function(self, X: Any) -> Iterator[np.ndarray]:
        """Decision values after iterations 1..n_iter_ (learners evaluated once on X).

        A fit that converged before adding any column yields the column-free model once.
        """
        yield from self._staged_values(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = not self._binary_only
        return tags


def _replace_last(coef_path: list, intercept_path: list, step: MasterStep) -> None:
    """Replace the last path entry by a completed step's coefficients."""
    if coef_path:
        coef_path[-1] = np.array(step.coef, dtype=np.float64, copy=True)
        intercept_path[-1] = np.array(step.intercept, dtype=np.float64, copy=True)


__all__ = [
    "ColumnGeneration",
    "ColumnGenerationClassifier",
    "LoopRun",
    "MasterStep",
    "PricingResult",
    "PricingRule",
    "RestrictedMaster",
    "StumpColumnIds",
    "WorkingSet",
    "weak_learner_space",
]
