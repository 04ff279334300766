"""The relaxed DRM block-coordinate solver against cvxpy and closed forms."""

from __future__ import annotations

import numpy as np
import pytest

from kernbench.solvers.drm_bcd import drm_bcd, drm_objective, margin_and_bias


def _data(N: int = 60, M: int = 4, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, M))
    y = np.sign(X @ rng.standard_normal(M) + 1.0 * rng.standard_normal(N))
    return X, y


@pytest.mark.parametrize(("T", "mu"), [(1, 1.0), (3, 1.0), (4, 0.05)])
def test_relaxed_objective_matches_cvxpy(T: int, mu: float, drm_relaxed_value) -> None:
    X, y = _data()
    ref = drm_relaxed_value(X, y, T, 0.5, mu)
    res = drm_bcd(
        X, y, T, nu=0.5, mu=mu, tol=0.0, max_sweeps=60, qp_tol=1e-9, rng=np.random.default_rng(0)
    )
    assert np.all(np.linalg.norm(res.W, axis=1) <= 1 + 1e-7)
    assert res.objective == pytest.approx(ref, rel=1e-5, abs=1e-6)


@pytest.mark.parametrize("T", [2, 5])
def test_objective_never_increases_over_sweeps(T: int) -> None:
    X, y = _data(seed=1)
    res = drm_bcd(
        X, y, T, mu=0.3, tol=0.0, max_sweeps=15, qp_tol=1e-9, rng=np.random.default_rng(2)
    )
    obj = np.array(res.trace["objective"])
    assert np.all(np.diff(obj) <= 1e-9 * np.maximum(1.0, np.abs(obj[:-1])))
    start = drm_objective(X, y, *_initial(X, y, T, seed=2), 0.5, 0.3)
    assert obj[0] <= start + 1e-9


def _initial(X, y, T, seed):
    W = np.random.default_rng(seed).standard_normal((T, X.shape[1]))
    W /= np.linalg.norm(W, axis=1, keepdims=True)
    rb = np.array([margin_and_bias(X @ w, y, 0.5) for w in W])
    return W, rb[:, 1], rb[:, 0]


def test_pair_penalty_formula() -> None:
    rng = np.random.default_rng(3)
    W = rng.standard_normal((4, 3))
    X, y = _data(N=10, M=3)
    zero_loss = drm_objective(X, y, W, np.zeros(4), np.full(4, -1e9), 1.0, 1.0) - 4e9
    pairs = sum(0.5 * np.sum((W[t] + W[u]) ** 2) for t in range(4) for u in range(t + 1, 4))
    assert zero_loss == pytest.approx(pairs, rel=1e-6)


def test_margin_and_bias_is_the_exact_minimiser() -> None:
    rng = np.random.default_rng(4)
    y = np.sign(rng.standard_normal(41))
    f = rng.standard_normal(41)
    nu = 0.5
    rho, b = margin_and_bias(f, y, nu)

    def g(r, bb):
        return -r + np.maximum(r - y * (f + bb), 0).sum() / (nu * f.size)

    best = g(rho, b)
    grid = np.linspace(-3, 3, 301)
    assert best <= min(g(r, bb) for r in grid for bb in grid) + 1e-12


def test_infeasible_nu_is_refused() -> None:
    X, y = _data()
    y = np.where(np.arange(len(y)) < 10, 1.0, -1.0)
    with pytest.raises(ValueError, match="infeasible"):
        drm_bcd(X, y, 2, nu=0.5)
