"""Kernel columns: the σ rule, lazy cached columns and blockwise scores against dense Grams."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from kernbench.weak.kernel_columns import (
    KernelColumnSpace,
    make_kernel,
    mean_squared_distance,
)


@pytest.fixture
def X() -> np.ndarray:
    return np.random.default_rng(0).standard_normal((37, 4))


def test_sigma_is_the_mean_squared_pairwise_distance(X: np.ndarray) -> None:
    brute = float((cdist(X, X, "sqeuclidean")).mean())
    assert mean_squared_distance(X) == pytest.approx(brute, rel=1e-12)
    Z = (X - X.mean(0)) / X.std(0)  # population statistics on the same sample: σ = 2d
    assert mean_squared_distance(Z) == pytest.approx(2 * X.shape[1], rel=1e-12)
    assert make_kernel("rbf", Z).sigma == pytest.approx(8.0, rel=1e-12)


def test_builtin_and_user_kernels_match_closed_forms(X: np.ndarray) -> None:
    B = X[:5]
    s = mean_squared_distance(X)
    expected = {
        "linear": X @ B.T,
        "quadratic": (X @ B.T + 1.0) ** 2,
        "rbf": np.exp(-cdist(X, B, "sqeuclidean") / s),
    }
    for name, K in expected.items():
        np.testing.assert_allclose(make_kernel(name, X)(X, B), K, rtol=1e-12, atol=1e-12)
    lap = make_kernel(("laplace", lambda A, C: np.exp(-cdist(A, C, "cityblock"))), X)
    assert lap.name == "laplace"
    np.testing.assert_allclose(lap(X, B), np.exp(-cdist(X, B, "cityblock")))
    with pytest.raises(ValueError, match="unknown kernel"):
        make_kernel("sigmoid", X)


@pytest.mark.parametrize("cache_bytes", [512 * 2**20, 8 * 37 * 3])  # dense cache, tiny LRU
def test_scores_and_columns_equal_the_dense_gram(X: np.ndarray, cache_bytes: int) -> None:
    kernels = [make_kernel(k, X) for k in ("linear", "quadratic", "rbf")]
    space = KernelColumnSpace(X, kernels, constant=True, cache_bytes=cache_bytes, block=4)
    g = np.random.default_rng(1).standard_normal(X.shape[0])
    assert space.group_names == ["constant", "linear", "quadratic", "rbf"]
    idx = np.array([3, 0, 36, 3, 17])
    np.testing.assert_allclose(space.scores(0, g, np.array([0])), [g.sum()])
    for p, k in enumerate(kernels, start=1):
        K = k(X, X)
        for _ in range(2):  # the second pass reads the cache
            np.testing.assert_allclose(space.columns(p, idx), K[:, idx], rtol=1e-12)
            np.testing.assert_allclose(space.scores(p, g, idx), g @ K[:, idx], rtol=1e-10)
    assert space.n_evaluated == 1 + 3 * 2 * idx.size
    if cache_bytes > 2**20:  # each distinct column computed once
        assert space.n_computed == 3 * 4
    else:
        assert space.n_computed > 3 * 4


def test_composite_group_is_the_kernel_sum(X: np.ndarray) -> None:
    kernels = [make_kernel(k, X) for k in ("linear", "rbf")]
    space = KernelColumnSpace(X, kernels, composite=True)
    assert space.group_names == ["linear+rbf"]
    K = kernels[0](X, X) + kernels[1](X, X)
    np.testing.assert_allclose(space.column(0, 5), K[:, 5], rtol=1e-12)
    lrn = space.learner(0, 5)
    np.testing.assert_allclose(lrn.predict(X[:3]), K[:3, 5], rtol=1e-12)
    coef = np.array([0.5, -2.0])
    for k in kernels:  # the linear kernel's collapsed sum equals the Gram product
        np.testing.assert_allclose(
            k.weighted_sum(X[:6], X[[1, 2]], coef), k(X[:6], X[[1, 2]]) @ coef, rtol=1e-12
        )


def test_weighted_sums_skip_zero_coefficients_and_collapse_the_quadratic_kernel() -> None:
    rng = np.random.default_rng(4)
    X, C = rng.standard_normal((50, 3)), rng.standard_normal((20, 3))
    coef = rng.standard_normal(20)
    coef[::3] = 0.0  # 13 non-zero centres > d = 3: the quadratic sum collapses
    for name in ("linear", "quadratic", "rbf"):
        k = make_kernel(name, X)
        direct = k(X, C) @ coef  # every centre, the Gram product
        np.testing.assert_allclose(k.weighted_sum(X, C, coef), direct, rtol=1e-10, atol=1e-10)
        assert not k.weighted_sum(X, C, np.zeros(20)).any()
