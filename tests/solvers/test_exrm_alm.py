"""The ExRM ALM (Alg. 2) and its row solver (Alg. 1) against cvxpy and brute force."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

from kernbench.solvers.exrm_alm import (
    e_step,
    exrm_alm,
    exrm_objective,
    l12_row_prox_reweighted,
)


def l12_row_prox_exact(V: np.ndarray, mu: float) -> np.ndarray:
    """Closed-form solution of min_w ½‖w‖₁² + (μ/2)‖w − v‖² for every row v of V.

    The optimum is a soft threshold w = sgn(v)(|v| − τ)₊ with τ = ‖w‖₁/μ; sorting |v| in decreasing
    order, τ = S_k/(μ + k) for the largest k with |v|_(k) > S_k/(μ + k), S_k the sum of the k
    largest |v|. An independent reference for Alg. 1.
    """
    A = np.abs(V)
    S = -np.sort(-A, axis=1)
    k = np.arange(1, A.shape[1] + 1)
    cums = np.cumsum(S, axis=1)
    taus = cums / (mu + k)
    active = S > taus
    kk = np.maximum(np.where(active, k, 0).max(axis=1), 1)  # the largest such k
    tau = taus[np.arange(A.shape[0]), kk - 1][:, None]
    return np.sign(V) * np.maximum(A - tau, 0.0)


def _data(N: int = 60, M: int = 5, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, M))
    y = np.sign(X @ rng.standard_normal(M) + 0.7 * rng.standard_normal(N))
    return X, y


def _cvxpy_problem5(X: np.ndarray, y: np.ndarray, C: int, lam: float, p: int):
    N, M = X.shape
    W = cp.Variable((M, C))
    b = cp.Variable(C)
    margins = cp.multiply(np.tile(y[:, None], (1, C)), X @ W + np.ones((N, 1)) @ b[None, :])
    slack = cp.pos(1 - margins)
    loss = cp.sum(slack) if p == 1 else cp.sum_squares(slack)
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(cp.sum(cp.abs(W), axis=1)) + lam * loss))
    prob.solve(solver="CLARABEL")
    return prob.value, W.value, b.value


@pytest.mark.parametrize("p", [1, 2])
def test_alm_reaches_the_cvxpy_optimum_of_problem_5(p: int) -> None:
    X, y = _data()
    ref, _, _ = _cvxpy_problem5(X, y, C=4, lam=2.0, p=p)
    # a fixed penalty (rho = 1) makes the scheme a convergent ADMM
    res = exrm_alm(X, y, 4, 2.0, p, max_iter=1500, tol=0.0, rho=1.0)
    assert abs(res.objective - ref) / ref < 1e-4
    assert res.trace["residual_pw"][-1] < 1e-6
    assert res.trace["residual_e"][-1] < 1e-6


@pytest.mark.parametrize("p", [1, 2])
def test_published_schedule_is_feasible_and_never_below_the_optimum(p: int) -> None:
    X, y = _data(seed=1)
    ref, _, _ = _cvxpy_problem5(X, y, C=3, lam=2.0, p=p)
    res = exrm_alm(X, y, 3, 2.0, p, max_iter=300, tol=0.0)  # mu0 = 1, rho = 1.1
    # (W, b) is a feasible point of (5), so its objective is an upper bound on the optimum
    assert res.objective >= ref * (1 - 1e-7)
    # the growing penalty freezes the iterates close to, not at, the optimum
    assert res.objective <= ref * 1.02
    assert res.trace["residual_pw"][-1] < 1e-8
    assert res.trace["residual_e"][-1] < 1e-8
    mu = np.array(res.trace["mu"])
    np.testing.assert_allclose(mu[1:] / mu[:-1], 1.1)


def test_paper_stopping_rule_stops_on_small_objective_change() -> None:
    X, y = _data()
    res = exrm_alm(X, y, 5, 2.0, 2, max_iter=500, tol=0.05)
    obj = res.trace["objective"]
    assert res.stop_reason == "converged"
    assert abs(obj[-1] - obj[-2]) < 0.05
    assert all(abs(a - b) >= 0.05 for a, b in zip(obj[1:-1], obj[:-2]))
    assert len(obj) == res.n_iter == res.coef_path.shape[0]


def test_columns_stay_identical_from_the_symmetric_start() -> None:
    X, y = _data()
    for n_iter in (1, 7, 40):
        res = exrm_alm(X, y, 6, 2.0, 1, max_iter=n_iter, tol=0.0)
        # identical up to rounding: BLAS may block the columns of one product differently, which
        # moves the last bit (about 1e-15 after 40 iterations here); a broken symmetry is far
        # above 1e-12
        np.testing.assert_allclose(res.W, np.repeat(res.W[:, :1], 6, axis=1), rtol=0, atol=1e-12)
        np.testing.assert_allclose(res.b, res.b[0], rtol=0, atol=1e-12)


def _subproblem8_cvxpy(P: np.ndarray, Q: np.ndarray, mu: float) -> tuple[float, np.ndarray]:
    W = cp.Variable(P.shape)
    obj = 0.5 * cp.sum_squares(cp.sum(cp.abs(W), axis=1))
    obj = obj + mu / 2 * cp.sum_squares(P - W) + cp.sum(cp.multiply(Q, P - W))
    prob = cp.Problem(cp.Minimize(obj))
    prob.solve(solver="CLARABEL")
    return prob.value, W.value


def _subproblem8_value(W: np.ndarray, P: np.ndarray, Q: np.ndarray, mu: float) -> float:
    row = np.abs(W).sum(axis=1)
    return float(0.5 * row @ row + mu / 2 * np.sum((P - W) ** 2) + np.sum(Q * (P - W)))


@pytest.mark.parametrize("mu", [0.3, 1.0, 25.0])
def test_alg1_solves_subproblem_8(mu: float) -> None:
    rng = np.random.default_rng(3)
    P = rng.standard_normal((8, 5))
    Q = rng.standard_normal((8, 5))
    ref_value, ref_W = _subproblem8_cvxpy(P, Q, mu)
    W, n_inner = l12_row_prox_reweighted(P + Q / mu, mu, np.ones_like(P), max_iter=500, tol=1e-12)
    assert _subproblem8_value(W, P, Q, mu) == pytest.approx(ref_value, rel=1e-6, abs=1e-8)
    np.testing.assert_allclose(W, ref_W, atol=1e-3)
    # the closed form (sorting) is the exact minimiser
    W_exact = l12_row_prox_exact(P + Q / mu, mu)
    np.testing.assert_allclose(W_exact, ref_W, atol=1e-5)
    assert _subproblem8_value(W_exact, P, Q, mu) <= ref_value + 1e-7


def test_alg1_is_exact_in_one_sweep_on_equal_columns() -> None:
    # at a column-symmetric point G = C·I, so (11) is already the minimiser
    rng = np.random.default_rng(4)
    V = np.repeat(rng.standard_normal((6, 1)), 4, axis=1)
    W, _ = l12_row_prox_reweighted(V, 2.0, np.ones_like(V), max_iter=1, eps=0.0)
    np.testing.assert_allclose(W, l12_row_prox_exact(V, 2.0), atol=1e-12)


@pytest.mark.parametrize("p", [1, 2])
def test_e_step_is_the_elementwise_minimiser_of_13(p: int) -> None:
    rng = np.random.default_rng(5)
    S = 3 * rng.standard_normal((40, 3))
    y_col = np.sign(rng.standard_normal((40, 1)))
    weight = 0.7
    E = e_step(S, y_col, weight, p)
    grid = np.linspace(-12, 12, 240001)  # spacing 1e-4
    for (i, c), s in np.ndenumerate(S):
        f = weight * np.maximum(y_col[i, 0] * grid, 0.0) ** p + 0.5 * (grid - s) ** 2
        e_val = weight * max(y_col[i, 0] * E[i, c], 0.0) ** p + 0.5 * (E[i, c] - s) ** 2
        assert e_val <= f.min() + 1e-9
        assert abs(E[i, c] - grid[np.argmin(f)]) < 2e-4


def test_objective_formula() -> None:
    X, y = _data(N=10, M=3)
    rng = np.random.default_rng(6)
    W = rng.standard_normal((3, 2))
    b = rng.standard_normal(2)
    direct = 0.5 * sum(np.sum(np.abs(W[k])) ** 2 for k in range(3))
    for c in range(2):
        for i in range(10):
            direct += 2.0 * max(0.0, 1 - y[i] * (X[i] @ W[:, c] + b[c])) ** 2
    assert exrm_objective(X, y, W, b, 2.0, 2) == pytest.approx(direct, rel=1e-12)


@pytest.mark.parametrize("p", [1, 2])
def test_compiled_engine_matches_the_numpy_reference(p: int) -> None:
    X, y = _data(N=90, M=7, seed=7)
    a = exrm_alm(X, y, 5, 2.0, p, engine="numpy")
    b = exrm_alm(X, y, 5, 2.0, p, engine="numba")
    assert a.n_iter == b.n_iter and a.stop_reason == b.stop_reason
    np.testing.assert_allclose(b.W, a.W, atol=1e-10)
    np.testing.assert_allclose(b.b, a.b, atol=1e-10)
    for key in ("objective", "residual_pw", "residual_e", "mu", "inner_iter"):
        np.testing.assert_allclose(b.trace[key], a.trace[key], rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(b.coef_path, a.coef_path, atol=1e-10)


@pytest.mark.parametrize(
    ("N", "C", "p", "kwargs"),
    [
        (700, 3, 1, {}),  # several 256-row blocks and a partial one
        (513, 1, 2, {}),  # one component (PSVM)
        (300, 12, 2, {"tol": 0.0, "max_iter": 40}),  # no stopping rule: the cap
        (300, 4, 1, {"mu_max": 5.0, "rho": 1.3}),  # a μ ceiling
    ],
)
def test_streamed_engine_matches_the_numpy_reference_over_blocks(
    N: int, C: int, p: int, kwargs: dict
) -> None:
    # the compiled engine defers Z's update to the next sweep, carries Σ Z and sweeps blocks of
    # rows; the numpy engine follows the printed order: same iterates up to rounding
    X, y = _data(N=N, M=6, seed=N)
    a = exrm_alm(X, y, C, 2.0, p, engine="numpy", **kwargs)
    b = exrm_alm(X, y, C, 2.0, p, engine="numba", **kwargs)
    assert a.n_iter == b.n_iter and a.stop_reason == b.stop_reason
    np.testing.assert_allclose(b.W, a.W, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(b.b, a.b, rtol=1e-9, atol=1e-10)
    for key in ("objective", "residual_pw", "residual_e", "mu", "inner_iter"):
        np.testing.assert_allclose(b.trace[key], a.trace[key], rtol=1e-8, atol=1e-9)
    np.testing.assert_allclose(b.coef_path, a.coef_path, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(b.intercept_path, a.intercept_path, rtol=1e-9, atol=1e-10)
