"""The compiled AdaBoost round updates are bitwise numpy's (sums, weights, α, picks, traces)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_classification

from kernbench.methods import AdaBoost
from kernbench.methods.adaboost import _SIGNS
from kernbench.solvers.adaboost_round import pairwise_sum, reweight, weighted_error
from kernbench.weak.stumps import StumpSpace


@pytest.mark.parametrize("seed", [0, 1])
def test_pairwise_sum_is_numpys_sum_bitwise(seed: int) -> None:
    rng = np.random.default_rng(seed)
    sizes = [*range(0, 300), 1000, 4999, 5000, 8191, 8192, 8193, 20_001]
    for n in sizes:
        a = rng.standard_normal(n) * 10.0 ** rng.uniform(-4, 4, n)  # wide range: rounding shows
        assert pairwise_sum(a) == a.sum(), n


def test_a_left_to_right_sum_would_differ() -> None:
    """The test above can fail: a naive sum disagrees with numpy's on such data."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal(5000) * 10.0 ** rng.uniform(-4, 4, 5000)
    assert float(np.cumsum(a)[-1]) != a.sum()


def _reference_round(d, y, h, F, y_pos):
    """The numpy formulation the kernels replace (kernbench ≤ this commit)."""
    yh = y * h
    eps = float(d[yh < 0].sum())
    alpha = 0.5 * np.log((1.0 - eps) / eps)
    d = d * np.exp(-alpha * yh)
    Z = float(d.sum())
    d /= Z
    F = F + alpha * h
    return eps, alpha, d, Z, F, np.count_nonzero((F >= 0) != y_pos)


@pytest.mark.parametrize("seed", range(5))
def test_weighted_error_and_reweight_are_the_numpy_round(seed: int) -> None:
    rng = np.random.default_rng(seed)
    m = int(rng.integers(50, 6000))
    y = rng.choice([-1.0, 1.0], m)
    h = rng.choice([-1.0, 0.0, 1.0], m, p=[0.45, 0.05, 0.5])  # a zero output too
    d = rng.random(m) ** 3
    d /= d.sum()
    F = rng.standard_normal(m)
    y_pos = y > 0
    eps, alpha, d_ref, Z_ref, F_ref, err_ref = _reference_round(d.copy(), y, h, F, y_pos)
    assert weighted_error(d, y, h, np.empty(m)) == eps
    down, up = np.exp(-alpha * _SIGNS)
    d_new, F_new = d.copy(), F.copy()
    Z, errors = reweight(d_new, y, h, up, down, F_new, alpha, y_pos)
    assert Z == Z_ref and errors == err_ref
    np.testing.assert_array_equal(d_new, d_ref)
    np.testing.assert_array_equal(F_new, F_ref)


def test_two_element_exp_is_the_long_vector_exp() -> None:
    """np.exp of (−α, α) gives the values numpy's exp gives inside a long ±α vector."""
    rng = np.random.default_rng(0)
    yh = rng.choice([-1.0, 1.0], 5003)
    for alpha in np.concatenate([rng.uniform(0, 12, 2000), [0.0, 1e-300, 0.5 * np.log(1e3)]]):
        long = np.exp(-alpha * yh)
        down, up = np.exp(-alpha * _SIGNS)
        assert np.all(long[yh > 0] == down) and np.all(long[yh < 0] == up)


def _reference_adaboost(X, y_pm, rounds):
    """The previous AdaBoost loop (numpy round updates) on the same stump oracle."""
    space = StumpSpace(X, include_constant=False)
    m = X.shape[0]
    d, F, y_pos = np.full(m, 1.0 / m), np.zeros(m), y_pm > 0
    picks, trace = [], []
    for _ in range(rounds):
        pick = space.best(d * y_pm, absolute=True)
        eps, alpha, d, Z, F, errors = _reference_round(d, y_pm, pick.column, F, y_pos)
        picks.append(pick.learner)
        trace.append((eps, float(alpha), Z, errors / m))
    return picks, trace, d


@pytest.mark.parametrize("seed", [0, 1])
def test_adaboost_path_is_the_numpy_rounds_bitwise(seed: int) -> None:
    X, y = make_classification(600, 8, n_informative=4, flip_y=0.1, random_state=seed)
    X[:, 3] = np.round(X[:, 3], 1)  # ties
    rounds = 120
    est = AdaBoost(n_estimators=rounds).fit(X, y)
    picks, trace, d = _reference_adaboost(X, 2.0 * y - 1.0, rounds)
    assert est.n_iter_ == rounds
    assert est.weak_learners_ == picks
    got = list(
        zip(
            est.trace_["weighted_error"],
            est.trace_["alpha"],
            est.trace_["Z"],
            est.trace_["train_error"],
            strict=True,
        )
    )
    assert got == trace
    np.testing.assert_array_equal(est.sample_weight_, d)
