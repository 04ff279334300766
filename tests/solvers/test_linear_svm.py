"""The restricted linear SVM against independent solvers (cvxpy, scikit-learn's LIBSVM)."""

from __future__ import annotations

import cvxpy as cp
import numba
import numpy as np
import pytest
import scipy.linalg
from sklearn.svm import SVC

from kernbench.solvers import dual_cd, face_steps, smo
from kernbench.solvers.dual_cd import dcd_solve, dual_diagonal
from kernbench.solvers.face_steps import face_descent, face_step, lstsq_gelsy, max_violation
from kernbench.solvers.restricted_svm import RestrictedLinearSVM
from kernbench.solvers.smo import feasible_alpha, libsvm_rho


def _problem(seed: int = 0, m: int = 70, J: int = 6):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, J))
    y = np.where(X[:, 0] + 0.8 * rng.normal(size=m) > 0.3, 1.0, -1.0)
    return X, y


def _cvxpy_svm(X, y, C, bias_regularised):
    w, b = cp.Variable(X.shape[1]), cp.Variable()
    reg = 0.5 * cp.sum_squares(w) + (0.5 * cp.square(b) if bias_regularised else 0)
    hinge = cp.sum(cp.pos(1 - cp.multiply(y, X @ w + b)))
    prob = cp.Problem(cp.Minimize(reg + C * hinge))
    prob.solve(solver="CLARABEL")
    return prob.value, w.value, b.value


@pytest.mark.parametrize("C", [0.05, 1.0, 20.0])
@pytest.mark.parametrize("gram_max_rows", [10_000, 0])  # Gram matrix kept / rows on the fly
def test_exact_bias_matches_cvxpy_and_libsvm(C, gram_max_rows):
    X, y = _problem()
    svm = RestrictedLinearSVM(y, C, tol=1e-10, max_epochs=10**5, gram_max_rows=gram_max_rows)
    svm.add_columns(X)
    info = svm.solve()
    ref, w_ref, b_ref = _cvxpy_svm(X, y, C, bias_regularised=False)
    assert info.stop_reason == "tol"
    assert abs(info.primal - ref) / ref < 1e-6
    assert abs(info.gap) < 1e-7 * max(1.0, ref)
    assert info.primal <= ref * (1 + 1e-9)  # never worse than the interior-point optimum
    np.testing.assert_allclose(svm.w, w_ref, atol=1e-4)  # w is unique; IPM accuracy ~1e-5
    assert svm.b == pytest.approx(b_ref, abs=1e-4)
    # LIBSVM (a second, independent SMO) stops a little earlier at large C: compare loosely
    svc = SVC(kernel="linear", C=C, tol=1e-10).fit(X, y)
    np.testing.assert_allclose(svm.w, svc.coef_.ravel(), atol=1e-4)
    assert svm.b == pytest.approx(svc.intercept_[0], abs=1e-4)
    assert svm.primal_objective(svc.coef_.ravel(), svc.intercept_[0]) >= info.primal - 1e-9


def test_liblinear_mode_solves_the_regularised_bias_problem():
    X, y = _problem(seed=3)
    C = 0.7
    svm = RestrictedLinearSVM(y, C, bias_mode="liblinear", tol=1e-10, max_epochs=10**5)
    svm.add_columns(X)
    info = svm.solve()
    ref, w_ref, b_ref = _cvxpy_svm(X, y, C, bias_regularised=True)
    assert abs(info.primal - ref) / ref < 1e-6
    np.testing.assert_allclose(svm.w, w_ref, atol=1e-4)
    assert svm.b == pytest.approx(b_ref, abs=1e-4)
    assert svm.b == pytest.approx(float(y @ svm.alpha), abs=1e-12)  # b is the bias feature's w


@pytest.mark.parametrize("bias_mode", ["exact", "liblinear"])
def test_warm_start_after_adding_columns_equals_cold_solve(bias_mode):
    X, y = _problem(seed=5, J=8)
    C = 2.0
    warm = RestrictedLinearSVM(y, C, bias_mode=bias_mode, tol=1e-10, max_epochs=10**5)
    for j in range(X.shape[1]):
        warm.add_columns(X[:, j])
        info = warm.solve()
    cold = RestrictedLinearSVM(y, C, bias_mode=bias_mode, tol=1e-10, max_epochs=10**5)
    cold.add_columns(X)
    ref = cold.solve()
    assert info.primal == pytest.approx(ref.primal, rel=1e-8)
    np.testing.assert_allclose(warm.columns, X)


def test_kkt_conditions_exact_mode():
    X, y = _problem(seed=7)
    C = 0.5
    svm = RestrictedLinearSVM(y, C, tol=1e-9, max_epochs=10**5)
    svm.add_columns(X)
    svm.solve()
    a = svm.alpha
    np.testing.assert_allclose(svm.w, X.T @ (y * a), atol=1e-12)  # (7)
    assert a.min() >= 0 and a.max() <= C
    assert abs(y @ a) < 1e-10
    # complementary slackness at the primal solution: margin > 1 ⇒ α = 0, margin < 1 ⇒ α = C
    margins = y * svm.decision_train()
    assert np.all(a[margins > 1 + 1e-6] < 1e-7)
    assert np.all(a[margins < 1 - 1e-6] > C - 1e-7)


def test_epoch_cap_is_reported():
    X, y = _problem(seed=2, m=300)
    for mode in ["exact", "liblinear"]:
        svm = RestrictedLinearSVM(y, 10.0, bias_mode=mode, tol=1e-14, max_epochs=1)
        svm.add_columns(X)
        info = svm.solve()
        assert info.stop_reason == "max_epochs"
        assert info.violation > 1e-14


def test_add_columns_returns_pricing_scores_and_updates_w():
    X, y = _problem(seed=1)
    svm = RestrictedLinearSVM(y, 1.0, alpha0=0.25)
    scores = svm.add_columns(X[:, :2])
    np.testing.assert_allclose(scores, X[:, :2].T @ (y * svm.alpha))
    np.testing.assert_allclose(svm.w, scores)


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


def _sign_problem(seed: int = 11, m: int = 80, J: int = 12):
    """Stump-like ±1 columns (and a few zeros, as a perceptron on its hyperplane gives)."""
    X, y = _problem(seed=seed, m=m, J=J)
    H = np.sign(X - 0.2)
    H[:3, 0] = 0.0
    return H, y


@pytest.mark.parametrize("bias_mode", ["exact", "liblinear"])
@pytest.mark.parametrize("gram_max_rows", [10_000, 0])
def test_sign_valued_columns_stored_as_int8_match_cvxpy(bias_mode, gram_max_rows):
    H, y = _sign_problem()
    C = 3.0
    svm = RestrictedLinearSVM(
        y, C, bias_mode=bias_mode, tol=1e-10, max_epochs=10**5, gram_max_rows=gram_max_rows
    )
    for j in range(H.shape[1]):  # warm-started column by column, as CGENS adds them
        svm.add_columns(H[:, j])
        info = svm.solve()
    assert svm._Phi.dtype == np.int8  # the compact storage is the one under test
    ref, w_ref, b_ref = _cvxpy_svm(H, y, C, bias_regularised=bias_mode == "liblinear")
    assert abs(info.primal - ref) / ref < 1e-6
    np.testing.assert_allclose(svm.w, w_ref, atol=1e-4)
    np.testing.assert_array_equal(svm.columns, H)
    np.testing.assert_allclose(svm.decision_train(), H @ svm.w + svm.b, rtol=1e-12, atol=1e-12)
    assert svm.dual_objective() == pytest.approx(
        float(svm.alpha.sum())
        - 0.5 * float(np.sum((H.T @ (y * svm.alpha)) ** 2))
        - (0.5 * float(y @ svm.alpha) ** 2 if bias_mode == "liblinear" else 0.0),
        rel=1e-12,
    )


def test_int8_storage_gives_the_float64_iterates():
    """Dual CD: the same α after every capped warm-started solve, Φ held as int8 or float64."""
    H, y = _sign_problem(seed=13, J=10)
    C = 1.5
    compact = RestrictedLinearSVM(y, C, bias_mode="liblinear", tol=1e-3, max_epochs=20)
    wide = RestrictedLinearSVM(y, C, bias_mode="liblinear", tol=1e-3, max_epochs=20)
    wide._Phi = wide._Phi.astype(np.float64)  # the previous, float64 buffer
    for j in range(H.shape[1]):
        compact.add_columns(H[:, j])
        wide.add_columns(H[:, j])
        a, b = compact.solve(), wide.solve()
        assert compact._Phi.dtype == np.int8 and wide._Phi.dtype == np.float64
        assert a.n_iter == b.n_iter and a.stop_reason == b.stop_reason
        np.testing.assert_allclose(compact.alpha, wide.alpha, rtol=0, atol=1e-12)
        assert a.primal == pytest.approx(b.primal, rel=1e-12)


def test_int8_storage_exact_mode_reaches_the_float64_optimum():
    """SMO: its gradient differs from the float64 one by rounding only, which may break a tie
    of the working-set choice differently; the optimum (w, b, objective) is the same."""
    H, y = _sign_problem(seed=13, J=10)
    C = 1.5
    compact = RestrictedLinearSVM(y, C, tol=1e-10, max_epochs=10**5)
    wide = RestrictedLinearSVM(y, C, tol=1e-10, max_epochs=10**5)
    wide._Phi = wide._Phi.astype(np.float64)
    for j in range(H.shape[1]):
        compact.add_columns(H[:, j])
        wide.add_columns(H[:, j])
        a, b = compact.solve(), wide.solve()
        assert a.primal == pytest.approx(b.primal, rel=1e-9)
        np.testing.assert_allclose(compact.w, wide.w, atol=1e-6)
        assert compact.b == pytest.approx(wide.b, abs=1e-6)


def test_dual_diagonal_is_float32_only_where_float32_holds_it_exactly():
    H, y = _sign_problem(seed=5, J=9)
    X, _ = _problem(seed=5, m=H.shape[0], J=3)
    for Phi, dtype in ((H.astype(np.int8), np.float32), (H, np.float32), (X, np.float64)):
        qd = dual_diagonal(np.ascontiguousarray(Phi), Phi.shape[1], 1.0)
        assert qd.dtype == dtype
        ref = 1.0 + np.sum(Phi.astype(np.float64) ** 2, axis=1)
        if dtype == np.float32:  # integers: exact in any order
            np.testing.assert_array_equal(qd, ref)
        else:
            np.testing.assert_allclose(qd, ref, rtol=1e-14)
    # bias² = 0.09 (plus integers) needs more digits than float32 has
    assert dual_diagonal(H.astype(np.int8), H.shape[1], 0.3).dtype == np.float64


def test_dual_cd_gives_the_same_iterates_with_narrow_labels_and_diagonal():
    """int8 labels and the float32 Q_ii hold the float64 values exactly: every step is the same."""
    H, y = _sign_problem(seed=21, J=12)
    Phi = H.astype(np.int8)
    m, J = Phi.shape
    qd = dual_diagonal(Phi, J, 1.0)
    assert qd.dtype == np.float32
    runs = []
    for labels, diag in ((y, qd.astype(np.float64)), (y.astype(np.int8), qd)):
        alpha, w = np.zeros(m), np.zeros(J + 1)
        out = dcd_solve(Phi, J, 1.0, labels, alpha, w, 0.7, 1e-6, 200, 3, diag)
        runs.append((out, alpha, w))
    assert runs[0][0] == runs[1][0]
    np.testing.assert_array_equal(runs[0][1], runs[1][1])
    np.testing.assert_array_equal(runs[0][2], runs[1][2])


def test_dual_cd_with_one_diagonal_entry_for_all_rows_takes_the_same_steps():
    """±1 columns give Q_ii = J + 1 for every row; passed as one entry, every step is the same."""
    H, y = _sign_problem(seed=23, J=10)
    H[:3, 0] = 1.0  # no zeros: stumps
    Phi = H.astype(np.int8)
    m, J = Phi.shape
    full = dual_diagonal(Phi, J, 1.0)
    np.testing.assert_array_equal(full, J + 1.0)
    runs = []
    for diag in (full, np.array([J + 1.0], dtype=np.float32)):
        alpha, w = np.zeros(m), np.zeros(J + 1)
        out = dcd_solve(Phi, J, 1.0, y.astype(np.int8), alpha, w, 0.7, 1e-6, 200, 3, diag)
        runs.append((out, alpha, w))
    assert runs[0][0] == runs[1][0]
    np.testing.assert_array_equal(runs[0][1], runs[1][1])
    np.testing.assert_array_equal(runs[0][2], runs[1][2])


def test_restricted_svm_uses_one_diagonal_entry_only_while_every_column_is_plus_minus_one():
    H, y = _sign_problem(seed=29, J=6)  # column 0 has zeros
    stumps = np.sign(H[:, 1:] + 0.5)
    svm = RestrictedLinearSVM(y, 2.0, bias_mode="liblinear", tol=1e-8, max_epochs=10**4)
    for j in range(stumps.shape[1]):
        svm.add_columns(stumps[:, j])
        qd = svm._dual_diagonal()
        np.testing.assert_array_equal(qd, [j + 2.0])  # J + bias², one entry
        svm.solve()
    svm.add_columns(H[:, 0])  # zeros: the rows differ from now on
    qd = svm._dual_diagonal()
    assert qd.shape == (y.shape[0],)
    np.testing.assert_array_equal(qd, dual_diagonal(svm._Phi, svm.n_columns, 1.0))
    svm.solve()
    # and the fit is LIBLINEAR's problem: the optimum of the bias-as-feature SVM, by cvxpy
    Phi = svm.columns
    w, b = cp.Variable(Phi.shape[1]), cp.Variable()
    hinge = cp.sum(cp.pos(1 - cp.multiply(y, Phi @ w + b)))
    ref = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w) + 0.5 * b**2 + 2.0 * hinge))
    ref.solve()
    assert svm.primal_objective() == pytest.approx(ref.value, rel=1e-5)


@numba.njit
def _plain_shuffles(index, active, seed, rounds):  # pragma: no cover - numba
    np.random.seed(seed)  # noqa: NPY002 (numba: the legacy generator only)
    for _ in range(rounds):
        for s in range(active):
            r = s + np.random.randint(active - s)  # noqa: NPY002
            tmp = index[s]
            index[s] = index[r]
            index[r] = tmp
    return index


@numba.njit
def _ring_shuffles(index, active, seed, rounds, ahead):  # pragma: no cover - numba
    np.random.seed(seed)  # noqa: NPY002
    ring = np.empty(ahead, dtype=np.int64)
    for _ in range(rounds):
        dual_cd._shuffle_prefix(index, active, ring)
    return index


@pytest.mark.parametrize("active", [1, 5, 16, 17, 300])
@pytest.mark.parametrize("ahead", [1, 16])
def test_shuffle_with_early_draws_is_the_plain_fisher_yates(active, ahead):
    """Drawing each partner `ahead` steps early (to prefetch it) gives the same permutations."""
    start = np.arange(400, dtype=np.int32)[::-1].copy()
    expected = _plain_shuffles(start.copy(), active, 9, 3)
    got = _ring_shuffles(start.copy(), active, 9, 3, ahead)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(got[active:], start[active:])  # the shrunk tail is untouched


def test_a_real_valued_column_turns_the_buffer_into_float64():
    H, y = _sign_problem(seed=17, J=6)
    X, _ = _problem(seed=17, m=H.shape[0], J=2)
    C = 2.0
    svm = RestrictedLinearSVM(y, C, tol=1e-10, max_epochs=10**5)
    svm.add_columns(H)
    svm.solve()
    assert svm._Phi.dtype == np.int8
    svm.add_columns(X)  # e.g. Fourier features: not sign-valued
    info = svm.solve()
    assert svm._Phi.dtype == np.float64
    full = np.column_stack([H, X])
    np.testing.assert_array_equal(svm.columns, full)
    ref, w_ref, _ = _cvxpy_svm(full, y, C, bias_regularised=False)
    assert abs(info.primal - ref) / ref < 1e-6
    np.testing.assert_allclose(svm.w, w_ref, atol=1e-4)


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


@pytest.mark.parametrize("C", [0.1, 1.0, 10.0])
@pytest.mark.parametrize("gram_max_rows", [10_000, 0])
def test_smo_with_face_steps_matches_cvxpy_where_pairwise_updates_stall(
    monkeypatch, C, gram_max_rows
):
    """Stump-like columns added one by one, as CGENS does; at C = 10 the pairwise updates stall
    (more free α's than columns) and face steps, rays among them, finish the solves."""
    H, y = _sign_problem(seed=24, m=150, J=15)
    steps = []

    def recorded(*args, **kwargs):
        steps.append(face_step(*args, **kwargs))
        return steps[-1]

    monkeypatch.setattr(face_steps, "face_step", recorded)
    svm = RestrictedLinearSVM(y, C, tol=1e-9, max_epochs=10**5, gram_max_rows=gram_max_rows)
    for j in range(H.shape[1]):
        svm.add_columns(H[:, j])
        info = svm.solve()
        assert info.stop_reason == "tol"
    assert svm.n_face_steps == sum(s.moved for s in steps)
    if C == 10.0:  # the stalling case: face steps were needed and taken, along rays too
        assert svm.n_face_steps > 0 and any(s.moved and s.ray for s in steps)
    ref, w_ref, b_ref = _cvxpy_svm(H, y, C, bias_regularised=False)
    assert abs(info.primal - ref) / ref < 1e-6
    np.testing.assert_allclose(svm.w, w_ref, atol=1e-4)


def test_face_descent_respects_the_cap_on_the_step_cost():
    """A step costing more than a dense ``max_free``² solve (|F|·J·min(|F|, J) > max_free³) is
    not taken and α is unchanged; one step under the cap is."""
    H, y = _sign_problem(seed=24, m=150, J=15)
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


def _smo_state(H, y, C):
    """The arguments of smo_solve for columns H (Gram matrix kept), from α = 0."""
    Phi = np.ascontiguousarray(H, dtype=np.float64)
    K = Phi @ Phi.T
    alpha = np.zeros(len(y))
    G = -np.ones(len(y))
    return K, Phi, np.diag(K).copy(), alpha, G


@pytest.mark.parametrize("use_gram", [True, False])
@pytest.mark.parametrize("C", [1.0, 100.0])
def test_smo_with_shrinking_reaches_the_optimum_of_smo_without(use_gram, C):
    """Shrinking changes which points are scanned, not the optimum: both end at cvxpy's dual."""
    H, y = _sign_problem(seed=5, m=120, J=12)
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
    ref, _, _ = _cvxpy_svm(H, y, C, bias_regularised=False)
    assert duals[True] == pytest.approx(ref, rel=1e-7)
    assert duals[True] == pytest.approx(duals[False], rel=1e-9)


@pytest.mark.parametrize("use_gram", [True, False])
@pytest.mark.parametrize("cap", [150, 250, 400, 777])
def test_smo_with_shrinking_returns_the_full_gradient_when_out_of_steps(use_gram, cap):
    """Stopped by the step cap while points are shrunk, G is recomputed for them."""
    H, y = _sign_problem(seed=6, m=100, J=10)
    C = 50.0
    K, Phi, diag, alpha, G = _smo_state(H, y, C)
    steps, _, ok = smo.smo_solve(
        use_gram, K, Phi, Phi.shape[1], diag, y, alpha, G, C, 1e-12, cap, True
    )
    assert not ok and steps == cap
    np.testing.assert_allclose(G, y * (Phi @ (Phi.T @ (y * alpha))) - 1.0, atol=1e-9)


def test_shrink_drops_only_bounded_points_that_cannot_join_a_violating_pair():
    H, y = _sign_problem(seed=7, m=100, J=10)
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
