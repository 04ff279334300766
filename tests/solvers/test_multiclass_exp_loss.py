"""The exponential-loss multi-class problem (2): loss, λ (5), gradient, L-BFGS-B vs cvxpy."""

import cvxpy as cp
import numpy as np
import pytest
from scipy.optimize import check_grad

from kernbench.solvers.multiclass_exp_loss import (
    exp_loss_dual,
    kkt_residual,
    pricing_weights,
    shared_objective,
    solve_shared_lbfgsb,
)


def _problem(seed=0, m=40, K=4, J=6):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, m)
    H = rng.choice([-1.0, 1.0], size=(m, J))
    H[:, 0] = 1.0  # a constant learner, as the bias-free stump space offers
    return H, y


def test_loss_and_dual_match_a_plain_loop():
    rng = np.random.default_rng(1)
    m, K, C = 7, 3, 5.0
    F = rng.normal(size=(m, K))
    y = rng.integers(0, K, m)
    p = m * (K - 1)
    loss = 0.0
    for i in range(m):
        for c in range(K):
            if c != y[i]:
                loss += C / p * np.exp(-(F[i, y[i]] - F[i, c]))
    value, lam = exp_loss_dual(F, y, C)
    assert value == pytest.approx(loss, rel=1e-13)
    for i in range(m):
        for c in range(K):
            expected = 0.0 if c == y[i] else C / p * np.exp(F[i, c] - F[i, y[i]])
            assert lam[i, c] == pytest.approx(expected, rel=1e-13)
    U = pricing_weights(lam, y)
    np.testing.assert_allclose(U.sum(axis=1), 0.0, atol=1e-12)  # Σ_c u^c_i = 0
    for i in range(m):
        assert U[i, y[i]] == pytest.approx(lam[i].sum())


def test_gradient_matches_finite_differences():
    H, y = _problem()
    J, K = H.shape[1], 4
    rng = np.random.default_rng(2)
    w0 = rng.uniform(0.0, 0.3, J * K)

    def f(w):
        return shared_objective(w.reshape(J, K), H, y, 50.0)[0]

    def g(w):
        return shared_objective(w.reshape(J, K), H, y, 50.0)[1].ravel()

    assert check_grad(f, g, w0) < 1e-5 * max(1.0, np.linalg.norm(g(w0)))


def test_gradient_at_zero_is_one_minus_pricing_score():
    H, y = _problem()
    C = 20.0
    _, grad, lam = shared_objective(np.zeros((H.shape[1], 4)), H, y, C)
    U = pricing_weights(lam, y)
    np.testing.assert_allclose(grad, 1.0 - H.T @ U)
    np.testing.assert_allclose(lam[lam > 0], C / (H.shape[0] * 3))  # λ = C/p at W = 0


def _cvxpy_optimum(H, y, K, C):
    m, J = H.shape
    p = m * (K - 1)
    W = cp.Variable((J, K), nonneg=True)
    F = H @ W
    rows, cols = zip(*[(i, c) for i in range(m) for c in range(K) if c != y[i]])
    Y = np.zeros((len(rows), m * K))
    for r, (i, c) in enumerate(zip(rows, cols)):
        Y[r, i * K + c] = 1.0
        Y[r, i * K + y[i]] = -1.0
    z = Y @ cp.reshape(F, (m * K,), order="C")  # F_ic − F_{i,y_i} per pair
    prob = cp.Problem(cp.Minimize(cp.sum(W) + (C / p) * cp.sum(cp.exp(z))))
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    return prob.value, W.value


@pytest.mark.parametrize("C", [10.0, 1000.0])
def test_lbfgsb_optimum_equals_cvxpy_exp_cone_and_satisfies_kkt(C):
    K = 4
    H, y = _problem(seed=3)
    res = solve_shared_lbfgsb(H, y, C, np.zeros((H.shape[1], K)), ftol=1e-15, gtol=1e-11)
    ref_value, _ = _cvxpy_optimum(H, y, K, C)
    assert res.objective == pytest.approx(ref_value, rel=1e-6)
    # KKT of the bound-constrained problem: gradient ≥ 0 where w = 0, = 0 where w > 0
    _, grad, _ = shared_objective(res.W, H, y, C)
    assert res.kkt < 1e-6 * C
    assert np.all(grad[res.W == 0] >= -1e-6 * C)
    np.testing.assert_allclose(grad[res.W > 0], 0.0, atol=1e-6 * C)
    assert kkt_residual(res.W, grad) == pytest.approx(res.kkt)


def test_warm_start_from_optimum_stays_there():
    K, C = 4, 100.0
    H, y = _problem(seed=5)
    first = solve_shared_lbfgsb(H, y, C, np.zeros((H.shape[1], K)), ftol=1e-15, gtol=1e-10)
    again = solve_shared_lbfgsb(H, y, C, first.W, ftol=1e-15, gtol=1e-10)
    assert again.objective <= first.objective + 1e-9 * first.objective
    assert again.n_iter <= 2


def test_kkt_residual_definition():
    w = np.array([0.0, 0.0, 1.0, 2.0])
    g = np.array([0.5, -0.25, 0.1, -0.3])
    assert kkt_residual(w, g) == pytest.approx(0.3)
    assert kkt_residual(np.zeros(0), np.zeros(0)) == 0.0


def test_fused_pricing_kernel_matches_exp_loss_dual_and_pricing_weights():
    from kernbench.solvers.multiclass_exp_loss import _loss_and_pricing_inplace

    K, C = 5, 1e4
    H, y = _problem(seed=7, m=60, K=K, J=8)
    W = np.abs(np.random.default_rng(1).standard_normal((H.shape[1], K))) * 2.0
    W[2, 1] = 400.0  # exponents past the clip
    loss, lam = exp_loss_dual(H @ W, y, C)
    F = H @ W
    got = _loss_and_pricing_inplace(F, y.astype(np.int64), C / (H.shape[0] * (K - 1)))
    assert got == pytest.approx(loss, rel=1e-13)
    np.testing.assert_allclose(F, pricing_weights(lam, y), rtol=1e-13, atol=0)


def test_solve_on_a_strided_column_view_equals_the_contiguous_solve():
    # MultiBoost passes H_W, a column slice of a growing buffer
    K, C = 4, 100.0
    H, y = _problem(seed=9)
    buf = np.zeros((H.shape[0], H.shape[1] + 5))
    buf[:, : H.shape[1]] = H
    a = solve_shared_lbfgsb(H, y, C, np.zeros((H.shape[1], K)))
    b = solve_shared_lbfgsb(buf[:, : H.shape[1]], y, C, np.zeros((H.shape[1], K)))
    np.testing.assert_array_equal(a.W, b.W)
    assert a.objective == b.objective
