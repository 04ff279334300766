"""Projected Newton on the exponential-loss restricted problem: the Hessian against finite
differences of the gradient, the quadratic sub-problem against cvxpy, and the restricted optimum
against a tight L-BFGS-B and cvxpy's exponential cone, for class-wise and shared learners."""

import cvxpy as cp
import numpy as np
import pytest

from kernbench.solvers.exp_loss_newton import (
    _qp_active_set,
    classwise_hessian,
    solve_classwise_newton,
    solve_shared_newton,
)
from kernbench.solvers.multiclass_exp_loss import (
    classwise_objective,
    kkt_residual,
    pricing_weights,
    solve_classwise_lbfgsb,
    solve_shared_lbfgsb,
)

TIGHT_LBFGSB = dict(ftol=1e-15, gtol=1e-12, maxiter=100000)


@pytest.mark.parametrize("shared", [False, True])
def test_hessian_equals_finite_differences_of_the_gradient(shared, exp_loss_problem):
    H, y, vc, vk, K = exp_loss_problem(seed=1, m=30, J=6)
    if shared:
        J = H.shape[1]
        vc, vk = np.repeat(np.arange(J), K), np.tile(np.arange(K), J)
    C = 10.0
    w = np.random.default_rng(2).uniform(0.1, 0.5, size=vc.size)
    lam = classwise_objective(w, H, y, C, vc, vk, K)[2]
    Q = classwise_hessian(H[:, vc], vk, lam, y, K)
    step = 1e-6
    fd = np.empty_like(Q)
    for v in range(w.size):
        e = np.zeros_like(w)
        e[v] = step
        fd[:, v] = (
            classwise_objective(w + e, H, y, C, vc, vk, K)[1]
            - classwise_objective(w - e, H, y, C, vc, vk, K)[1]
        ) / (2 * step)
    np.testing.assert_allclose(Q, Q.T, atol=1e-12)
    np.testing.assert_allclose(Q, fd, rtol=1e-5, atol=1e-7 * np.abs(Q).max())
    assert np.linalg.eigvalsh(Q).min() >= -1e-9 * np.abs(Q).max()  # convex


def test_hessian_in_any_order_equals_the_class_sorted_blocks(exp_loss_problem):
    # rows and variables in the caller's order go through the sorted-slices path and back
    H, y, _, _, K = exp_loss_problem(seed=7, m=40, J=9)
    J = H.shape[1]
    vc, vk = np.repeat(np.arange(J), K), np.tile(np.arange(K), J)
    keep = np.random.default_rng(1).random(vc.size) < 0.7
    vc, vk = vc[keep], vk[keep]
    w = np.random.default_rng(2).uniform(0.1, 0.5, size=vc.size)
    lam = classwise_objective(w, H, y, 10.0, vc, vk, K)[2]
    Q = classwise_hessian(H[:, vc], vk, lam, y, K)
    rows, perm = np.argsort(y, kind="stable"), np.argsort(vk, kind="stable")
    Qs = classwise_hessian(H[rows][:, vc[perm]], vk[perm], lam[rows], y[rows], K)
    np.testing.assert_allclose(Q[np.ix_(perm, perm)], Qs, rtol=1e-13, atol=1e-13 * np.abs(Q).max())
    # against the definition: Σ_i x_i x_iᵀ weighted by the K × K Hessian of point i's loss
    X = H[:, vc]
    ref = np.zeros_like(Q)
    for i in range(H.shape[0]):
        G = np.diag(np.abs(pricing_weights(lam[i : i + 1], y[i : i + 1]))[0])
        G[y[i], :] -= lam[i]
        G[:, y[i]] -= lam[i]
        G[y[i], y[i]] = np.abs(pricing_weights(lam[i : i + 1], y[i : i + 1]))[0, y[i]]
        ref += np.outer(X[i], X[i]) * G[np.ix_(vk, vk)]
    np.testing.assert_allclose(Q, ref, rtol=1e-12, atol=1e-12 * np.abs(ref).max())


def test_solve_is_equivariant_to_the_order_of_rows_and_variables(exp_loss_problem):
    # the solver sorts rows and variables by class internally and undoes it on return: any input
    # order gives the same optimum, W in the caller's variable order and λ in its row order
    H, y, vc, vk, K = exp_loss_problem(seed=8, m=60, J=10)
    C = 100.0
    w0 = np.random.default_rng(3).uniform(0.0, 0.3, size=vc.size)
    a = solve_classwise_newton(H, y, C, w0, vc, vk, K, tol=1e-10)
    rows = np.random.default_rng(4).permutation(H.shape[0])
    perm = np.random.default_rng(5).permutation(vc.size)
    b = solve_classwise_newton(H[rows], y[rows], C, w0[perm], vc[perm], vk[perm], K, tol=1e-10)
    assert a.stop_reason == b.stop_reason == "converged"
    assert b.objective == pytest.approx(a.objective, rel=1e-12)
    np.testing.assert_allclose(b.W, a.W[perm], atol=1e-8)
    np.testing.assert_allclose(b.lam, a.lam[rows], rtol=1e-8, atol=1e-12)


def test_quadratic_subproblem_matches_cvxpy():
    rng = np.random.default_rng(3)
    n = 25
    A = rng.normal(size=(40, n))
    Q = A.T @ A + 1e-3 * np.eye(n)
    g = rng.normal(size=n) * 5
    w = np.where(rng.random(n) < 0.5, 0.0, rng.uniform(0, 1, size=n))
    d = _qp_active_set(Q, g, w, 1e-10)
    x = cp.Variable(n)
    prob = cp.Problem(cp.Minimize(g @ x + 0.5 * cp.quad_form(x, cp.psd_wrap(Q))), [w + x >= 0])
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    assert np.all(w + d >= -1e-14)
    value = g @ d + 0.5 * d @ Q @ d
    assert value == pytest.approx(prob.value, rel=1e-8, abs=1e-10)
    qg = g + Q @ d  # KKT of the sub-problem: zero gradient where free, ≥ 0 at the bound
    assert kkt_residual(w + d, qg) <= 1e-8


@pytest.mark.parametrize("C", [10.0, 1e3, 1e5])
def test_newton_reaches_the_lbfgsb_optimum_with_feasible_duals(C, exp_loss_problem):
    H, y, vc, vk, K = exp_loss_problem()
    w0 = np.zeros(vc.size)
    res = solve_classwise_newton(H, y, C, w0, vc, vk, K, tol=1e-9)
    ref = solve_classwise_lbfgsb(H, y, C, w0, vc, vk, K, **TIGHT_LBFGSB)
    # at C = 1e5, f ≈ 1e5 is flat to round-off long before the residual is 1e-9: the step is then
    # accepted on the residual, not on Armijo's decrease (else it stalls near 1e-6)
    assert res.stop_reason == "converged" and res.kkt <= 1e-9
    assert res.objective <= ref.objective * (1 + 1e-9)
    assert res.objective == pytest.approx(ref.objective, rel=1e-6)
    value, grad, lam = classwise_objective(res.W, H, y, C, vc, vk, K)
    assert value == pytest.approx(res.objective, rel=1e-12)
    np.testing.assert_allclose(res.lam, lam, rtol=1e-12)
    assert np.any(res.W > 0) and np.any(res.W == 0)
    U = pricing_weights(lam, y)  # dual feasibility (3b): pricing score ≤ 1, = 1 where w > 0
    score = np.einsum("iv,iv->v", H[:, vc], U[:, vk])
    assert score.max() <= 1.0 + 1e-8
    np.testing.assert_allclose(score[res.W > 0], 1.0, atol=1e-8)


def test_newton_matches_cvxpy_exponential_cone_on_a_tiny_problem(exp_loss_problem, exp_loss_cvxpy):
    H, y, vc, vk, K = exp_loss_problem(seed=5, m=15, J=6)
    C = 50.0
    res = solve_classwise_newton(H, y, C, np.zeros(vc.size), vc, vk, K, tol=1e-10)
    assert res.objective == pytest.approx(exp_loss_cvxpy(H, y, C, vc, vk, K), rel=1e-6)


def test_warm_start_from_a_far_point_and_real_valued_columns(exp_loss_problem):
    # Newton does not need ±1 columns (unlike FCD's closed form); start far from the optimum
    H, y, vc, vk, K = exp_loss_problem(seed=6)
    H = H * np.random.default_rng(0).uniform(0.5, 1.5, size=H.shape)
    C = 1e3
    w0 = np.full(vc.size, 3.0)
    res = solve_classwise_newton(H, y, C, w0, vc, vk, K, tol=1e-9)
    ref = solve_classwise_lbfgsb(H, y, C, np.zeros(vc.size), vc, vk, K, **TIGHT_LBFGSB)
    assert res.stop_reason == "converged"
    assert res.objective == pytest.approx(ref.objective, rel=1e-6)


def test_shared_learners_multiboost_optimum_and_the_valley_shift(exp_loss_problem):
    H, y, _, _, K = exp_loss_problem(seed=4, J=8)
    C = 1e3
    J = H.shape[1]
    # a warm start with all K coefficients of learner 0 positive: the loss is blind to a common
    # shift, so the solver's first move lowers Σ W for free
    W0 = np.zeros((J, K))
    W0[0] = [0.5, 0.7, 0.9]
    res = solve_shared_newton(H, y, C, W0, tol=1e-9)
    ref = solve_shared_lbfgsb(H, y, C, np.zeros((J, K)), **TIGHT_LBFGSB)
    assert res.W.shape == (J, K)
    assert res.stop_reason == "converged"
    assert res.objective == pytest.approx(ref.objective, rel=1e-7)
    assert res.objective <= ref.objective * (1 + 1e-9)
    assert np.all(res.W.min(axis=1) == 0.0)  # every learner keeps a zero coefficient


@pytest.mark.parametrize("seed", range(6))
def test_random_problems_and_warm_starts_never_end_above_the_tight_lbfgsb_optimum(
    seed, exp_loss_problem
):
    rng = np.random.default_rng(seed)
    K, J, m = int(rng.integers(2, 6)), int(rng.integers(3, 25)), int(rng.integers(20, 120))
    H, y, vc, vk, _ = exp_loss_problem(seed=seed, m=m, K=K, J=J)
    for C in (1.0, 1e2, 1e4):
        w0 = rng.uniform(0, 2, size=vc.size) * (rng.random(vc.size) < 0.5)
        res = solve_classwise_newton(H, y, C, w0, vc, vk, K, tol=1e-8)
        ref = solve_classwise_lbfgsb(H, y, C, np.zeros(vc.size), vc, vk, K, **TIGHT_LBFGSB)
        assert res.stop_reason == "converged" and res.kkt <= 1e-8
        assert res.objective <= ref.objective * (1 + 1e-9)
        shared = solve_shared_newton(H, y, C, rng.uniform(0, 1, size=(J, K)), tol=1e-8)
        ref = solve_shared_lbfgsb(H, y, C, np.zeros((J, K)), **TIGHT_LBFGSB)
        assert shared.stop_reason == "converged" and shared.kkt <= 1e-8
        assert shared.objective <= ref.objective * (1 + 1e-9)
