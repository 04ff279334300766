"""CG-Boost masters: OSQP (warm-started), HiGHS and LIBSVM agree with cvxpy on the same
column sequences; the row multipliers satisfy strong duality and the KKT identity α = Kᵀg."""

from __future__ import annotations

import numpy as np
import pytest

from kernbench.solvers.kernel_masters import (
    IncrementalKernelLPMaster,
    OSQPKernelMaster,
    RowForm,
    SVMKernelMaster,
    dual_objective,
    solve_kernel_master_cvxpy,
)


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
