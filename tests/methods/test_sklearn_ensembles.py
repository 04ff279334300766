"""ada_tree / bag_tree / ada_svm / bag_svm: thin wrappers that agree with scikit-learn's own."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.ensemble import AdaBoostClassifier, BaggingClassifier
from sklearn.svm import LinearSVC
from sklearn.tree import DecisionTreeClassifier

from kernbench.methods import AdaSVM, AdaTree, BagSVM, BagTree


def _data(N: int = 150, M: int = 6, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, M))
    y = np.where(X[:, 0] * X[:, 1] + 0.5 * X[:, 2] + 0.3 * rng.standard_normal(N) > 0, "a", "b")
    return X, y


def test_ada_tree_is_sklearn_adaboost() -> None:
    X, y = _data()
    ours = AdaTree(n_estimators=10, random_state=3).fit(X, y)
    ref = AdaBoostClassifier(
        DecisionTreeClassifier(max_leaf_nodes=11), n_estimators=10, random_state=3
    ).fit(X, y)
    np.testing.assert_allclose(ours.decision_function(X), ref.decision_function(X))
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    assert ours.model_size_ == 10


def test_ada_svm_base_is_the_l2_loss_svm() -> None:
    X, y = _data(seed=1)
    ours = AdaSVM(n_estimators=5, lam=2.0, random_state=0).fit(X, y)
    first = ours.ensemble_.estimators_[0]
    assert isinstance(first, LinearSVC)
    assert first.C == 2.0 and first.loss == "squared_hinge"
    assert 1 <= ours.n_estimators_ <= 5


@pytest.mark.parametrize("cls", [BagTree, BagSVM])
def test_bagging_is_a_majority_vote_of_the_members(cls: type) -> None:
    X, y = _data(seed=2)
    ours = cls(n_estimators=7, random_state=1).fit(X, y)  # odd: no ties
    members = np.array([est.predict(X) for est in ours.ensemble_.estimators_])
    majority = np.where(members.mean(axis=0) > 0.5, "b", "a")
    np.testing.assert_array_equal(ours.predict(X), majority)
    ref = BaggingClassifier(ours.ensemble_.estimator, n_estimators=7, random_state=1).fit(X, y)
    for a, b in zip(ours.ensemble_.estimators_, ref.estimators_):
        np.testing.assert_array_equal(a.predict(X), b.predict(X))


def test_bagging_tie_goes_to_the_mean_score() -> None:
    X, y = _data(seed=3)
    ours = BagSVM(n_estimators=2, random_state=0).fit(X, y)
    scores = np.array([est.decision_function(X) for est in ours.ensemble_.estimators_])
    votes = np.sign(scores).sum(axis=0)
    tie = votes == 0
    assert tie.any()
    expected = np.where(scores.mean(axis=0)[tie] >= 0, "b", "a")
    np.testing.assert_array_equal(ours.predict(X)[tie], expected)


def test_multiclass_is_refused() -> None:
    X, _ = _data()
    with pytest.raises(ValueError, match="binary"):
        BagTree().fit(X, np.arange(len(X)) % 3)


@pytest.mark.parametrize("cls", [BagTree, BagSVM, AdaTree, AdaSVM])
def test_a_full_tie_is_one_class_for_predict_and_decision_function(cls: type) -> None:
    """Two fully grown trees that disagree tie in votes and in scores: the decision is then the
    smallest positive double, so predict (sign(0) = +1) and scikit-learn's reading of the
    decision (> 0 ↔ classes_[1]) name the same class on every point."""
    X, y = _data(seed=4)
    ours = cls(n_estimators=2, random_state=0).fit(X, y)
    Xt = np.random.default_rng(5).standard_normal((400, X.shape[1]))
    dec = ours.decision_function(Xt)
    assert np.all(dec != 0)
    np.testing.assert_array_equal(ours.predict(Xt), ours.classes_[(dec > 0).astype(int)])
    if cls is BagTree:  # full ties do occur, and go to classes_[1]
        members = np.array([est.predict(Xt) for est in ours.ensemble_.estimators_])
        tie = members.sum(axis=0) == 1
        assert tie.any()
        np.testing.assert_array_equal(dec[tie], np.finfo(np.float64).tiny)
        assert np.all(ours.predict(Xt)[tie] == ours.classes_[1])
