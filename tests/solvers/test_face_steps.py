"""Face steps of the SVM dual: never uphill, rays to a bound, the Newton branch on the face
optimum, the projected search, and LAPACK's gelsy and the left singular vectors behind them."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
import scipy.linalg

from kernbench.solvers import face_steps
from kernbench.solvers.face_steps import face_descent, face_step, lstsq_gelsy
from kernbench.solvers.smo import feasible_alpha


def _dual(A, y):
    """f(α) = ½αᵀQα − 1ᵀα and ∇f with Q = ZZᵀ, Z = y∘A."""
    Z = y[:, None] * A

    def f(a):
        v = Z.T @ a
        return 0.5 * float(v @ v) - float(a.sum())

    def grad(a):
        return Z @ (Z.T @ a) - 1.0

    return f, grad


@pytest.mark.parametrize("seed", range(6))
def test_face_step_never_raises_the_dual_and_keeps_the_constraints(seed):
    """Random duals with more free α's than columns (singular free block: the ray branch) and
    fewer (the Newton branch); both branches are taken over the seeds' steps."""
    rng = np.random.default_rng(seed)
    m, J = (40, 4) if seed % 2 else (12, 20)
    A = rng.normal(size=(m, J))
    y = np.where(rng.random(m) < 0.5, 1.0, -1.0)
    C = 2.0
    f, grad = _dual(A, y)
    a = feasible_alpha(rng.uniform(0.0, C, size=m), y)
    a[:3] = [0.0, C, 0.0]  # some at the bounds: not on the face
    a = feasible_alpha(a, y)
    branches = set()
    for _ in range(30):
        before = a.copy()
        step = face_step(A, y, a, grad(a), C)
        if not step.moved:
            np.testing.assert_array_equal(a, before)
            break
        branches.add(step.ray)
        assert f(a) <= f(before) + 1e-12 * abs(f(before))
        assert float(y @ a) == pytest.approx(float(y @ before), abs=1e-10)
        assert a.min() >= 0.0 and a.max() <= C
        fixed = (before <= 0.0) | (before >= C)
        np.testing.assert_array_equal(a[fixed], before[fixed])  # only the face moves
    if seed % 2:  # the ray branch is taken (projected steps may then reach a regular face)
        assert True in branches
    else:
        assert branches == {False}


def test_face_step_follows_a_zero_curvature_ray_at_least_to_a_bound():
    """One column, twelve free α's: the face's KKT system is inconsistent and the dual is
    unbounded below on the face along r = −(I − N⁺N)∇ with N = [Z, y]ᵀ (computed here from an
    SVD, independently of the step's least squares). The step ends at least as low as r followed
    to its first bound, with the box and yᵀα kept, at least one α at a bound."""
    rng = np.random.default_rng(1)
    m = 12
    A = np.sign(rng.normal(size=(m, 1)))
    y = np.tile([1.0, -1.0], m // 2)
    C = 10.0
    f, grad = _dual(A, y)
    a = feasible_alpha(rng.uniform(1.0, 9.0, size=m), y)
    before = a.copy()
    g = grad(before)
    N = np.column_stack([y[:, None] * A, y])
    U = scipy.linalg.svd(N, full_matrices=False)[0]
    r = -(g - U @ (U.T @ g))
    assert float(g @ r) < 0.0 and np.abs(N.T @ r).max() < 1e-12
    with np.errstate(divide="ignore"):
        caps = np.where(r > 0, (C - before) / r, np.where(r < 0, -before / r, np.inf))
    first_bound = before + caps.min() * r
    step = face_step(A, y, a, g, C)
    assert step.moved and step.ray and step.clipped
    assert f(a) <= f(first_bound) + 1e-12 * abs(f(first_bound))
    assert f(a) < f(before)
    assert float(y @ a) == pytest.approx(float(y @ before), abs=1e-10)
    assert a.min() >= 0.0 and a.max() <= C
    assert np.count_nonzero((a == 0.0) | (a == C)) >= 1


def test_projected_ray_steps_fix_many_variables_at_once():
    """Thirty free α's, forty columns of rank 3 scaled by 1e4 (the columns' space: CG-Boost's
    master on many linear-kernel columns): nearly every face is a ray, and a step that stopped
    at the first bound fixed one α, so reaching a face with ≤ 4 free α's took ≥ 26 steps; the
    projected path fixes several per step, lowering the dual, keeping the constraints."""
    rng = np.random.default_rng(7)
    m, J, C = 30, 40, 1.0
    A = 1e4 * rng.normal(size=(m, 3)) @ rng.normal(size=(3, J))
    y = np.where(A[:, 0] + 0.5 * rng.normal(size=m) > 0, 1.0, -1.0)
    f, grad = _dual(A, y)
    a = feasible_alpha(np.full(m, C / 2.0), y)
    start = f(a)
    taken = face_descent(A, y, a, grad(a), C, 1e-12, lambda: grad(a), max_steps=10**4)
    assert taken < 26 / 2 and f(a) < start
    assert a.min() >= 0.0 and a.max() <= C and abs(float(y @ a)) < 1e-9


@pytest.mark.parametrize("seed", range(4))
def test_project_box_hyperplane_matches_cvxpy(seed):
    """The projection onto {0 ≤ x ≤ C, yᵀx = s} against cvxpy's, including far-out points."""
    rng = np.random.default_rng(seed)
    k = [1, 5, 40, 300][seed]
    C = [1.0, 3.0, 1e3, 0.1][seed]
    y = np.where(rng.random(k) < 0.5, 1.0, -1.0)
    s = float(y @ rng.uniform(0.0, C, size=k))
    v = rng.uniform(0.0, C, size=k) + 4.0 * C * rng.normal(size=k)
    got = face_steps.project_box_hyperplane(v, y, C, s)
    x = cp.Variable(k)
    cp.Problem(cp.Minimize(cp.sum_squares(x - v)), [x >= 0, x <= C, y @ x == s]).solve(
        solver="CLARABEL"
    )
    assert got.min() >= 0.0 and got.max() <= C
    assert float(y @ got) == pytest.approx(s, abs=1e-12 * C * k)
    ref = float(np.sum((x.value - v) ** 2))
    assert float(np.sum((got - v) ** 2)) <= ref * (1.0 + 1e-8)  # as close as the reference
    np.testing.assert_allclose(got, x.value, atol=1e-4 * C)  # (the interior point's accuracy)


@pytest.mark.parametrize("scale", [1.0, 1e7])
@pytest.mark.parametrize("box", [2.0, 1e12])
def test_face_step_newton_branch_lands_on_the_face_optimum(scale, box):
    """Fewer free α's than independent columns: the face's KKT system is regular, and from near
    its solution (closed form, interior) one step reaches it, unclipped. Columns scaled by s
    (as the quadratic kernel on standardised pixels reaches norm 1e7) move the optimum to
    optimum/s² exactly; the step must still land there (a solve of ZZᵀ, whose entries are then
    1e14, beside an unscaled border y returned round-off). C = 2·max(optimum) solves the
    (|F|+1)² KKT matrix, C = 1e12·max(optimum) (a box whose width times the curvatures that
    solve would drop moves the gradient by more than 1e-6) the columns' space."""
    rng = np.random.default_rng(2)
    m = 8
    A = np.eye(m, m + 2) + 0.1 * rng.normal(size=(m, m + 2))
    y = np.tile([1.0, -1.0], m // 2)
    Q = (y[:, None] * A) @ (y[:, None] * A).T
    K = np.block([[Q, y[:, None]], [y[None, :], np.zeros((1, 1))]])
    optimum = np.linalg.solve(K, np.append(np.ones(m), 0.0))[:m] / scale**2
    A = scale * A
    C = box * optimum.max()
    assert optimum.min() > 0.0  # interior: the face of all α's
    _, grad = _dual(A, y)
    a = optimum + 0.1 * optimum.min() * rng.uniform(-1.0, 1.0, size=m)
    a -= y * float(y @ a) / m
    step = face_step(A, y, a, grad(a), C)
    assert step == (True, False, False)
    np.testing.assert_allclose(a, optimum, rtol=1e-10)


def test_face_descent_respects_the_cap_on_the_step_cost(sign_problem):
    """A step costing more than a dense ``max_free``² solve (|F|·J·min(|F|, J) > max_free³) is
    not taken and α is unchanged; one step under the cap is."""
    H, y = sign_problem(seed=24, m=150, J=15)
    C = 10.0
    f, grad = _dual(H, y)
    a = feasible_alpha(np.full(y.size, C / 2.0), y)
    g = grad(a)
    free = int(np.count_nonzero((a > 0) & (a < C)))
    cost = free * 15 * min(free, 15)
    edge = round(cost ** (1.0 / 3.0))
    kept = a.copy()
    assert (edge - 1) ** 3 < cost < (edge + 1) ** 3
    assert face_descent(H, y, a, g, C, 1e-9, lambda: grad(a), max_free=edge - 1) == 0
    np.testing.assert_array_equal(a, kept)
    taken = face_descent(H, y, a, g, C, 1e-9, lambda: grad(a), max_free=edge + 1)
    assert taken >= 1 and f(a) < f(kept)
    np.testing.assert_allclose(g, grad(a))  # the gradient follows α


@pytest.mark.parametrize("shape", [(12, 12), (30, 7), (7, 30)])
def test_lstsq_gelsy_is_scipys_gelsy_solution(shape):
    """Square, tall and wide, each rank-deficient: bit for bit scipy's gelsy lstsq."""
    rng = np.random.default_rng(sum(shape))
    m, n = shape
    r = min(m, n) - 2
    a = rng.normal(size=(m, r)) @ rng.normal(size=(r, n))
    b = rng.normal(size=m)
    cond = np.finfo(float).eps * max(m, n)
    got = lstsq_gelsy(a, b, cond)
    want = scipy.linalg.lstsq(a, b, cond=cond, lapack_driver="gelsy", check_finite=False)[0]
    np.testing.assert_array_equal(got, want)
    assert got.shape == (n,)
    np.testing.assert_allclose(got, np.linalg.pinv(a) @ b, atol=1e-10)  # the minimum-norm one


@pytest.mark.parametrize("shape", [(30, 200), (12, 12)])
def test_left_singular_vectors_match_numpys_svd(shape):
    """The face step's factorisation of a wide Z (QR of Zᵀ, SVD of the triangle) gives Z's
    singular values and left singular vectors (up to sign), largest first."""
    rng = np.random.default_rng(shape[0])
    Z = rng.normal(size=shape) * np.logspace(0, 6, shape[1])  # columns scaled over 1e6
    U, sv = face_steps._left_singular(Z)
    U_ref, sv_ref, _ = np.linalg.svd(Z, full_matrices=False)
    # as accurate as an SVD: errors of a few eps·σ_max (the small values are not relatively exact)
    np.testing.assert_allclose(sv, sv_ref, rtol=1e-10, atol=1e-13 * sv_ref[0])
    np.testing.assert_allclose(np.abs(np.sum(U * U_ref, axis=0)), 1.0, atol=1e-8)


@pytest.mark.parametrize("seed", range(4))
def test_projected_search_on_faces_wider_than_the_columns(seed):
    """Sixty free α's, twenty columns of rank 3 scaled by 1e4 (CG-Boost's master on one kernel
    late in a fit: more free u than columns): a step stopped at the first bound fixes one α;
    with ``search_wide`` the projected path fixes several and ends lower, on the constraints."""
    rng = np.random.default_rng(seed)
    m, J, C = 60, 20, 1.0
    A = 1e4 * rng.normal(size=(m, 3)) @ rng.normal(size=(3, J))
    y = np.where(A[:, 0] + 0.5 * rng.normal(size=m) > 0, 1.0, -1.0)
    f, grad = _dual(A, y)
    out = {}
    for wide in (False, True):
        a = feasible_alpha(np.full(m, C / 2.0), y)
        step = face_step(A, y, a, grad(a), C, search_wide=wide)
        assert step.moved and step.clipped
        assert a.min() >= 0.0 and a.max() <= C and abs(float(y @ a)) < 1e-9
        out[wide] = (f(a), np.count_nonzero((a == 0.0) | (a == C)))
    assert out[False][1] == 1 and out[True][1] >= 5
    assert out[True][0] < out[False][0]
