"""FCD (Alg. 2 of MultiBoost_cw): the closed-form step, the μ bookkeeping, the restricted optimum
against L-BFGS-B and cvxpy, the KKT duals, and the stage-wise (τ_max = 1) special case."""

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from kernbench.solvers.fcd import SortedColumns, _step, fcd_solve, initial_mu
from kernbench.solvers.multiclass_exp_loss import (
    classwise_objective,
    pricing_weights,
    solve_classwise_lbfgsb,
    solve_shared_lbfgsb,
)

TIGHT_LBFGSB = dict(ftol=1e-15, gtol=1e-12)


@pytest.mark.parametrize(
    ("vp", "vm", "C_over_p"),
    [(3.0, 1.0, 2.0), (0.2, 5.0, 1.0), (7.0, 0.0, 0.5), (0.0, 2.0, 3.0), (1e-6, 1e-6, 1e4)],
)
def test_closed_form_12_is_the_exact_one_dimensional_minimiser(vp, vm, C_over_p):
    a = 1.0 / (2.0 * C_over_p)  # p / (2C)

    def f(w):  # (10)
        return w + C_over_p * (vm * np.exp(w) + vp * np.exp(-w))

    w_star = _step(vp, vm, 0.0, a, False)  # w_old = 0: V± are the masses themselves
    ref = minimize_scalar(f, bounds=(0.0, 60.0), method="bounded", options={"xatol": 1e-12})
    assert w_star >= 0.0
    assert f(w_star) <= ref.fun + 1e-10 * max(1.0, abs(ref.fun))
    assert w_star == pytest.approx(max(ref.x, 0.0), abs=1e-5)
    # (21): with w_old ≠ 0 the masses carry the variable's own factor; the step is unchanged
    w_old = 0.7
    assert _step(vp * np.exp(-w_old), vm * np.exp(w_old), w_old, a, False) == pytest.approx(
        w_star, abs=1e-12
    )


def test_large_c_form_13_approaches_12():
    vp, vm = 4.0, 1.0
    assert _step(vp, vm, 0.0, 0.0, True) == pytest.approx(0.5 * np.log(vp / vm))
    assert _step(vp, vm, 0.0, 1e-9, False) == pytest.approx(0.5 * np.log(vp / vm), rel=1e-8)


def test_fcd_reaches_the_lbfgsb_optimum_and_its_duals_are_feasible(exp_loss_problem):
    H, y, vc, vk, K = exp_loss_problem()
    C = 100.0
    w0 = np.zeros(vc.size)
    res = fcd_solve(H, y, C, w0, vc, vk, K, eps=1e-9, tau_max=None)
    ref = solve_classwise_lbfgsb(H, y, C, w0, vc, vk, K, **TIGHT_LBFGSB)
    assert res.stop_reason == "tol" and res.max_violation <= 1e-9
    assert res.objective == pytest.approx(ref.objective, rel=1e-6)
    value, grad, lam = classwise_objective(res.w, H, y, C, vc, vk, K)
    assert value == pytest.approx(res.objective, rel=1e-12)
    assert np.any(res.w > 0) and np.any(res.w == 0)
    # λ of (5) = (C/p)·μ; dual feasible: λ ≥ 0 and (3b) Σ_i u^c_i h(x_i) ≤ 1 for every variable
    p = H.shape[0] * (K - 1)
    np.testing.assert_allclose(lam, C / p * res.mu, rtol=1e-10)
    assert np.all(lam >= 0)
    U = pricing_weights(lam, y)
    lhs = np.einsum("iv,iv->v", H[:, vc], U[:, vk])
    assert lhs.max() <= 1.0 + 1e-8
    np.testing.assert_allclose(lhs[res.w > 0], 1.0, atol=1e-8)  # tight where w > 0
    # zero duality gap: the dual objective (3a) at λ equals the primal optimum
    off = lam > 0
    dual = float(np.sum(lam[off] * (1.0 - np.log(p / C) - np.log(lam[off]))))
    assert dual == pytest.approx(res.objective, rel=1e-8)


def test_fcd_matches_cvxpy_exponential_cone_on_a_tiny_problem(exp_loss_problem, exp_loss_cvxpy):
    H, y, vc, vk, K = exp_loss_problem(seed=1, m=15, J=6)
    C = 50.0
    res = fcd_solve(H, y, C, np.zeros(vc.size), vc, vk, K, eps=1e-10, tau_max=None)
    assert res.objective == pytest.approx(exp_loss_cvxpy(H, y, C, vc, vk, K), rel=1e-6)


def test_mu_updates_20_equal_recomputation_15_and_passes_never_increase_the_objective(
    exp_loss_problem,
):
    H, y, vc, vk, K = exp_loss_problem(seed=2)
    C = 1000.0
    w0 = np.abs(np.random.default_rng(0).normal(size=vc.size)) * (np.arange(vc.size) % 2)
    objectives = []
    for tau_max in (1, 2, 3, 5):
        res = fcd_solve(H, y, C, w0, vc, vk, K, eps=0.0, tau_max=tau_max, seed=3)
        fresh = initial_mu(res.w, H, y, vc, vk, K)
        np.testing.assert_allclose(res.mu, fresh, rtol=1e-10)
        objectives.append(res.objective)
    # same seed: every run is a prefix of the next, and no coordinate step increases g(w)
    assert np.all(np.diff(objectives) <= 1e-12 * objectives[0])
    assert classwise_objective(w0, H, y, C, vc, vk, K)[0] >= objectives[0]


def test_tau_max_1_is_one_sequential_exact_pass_over_the_new_variables(exp_loss_problem):
    H, y, vc, vk, K = exp_loss_problem(seed=3)
    C = 1e8
    rng = np.random.default_rng(1)
    w0 = np.where(np.arange(vc.size) < 8, np.abs(rng.normal(size=vc.size)), 0.0)
    new = np.arange(8, vc.size)
    res = fcd_solve(H, y, C, w0, vc, vk, K, new, tau_max=1)
    assert res.stop_reason == "tau_max" and res.n_updates == new.size
    # independent stage-wise update: minimise (7) over each new variable in order, others fixed
    w = w0.copy()
    for v in new:

        def g(t, v=v):
            trial = w.copy()
            trial[v] = t
            return classwise_objective(trial, H, y, C, vc, vk, K)[0]

        w[v] = minimize_scalar(g, bounds=(0.0, 40.0), method="bounded", options={"xatol": 1e-10}).x
        if g(0.0) <= g(w[v]):
            w[v] = 0.0
    np.testing.assert_allclose(res.w, w, atol=1e-6)
    np.testing.assert_array_equal(res.w[:8], w0[:8])  # old variables untouched


def test_shared_learners_are_the_special_case_of_multiboost(exp_loss_problem):
    H, y, _, _, K = exp_loss_problem(seed=4, J=5)
    C = 100.0
    J = H.shape[1]
    vc, vk = np.repeat(np.arange(J), K), np.tile(np.arange(K), J)  # variable (j, c) = j·K + c
    res = fcd_solve(H, y, C, np.zeros(J * K), vc, vk, K, eps=1e-10, tau_max=None)
    ref = solve_shared_lbfgsb(H, y, C, np.zeros((J, K)), **TIGHT_LBFGSB)
    assert res.objective == pytest.approx(ref.objective, rel=1e-6)
    np.testing.assert_allclose(res.w.reshape(J, K), ref.W, atol=1e-4)


def test_columns_other_than_plus_minus_one_are_refused(exp_loss_problem):
    # the columns are kept as int8 and (12) assumes δh ∈ {−1, 0, +1}: a real-valued or 0 entry
    # must be an error, not a silent truncation
    H, y, vc, vk, K = exp_loss_problem()
    for bad in (0.5, 0.0, 2.0):
        H2 = H.copy()
        H2[3, 4] = bad
        with pytest.raises(ValueError, match="±1"):
            fcd_solve(H2, y, 10.0, np.zeros(vc.size), vc, vk, K)


def test_columns_come_from_h_or_from_their_layout(exp_loss_problem):
    """Given its SortedColumns, FCD does not read H (MultiBoost_cw passes None); with neither,
    it says what is missing."""
    H, y, vc, vk, K = exp_loss_problem()
    columns = SortedColumns(y, K)
    columns.append(H)
    from_h = fcd_solve(H, y, 10.0, np.zeros(vc.size), vc, vk, K, seed=3)
    from_layout = fcd_solve(None, y, 10.0, np.zeros(vc.size), vc, vk, K, seed=3, columns=columns)
    np.testing.assert_array_equal(from_h.w, from_layout.w)
    with pytest.raises(ValueError, match="needs the columns"):
        fcd_solve(None, y, 10.0, np.zeros(vc.size), vc, vk, K)
