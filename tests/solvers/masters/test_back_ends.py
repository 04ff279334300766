"""CG-Boost masters: OSQP (warm-started), HiGHS, LIBSVM and the warm-started SMO agree with cvxpy
on the same column sequences; the row multipliers satisfy strong duality and the KKT identity
α = Kᵀg."""

from __future__ import annotations

import numpy as np
import pytest

from kernbench.solvers.masters import (
    IncrementalKernelLPMaster,
    OSQPKernelMaster,
    RowForm,
    SMOKernelMaster,
    SVMKernelMaster,
    dual_objective,
    smo_qp,
    solve_kernel_master_cvxpy,
)
from kernbench.solvers.masters.interior_point import ColumnRange, snap_to_bounds
from kernbench.solvers.smo import add_outer
from kernbench.weak.kernel_columns import make_kernel


def _data(task: str):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((30, 3))
    A = np.exp(-((X[:, None, :] - X[None, :8, :]) ** 2).sum(-1) / 6.0)  # 8 RBF columns
    A = np.hstack([A, X @ X[8:11].T])  # and 3 linear columns
    if task == "classification":
        y = np.where(X[:, 0] + 0.3 * rng.standard_normal(30) > 0, 1.0, -1.0)
        return A, RowForm.classification(y)
    return A, RowForm.regression(X[:, 0] + np.sin(X[:, 1]), 0.1)


@pytest.mark.parametrize("task", ["classification", "regression"])
@pytest.mark.parametrize("alpha_sign", ["free", "nonneg"])
@pytest.mark.parametrize("bias", [True, False])
def test_osqp_master_agrees_with_cvxpy_column_by_column(task, alpha_sign, bias) -> None:
    A, rows = _data(task)
    C = 2.0
    master = OSQPKernelMaster(rows, C, alpha_sign=alpha_sign, bias=bias, eps=1e-9, max_iter=20000)
    for j in range(A.shape[1]):
        master.add_column(A[:, j])
        if j % 3 and j != A.shape[1] - 1:
            continue
        got = master.solve()
        ref = solve_kernel_master_cvxpy(A[:, : j + 1], rows, C, alpha_sign=alpha_sign, bias=bias)
        assert got.primal == pytest.approx(ref.primal, rel=1e-6)
        np.testing.assert_allclose(got.alpha, ref.alpha, atol=1e-4)
        # strong duality of the restricted problem at OSQP's multipliers
        s = got.g @ A[:, : j + 1]
        assert dual_objective(rows, got.w, s, "l2", alpha_sign) == pytest.approx(
            got.primal, rel=1e-5
        )
        if alpha_sign == "free":  # KKT: α_j = Σ_i g_i K_ij
            np.testing.assert_allclose(got.alpha, s, atol=1e-4)
        if bias:
            assert abs(got.g.sum()) < 1e-5 * C * rows.m
    assert master.n_fallbacks == 0  # every solve above was OSQP's own


@pytest.mark.parametrize("warm_start", [True, False])
def test_osqp_master_default_settings_are_certified(warm_start) -> None:
    """Default tolerances (ADMM from 1e-2, tightened until a polished solution's duality gap
    certifies it): every restricted objective within 1e-6 of Clarabel's, warm or cold."""
    rng = np.random.default_rng(7)
    X = rng.standard_normal((120, 4))
    y = np.where(X[:, 0] * X[:, 1] + 0.2 * rng.standard_normal(120) > 0, 1.0, -1.0)
    rows = RowForm.classification(y)
    A = np.hstack([(X @ X[:20].T + 1.0) ** 2, np.exp(-((X[:, None] - X[None, :20]) ** 2).sum(-1))])
    master = OSQPKernelMaster(rows, 1.0, warm_start=warm_start)
    for j in range(A.shape[1]):
        master.add_column(A[:, j])
        got = master.solve()
        ref = solve_kernel_master_cvxpy(A[:, : j + 1], rows, 1.0)
        assert got.primal == pytest.approx(ref.primal, rel=1e-6)
        s = got.g @ A[:, : j + 1]
        assert dual_objective(rows, got.w, s, "l2", "free") == pytest.approx(got.primal, rel=1e-6)


@pytest.mark.parametrize("task", ["classification", "regression"])
@pytest.mark.parametrize("alpha_sign", ["free", "nonneg"])
def test_highs_lp_master_agrees_with_cvxpy(task, alpha_sign) -> None:
    A, rows = _data(task)
    master = IncrementalKernelLPMaster(rows, 1.5, alpha_sign=alpha_sign, bias=True)
    for j in range(A.shape[1]):
        master.add_column(A[:, j])
        got = master.solve()
        ref = solve_kernel_master_cvxpy(
            A[:, : j + 1], rows, 1.5, norm="l1", alpha_sign=alpha_sign, solver="HIGHS"
        )
        assert got.primal == pytest.approx(ref.primal, rel=1e-9)
        assert float(rows.rhs @ got.w) == pytest.approx(got.primal, rel=1e-9)  # LP duality
        s = got.g @ A[:, : j + 1]
        assert (np.abs(s) if alpha_sign == "free" else s).max() <= 1 + 1e-9  # dual feasible


def test_svm_master_solves_the_classification_qp() -> None:
    A, rows = _data("classification")
    master = SVMKernelMaster(rows, 2.0, tol=1e-9)
    empty = master.solve()  # the bias-only problem in closed form
    ref0 = solve_kernel_master_cvxpy(A[:, :0], rows, 2.0)
    assert empty.primal == pytest.approx(ref0.primal, rel=1e-7)
    assert float(rows.rhs @ empty.w) == pytest.approx(empty.primal, rel=1e-12)
    for j in range(A.shape[1]):
        master.add_column(A[:, j])
    got = master.solve()
    ref = solve_kernel_master_cvxpy(A, rows, 2.0)
    assert got.primal == pytest.approx(ref.primal, rel=1e-6)
    with pytest.raises(ValueError, match="classification"):
        SVMKernelMaster(_data("regression")[1], 1.0)


def _degenerate_problem(seed: int = 7, m: int = 120):
    """40 columns of rank 15 (quadratic kernel on 4 features) then 20 RBF columns: the dual is
    rank-deficient for most of the sequence, as at the start of a stratified 2-norm fit."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, 4))
    y = np.where(X[:, 0] * X[:, 1] + 0.2 * rng.standard_normal(m) > 0, 1.0, -1.0)
    A = np.hstack([(X @ X[:40].T + 1.0) ** 2, np.exp(-((X[:, None] - X[None, :20]) ** 2).sum(-1))])
    return A, RowForm.classification(y)


def _check_dual_feasible(master: SMOKernelMaster, res, C: float) -> None:
    u = master._u
    assert u.min() >= 0.0 and u.max() <= C
    assert abs(float(master.rows.sign @ u)) <= 1e-10 * max(C, 1.0) * u.size
    np.testing.assert_array_equal(res.w, np.clip(u, 0.0, C))


@pytest.mark.parametrize("C", [1e-2, 1.0, 1e3])
def test_smo_master_equals_cvxpy_and_libsvm_along_a_column_sequence(C) -> None:
    A, rows = _degenerate_problem()
    master = SMOKernelMaster(rows, C, tol=1e-9, ipm_face_steps=None)  # the SMO path
    empty = master.solve()  # only b: the closed form
    assert empty.primal == pytest.approx(solve_kernel_master_cvxpy(A[:, :0], rows, C).primal)
    for j in range(A.shape[1]):
        master.add_column(A[:, j])
        got = master.solve()
        _check_dual_feasible(master, got, C)
        # converged by itself, no interior-point fallback; at C = 1e3 the gradient's rounding
        # noise (~1e-8) exceeds 10·tol = 1e-8 on some solves: SMO stops at tol + 4·noise
        assert got.stop_reason in (("smo",) if C <= 1.0 else ("smo", "smo@floor"))
        if j % 6 and j != A.shape[1] - 1:
            continue
        ref = solve_kernel_master_cvxpy(A[:, : j + 1], rows, C)
        assert got.primal == pytest.approx(ref.primal, rel=1e-6)
        s = got.g @ A[:, : j + 1]
        np.testing.assert_allclose(got.alpha, s, rtol=1e-12, atol=1e-12)  # α = K_𝒲ᵀ(y∘u)
        assert dual_objective(rows, got.w, s, "l2", "free") == pytest.approx(got.primal, rel=1e-6)
        scale = max(1.0, float(np.abs(ref.alpha).max()))
        np.testing.assert_allclose(got.alpha, ref.alpha, atol=1e-4 * scale)
    assert master.n_fallbacks == 0
    if C <= 1.0:  # LIBSVM from scratch on the last columns (very slow on this dual at C = 1e3)
        lib = SVMKernelMaster(rows, C, tol=1e-7)
        for k in range(A.shape[1]):
            lib.add_column(A[:, k])
        lib_primal = lib.solve().primal  # a feasible (α, b), ~1e-5 above the optimum
        assert got.primal == pytest.approx(lib_primal, rel=1e-4)
        assert got.primal <= lib_primal * (1.0 + 1e-6)


def test_smo_master_warm_equals_cold_and_keeps_the_gradient() -> None:
    A, rows = _degenerate_problem(seed=3, m=90)
    y = rows.sign
    warm = SMOKernelMaster(rows, 1.0, tol=1e-9, ipm_face_steps=None)
    cold = SMOKernelMaster(rows, 1.0, tol=1e-9, warm_start=False, ipm_face_steps=None)
    rows_only = SMOKernelMaster(  # rows from the columns
        rows, 1.0, tol=1e-9, gram_max_rows=0, ipm_face_steps=None
    )
    for master in (warm, cold, rows_only):
        master.solve()
    steps_warm = steps_cold = 0
    for j in range(A.shape[1]):
        for master in (warm, cold, rows_only):
            master.add_column(A[:, j])
        # the O(m) update of ∇ = Qu − 1 equals the gradient recomputed from the columns
        K = A[:, : j + 1]
        fresh = y * (K @ (K.T @ (y * warm._u))) - 1.0
        np.testing.assert_allclose(warm._grad, fresh, rtol=1e-10, atol=1e-10 * np.abs(fresh).max())
        if j < A.shape[1] - 1:
            np.testing.assert_allclose(warm._G, K @ K.T, rtol=1e-12)
        w, c, r = warm.solve(), cold.solve(), rows_only.solve()
        for other in (c, r):
            assert w.primal == pytest.approx(other.primal, rel=1e-8)
            scale = max(1.0, float(np.abs(w.alpha).max()))
            np.testing.assert_allclose(w.alpha, other.alpha, atol=1e-5 * scale)
            if np.any((w.w > 1e-9) & (w.w < 1.0 - 1e-9)):  # b is unique with a free u
                assert w.b == pytest.approx(other.b, abs=1e-5)
        _check_dual_feasible(warm, w, 1.0)
        steps_warm += w.n_iter
        steps_cold += c.n_iter
    # the warm start pays: fewer pair updates over the sequence than from u = 0 each time
    assert steps_warm < steps_cold


def test_smo_master_degenerate_starts_converge() -> None:
    """One column, a repeated column and rank-1 columns (many more free u than the rank)."""
    rng = np.random.default_rng(5)
    X = rng.standard_normal((60, 2))
    y = np.where(X[:, 0] + 0.5 * rng.standard_normal(60) > 0, 1.0, -1.0)
    rows = RowForm.classification(y)
    k = X @ X[0]
    cols = [k, k, 2.0 * k, X @ X[1], X @ X[2], X @ X[3]]  # ranks 1, 1, 1, 2, 2, 2
    for C in (1e-2, 1.0, 1e3):
        master = SMOKernelMaster(rows, C, tol=1e-10, ipm_face_steps=None)
        master.solve()
        for j, col in enumerate(cols):
            master.add_column(col)
            got = master.solve()
            assert got.stop_reason == "smo"
            _check_dual_feasible(master, got, C)
            ref = solve_kernel_master_cvxpy(np.column_stack(cols[: j + 1]), rows, C)
            assert got.primal == pytest.approx(ref.primal, rel=1e-6)


def test_smo_master_falls_back_to_clarabel_and_continues() -> None:
    A, rows = _degenerate_problem(seed=11, m=60)
    master = SMOKernelMaster(rows, 1.0, tol=1e-9, max_steps=1, ipm_face_steps=None)  # SMO stalls
    master.solve()
    for j in range(5):
        master.add_column(A[:, j])
    got = master.solve()
    assert got.stop_reason == "smo+clarabel" and master.n_fallbacks == 1
    ref = solve_kernel_master_cvxpy(A[:, :5], rows, 1.0)
    assert got.primal == pytest.approx(ref.primal, rel=1e-9)
    u = master._u  # the kept dual point is feasible and continues the next solve
    assert u.min() >= 0.0 and u.max() <= 1.0 and abs(float(rows.sign @ u)) < 1e-12
    master.max_steps = 10**6
    master.add_column(A[:, 5])
    nxt = master.solve()
    assert nxt.stop_reason == "smo"
    ref = solve_kernel_master_cvxpy(A[:, :6], rows, 1.0)
    assert nxt.primal == pytest.approx(ref.primal, rel=1e-6)
    assert master.fallbacks == {"step_cap": 1}


@pytest.mark.parametrize("C", [0.1, 2.0, 100.0])
def test_smo_master_solves_the_regression_qp_like_cvxpy(C) -> None:
    """ε-insensitive regression (13) by the same SMO over its 2m rows (∇ = Qw − c): every
    restricted objective equals cvxpy's, α = Kᵀ(u − v), strong duality, Σ(u − v) = 0."""
    A, rows = _data("regression")
    master = SMOKernelMaster(rows, C, tol=1e-9)
    first = master.solve()  # only b: SMO on the LP in (u, v)
    assert first.primal == pytest.approx(
        solve_kernel_master_cvxpy(A[:, :0], rows, C).primal, rel=1e-9
    )
    for j in range(A.shape[1]):
        master.add_column(A[:, j])
        got = master.solve()
        assert got.stop_reason == "smo"
        ref = solve_kernel_master_cvxpy(A[:, : j + 1], rows, C)
        assert got.primal == pytest.approx(ref.primal, rel=1e-6, abs=1e-8)  # Clarabel's accuracy
        s = got.g @ A[:, : j + 1]
        np.testing.assert_allclose(got.alpha, s, rtol=1e-12, atol=1e-12)
        dual = dual_objective(rows, got.w, s, "l2", "free")
        assert dual == pytest.approx(got.primal, rel=1e-7, abs=1e-9)
        assert abs(got.g.sum()) < 1e-9 * C * rows.m
    assert master.n_fallbacks == 0 and master.fallbacks == {}


def _raw_quadratic_problem(m: int = 60):
    """Quadratic-kernel columns on raw features of magnitude 100 (norms ~4e9): the scale of
    scikit-learn's check data under CG-Boost's default kernels."""
    rng = np.random.RandomState(42)
    X = rng.normal(loc=100, size=(m, 2))
    y = np.where(rng.randint(0, 2, m) == 1, 1.0, -1.0)
    return (X @ X[:12].T + 1.0) ** 2, RowForm.classification(y)


def test_cvxpy_reference_solves_badly_scaled_columns_in_scaled_variables() -> None:
    """Clarabel fails (NumericalError) on columns of norm ~4e9; the reference then solves the
    same problem in α_j = β_j/‖A_j‖: its objective is below that of any feasible point we can
    name, its multipliers are feasible, and on moderately scaled columns (where both forms
    solve) both forms agree."""
    from kernbench.solvers.masters.cvxpy_qp import _solve_cvxpy

    A, rows = _raw_quadratic_problem()
    got = solve_kernel_master_cvxpy(A, rows, 1.0)
    assert got.stop_reason.endswith("/rescaled")
    # feasible points: α = 0 with the best b (the bias-only optimum), and α of the first column
    # only, scaled to its own least-squares fit of y
    assert got.primal <= solve_kernel_master_cvxpy(A[:, :0], rows, 1.0).primal + 1e-9
    w = got.w
    assert w.min() >= 0.0 and w.max() <= 1.0 and abs(float(rows.sign @ w)) < 1e-6
    B, rows2 = _data("classification")
    B = B * 1e3  # norms ~1e3-1e4: the plain form solves too
    plain = _solve_cvxpy(B, rows2, 2.0, "l2", "free", True, "CLARABEL", rescale=False)
    scaled = _solve_cvxpy(B, rows2, 2.0, "l2", "free", True, "CLARABEL", rescale=True)
    assert scaled.primal == pytest.approx(plain.primal, rel=1e-5, abs=1e-8)  # both to 1e-8
    np.testing.assert_allclose(scaled.alpha, plain.alpha, atol=1e-3 * np.abs(plain.alpha).max())


def test_smo_master_at_the_precision_floor_stops_and_counts_it() -> None:
    """Columns of norm ~4e9: the gradient's rounding noise (two computations of the same
    gradient disagree by far more than tol) means no solve can be certified at tol; each solve
    stops within its few chunks with SMO's own feasible point, status "smo@floor", counted.
    On well-scaled columns the noise is ~1e-13 and no solve is at the floor."""
    A, rows = _raw_quadratic_problem()
    master = SMOKernelMaster(rows, 1.0)
    master.solve()
    for j in range(A.shape[1]):
        master.add_column(A[:, j])
        assert master._gradient_noise() > smo_qp.FLOOR_NOISE
        got = master.solve()
        assert got.stop_reason == "smo@floor"
        assert got.n_iter <= master.floor_chunks * master.chunk
        u = master._u
        # yᵀu = 0 up to the rounding of the floor's steps: 5e-11 with OpenBLAS's SkylakeX
        # kernels, 4.1e-7 with its Prescott ones (another path of SMO and face steps on these
        # 4e9-norm columns), against C·m = 60
        equality_tol = 1e-8 * master.C * u.size
        assert u.min() >= 0.0 and u.max() <= 1.0 and abs(float(rows.sign @ u)) < equality_tol
    assert master.fallbacks == {"precision_floor": A.shape[1]} and master.n_fallbacks == 0
    B, rows2 = _data("classification")
    fine = SMOKernelMaster(rows2, 2.0)
    fine.solve()
    for j in range(B.shape[1]):
        fine.add_column(B[:, j])
        assert fine._gradient_noise() < 1e-3 * fine.tol
        assert fine.solve().stop_reason == "smo"
    assert fine.fallbacks == {}


@pytest.mark.parametrize("gram_max_rows", [6000, 0])
def test_smo_master_face_step_gradient_follows_the_moved_entries(gram_max_rows) -> None:
    """The gradient after a face step (from G's rows of the entries that moved, or from the
    columns when G is not kept) equals ∇ = y∘(A(Aᵀ(y∘u))) − 1 computed afresh, step after
    step."""
    A, rows = _degenerate_problem(seed=3, m=80)
    master = SMOKernelMaster(rows, 1.0, gram_max_rows=gram_max_rows, ipm_face_steps=None)
    master.solve()
    for j in range(6):
        master.add_column(A[:, j])
    master.solve()
    rng = np.random.default_rng(0)
    gradient = master._gradient_after(master._u.copy())
    for _ in range(3):
        S = rng.choice(80, size=5, replace=False)
        master._u[S] = rng.uniform(0.0, 1.0, size=5)
        master._grad[:] = gradient()
        fresh = master._fresh_gradient()
        np.testing.assert_allclose(
            master._grad, fresh, rtol=1e-12, atol=1e-12 * np.abs(fresh).max()
        )


@pytest.mark.parametrize("C", [1e-2, 1.0, 1e3])
def test_low_rank_master_by_interior_point_equals_cvxpy_then_hands_over_to_smo(C) -> None:
    """With ``ipm_face_steps=0`` and while the columns' rank is ≤ ``ipm_max_rank`` the master is
    solved in their range by Clarabel (status "ipm"): the primal objective equals cvxpy's on
    the full columns (status "ipm", or "ipm+smo" where SMO finished from its point snapped to
    the bounds); once a column raises the rank past it, SMO continues (status "smo"), and still
    equals cvxpy's. The degenerate
    sequence: 40 quadratic columns of rank 15."""
    A, rows = _degenerate_problem()
    master = SMOKernelMaster(rows, C, tol=1e-9, ipm_max_rank=15, ipm_face_steps=0)
    master.solve()
    for j in range(45):
        master.add_column(A[:, j])
        got = master.solve()
        ref = solve_kernel_master_cvxpy(A[:, : j + 1], rows, C)
        assert got.primal == pytest.approx(ref.primal, rel=1e-6)
        # the interior point's u, snapped to the bounds, certified or finished by SMO
        assert got.stop_reason in (
            ("ipm", "ipm+smo") if j < 40 else ("smo", "smo@floor")  # @floor: at C = 1e3
        )
        np.testing.assert_allclose(got.alpha, A[:, : j + 1].T @ (rows.sign * got.w))
        u = master._u  # kept for the next solve: feasible
        assert u.min() >= 0.0 and u.max() <= C and abs(float(rows.sign @ u)) < 1e-9 * C * u.size
    assert master.n_ipm_solves == 40


@pytest.mark.parametrize("C", [0.1, 1.0, 100.0])
def test_regression_master_by_interior_point_equals_cvxpy(C) -> None:
    """ε-insensitive regression (13) by the interior point in the columns' range (the dual's
    linear term the rows' right-hand sides c = (y − ε, −y − ε)): with ``ipm_face_steps=0``
    (every solve, the bias-only one too) each restricted objective equals cvxpy's on the full
    columns, α = Kᵀ(u − v), Σ(u − v) = 0, and the kept multipliers are feasible."""
    A, rows = _data("regression")
    master = SMOKernelMaster(rows, C, tol=1e-9, ipm_face_steps=0)
    master.solve()
    for j in range(A.shape[1]):
        master.add_column(A[:, j])
        got = master.solve()
        assert got.stop_reason in ("ipm", "ipm+smo")
        ref = solve_kernel_master_cvxpy(A[:, : j + 1], rows, C)
        assert got.primal == pytest.approx(ref.primal, rel=1e-6, abs=1e-8)
        np.testing.assert_allclose(got.alpha, got.g @ A[:, : j + 1], rtol=1e-12, atol=1e-12)
        assert abs(got.g.sum()) < 1e-9 * C * rows.m
        w = master._u
        assert w.min() >= 0.0 and w.max() <= C
    assert master.n_ipm_solves == A.shape[1] + 1 and master.fallbacks == {}  # + the bias-only


def test_column_range_keeps_the_kernel_of_the_columns() -> None:
    """BHBᵀ = AAᵀ, B orthonormal, rank = the columns' rank (repeated and scaled columns add
    none); tracking stops past ``max_rank``."""
    A, _ = _degenerate_problem()
    cr = ColumnRange(A.shape[0], max_rank=15)
    for j in range(40):
        cr.add(A[:, j])
    B, AA = cr.B, A[:, :40] @ A[:, :40].T
    assert cr.rank == np.linalg.matrix_rank(A[:, :40]) == 15
    np.testing.assert_allclose(B.T @ B, np.eye(15), atol=1e-12)
    np.testing.assert_allclose(B @ cr.H @ B.T, AA, atol=1e-9 * np.abs(AA).max())
    cr.add(3.0 * A[:, 0])
    assert cr.rank == 15 and not cr.exceeded
    cr.add(A[:, 40])  # an RBF column: rank 16 > 15
    assert cr.exceeded


def test_smo_master_moves_to_the_interior_point_after_a_solve_with_many_face_steps() -> None:
    """SMO first; a solve that needed ≥ ``ipm_face_steps`` face steps moves the next solve to
    the interior point (rank permitting), which is kept while its cost, predicted from its
    last solve per m·r², stays below that SMO solve's. Same optimum as cvxpy throughout."""
    A, rows = _degenerate_problem()
    master = SMOKernelMaster(rows, 1e3, tol=1e-9, ipm_max_rank=15, ipm_face_steps=1)
    master.solve()
    statuses = []
    for j in range(12):
        master.add_column(A[:, j])
        got = master.solve()
        statuses.append(got.stop_reason)
        ref = solve_kernel_master_cvxpy(A[:, : j + 1], rows, 1e3)
        assert got.primal == pytest.approx(ref.primal, rel=1e-6)
    assert statuses[0] == "smo" and any(s.startswith("ipm") for s in statuses)
    assert master.n_ipm_solves == sum(s.startswith("ipm") for s in statuses)
    # back to SMO once the interior point's measured cost per m·r² predicts more than the SMO
    # solve that moved the master to it
    master.ipm.active, master.ipm.smo_time, master.ipm.rate = True, 1.0, 10.0
    master.add_column(A[:, 12])
    assert master.solve().stop_reason == "smo"


def test_a_failed_interior_point_solve_is_finished_by_smo(monkeypatch) -> None:
    """Clarabel stopping short (it reported InsufficientProgress on satimage's mixture) must not
    fail the fit: that solve is done by SMO from the kept point, to the same optimum."""
    A, rows = _degenerate_problem()

    def stalled(*args, **kwargs):
        raise RuntimeError(
            "Clarabel could not solve the reduced CG-Boost dual: InsufficientProgress"
        )

    master = SMOKernelMaster(rows, 1.0, tol=1e-9, ipm_face_steps=0)
    master.solve()
    for j in range(3):
        master.add_column(A[:, j])
        assert master.solve().stop_reason.startswith("ipm")
    monkeypatch.setattr(smo_qp, "solve_reduced_dual", stalled)
    master.add_column(A[:, 3])
    got = master.solve()
    assert got.stop_reason == "smo" and master.n_ipm_failures == 1
    ref = solve_kernel_master_cvxpy(A[:, :4], rows, 1.0)
    assert got.primal == pytest.approx(ref.primal, rel=1e-6)


def test_interior_point_on_badly_scaled_columns_is_finished_to_the_optimum() -> None:
    """Kernels of norm ~10⁵ with an optimum of ~3e-5: the interior point's dual objective is
    right to ~1e-4, but its margins A·Aᵀ(y∘u) were off by ~0.3 (primal 0.33). Its u, snapped
    to the bounds relative to its own scale (here u ≪ C), starts SMO, which certifies or
    finishes it: every solve equals cvxpy's and the objective decreases as columns are added."""
    rng = np.random.default_rng(7)
    X = 10.0 * rng.standard_normal((40, 3))
    ys = np.where(X[:, 0] + 0.5 * X[:, 1] > 0, 1.0, -1.0)
    rows = RowForm.classification(ys)
    A = np.hstack([make_kernel(k, X)(X, X) for k in ("quadratic", "linear")])
    master = SMOKernelMaster(rows, 1.0, tol=1e-9, ipm_face_steps=0)
    master.solve()
    objectives = []
    for j in range(0, 80, 4):
        for c in range(j, j + 4):
            master.add_column(A[:, c])
        got = master.solve()
        assert got.stop_reason.startswith("ipm")
        ref = solve_kernel_master_cvxpy(A[:, : j + 4], rows, 1.0)
        assert got.primal == pytest.approx(ref.primal, rel=1e-4, abs=1e-9)
        objectives.append(got.primal)
    assert np.all(np.diff(objectives) <= 1e-12)


def test_snapping_is_relative_to_the_scale_of_u() -> None:
    """u far below C (a separable problem) is not snapped to 0; near-bound entries are."""
    y = np.array([1.0, -1.0, 1.0, -1.0])
    u = np.array([2e-6, 2e-6, 1e-14, 1e-14])
    got = snap_to_bounds(u, y, 100.0)
    np.testing.assert_allclose(got, [2e-6, 2e-6, 0.0, 0.0], atol=1e-15)
    near_c = snap_to_bounds(np.array([100.0 - 1e-8, 100.0 - 1e-8, 3.0, 3.0]), y, 100.0)
    np.testing.assert_array_equal(near_c, [100.0, 100.0, 3.0, 3.0])


@pytest.mark.parametrize("use_gram", [True, False])
def test_compiled_column_update_equals_its_closed_form(use_gram) -> None:
    """``_add_feature`` (compiled): G += k kᵀ exactly as ``add_outer`` / ``np.outer`` round it,
    and ∇ += (y∘k)·(kᵀ(y∘u))."""
    rng = np.random.default_rng(8)
    m = 25
    y = np.where(rng.random(m) < 0.5, -1.0, 1.0)
    u, k, grad = rng.random(m), rng.standard_normal(m), rng.standard_normal(m)
    G = rng.standard_normal((m, m)) if use_gram else np.zeros((1, 1))
    G0, grad0 = G.copy(), grad.copy()
    smo_qp._add_feature(G, grad, k, y, u, use_gram)
    np.testing.assert_allclose(grad, grad0 + y * k * (k @ (y * u)), rtol=1e-13, atol=1e-13)
    if use_gram:
        np.testing.assert_array_equal(G, G0 + np.outer(k, k))
        H = G0.copy()
        add_outer(H, k)
        np.testing.assert_array_equal(G, H)
    else:
        np.testing.assert_array_equal(G, G0)  # not kept: untouched
