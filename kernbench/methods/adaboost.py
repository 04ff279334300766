"""Discrete AdaBoost (Freund & Schapire 1997; docs/methods/adaboost.md): binary, pluggable weak
learners.

Each round asks a weak-learner *space* (kernbench.weak.base protocol) for the hypothesis with the
largest edge Σ_i d_i y_i h(x_i) = 1 − 2ε, re-weights the samples and appends (α_t, h_t).

Adding a weak learner (the hook)
--------------------------------
The ``weak_learner`` parameter is a key of :data:`WEAK_LEARNER_SPACES`, which maps a name to a
builder ``(estimator, X, rng) -> space``. ``fit`` calls the builder once on the training inputs and
then only ``space.best(d * y, absolute=True, rng=rng)`` per round, so a new weak learner needs:

1. a builder function here (it may read extra estimator parameters, e.g. ``max_run``, which are then
   added to ``__init__`` and ``_parameter_constraints``);
2. one entry in :data:`WEAK_LEARNER_SPACES` (the parameter constraint is derived from its keys).

The learners the space returns need ``predict(X)``; decision values use :func:`predict_stumps` when
every learner is a :class:`~kernbench.weak.stumps.Stump` and stack ``predict`` columns otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from numbers import Integral
from time import perf_counter
from typing import Any

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from kernbench.methods.base import IterativeMixin, KernbenchClassifier
from kernbench.methods.registry import register
from kernbench.solvers.adaboost_round import reweight, weighted_error
from kernbench.weak.perceptron import PerceptronSpace
from kernbench.weak.rcd_perceptron import RCDPerceptronSpace
from kernbench.weak.stumps import (
    MAX_BINS_LIMIT,
    Stump,
    StumpSpace,
    feature_usage,
    predict_stumps,
    stump_arrays,
)

#: δ in α = ½ ln((1 − ε + δ)/(ε + δ)) when a weak learner has zero weighted error
ZERO_ERROR_DELTA = 1e-10
#: LEMGA's AdaBoost::linear_weight takes β = (1 − ε)/ε = 1000 when ε = 0, i.e. α = ½ ln 1000
LEMGA_ZERO_ERROR_BETA = 1000.0
#: an edge 1 − 2ε at most this counts as zero (ε ≥ ½ up to rounding): boosting stops
EDGE_TOL = 1e-12
#: staged decision values are accumulated this many learners at a time (bounds memory)
_STAGE_BLOCK = 256
#: −α·(+1, −1) gives the two reweighting factors e^(−α), e^α in one numpy exp
_SIGNS = np.array([1.0, -1.0])

SpaceBuilder = Callable[["AdaBoost", np.ndarray, np.random.Generator], Any]


def _stump_space(estimator: AdaBoost, X: np.ndarray, rng: np.random.Generator) -> StumpSpace:
    """AdaBoost-Stump: exhaustive stumps, constant included (AdaBoost has no bias);
    ``max_bins``: the binned (histogram) stump search instead of the exact one."""
    return StumpSpace(
        X, include_constant=True, max_bins=estimator.max_bins, n_threads=estimator.n_jobs
    )


def _rcd_perceptron_space(
    estimator: AdaBoost, X: np.ndarray, rng: np.random.Generator
) -> RCDPerceptronSpace:
    """AdaBoost-Perc: a perceptron trained by RCD (``max_run`` updates) on the weighted data;
    ``best(..., absolute=True)`` negates it when its weighted error exceeds ½."""
    return RCDPerceptronSpace(X, max_run=estimator.max_run)


def _sampled_perceptron_space(
    estimator: AdaBoost, X: np.ndarray, rng: np.random.Generator
) -> PerceptronSpace:
    """AdaBoost with the CGENS paper's rule (Table II, docs/methods/column_generation.md): the best
    of 2000 fresh random perceptrons per round under the edge, negated when the edge is negative."""
    return PerceptronSpace(X, n_candidates=2000, random_state=rng)


#: weak-learner name -> builder of its space on the training inputs (the hook; see module docstring)
WEAK_LEARNER_SPACES: dict[str, SpaceBuilder] = {
    "stump": _stump_space,
    "perceptron": _rcd_perceptron_space,
    "perceptron_sampled": _sampled_perceptron_space,
}


def _as_generator(random_state: Any) -> np.random.Generator:
    """A numpy Generator from ``None`` / an int / a RandomState (an int seeds it directly)."""
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(np.iinfo(np.int32).max))
    return np.random.default_rng(random_state)


@register("adaboost")
class AdaBoost(IterativeMixin, KernbenchClassifier):
    """Discrete AdaBoost for binary classification (docs/methods/adaboost.md).

    Parameters
    ----------
    n_estimators : int, default=100
        T, the maximum number of boosting rounds (the path parameter: every T' ≤ T is scored from
        one fit through :meth:`staged_decision_function`).
    weak_learner : str, default="stump"
        Key of :data:`WEAK_LEARNER_SPACES`. ``"stump"``: exhaustive decision stumps;
        ``"perceptron"``: perceptrons trained by random coordinate descent (AdaBoost-Perc).
    max_run : int, default=1000
        RCD updates per perceptron (``weak_learner="perceptron"`` only; 1000 is LEMGA's default).
    max_bins : int, "auto" or None, default="auto"
        ``weak_learner="stump"`` only. None: the exact stump search (every threshold between
        consecutive distinct values). An integer B: the binned (histogram) search of the
        gradient-boosting libraries, at most B − 1 thresholds per feature near its B-quantiles
        (of a fixed sample of 200 000 rows on larger training sets; all of them for a feature
        with at most B distinct values there, where it equals the exact search): faster and
        lighter on large data. ``"auto"``: binned with 256 bins from 20 000
        training points up, exact below (docs/performance.md gives the speed and error cost).
    n_jobs : int or None, default=None
        Threads of the stump search (split over features or row chunks; scikit-learn's
        convention: −1 all cores, None the process default: all cores, or the share the runner
        gives each cell).
        The model is the same for any value.
    zero_error : {"stop", "continue"}, default="stop"
        A round whose weak learner has zero weighted error: ``"stop"`` appends it with
        α = ½ ln((1 + δ)/δ), δ = 1e-10, and ends boosting; ``"continue"``
        does what Ling Li's LEMGA library (which Lin & Li's experiments used) does: α = ½ ln 1000,
        the sample weights stay as they are (every point is classified correctly), and boosting
        goes on, so a randomised base learner (RCD perceptrons) adds further zero-error
        hypotheses of equal weight.
    random_state : int, RandomState or None, default=None
        Seeds randomised weak learners (unused by stumps, which are deterministic).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        Labels; positive decision values mean ``classes_[1]``.
    weak_learners_ : list
        h_1..h_J (J = ``n_iter_``).
    estimator_weights_ : ndarray of shape (J,)
        α_1..α_J.
    n_iter_ : int
        Rounds actually run; below ``n_estimators`` when boosting stopped early.
    stop_reason_ : str
        ``"max_iter"``, ``"no_edge"`` (ε_t ≥ ½, step 2.2) or ``"zero_error"`` (ε_t = 0, step 2.3,
        with ``zero_error="stop"``).
    trace_ : dict of lists
        Per round: ``edge`` (1 − 2ε_t), ``alpha``, ``weighted_error`` (ε_t), ``Z`` (the normaliser,
        2√(ε_t(1 − ε_t)) before the zero-error stop), ``train_error`` of sign(F_t), ``time_s``
        (seconds since the start of ``fit``).
    model_size_ : int
        Number of weak learners.
    feature_usage_ : ndarray of shape (n_features_in_,) or None
        Fraction of the weak learners splitting on each feature (stumps only; None otherwise).
    sample_weight_ : ndarray of shape (m,)
        The weights d over the training points after the last update (d_{J+1}).

    See Also
    --------
    AdaBoostMH : AdaBoost.MH, the multi-class form with factorised stumps.
    SVMStump : the SVM with the stump kernel, an infinite ensemble of the same stumps.
    LPBoost : the totally corrective 1-norm boosting by column generation.
    AdaTree : AdaBoost of small trees (scikit-learn's AdaBoostClassifier).

    References
    ----------
    .. [1] H.-T. Lin and L. Li, "Novel Distance-Based SVM Kernels for Infinite Ensemble Learning",
       Proc. 12th Int. Conf. on Neural Information Processing (ICONIP), 2005:
       AdaBoost as problem (P3) of Sec. II-B, with stumps and perceptrons (Sec. VI).
    .. [2] Y. Freund and R. E. Schapire, "A Decision-Theoretic Generalization of On-Line Learning
       and an Application to Boosting", J. Computer and System Sciences 55(1), 1997.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(n_samples=60, random_state=0)
    >>> from kernbench.methods import AdaBoost
    >>> clf = AdaBoost(n_estimators=10).fit(X, y)
    >>> clf.classes_
    array([0, 1])
    >>> clf.decision_function(X[:5]).shape
    (5,)
    >>> clf.n_iter_ <= 10
    True
    >>> bool(clf.score(X, y) > 0.8)
    True
    """

    path_param = "n_estimators"
    _parameter_constraints: dict = {
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "weak_learner": [StrOptions(set(WEAK_LEARNER_SPACES))],
        "max_run": [Interval(Integral, 1, None, closed="left")],
        "max_bins": [
            Interval(Integral, 2, MAX_BINS_LIMIT, closed="both"),
            StrOptions({"auto"}),
            None,
        ],
        "n_jobs": [Integral, None],
        "zero_error": [StrOptions({"stop", "continue"})],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_estimators: int = 100,
        *,
        weak_learner: str = "stump",
        max_run: int = 1000,
        max_bins: int | str | None = "auto",
        n_jobs: int | None = None,
        zero_error: str = "stop",
        random_state: Any = None,
    ) -> None:
        self.n_estimators = n_estimators
        self.weak_learner = weak_learner
        self.max_run = max_run
        self.max_bins = max_bins
        self.n_jobs = n_jobs
        self.zero_error = zero_error
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    # ------------------------------------------------------------------ fit
    def _make_space(self, X: np.ndarray, rng: np.random.Generator) -> Any:
        """Build the weak-learner space named by ``weak_learner`` on the training inputs."""
        return WEAK_LEARNER_SPACES[self.weak_learner](self, X, rng)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any) -> AdaBoost:
        """Run up to ``n_estimators`` rounds of discrete AdaBoost.

        Parameters
        ----------
        X : array-like of shape (m, D)
        y : array-like of shape (m,)
            Two classes.

        Returns
        -------
        self
        """
        X, y, y_index = self._check_training_data(X, y, binary_only=True)
        y_pm = 2.0 * y_index - 1.0  # +1 <-> classes_[1]
        rng = _as_generator(self.random_state)
        start = perf_counter()
        space = self._make_space(X, rng)

        m = X.shape[0]
        y_pos = y_pm > 0
        d = np.full(m, 1.0 / m)  # step 1
        F = np.zeros(m)
        scratch = np.empty(m)  # the misclassified weights of a round, gathered for their sum
        learners: list[Any] = []
        alphas: list[float] = []
        trace: dict[str, list[float]] = {
            k: [] for k in ("edge", "alpha", "weighted_error", "Z", "train_error", "time_s")
        }
        self.stop_reason_ = "max_iter"
        for _ in range(self.n_estimators):
            pick = space.best(d * y_pm, absolute=True, rng=rng)  # edge Σ d_i y_i h(x_i)
            h = np.ascontiguousarray(pick.column, dtype=np.float64)
            eps = float(weighted_error(d, y_pm, h, scratch))  # ε_t = Σ d_i over y_i h_t(x_i) < 0
            if 1.0 - 2.0 * eps <= EDGE_TOL:  # step 2.2 (the space is negation-complete)
                self.stop_reason_ = "no_edge"
                break
            if eps == 0.0:  # d is left as it is
                if self.zero_error == "continue":  # LEMGA: β = 1000
                    alpha = 0.5 * np.log(LEMGA_ZERO_ERROR_BETA)
                    Z = float(np.exp(-alpha))  # d·exp(−α y h) = d·e^(−α): normalising restores d
                else:  # step 2.3
                    alpha = 0.5 * np.log((1.0 - eps + ZERO_ERROR_DELTA) / (eps + ZERO_ERROR_DELTA))
                    Z = 0.0
                F += alpha * h
                errors = np.count_nonzero((F >= 0) != y_pos)
            else:
                alpha = 0.5 * np.log((1.0 - eps) / eps)  # step 2.4
                down, up = np.exp(-alpha * _SIGNS)  # step 2.5 (and F += α h) in place
                Z, errors = reweight(d, y_pm, h, up, down, F, alpha, y_pos)
                Z = float(Z)
            learners.append(pick.learner)
            alphas.append(float(alpha))
            trace["edge"].append(1.0 - 2.0 * eps)
            trace["alpha"].append(float(alpha))
            trace["weighted_error"].append(eps)
            trace["Z"].append(Z)
            trace["train_error"].append(errors / m)  # sign(0) = +1
            trace["time_s"].append(perf_counter() - start)
            if eps == 0.0 and self.zero_error == "stop":
                self.stop_reason_ = "zero_error"
                break

        self.weak_learners_ = learners
        self.estimator_weights_ = np.asarray(alphas, dtype=np.float64)
        self.n_iter_ = len(learners)
        self.model_size_ = len(learners)
        self.feature_usage_ = feature_usage(learners, X.shape[1])
        self.trace_ = trace
        self.sample_weight_ = d  # d_{J+1}: the weights after the last update
        return self

    # ------------------------------------------------------------------ predict
    def _weak_columns(self, X: np.ndarray, start: int = 0, stop: int | None = None) -> np.ndarray:
        """h_t(X) for learners start..stop-1, shape (n, stop − start)."""
        learners = self.weak_learners_[start:stop]
        if not learners:
            return np.empty((X.shape[0], 0))
        if all(isinstance(h, Stump) for h in learners):
            return predict_stumps(X, *stump_arrays(learners))
        return np.column_stack([h.predict(X) for h in learners])

    def decision_function(self, X: Any) -> np.ndarray:
        """F(x) = Σ_t α_t h_t(x); positive means ``classes_[1]``.

        Parameters
        ----------
        X : array-like of shape (n, D)

        Returns
        -------
        ndarray of shape (n,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return self._weak_columns(X) @ self.estimator_weights_

    def staged_decision_function(self, X: Any) -> Iterator[np.ndarray]:
        """Yield F_t(X) = Σ_{s ≤ t} α_s h_s(X) for t = 1..``n_iter_``.

        An ensemble that stopped before its first learner (no edge, ``n_iter_ == 0``) yields
        nothing; its ``decision_function`` is F = 0.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        F = np.zeros(X.shape[0])
        for start in range(0, self.n_iter_, _STAGE_BLOCK):
            stop = min(start + _STAGE_BLOCK, self.n_iter_)
            partial = np.cumsum(
                self._weak_columns(X, start, stop) * self.estimator_weights_[start:stop], axis=1
            )
            for j in range(stop - start):
                yield F + partial[:, j]
            F = F + partial[:, -1]

    def predict(self, X: Any) -> np.ndarray:
        """sign(F(x)) as labels, sign(0) = +1 (``classes_[1]``)."""
        return self._labels_from_decision(self.decision_function(X))
