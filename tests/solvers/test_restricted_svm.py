"""CGENS's restricted linear SVM against independent solvers (cvxpy, scikit-learn's LIBSVM);
its int8 column storage gives the float64 iterates."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from sklearn.svm import SVC

from kernbench.solvers import face_steps
from kernbench.solvers.dual_cd import dual_diagonal
from kernbench.solvers.face_steps import face_step
from kernbench.solvers.restricted_svm import RestrictedLinearSVM


@pytest.mark.parametrize("C", [0.05, 1.0, 20.0])
@pytest.mark.parametrize("gram_max_rows", [10_000, 0])  # Gram matrix kept / rows on the fly
def test_exact_bias_matches_cvxpy_and_libsvm(C, gram_max_rows, svm_problem, cvxpy_svm):
    X, y = svm_problem()
    svm = RestrictedLinearSVM(y, C, tol=1e-10, max_epochs=10**5, gram_max_rows=gram_max_rows)
    svm.add_columns(X)
    info = svm.solve()
    ref, w_ref, b_ref = cvxpy_svm(X, y, C, bias_regularised=False)
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


def test_liblinear_mode_solves_the_regularised_bias_problem(svm_problem, cvxpy_svm):
    X, y = svm_problem(seed=3)
    C = 0.7
    svm = RestrictedLinearSVM(y, C, bias_mode="liblinear", tol=1e-10, max_epochs=10**5)
    svm.add_columns(X)
    info = svm.solve()
    ref, w_ref, b_ref = cvxpy_svm(X, y, C, bias_regularised=True)
    assert abs(info.primal - ref) / ref < 1e-6
    np.testing.assert_allclose(svm.w, w_ref, atol=1e-4)
    assert svm.b == pytest.approx(b_ref, abs=1e-4)
    assert svm.b == pytest.approx(float(y @ svm.alpha), abs=1e-12)  # b is the bias feature's w


@pytest.mark.parametrize("bias_mode", ["exact", "liblinear"])
def test_warm_start_after_adding_columns_equals_cold_solve(bias_mode, svm_problem):
    X, y = svm_problem(seed=5, J=8)
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


def test_kkt_conditions_exact_mode(svm_problem):
    X, y = svm_problem(seed=7)
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


def test_epoch_cap_is_reported(svm_problem):
    X, y = svm_problem(seed=2, m=300)
    for mode in ["exact", "liblinear"]:
        svm = RestrictedLinearSVM(y, 10.0, bias_mode=mode, tol=1e-14, max_epochs=1)
        svm.add_columns(X)
        info = svm.solve()
        assert info.stop_reason == "max_epochs"
        assert info.violation > 1e-14


def test_add_columns_returns_pricing_scores_and_updates_w(svm_problem):
    X, y = svm_problem(seed=1)
    svm = RestrictedLinearSVM(y, 1.0, alpha0=0.25)
    scores = svm.add_columns(X[:, :2])
    np.testing.assert_allclose(scores, X[:, :2].T @ (y * svm.alpha))
    np.testing.assert_allclose(svm.w, scores)


@pytest.mark.parametrize("bias_mode", ["exact", "liblinear"])
@pytest.mark.parametrize("gram_max_rows", [10_000, 0])
def test_sign_valued_columns_stored_as_int8_match_cvxpy(
    bias_mode, gram_max_rows, cvxpy_svm, sign_problem
):
    H, y = sign_problem()
    C = 3.0
    svm = RestrictedLinearSVM(
        y, C, bias_mode=bias_mode, tol=1e-10, max_epochs=10**5, gram_max_rows=gram_max_rows
    )
    for j in range(H.shape[1]):  # warm-started column by column, as CGENS adds them
        svm.add_columns(H[:, j])
        info = svm.solve()
    assert svm._Phi.dtype == np.int8  # the compact storage is the one under test
    ref, w_ref, b_ref = cvxpy_svm(H, y, C, bias_regularised=bias_mode == "liblinear")
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


def test_int8_storage_gives_the_float64_iterates(sign_problem):
    """Dual CD: the same α after every capped warm-started solve, Φ held as int8 or float64."""
    H, y = sign_problem(seed=13, J=10)
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


def test_int8_storage_exact_mode_reaches_the_float64_optimum(sign_problem):
    """SMO: its gradient differs from the float64 one by rounding only, which may break a tie
    of the working-set choice differently; the optimum (w, b, objective) is the same."""
    H, y = sign_problem(seed=13, J=10)
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


def test_restricted_svm_uses_one_diagonal_entry_only_while_every_column_is_plus_minus_one(
    sign_problem,
):
    H, y = sign_problem(seed=29, J=6)  # column 0 has zeros
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


def test_a_real_valued_column_turns_the_buffer_into_float64(svm_problem, cvxpy_svm, sign_problem):
    H, y = sign_problem(seed=17, J=6)
    X, _ = svm_problem(seed=17, m=H.shape[0], J=2)
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
    ref, w_ref, _ = cvxpy_svm(full, y, C, bias_regularised=False)
    assert abs(info.primal - ref) / ref < 1e-6
    np.testing.assert_allclose(svm.w, w_ref, atol=1e-4)


@pytest.mark.parametrize("C", [0.1, 1.0, 10.0])
@pytest.mark.parametrize("gram_max_rows", [10_000, 0])
def test_smo_with_face_steps_matches_cvxpy_where_pairwise_updates_stall(
    monkeypatch, C, gram_max_rows, cvxpy_svm, sign_problem
):
    """Stump-like columns added one by one, as CGENS does; at C = 10 the pairwise updates stall
    (more free α's than columns) and face steps, rays among them, finish the solves."""
    H, y = sign_problem(seed=24, m=150, J=15)
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
    ref, w_ref, b_ref = cvxpy_svm(H, y, C, bias_regularised=False)
    assert abs(info.primal - ref) / ref < 1e-6
    np.testing.assert_allclose(svm.w, w_ref, atol=1e-4)
