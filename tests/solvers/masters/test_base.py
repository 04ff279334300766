"""Every CG-Boost master back end satisfies :class:`KernelMaster`: what ``CGBoostMaster`` calls
(``add_column``, ``solve``, ``n_columns``, ``fallbacks``), and ``fallbacks`` is a dict."""

from __future__ import annotations

import numpy as np
import pytest

from kernbench.solvers.masters import (
    CvxpyKernelMaster,
    IncrementalKernelLPMaster,
    KernelMaster,
    OSQPKernelMaster,
    RowForm,
    SMOKernelMaster,
    SVMKernelMaster,
    solve_kernel_master_cvxpy,
)


def _problem():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 2))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=20) > 0, 1.0, -1.0)
    A = np.exp(-((X[:, None, :] - X[None, :4, :]) ** 2).sum(-1))
    return A, RowForm.classification(y)


BACK_ENDS = {
    "smo": lambda rows: SMOKernelMaster(rows, 1.0, tol=1e-9),
    "osqp": lambda rows: OSQPKernelMaster(rows, 1.0, eps=1e-9),
    "svm": lambda rows: SVMKernelMaster(rows, 1.0, tol=1e-9),
    "highs": lambda rows: IncrementalKernelLPMaster(rows, 1.0),
    "cvxpy": lambda rows: CvxpyKernelMaster(rows, 1.0),
}


@pytest.mark.parametrize("name", sorted(BACK_ENDS))
def test_every_back_end_is_a_kernel_master(name) -> None:
    A, rows = _problem()
    master = BACK_ENDS[name](rows)
    assert isinstance(master, KernelMaster)
    assert master.rows is rows
    for j in range(A.shape[1]):
        master.add_column(A[:, j])
    assert master.n_columns == A.shape[1]
    res = master.solve()
    assert res.alpha.shape == (A.shape[1],) and res.g.shape == (rows.m,)
    assert isinstance(master.fallbacks, dict)


def test_the_cvxpy_back_end_is_the_reference_on_its_columns() -> None:
    A, rows = _problem()
    master = CvxpyKernelMaster(rows, 2.0, norm="l1", alpha_sign="nonneg", bias=False)
    for j in range(A.shape[1]):
        master.add_column(A[:, j])
    got = master.solve()
    want = solve_kernel_master_cvxpy(A, rows, 2.0, norm="l1", alpha_sign="nonneg", bias=False)
    np.testing.assert_array_equal(got.alpha, want.alpha)
    assert got.primal == want.primal
