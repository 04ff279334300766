"""LIBSVM's SMO: feasible start and bias, shrinking against no shrinking, and the compiled
pair selection, shrink and gradient reconstruction pinned to their Python twins."""

from __future__ import annotations

import numpy as np
import pytest

from kernbench.solvers import smo
from kernbench.solvers.face_steps import max_violation
from kernbench.solvers.smo import feasible_alpha, libsvm_rho


def test_feasible_alpha_and_rho():
    y = np.array([1.0, 1.0, 1.0, -1.0])
    a = feasible_alpha(np.full(4, 0.5), y)
    assert y @ a == pytest.approx(0.0)
    assert a.max() <= 0.5 and a.min() >= 0
    # no free α: ρ is the midpoint of [max lb, min ub] (LIBSVM calculate_rho)
    G = np.array([-2.0, 0.5, 1.0, -0.5])
    alpha = np.array([1.0, 0.0, 0.0, 1.0])  # C = 1: i=0 (y=+1) at C, i=3 (y=−1) at C
    yG = y * G
    ub = min(yG[1], yG[2], yG[3])  # lower & y=+1, upper & y=−1
    lb = yG[0]
    assert libsvm_rho(G, y, alpha, 1.0) == pytest.approx((ub + lb) / 2)


def _smo_state(H, y, C):
    """The arguments of smo_solve for columns H (Gram matrix kept), from α = 0."""
    Phi = np.ascontiguousarray(H, dtype=np.float64)
    K = Phi @ Phi.T
    alpha = np.zeros(len(y))
    G = -np.ones(len(y))
    return K, Phi, np.diag(K).copy(), alpha, G


@pytest.mark.parametrize("use_gram", [True, False])
@pytest.mark.parametrize("C", [1.0, 100.0])
def test_smo_with_shrinking_reaches_the_optimum_of_smo_without(
    use_gram, C, cvxpy_svm, sign_problem
):
    """Shrinking changes which points are scanned, not the optimum: both end at cvxpy's dual."""
    H, y = sign_problem(seed=5, m=120, J=12)
    duals = {}
    for shrink in (False, True):
        K, Phi, diag, alpha, G = _smo_state(H, y, C)
        steps, viol, ok = smo.smo_solve(
            use_gram, K, Phi, Phi.shape[1], diag, y, alpha, G, C, 1e-9, 10**7, shrink
        )
        assert ok and viol <= 1e-9
        assert steps > 10 * smo.SHRINK_EVERY  # long enough for shrinking to run
        assert abs(y @ alpha) < 1e-9 and alpha.min() >= 0 and alpha.max() <= C
        v = Phi.T @ (y * alpha)
        duals[shrink] = alpha.sum() - 0.5 * v @ v
        np.testing.assert_allclose(G, y * (Phi @ v) - 1.0, atol=1e-9)  # complete on return
    ref, _, _ = cvxpy_svm(H, y, C, bias_regularised=False)
    assert duals[True] == pytest.approx(ref, rel=1e-7)
    assert duals[True] == pytest.approx(duals[False], rel=1e-9)


@pytest.mark.parametrize("use_gram", [True, False])
@pytest.mark.parametrize("cap", [150, 250, 400, 777])
def test_smo_with_shrinking_returns_the_full_gradient_when_out_of_steps(
    use_gram, cap, sign_problem
):
    """Stopped by the step cap while points are shrunk, G is recomputed for them."""
    H, y = sign_problem(seed=6, m=100, J=10)
    C = 50.0
    K, Phi, diag, alpha, G = _smo_state(H, y, C)
    steps, _, ok = smo.smo_solve(
        use_gram, K, Phi, Phi.shape[1], diag, y, alpha, G, C, 1e-12, cap, True
    )
    assert not ok and steps == cap
    np.testing.assert_allclose(G, y * (Phi @ (Phi.T @ (y * alpha))) - 1.0, atol=1e-9)


def test_shrink_drops_only_bounded_points_that_cannot_join_a_violating_pair(sign_problem):
    H, y = sign_problem(seed=7, m=100, J=10)
    C = 1.0
    K, Phi, diag, alpha, G = _smo_state(H, y, C)
    smo.smo_solve(True, K, Phi, Phi.shape[1], diag, y, alpha, G, C, 1e-3, 10**6, False)
    act = np.arange(len(y))
    i, gmax, gmax2 = smo._select_i(act, len(y), y, alpha, G, C)
    n = smo._shrink(act, len(y), y, alpha, G, C, gmax, gmax2)
    kept = act[:n]
    dropped = np.setdiff1d(np.arange(len(y)), kept)
    assert 0 < n < len(y) and np.all(np.diff(kept) > 0) and i in kept
    assert np.all((alpha[dropped] == 0) | (alpha[dropped] == C))  # free points always stay
    up = ((y > 0) & (alpha < C)) | ((y < 0) & (alpha > 0))
    low = ((y > 0) & (alpha > 0)) | ((y < 0) & (alpha < C))
    for t in dropped:  # t cannot form a violating pair with any point
        if up[t]:
            assert -y[t] * G[t] + gmax2 < 0
        if low[t]:
            assert y[t] * G[t] + gmax < 0


def test_add_outer_adds_the_rounded_products_of_np_outer():
    """K += hhᵀ in place gives the bits of ``K + np.outer(h, h)`` (the Gram update it replaced)."""
    rng = np.random.default_rng(8)
    h = np.cos(rng.normal(size=37) * 3.0)
    K = rng.normal(size=(37, 37))
    expected = K + np.outer(h, h)
    smo.add_outer(K, h)
    assert np.array_equal(K, expected)


# -- compiled kernels pinned to their Python twins ------------------------------------------------
def _dual_point(seed: int, m: int = 40, C: float = 1.0):
    """Labels, a box point with entries at both bounds, and an arbitrary gradient."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(m) < 0.5, -1.0, 1.0)
    u = rng.choice([0.0, C, 0.3 * C, 0.7 * C], size=m)
    return y, u, rng.standard_normal(m)


@pytest.mark.parametrize("seed", range(5))
def test_compiled_pair_selection_gives_the_python_maximal_violation(seed):
    """``_select_i`` (the SMO's I_up / I_low scan) and :func:`max_violation` are one rule:
    gmax + gmax2 is the maximal violating pair gap, and i is an I_up point attaining gmax."""
    C = 1.0
    y, u, grad = _dual_point(seed, C=C)
    m = y.size
    i, gmax, gmax2 = smo._select_i(np.arange(m), m, y, u, grad, C)
    assert gmax + gmax2 == max_violation(y, u, grad, C)
    up = ((y > 0) & (u < C)) | ((y < 0) & (u > 0))
    assert up[i] and -y[i] * grad[i] == gmax


@pytest.mark.parametrize("use_gram", [True, False])
def test_compiled_gradient_reconstruction_equals_the_python_gradient(use_gram):
    """``_reconstruct`` (the gradient of shrunk points, compiled) equals
    ``RestrictedLinearSVM._gradient``'s ∇ = y∘(Φ Φᵀ(y∘α)) − 1 on the inactive points and leaves
    the active ones alone."""
    rng = np.random.default_rng(3)
    m, J, C = 30, 4, 2.0
    y, alpha, _ = _dual_point(4, m=m, C=C)
    Phi = np.zeros((m, 8))  # a column buffer: its first J columns are used
    Phi[:, :J] = rng.standard_normal((m, J))
    K = Phi[:, :J] @ Phi[:, :J].T
    G = rng.standard_normal(m)
    kept = G.copy()
    active = np.array([1, 5, 7, 20], dtype=np.int64)
    act = np.full(m, -1, dtype=np.int64)  # the SMO's index buffer: its first n_act are active
    act[: active.size] = active
    n = smo._reconstruct(use_gram, K, Phi, J, y, alpha, G, act, active.size)
    expected = y * (Phi[:, :J] @ (Phi[:, :J].T @ (y * alpha))) - 1.0
    inactive = np.setdiff1d(np.arange(m), active)
    np.testing.assert_allclose(G[inactive], expected[inactive], rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(G[active], kept[active])
    assert n == m and np.array_equal(act, np.arange(m))  # every point active again
