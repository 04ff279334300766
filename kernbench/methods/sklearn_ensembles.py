"""The tree and SVM ensembles the ExRM paper compares with, as thin wrappers of scikit-learn.

Nothing is reimplemented: each class builds scikit-learn's own ``AdaBoostClassifier`` or
``BaggingClassifier`` in ``fit`` and delegates prediction to it. They exist so that specs can name
them (``ada_tree``, ``bag_tree``, ``ada_svm``, ``bag_svm``) with the paper's component counts.

* ``ada_tree``: AdaBoost (SAMME, learning rate 1) of classification trees with at most 10 splits
  (11 leaves), the boosting default of the MATLAB ``fitensemble`` the paper used.
* ``bag_tree``: bagging of fully grown CART trees on bootstrap replicates of size N.
* ``ada_svm`` / ``bag_svm``: the same two schemes with an L2-loss linear SVM (``LinearSVC``,
  squared hinge, C = λ = 2) as the base learner; AdaBoost passes its weights as sample weights.
  LIBLINEAR penalises the bias as an extra feature; ``intercept_scaling = 10`` makes that penalty
  negligible, closer to the unpenalised bias of L2-PSVM.

Bagging combines the members by majority vote, a tie going to the sign of the mean member score
(decision value for SVMs, class-1 probability − ½ for trees). One tie rule serves all four
ensembles, in :func:`break_exact_ties`: a decision value that is still exactly zero (a tie in the
votes and in the scores, as two fully grown trees that disagree) goes to ``classes_[1]``, the
package's sign(0) = +1, and is reported as the smallest positive double, so ``decision_function``
and ``predict`` agree whether a zero is read as positive (the package) or as negative
(scikit-learn's ``decision > 0``). All four are binary classifiers, like the paper's experiments.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
from sklearn.base import _fit_context
from sklearn.ensemble import AdaBoostClassifier, BaggingClassifier
from sklearn.svm import LinearSVC
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted, validate_data

from kernbench.methods.base import KernbenchClassifier
from kernbench.methods.registry import register


def break_exact_ties(dec: np.ndarray) -> np.ndarray:
    """The ensembles' one tie rule: a decision value exactly 0 becomes the smallest positive
    double (``classes_[1]``); every other value is kept.

    Parameters
    ----------
    dec : ndarray of shape (n,)
        Binary decision values.

    Returns
    -------
    ndarray of shape (n,)
        The same values, none of them zero.
    """
    return np.where(dec == 0.0, np.finfo(np.float64).tiny, dec)


class _WrappedEnsemble(KernbenchClassifier):
    """Fit a scikit-learn ensemble built by ``_make()`` and delegate predictions to it."""

    def _make(self) -> Any:
        raise NotImplementedError

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any) -> _WrappedEnsemble:
        """Fit the wrapped ensemble.

        Parameters
        ----------
        X : array-like of shape (N, M)
        y : array-like of shape (N,)

        Returns
        -------
        self
        """
        X, y, _ = self._check_training_data(X, y, binary_only=True)
        self.ensemble_ = self._make().fit(X, y)
        self.classes_ = self.ensemble_.classes_
        self.n_estimators_ = len(self.ensemble_.estimators_)
        self.model_size_ = self.n_estimators_
        return self

    def decision_function(self, X: Any) -> np.ndarray:
        """The wrapped ensemble's decision, shape (n,); positive ↔ ``classes_[1]``, never 0
        (:func:`break_exact_ties`)."""
        check_is_fitted(self, "ensemble_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return break_exact_ties(self._decision(X))

    def _decision(self, X: np.ndarray) -> np.ndarray:
        return self.ensemble_.decision_function(X)

    def predict(self, X: Any) -> np.ndarray:
        """The sign of the decision as labels (a full tie is ``classes_[1]``)."""
        return self._labels_from_decision(self.decision_function(X))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags


class _VotingBagging(_WrappedEnsemble):
    """Bagging combined by majority vote; a tie goes to the sign of the mean member decision,
    a tie in both to ``classes_[1]`` (:func:`break_exact_ties`)."""

    def _decision(self, X: np.ndarray) -> np.ndarray:
        n = len(self.ensemble_.estimators_)
        votes = np.zeros(X.shape[0])
        scores = np.zeros(X.shape[0])
        for est, features in zip(self.ensemble_.estimators_, self.ensemble_.estimators_features_):
            Xf = X[:, features]
            # members are fitted on encoded labels 0/1 (1 ↔ classes_[1])
            votes += np.where(est.predict(Xf) == 1, 1.0, -1.0)
            scores += self._member_score(est, Xf)
        # |votes|/n ≥ 1/n unless tied, and the tie-breaker stays below 1/(2n) in magnitude
        return votes / n + np.tanh(scores / n) / (2 * n)

    def _member_score(self, est: Any, X: np.ndarray) -> np.ndarray:
        raise NotImplementedError


def _linear_svm(lam: float, random_state: Any) -> LinearSVC:
    return LinearSVC(
        C=lam,
        loss="squared_hinge",
        intercept_scaling=10.0,
        max_iter=10000,
        random_state=random_state,
    )


@register("ada_tree")
class AdaTree(_WrappedEnsemble):
    """AdaBoost of small classification trees (scikit-learn ``AdaBoostClassifier``, SAMME).

    Parameters
    ----------
    n_estimators : int, default=10
        Boosting rounds (the paper's 10 or 30).
    max_leaf_nodes : int, default=11
        Leaves per tree (10 splits).
    random_state : int, RandomState instance or None, default=None

    Attributes
    ----------
    ensemble_ : AdaBoostClassifier
    classes_, n_estimators_ (rounds kept; fewer when boosting stopped early), model_size_

    See Also
    --------
    BagTree : bagging of fully grown trees.
    AdaSVM : AdaBoost of linear SVMs.
    AdaBoost : discrete AdaBoost with stumps or perceptrons.

    References
    ----------
    .. [1] X. Guo, X. Wang and H. Ling, "Exclusivity Regularized Machine: A New Ensemble SVM
       Classifier", Proc. Int. Joint Conf. on Artificial Intelligence (IJCAI), 2017:
       the AdaTree baseline of Sec. 4 (Tables 1-2).

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(n_samples=60, random_state=0)
    >>> from kernbench.methods import AdaTree
    >>> clf = AdaTree(n_estimators=5, random_state=0).fit(X, y)
    >>> clf.classes_
    array([0, 1])
    >>> clf.decision_function(X[:5]).shape
    (5,)
    >>> bool(clf.score(X, y) > 0.8)
    True
    """

    _parameter_constraints: ClassVar[dict] = {
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "max_leaf_nodes": [Interval(Integral, 2, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self, n_estimators: int = 10, max_leaf_nodes: int = 11, random_state: Any = None
    ) -> None:
        self.n_estimators = n_estimators
        self.max_leaf_nodes = max_leaf_nodes
        self.random_state = random_state

    def _make(self) -> AdaBoostClassifier:
        return AdaBoostClassifier(
            DecisionTreeClassifier(max_leaf_nodes=self.max_leaf_nodes),
            n_estimators=self.n_estimators,
            learning_rate=1.0,
            random_state=self.random_state,
        )


@register("bag_tree")
class BagTree(_VotingBagging):
    """Bagging of fully grown classification trees (scikit-learn ``BaggingClassifier``).

    Parameters
    ----------
    n_estimators : int, default=10
        Bootstrap replicates (the paper's 10 or 30).
    random_state : int, RandomState instance or None, default=None

    Attributes
    ----------
    ensemble_ : BaggingClassifier
    classes_, n_estimators_, model_size_

    See Also
    --------
    AdaTree : AdaBoost of small trees.
    BagSVM : bagging of linear SVMs.

    References
    ----------
    .. [1] X. Guo, X. Wang and H. Ling, "Exclusivity Regularized Machine: A New Ensemble SVM
       Classifier", Proc. Int. Joint Conf. on Artificial Intelligence (IJCAI), 2017:
       the BagTree baseline of Sec. 4 (Tables 1-2).
    .. [2] L. Breiman, "Bagging Predictors", Machine Learning 24(2), 1996.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(n_samples=60, random_state=0)
    >>> from kernbench.methods import BagTree
    >>> clf = BagTree(n_estimators=5, random_state=0).fit(X, y)
    >>> clf.classes_
    array([0, 1])
    >>> clf.decision_function(X[:5]).shape
    (5,)
    >>> bool(clf.score(X, y) > 0.8)
    True
    """

    _parameter_constraints: ClassVar[dict] = {
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, n_estimators: int = 10, random_state: Any = None) -> None:
        self.n_estimators = n_estimators
        self.random_state = random_state

    def _member_score(self, est: Any, X: np.ndarray) -> np.ndarray:
        return est.predict_proba(X)[:, -1] - 0.5

    def _make(self) -> BaggingClassifier:
        return BaggingClassifier(
            DecisionTreeClassifier(),
            n_estimators=self.n_estimators,
            bootstrap=True,
            random_state=self.random_state,
        )


@register("ada_svm")
class AdaSVM(_WrappedEnsemble):
    """AdaBoost (SAMME) of L2-loss linear SVMs trained with the boosting weights.

    Parameters
    ----------
    n_estimators : int, default=10
        Boosting rounds (the paper's 5, 10 or 30); boosting stops early when a member's weighted
        error reaches ½ or 0.
    lam : float, default=2.0
        λ (LIBLINEAR's C) of each L2-loss SVM.
    random_state : int, RandomState instance or None, default=None

    Attributes
    ----------
    ensemble_ : AdaBoostClassifier
    classes_, n_estimators_, model_size_

    See Also
    --------
    BagSVM : bagging of the same linear SVMs.
    AdaTree : AdaBoost of small trees.
    PSVM : one primal linear SVM.
    ExRM : an ensemble of linear SVMs under the exclusivity regulariser.

    References
    ----------
    .. [1] X. Guo, X. Wang and H. Ling, "Exclusivity Regularized Machine: A New Ensemble SVM
       Classifier", Proc. Int. Joint Conf. on Artificial Intelligence (IJCAI), 2017:
       the AdaSVM baseline of Sec. 4 (Tables 1-2).

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(n_samples=60, random_state=0)
    >>> from kernbench.methods import AdaSVM
    >>> clf = AdaSVM(n_estimators=5, random_state=0).fit(X, y)
    >>> clf.classes_
    array([0, 1])
    >>> clf.decision_function(X[:5]).shape
    (5,)
    >>> bool(clf.score(X, y) > 0.8)
    True
    """

    _parameter_constraints: ClassVar[dict] = {
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "lam": [Interval(Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
    }

    def __init__(self, n_estimators: int = 10, lam: float = 2.0, random_state: Any = None) -> None:
        self.n_estimators = n_estimators
        self.lam = lam
        self.random_state = random_state

    def _make(self) -> AdaBoostClassifier:
        return AdaBoostClassifier(
            _linear_svm(self.lam, self.random_state),
            n_estimators=self.n_estimators,
            learning_rate=1.0,
            random_state=self.random_state,
        )


@register("bag_svm")
class BagSVM(_VotingBagging):
    """Bagging of L2-loss linear SVMs, combined by majority vote.

    Parameters
    ----------
    n_estimators : int, default=10
        Bootstrap replicates (the paper's 5, 10 or 30).
    lam : float, default=2.0
        λ (LIBLINEAR's C) of each L2-loss SVM.
    random_state : int, RandomState instance or None, default=None

    Attributes
    ----------
    ensemble_ : BaggingClassifier
    classes_, n_estimators_, model_size_

    See Also
    --------
    AdaSVM : AdaBoost of the same linear SVMs.
    BagTree : bagging of fully grown trees.
    ExRM : an ensemble of linear SVMs under the exclusivity regulariser.

    References
    ----------
    .. [1] X. Guo, X. Wang and H. Ling, "Exclusivity Regularized Machine: A New Ensemble SVM
       Classifier", Proc. Int. Joint Conf. on Artificial Intelligence (IJCAI), 2017:
       the BagSVM baseline of Sec. 4 (Tables 1-2).

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(n_samples=60, random_state=0)
    >>> from kernbench.methods import BagSVM
    >>> clf = BagSVM(n_estimators=5, random_state=0).fit(X, y)
    >>> clf.classes_
    array([0, 1])
    >>> clf.decision_function(X[:5]).shape
    (5,)
    >>> bool(clf.score(X, y) > 0.8)
    True
    """

    _parameter_constraints: ClassVar[dict] = {
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "lam": [Interval(Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
    }

    def __init__(self, n_estimators: int = 10, lam: float = 2.0, random_state: Any = None) -> None:
        self.n_estimators = n_estimators
        self.lam = lam
        self.random_state = random_state

    def _member_score(self, est: Any, X: np.ndarray) -> np.ndarray:
        return est.decision_function(X)

    def _make(self) -> BaggingClassifier:
        return BaggingClassifier(
            _linear_svm(self.lam, self.random_state),
            n_estimators=self.n_estimators,
            bootstrap=True,
            random_state=self.random_state,
        )
