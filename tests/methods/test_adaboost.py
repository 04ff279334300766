"""AdaBoost against an independent reference and its invariants (docs/methods/adaboost.md)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.ensemble import AdaBoostClassifier
from sklearn.tree import DecisionTreeClassifier

from kernbench.methods import AdaBoost, get_method
from kernbench.methods import adaboost as adaboost_module
from kernbench.weak.base import Pick
from kernbench.weak.stumps import Stump


def data(seed: int = 0, m: int = 120, D: int = 5, flip: float = 0.1):
    X, y = make_classification(
        n_samples=m, n_features=D, n_informative=3, flip_y=flip, random_state=seed
    )
    return X, y


def reference_adaboost(X: np.ndarray, y01: np.ndarray, T: int) -> tuple[np.ndarray, np.ndarray]:
    """Textbook discrete AdaBoost over an explicit stump matrix (thresholds at data values).

    Uses the closed-form update d_i/(2ε) (mistakes), d_i/(2(1 − ε)) (hits), not the exp form.
    Returns the α sequence and the training decision values.
    """
    y = 2.0 * y01 - 1.0
    m = X.shape[0]
    cols = [np.ones(m)]
    for j in range(X.shape[1]):
        for t in np.unique(X[:, j])[1:]:
            cols.append(np.where(X[:, j] >= t, 1.0, -1.0))
    H = np.column_stack(cols)
    d = np.full(m, 1.0 / m)
    F = np.zeros(m)
    alphas = []
    for _ in range(T):
        edges = (d * y) @ H
        j = int(np.argmax(np.abs(edges)))
        h = np.sign(edges[j]) * H[:, j]
        eps = d[h != y].sum()
        if eps >= 0.5:
            break
        alpha = 0.5 * np.log((1 - eps) / eps)
        d = np.where(h != y, d / (2 * eps), d / (2 * (1 - eps)))
        alphas.append(alpha)
        F += alpha * h
    return np.array(alphas), F


@pytest.mark.parametrize("seed", range(3))
def test_matches_textbook_reference(seed: int) -> None:
    X, y = data(seed)
    T = 40
    alphas, F = reference_adaboost(X, y, T)
    est = AdaBoost(T).fit(X, y)
    np.testing.assert_allclose(est.estimator_weights_, alphas, rtol=1e-9)
    np.testing.assert_allclose(est.decision_function(X), F, rtol=1e-9, atol=1e-9)


def test_weight_invariants_per_round() -> None:
    """Σ d = 1, and the weighted error of h_t under d_{t+1} is exactly ½."""
    X, y = data(1)
    y_pm = 2.0 * y - 1.0
    full = AdaBoost(12).fit(X, y)
    for t in range(1, 13):
        est = AdaBoost(t).fit(X, y)
        d_next = est.sample_weight_
        assert d_next.sum() == pytest.approx(1.0, abs=1e-14)
        assert np.all(d_next > 0)
        h_t = est.weak_learners_[-1].predict(X)
        assert d_next[h_t != y_pm].sum() == pytest.approx(0.5, abs=1e-13)
        assert est.weak_learners_ == full.weak_learners_[:t]  # a fit with T' is a prefix
        # ε_t recomputed from d_t (the weights before round t) matches the trace
        d_t = AdaBoost(t - 1).fit(X, y).sample_weight_ if t > 1 else np.full(len(y), 1 / len(y))
        assert full.trace_["weighted_error"][t - 1] == pytest.approx(
            d_t[h_t != y_pm].sum(), abs=1e-14
        )


def test_training_error_bound_and_trace() -> None:
    """train error after t rounds ≤ Π_s 2√(ε_s(1 − ε_s))."""
    X, y = data(2, flip=0.2)
    est = AdaBoost(60).fit(X, y)
    eps = np.array(est.trace_["weighted_error"])
    Z = 2 * np.sqrt(eps * (1 - eps))
    np.testing.assert_allclose(est.trace_["Z"], Z, rtol=1e-12)
    np.testing.assert_allclose(est.trace_["edge"], 1 - 2 * eps, rtol=1e-12)
    np.testing.assert_allclose(est.trace_["alpha"], 0.5 * np.log((1 - eps) / eps), rtol=1e-12)
    bound = np.cumprod(Z)
    assert np.all(np.array(est.trace_["train_error"]) <= bound + 1e-12)
    assert bound[-1] < 0.9  # the bound is not vacuous here
    y_pm = 2 * y - 1
    errors = [np.mean(np.where(F >= 0, 1, -1) != y_pm) for F in est.staged_decision_function(X)]
    np.testing.assert_allclose(est.trace_["train_error"], errors)
    assert all(len(v) == est.n_iter_ for v in est.trace_.values())
    assert np.all(np.diff(est.trace_["time_s"]) >= 0)


def test_staged_equals_final_and_refits() -> None:
    X, y = data(3)
    Xt, _ = data(4)
    est = AdaBoost(300).fit(X, y)  # more than one staging block
    assert est.n_iter_ == 300 and est.model_size_ == 300
    staged = list(est.staged_decision_function(Xt))
    assert len(staged) == 300
    np.testing.assert_allclose(staged[-1], est.decision_function(Xt), rtol=1e-10, atol=1e-10)
    for t in (1, 7, 256, 257):
        np.testing.assert_allclose(
            staged[t - 1], AdaBoost(t).fit(X, y).decision_function(Xt), rtol=1e-10, atol=1e-10
        )
    preds = list(est.staged_predict(Xt))
    np.testing.assert_array_equal(preds[-1], est.predict(Xt))


def test_deterministic() -> None:
    X, y = data(5)
    a, b = AdaBoost(30).fit(X, y), AdaBoost(30).fit(X, y)
    assert a.weak_learners_ == b.weak_learners_
    np.testing.assert_array_equal(a.estimator_weights_, b.estimator_weights_)


def test_each_round_beats_a_weighted_sklearn_stump() -> None:
    """Under the same weights d_t, sklearn's depth-1 tree (Gini split) never has a smaller weighted
    error than our stump (the exact minimiser); where it picks the same column the errors agree."""
    X, y = data(8, m=300, D=6)
    y_pm = 2.0 * y - 1
    est = AdaBoost(40).fit(X, y)
    d = np.full(len(y), 1 / len(y))
    n_same = 0
    for h, alpha, eps in zip(
        est.weak_learners_, est.estimator_weights_, est.trace_["weighted_error"]
    ):
        h_ours = h.predict(X)
        tree = DecisionTreeClassifier(max_depth=1).fit(X, y, sample_weight=d)
        h_tree = 2.0 * tree.predict(X) - 1
        eps_tree = d[h_tree != y_pm].sum()
        assert eps <= eps_tree + 1e-12
        if np.array_equal(h_tree, h_ours):
            assert eps == pytest.approx(eps_tree, rel=1e-12)
            n_same += 1
        d = d * np.exp(-alpha * y_pm * h_ours)
        d /= d.sum()
    assert 0 < n_same < est.n_iter_  # both branches above were exercised


def test_training_error_close_to_sklearn_samme() -> None:
    """AdaBoost-Stump vs sklearn's AdaBoostClassifier(depth-1 tree) (SAMME, learning_rate=1, which
    for two classes is discrete AdaBoost with α doubled): the split rules differ (weighted error vs
    Gini), so the runs diverge, but the training errors stay close and ours is not worse on
    average."""
    T = 100
    ours, theirs = [], []
    for seed in range(3):
        X, y = make_classification(
            n_samples=400, n_features=8, n_informative=4, flip_y=0.05, random_state=seed
        )
        sk = AdaBoostClassifier(DecisionTreeClassifier(max_depth=1), n_estimators=T).fit(X, y)
        ours.append(np.mean(AdaBoost(T).fit(X, y).predict(X) != y))
        theirs.append(np.mean(sk.predict(X) != y))
        # first round: same (uniform) weights, ours is the exact minimiser
        first = AdaBoost(1).fit(X, y).trace_["weighted_error"][0]
        assert first <= sk.estimator_errors_[0] + 1e-15
    assert np.all(np.abs(np.array(ours) - np.array(theirs)) <= 0.06)
    assert np.mean(ours) <= np.mean(theirs) + 0.01


def test_labels_any_two_values_positive_is_classes_1() -> None:
    X, y = data(6)
    labels = np.array(["no", "yes"])[y]
    est = AdaBoost(20).fit(X, labels)
    np.testing.assert_array_equal(est.classes_, ["no", "yes"])
    dec = est.decision_function(X)
    np.testing.assert_array_equal(est.predict(X), np.where(dec >= 0, "yes", "no"))
    flipped = AdaBoost(20).fit(X, np.array([-5, 3])[y])
    np.testing.assert_allclose(flipped.decision_function(X), dec)


def test_binary_only_and_one_class_errors() -> None:
    X = np.random.default_rng(0).normal(size=(30, 3))
    with pytest.raises(ValueError, match="Only binary classification is supported"):
        AdaBoost(5).fit(X, np.arange(30) % 3)
    with pytest.raises(ValueError, match="class"):
        AdaBoost(5).fit(X, np.ones(30))


def test_zero_error_stops_with_smoothed_alpha() -> None:
    X = np.array([[0.0, 5.0], [1.0, 3.0], [2.0, 9.0], [3.0, 1.0]])
    y = np.array([0, 0, 1, 1])
    est = AdaBoost(10).fit(X, y)
    assert est.n_iter_ == 1 and est.stop_reason_ == "zero_error"
    assert est.weak_learners_[0] == Stump(0, 1.5, 1)
    delta = adaboost_module.ZERO_ERROR_DELTA
    assert est.estimator_weights_[0] == pytest.approx(0.5 * np.log((1 + delta) / delta))
    np.testing.assert_array_equal(est.predict(X), y)


def test_no_edge_stops_before_first_learner() -> None:
    X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    y = np.array([0, 1, 1, 0])  # XOR: every stump and the constant have edge 0
    est = AdaBoost(10).fit(X, y)
    assert est.n_iter_ == 0 and est.stop_reason_ == "no_edge"
    np.testing.assert_array_equal(est.decision_function(X), np.zeros(4))
    assert list(est.staged_decision_function(X)) == []
    np.testing.assert_array_equal(est.predict(X), [1, 1, 1, 1])  # sign(0) = +1 -> classes_[1]


class _Negated:
    """A non-Stump learner (forces the generic prediction path)."""

    def __init__(self, stump: Stump) -> None:
        self.stump = stump

    def predict(self, X: np.ndarray) -> np.ndarray:
        return -self.stump.predict(X)


class _ExplicitSpace:
    """Brute-force space over an explicit list of learners (both polarities via _Negated)."""

    def __init__(self, X: np.ndarray) -> None:
        self.learners = []
        for j in range(X.shape[1]):
            for t in np.unique(X[:, j])[1:]:
                self.learners += [Stump(j, float(t), 1), _Negated(Stump(j, float(t), 1))]
        self.learners.append(Stump(0, -np.inf, 1))
        self.learners.append(_Negated(Stump(0, -np.inf, 1)))
        self.H = np.column_stack([h.predict(X) for h in self.learners])

    def best(self, g, *, absolute=False, exclude=None, rng=None) -> Pick:
        j = int(np.argmax(g @ self.H))
        return Pick(self.learners[j], self.H[:, j], float(g @ self.H[:, j]))


def test_weak_learner_hook(monkeypatch: pytest.MonkeyPatch) -> None:
    """A space plugged in through WEAK_LEARNER_SPACES drives the same algorithm."""
    X, y = data(7)
    monkeypatch.setitem(
        adaboost_module.WEAK_LEARNER_SPACES, "stump", lambda est, X, rng: _ExplicitSpace(X)
    )
    est = AdaBoost(25).fit(X, y)
    assert any(isinstance(h, _Negated) for h in est.weak_learners_)
    alphas, F = reference_adaboost(X, y, 25)
    np.testing.assert_allclose(est.estimator_weights_, alphas, rtol=1e-9)
    np.testing.assert_allclose(est.decision_function(X), F, rtol=1e-9, atol=1e-9)
    staged = list(est.staged_decision_function(X))
    np.testing.assert_allclose(staged[-1], F, rtol=1e-9, atol=1e-9)


def test_registered() -> None:
    assert get_method("adaboost") is AdaBoost
    assert AdaBoost.path_param == "n_estimators"
    with pytest.raises(ValueError, match="weak_learner"):
        AdaBoost(weak_learner="tree").fit(*data(0))


def test_feature_usage_is_the_share_of_rounds_splitting_on_each_feature() -> None:
    X, y = make_classification(n_samples=120, n_features=5, n_informative=2, random_state=3)
    clf = AdaBoost(n_estimators=30).fit(X, y)
    counts = np.zeros(5)
    for h in clf.weak_learners_:
        if np.isfinite(h.threshold):
            counts[h.feature] += 1
    np.testing.assert_allclose(clf.feature_usage_, counts / clf.n_iter_)
    assert clf.feature_usage_.sum() > 0.5  # informative features get used
    perc = AdaBoost(n_estimators=3, weak_learner="perceptron", max_run=20, random_state=0)
    assert perc.fit(X, y).feature_usage_ is None  # undefined for perceptrons


def test_zero_error_continue_follows_lemga_equal_weights_and_unchanged_distribution() -> None:
    rng = np.random.default_rng(5)
    X = rng.normal(size=(60, 3))
    y = (X @ np.array([1.0, -2.0, 0.5]) > 0).astype(int)  # linearly separable
    kw = dict(weak_learner="perceptron", max_run=300, random_state=2)
    stop = AdaBoost(8, **kw).fit(X, y)
    assert stop.stop_reason_ == "zero_error" and stop.n_iter_ == 1
    cont = AdaBoost(8, zero_error="continue", **kw).fit(X, y)
    assert cont.n_iter_ == 8 and cont.stop_reason_ == "max_iter"
    zero = np.asarray(cont.trace_["weighted_error"]) == 0.0
    assert zero.all()  # RCD separates these points every round
    np.testing.assert_allclose(cont.estimator_weights_, 0.5 * np.log(1000.0))  # LEMGA's β = 1000
    np.testing.assert_allclose(cont.sample_weight_, np.full(60, 1 / 60))  # d never moved
    # the ensemble is the equal-weight vote of its perceptrons, and they differ (random RCD)
    votes = np.column_stack([h.predict(X) for h in cont.weak_learners_])
    Xt = rng.normal(size=(200, 3))
    vt = np.column_stack([h.predict(Xt) for h in cont.weak_learners_])
    np.testing.assert_allclose(cont.decision_function(Xt), 0.5 * np.log(1000.0) * vt.sum(axis=1))
    assert (votes == votes[:, :1]).all() and not (vt == vt[:, :1]).all()
    np.testing.assert_array_equal(cont.predict(X), y)


@pytest.mark.parametrize(("max_bins", "m", "D"), [(None, 4000, 40), (64, 20_000, 8)])
def test_the_model_is_the_same_at_one_and_two_threads(max_bins, m, D) -> None:
    from kernbench.weak.stumps import StumpSpace

    X, y = data(seed=3, m=m, D=D, flip=0.2)
    # the search really is split in two: blocks of features (exact), chunks of rows (binned)
    assert StumpSpace(X, include_constant=True, max_bins=max_bins, n_threads=2)._blocks == 2
    one = AdaBoost(30, max_bins=max_bins, n_jobs=1).fit(X, y)
    two = AdaBoost(30, max_bins=max_bins, n_jobs=2).fit(X, y)
    assert one.weak_learners_ == two.weak_learners_
    np.testing.assert_array_equal(one.estimator_weights_, two.estimator_weights_)
    np.testing.assert_array_equal(one.decision_function(X), two.decision_function(X))


def test_the_default_search_is_binned_on_large_training_sets_only() -> None:
    from kernbench.weak.stumps import AUTO_BINNED_ROWS, AUTO_MAX_BINS

    X, y = data(seed=4, m=AUTO_BINNED_ROWS, D=5, flip=0.2)
    default = AdaBoost(5).fit(X, y)
    assert default.weak_learners_ == AdaBoost(5, max_bins=AUTO_MAX_BINS).fit(X, y).weak_learners_
    small = AdaBoost(5).fit(X[:500], y[:500])
    assert small.weak_learners_ == AdaBoost(5, max_bins=None).fit(X[:500], y[:500]).weak_learners_
