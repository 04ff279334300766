"""AdaBoost.ECC invariants (docs/methods/adaboost.md): optimal leaves vs scipy, ΣD = 1, and K = 2
equals a Real AdaBoost with two-leaf stumps written here from scratch."""

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.datasets import load_iris

from kernbench.methods.adaboost_ecc import AdaBoostECC, balanced_colouring, leaf_confidences


@pytest.mark.parametrize("seed", range(5))
def test_leaf_confidences_minimise_z(seed):
    rng = np.random.default_rng(seed)
    m = 40
    h = rng.choice([-1.0, 1.0], m)
    y_t = np.where(rng.random(m) < 0.5 + 0.3 * h, 1.0, -1.0)  # correlated with h
    d = rng.random(m)
    d /= d.sum()

    def Z(ab):
        g = np.where(h > 0, ab[0], -ab[1])
        return float(np.sum(d * np.exp(-y_t * g)))

    alpha, beta = leaf_confidences(h, y_t, d, delta=0.0)
    ref = minimize(Z, x0=np.zeros(2), method="BFGS", options={"gtol": 1e-12})
    assert Z([alpha, beta]) <= ref.fun + 1e-12
    np.testing.assert_allclose([alpha, beta], ref.x, atol=1e-5)
    # the minimum is Σ_s 2√(W_{s,+} W_{s,−})
    W = {(s, c): d[(h == s) & (y_t == c)].sum() for s in (-1.0, 1.0) for c in (-1.0, 1.0)}
    z_min = 2 * np.sqrt(W[1, 1] * W[1, -1]) + 2 * np.sqrt(W[-1, 1] * W[-1, -1])
    assert Z([alpha, beta]) == pytest.approx(z_min, rel=1e-12)


def test_empty_and_pure_leaves_are_finite():
    h = np.ones(4)
    y_t = np.array([1.0, 1.0, -1.0, 1.0])
    d = np.full(4, 0.25)
    alpha, beta = leaf_confidences(h, y_t, d, delta=0.0)
    assert beta == 0.0  # no point on the −1 leaf
    assert alpha == pytest.approx(0.5 * np.log(3.0))
    alpha, _ = leaf_confidences(h, np.ones(4), d, delta=0.0)
    assert np.isfinite(alpha) and alpha > 5


def test_balanced_colouring():
    rng = np.random.default_rng(0)
    for K in range(2, 9):
        for _ in range(5):
            mu = balanced_colouring(K, rng)
            assert set(np.unique(mu)) == {-1.0, 1.0}
            assert (mu > 0).sum() == (K + 1) // 2


def test_distribution_stays_normalised_on_wrong_labels():
    X, y = load_iris(return_X_y=True)
    est = AdaBoostECC(n_estimators=40, random_state=0).fit(X, y)
    D = est.sample_weight_
    assert D.sum() == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_array_equal(D[np.arange(len(y)), y], 0.0)
    assert est.n_iter_ == est.model_size_ == 40
    assert np.all(np.abs(est.colourings_.sum(axis=1)) <= 1)
    staged = list(est.staged_decision_function(X))
    np.testing.assert_allclose(staged[-1], est.decision_function(X))
    assert np.mean(est.predict(X) != y) < 0.06
    np.testing.assert_allclose(np.cumprod(est.trace_["z"]), est.trace_["objective"])


def test_random_state_reproducible_and_seed_dependent():
    X, y = load_iris(return_X_y=True)
    a = AdaBoostECC(n_estimators=15, random_state=3).fit(X, y)
    b = AdaBoostECC(n_estimators=15, random_state=3).fit(X, y)
    c = AdaBoostECC(n_estimators=15, random_state=4).fit(X, y)
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
    assert not np.array_equal(a.colourings_, c.colourings_)


def test_discrete_option_uses_the_weighted_error():
    X, y = load_iris(return_X_y=True)
    est = AdaBoostECC(n_estimators=20, ecc_discrete=True, random_state=1).fit(X, y)
    eps = np.array(est.trace_["weighted_error"])
    a = 0.5 * np.log((1 - eps + 1e-10) / (eps + 1e-10))
    np.testing.assert_allclose(est.leaf_values_[:, 0], a)
    np.testing.assert_allclose(est.leaf_values_[:, 1], -a)


def _real_adaboost(X, y_pm, T, delta):
    """Real AdaBoost (Schapire & Singer) with two-leaf stumps, stump by maximum |edge|.

    Candidates in the order constant, then per feature ascending midpoints; the first candidate
    within a rounding tolerance of the best |edge| wins.
    """
    m, D = X.shape
    cols = [np.ones(m)]
    for d in range(D):
        v = np.unique(X[:, d])
        cols += [np.where(X[:, d] >= t, 1.0, -1.0) for t in (v[:-1] + v[1:]) / 2]
    cols = np.array(cols)
    d_w = np.full(m, 1.0 / m)
    F, staged = np.zeros(m), []
    for _ in range(T):
        edge = np.abs(cols @ (d_w * y_pm))
        j = int(np.flatnonzero(edge >= edge.max() - 1e-9 * np.abs(d_w).sum())[0])
        h = cols[j]
        leaf = {}
        for s in (1.0, -1.0):
            w_pos = d_w[(h == s) & (y_pm > 0)].sum()
            w_neg = d_w[(h == s) & (y_pm < 0)].sum()
            leaf[s] = 0.0 if w_pos + w_neg == 0 else 0.5 * np.log((w_pos + delta) / (w_neg + delta))
        g = np.where(h > 0, leaf[1.0], leaf[-1.0])
        d_w = d_w * np.exp(-y_pm * g)
        d_w /= d_w.sum()
        F = F + g
        staged.append(F.copy())
    return staged


@pytest.mark.parametrize("seed", [0, 1])
def test_two_classes_equals_real_adaboost(seed):
    rng = np.random.default_rng(seed)
    m, T = 60, 25
    X = rng.normal(size=(m, 3))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.7 * rng.normal(size=m) > 0.5, "pos", "neg")
    est = AdaBoostECC(n_estimators=T, random_state=seed).fit(X, y)
    delta = 1.0 / (m * 2)
    # μ = (+1, −1) on classes_ = ["neg", "pos"]: ỹ = +1 for "neg"; either colouring gives the same F
    y_pm = np.where(y == est.classes_[0], 1.0, -1.0)
    ref = _real_adaboost(X, y_pm, T, delta)
    ours = list(est.staged_decision_function(X))
    assert len(ours) == T
    for F_ecc, F_real in zip(ours, ref):
        # binary decision = score(classes_[1]) − score(classes_[0]) = −2 F_real
        np.testing.assert_allclose(F_ecc, -2.0 * F_real, rtol=1e-9, atol=1e-9)
