"""The estimator contract every kernbench method follows.

Every method is a scikit-learn classifier (``fit`` / ``predict`` / ``decision_function``; parameters
stored unchanged in ``__init__``; fitted attributes end with ``_``). Two optional capabilities let
the runner do less work without knowing a method's internals:

``IterativeMixin``
    The method grows a model one weak learner (or one iteration) at a time. It names the parameter
    that caps the number of iterations in ``path_param`` and implements
    ``staged_decision_function``, so that every value of that parameter in a grid is scored from ONE
    fit with the largest value.
    It records a per-iteration ``trace_`` (a dict of equal-length lists) and says why it stopped
    in ``stop_reason_``, one of the keys of :data:`STOP_REASONS`.

``PrecomputedKernelMixin``
    The method is a kernel machine whose Gram matrix the runner computes once per realisation and
    slices for every grid point and CV fold. The method says how to build a *base* matrix that does
    not depend on hyper-parameters (e.g. pairwise L1 distances) and how to turn it into a Gram
    matrix for the current parameters (e.g. ``exp(-gamma * D2)``).

``WarmPathMixin``
    The method fits the values of one parameter (``warm_path_param``, e.g. ``C``) along one path,
    each fit warm-started from the previous one, so that a fold's grid costs about one fit.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, check_random_state, validate_data

#: Why an iterative fit stopped: every estimator's ``stop_reason_`` is one of these keys.
STOP_REASONS = {
    "converged": (
        "the method's optimality test held at its tolerance (column generation: no column outside"
        " the working set is violated, the pricing threshold; ExRM, DRM: the change of objective)"
    ),
    "max_iter": "the iteration cap (the path parameter)",
    "max_time": "the wall-clock cap, checked after each iteration",
    "exhausted": "every column of a finite space selected",
    "empty_space": "the weak-learner space has no candidate",
    "objective_stalled": "the restricted objective changed by less than rel_tol",
    "no_edge": (
        "boosting: the best weak learner has no edge (weighted error ≥ ½; AdaBoost.MH: r = 0)"
    ),
    "zero_error": (
        "boosting: a weak learner with zero weighted error, whose vote would be infinite"
        " (AdaBoost with zero_error='stop'; AdaBoost.MH: r = 1)"
    ),
    "columns_done": "AdaBoost.MO: every class column stopped (no edge or zero error)",
    "no_weight": (
        "AdaBoost.ECC: the weights collapsed onto pairs that no colouring drawn could separate"
    ),
    "TR3": "CG-Boost: the validation error has not improved for patience iterations",
    "precision_floor": (
        "CG-Boost: the restricted master could not be certified at its tolerance (the columns'"
        " scale puts the gradient's rounding noise above it); the last certified model is kept"
    ),
}


def labels_from_decision(classes: np.ndarray, dec: np.ndarray) -> np.ndarray:
    """Class labels from decision values: binary (shape (n,)) by sign, positive ↔ ``classes[1]``
    and sign(0) = +1; multi-class (shape (n, K)) by the argmax."""
    if dec.ndim == 1:
        return classes[(dec >= 0).astype(int)]
    return classes[np.argmax(dec, axis=1)]


def generator_from(random_state: Any) -> np.random.Generator:
    """A numpy ``Generator`` from scikit-learn's ``random_state`` (None, an int or a RandomState:
    what parameter validation lets through), seeded by one draw of ``check_random_state``."""
    return np.random.default_rng(check_random_state(random_state).randint(np.iinfo(np.int32).max))


class IterativeMixin:
    """Capability: a model grown iteration by iteration, scorable along its path.

    Subclasses set ``path_param`` (the name of the iteration-cap parameter, e.g. ``"n_estimators"``)
    and implement :meth:`staged_decision_function`. ``staged_predict`` is derived from it.

    After ``fit`` the estimator has ``n_iter_`` (iterations actually run; may be below the cap when
    the method converged) and ``trace_``: a dict mapping a quantity name (``"objective"``,
    ``"gap"``, ``"train_error"``, ``"time_s"``, ...) to a list with one entry per iteration.
    """

    path_param: ClassVar[str] = "n_estimators"

    def staged_decision_function(self, X: Any) -> Iterator[np.ndarray]:
        """Yield the decision function after iterations 1, 2, ..., ``n_iter_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Yields
        ------
        ndarray of shape (n_samples,) for binary problems or (n_samples, n_classes) otherwise.
        """
        raise NotImplementedError

    def staged_predict(self, X: Any) -> Iterator[np.ndarray]:
        """Yield the predicted labels after each iteration (see ``staged_decision_function``)."""
        for dec in self.staged_decision_function(X):
            yield labels_from_decision(self.classes_, dec)  # type: ignore[attr-defined]


class WarmPathMixin:
    """Capability: the values of one parameter fitted along one warm-started path.

    Model selection (:func:`kernbench.runner.cell.select.select_fit_score`) fits the grid's values
    of ``warm_path_param`` (e.g. ``"C"``) for one fold by one call of :meth:`fit_warm_path`, in the
    grid's order sorted ascending, instead of one fit per value; the refit of the chosen point runs
    the same path up to its value, so the tested model is the model that was scored. Used only
    while :meth:`warm_path_active` is true (an estimator can keep a switch to cold fits).
    """

    warm_path_param: ClassVar[str] = "C"

    def warm_path_active(self) -> bool:
        """Whether model selection uses :meth:`fit_warm_path` (default: always)."""
        return True

    def fit_warm_path(
        self, X: Any, y: Any, values: Sequence[Any], stages: Sequence[int]
    ) -> list[dict[int, Any]]:
        """Fit along ``values`` of ``warm_path_param`` (in the order given).

        Parameters
        ----------
        X : array-like of shape (m, D)
        y : array-like of shape (m,)
        values : sequence
            The values of ``warm_path_param``, fitted in this order.
        stages : sequence of int
            The values of the estimator's ``path_param`` to keep a model for.

        Returns
        -------
        list of dict
            Per value, ``{stage: fitted estimator}`` with ``warm_path_param`` = the value and
            ``path_param`` = the stage, ready for ``predict``.
        """
        raise NotImplementedError


class PrecomputedKernelMixin:
    """Capability: a kernel machine whose Gram matrix can be computed once and sliced.

    The runner calls ``base_matrix(X_all, X_all)`` once per realisation (train and test rows
    together), then for every grid point ``gram_from_base(B)`` (cheap, elementwise) and finally
    ``fit_gram(K[train][:, train], y)`` / ``decision_function_gram(K[test][:, train])``.
    ``fit`` / ``decision_function`` on raw features go through the same three steps, so both paths
    give identical models.
    """

    #: parameters that enter ``gram_from_base`` (changing them changes K but not the base matrix)
    kernel_params: ClassVar[tuple[str, ...]] = ()

    def base_matrix(self, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def gram_from_base(self, B: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def fit_gram(self, K: np.ndarray, y: Any) -> PrecomputedKernelMixin:
        raise NotImplementedError

    def decision_function_gram(self, K: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def predict_gram(self, K: np.ndarray) -> np.ndarray:
        return labels_from_decision(self.classes_, self.decision_function_gram(K))  # type: ignore[attr-defined]


class KernbenchClassifier(ClassifierMixin, BaseEstimator):
    """Common root of kernbench's estimators (scikit-learn classifier contract).

    After ``fit`` every estimator exposes ``model_size_``: the number of weak learners for
    ensembles, the number of support vectors for kernel machines, the number of non-zero
    coefficients otherwise.
    """

    @classmethod
    def _get_param_names(cls) -> list[str]:
        """scikit-learn's parameter names (the signature of ``__init__``), read once per class.

        ``get_params`` (hence ``clone``, ``set_params`` and every ``fit``'s parameter check)
        reads ``__init__``'s signature on each call; a model-selection grid calls it thousands
        of times per cell (an SVM-Gauss cell: 550 clones and fits), and a class's signature
        does not change, so it is kept in the class's own ``__dict__`` (subclasses read theirs).
        """
        names = cls.__dict__.get("_kernbench_param_names")
        if names is None:
            names = tuple(super()._get_param_names())
            cls._kernbench_param_names = names
        return list(names)

    def _labels_from_decision(self, dec: np.ndarray) -> np.ndarray:
        """Labels from this estimator's decision values (see :func:`labels_from_decision`)."""
        return labels_from_decision(self.classes_, dec)

    def _make_rng(self) -> np.random.Generator:
        """The fit's random generator, from ``random_state`` (see :func:`generator_from`)."""
        return generator_from(getattr(self, "random_state", None))

    def _check_training_data(
        self, X: Any, y: Any, *, binary_only: bool = False
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Validate ``(X, y)`` for ``fit`` and set ``classes_`` (``binary_only``: refuse other
        targets with scikit-learn's expected message).

        Returns
        -------
        X : ndarray of shape (m, D), float64
        y : ndarray of shape (m,)
        y_index : ndarray of shape (m,)
            Position of each label in ``classes_`` (0..K−1).
        """
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        if binary_only:
            y_type = type_of_target(y, input_name="y", raise_unknown=True)
            if y_type != "binary":
                raise ValueError(
                    "Only binary classification is supported. The type of the target is "
                    f"{y_type} ({type(self).__name__}; multi-class: AdaBoost.MH/ECC, CGENS-SLS)."
                )
        self.classes_, y_index = np.unique(y, return_inverse=True)
        if self.classes_.size < 2:
            raise ValueError(
                f"{type(self).__name__} needs samples of at least 2 classes; got 1 class"
            )
        return X, y, y_index


class LinearPathClassifier(IterativeMixin, KernbenchClassifier):
    """A binary linear model F(x) = xᵀ``coef_`` + ``intercept_`` whose iterates are kept.

    Subclasses fit ``coef_`` (D,), ``intercept_`` and the per-iteration ``coef_path_`` (T, D) and
    ``intercept_path_`` (T,); prediction, staged prediction (scored in blocks of iterations, so
    memory stays bounded) and the binary tags come from here (ExRM, PSVM, DRM).
    """

    #: iterations scored per matrix product in :meth:`staged_decision_function`
    _stage_block: ClassVar[int] = 256

    def decision_function(self, X: Any) -> np.ndarray:
        """xᵀw + b, shape (n,); positive ↔ ``classes_[1]``."""
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return X @ self.coef_ + self.intercept_

    def staged_decision_function(self, X: Any) -> Iterator[np.ndarray]:
        """The model's decision after iterations 1, …, ``n_iter_``."""
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        for start in range(0, self.coef_path_.shape[0], self._stage_block):
            stop = start + self._stage_block
            scores = X @ self.coef_path_[start:stop].T + self.intercept_path_[start:stop]
            yield from scores.T

    def predict(self, X: Any) -> np.ndarray:
        """sign(xᵀw + b) as labels, sign(0) = +1 (``classes_[1]``)."""
        return self._labels_from_decision(self.decision_function(X))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags
