"""AdaBoost.MH invariants (docs/methods/adaboost.md): brute-force stump search, Z_t = √(1 − r²), ΣD
= 1, Hamming loss ≤ Π Z_t."""

import itertools

import numpy as np
import pytest
from sklearn.datasets import load_iris

from kernbench.methods.adaboost_mh import AdaBoostMH, factorised_stump_search
from kernbench.weak.stumps import StumpSpace


def _brute_force_best_edge(X, DY):
    """max over (feature, threshold or constant, votes v ∈ {±1}^K) of Σ_iℓ DY_iℓ v_ℓ φ(x_i)."""
    m, D = X.shape
    K = DY.shape[1]
    columns = [np.ones(m)]  # the constant stump
    for d in range(D):
        v = np.unique(X[:, d])
        for t in (v[:-1] + v[1:]) / 2:
            columns.append(np.where(X[:, d] >= t, 1.0, -1.0))
    best = -np.inf
    for phi in columns:
        for votes in itertools.product([-1.0, 1.0], repeat=K):
            best = max(best, float(np.sum(DY * np.outer(phi, votes))))
    return best


@pytest.mark.parametrize("seed", range(4))
def test_factorised_search_equals_brute_force(seed):
    rng = np.random.default_rng(seed)
    m, D, K = 18, 3, 3
    X = rng.normal(size=(m, D)).round(1)  # rounding creates tied feature values
    y = rng.integers(0, K, m)
    Y = -np.ones((m, K))
    Y[np.arange(m), y] = 1.0
    W = rng.random((m, K))
    W /= W.sum()
    space = StumpSpace(X, include_constant=True)
    index, gamma, r = factorised_stump_search(space, W * Y)
    assert r == pytest.approx(_brute_force_best_edge(X, W * Y), rel=1e-12)
    phi = space.column(index)
    np.testing.assert_allclose(gamma, (W * Y * phi[:, None]).sum(axis=0), atol=1e-14)


@pytest.fixture(scope="module")
def iris_fit():
    X, y = load_iris(return_X_y=True)
    rng = np.random.default_rng(0)
    X = X + 0.01 * rng.normal(size=X.shape)  # not separable by one stump
    return X, y, AdaBoostMH(n_estimators=60).fit(X, y)


def test_normaliser_distribution_and_hamming_bound(iris_fit):
    X, y, est = iris_fit
    r = np.array(est.trace_["edge"])
    z = np.array(est.trace_["z"])
    np.testing.assert_allclose(z, np.sqrt(1.0 - r**2), rtol=1e-10)  # Z_t = √(1 − r_t²)
    assert est.sample_weight_.sum() == pytest.approx(1.0, abs=1e-12)  # Σ D = 1
    assert np.all(est.sample_weight_ > 0)
    np.testing.assert_allclose(est.alphas_, 0.5 * np.log((1 + r) / (1 - r)))
    K = est.classes_.size
    Y = -np.ones((X.shape[0], K))
    Y[np.arange(X.shape[0]), np.searchsorted(est.classes_, y)] = 1.0
    bound = np.cumprod(z)
    np.testing.assert_allclose(est.trace_["objective"], bound)
    for t, F in enumerate(est.staged_decision_function(X)):
        hamming = np.mean(Y * F <= 0)  # zero scores counted as mistakes
        assert hamming <= bound[t] + 1e-12
        assert hamming == pytest.approx(est.trace_["hamming_loss"][t])
    assert bound[-1] < 0.5


def test_distribution_update_equals_exponential_loss_of_F(iris_fit):
    # D_{T+1}(i, ℓ) ∝ exp(−Y_iℓ F(x_i, ℓ)): the stage-wise update is the exponential loss of F
    X, y, est = iris_fit
    F = est.decision_function(X)
    Y = -np.ones_like(F)
    Y[np.arange(X.shape[0]), np.searchsorted(est.classes_, y)] = 1.0
    expected = np.exp(-Y * F)
    np.testing.assert_allclose(est.sample_weight_, expected / expected.sum(), rtol=1e-9)


def test_staged_path_and_prediction(iris_fit):
    X, y, est = iris_fit
    staged = list(est.staged_decision_function(X))
    assert len(staged) == est.n_iter_ == est.model_size_ == 60
    np.testing.assert_allclose(staged[-1], est.decision_function(X))
    assert np.mean(est.predict(X) != y) == pytest.approx(est.trace_["train_error"][-1])
    assert est.trace_["train_error"][-1] < 0.05
    assert len(est.trace_["time_s"]) == 60 and np.all(np.diff(est.trace_["time_s"]) >= 0)


def test_binary_perfect_stump_stops_and_decision_is_one_dimensional():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array(["a", "a", "b", "b"])
    est = AdaBoostMH(n_estimators=10).fit(X, y)
    assert est.stop_reason_ == "zero_error" and est.n_iter_ == 1
    dec = est.decision_function(X)
    assert dec.shape == (4,)
    np.testing.assert_array_equal(np.sign(dec), [-1, -1, 1, 1])  # positive ↔ classes_[1]
    np.testing.assert_array_equal(est.predict(X), y)
