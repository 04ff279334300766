"""LPBoost restricted-master back ends (C-form and ν-form) against scipy.optimize.linprog and each
other."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import linprog

from kernbench.solvers.lp import (
    IncrementalLPCutMaster,
    IncrementalNuLPCutMaster,
    solve_lpboost_cvxpy,
    solve_lpboost_nu_cvxpy,
)

# the primal masters grown by columns live with the benchmarks that measure them
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from lp_primal_masters import IncrementalLPMaster, IncrementalNuLPMaster  # noqa: E402


def _linprog_lpboost(H, y, C):
    m, J = H.shape
    c = np.r_[np.ones(J), C * np.ones(m)]
    A_ub = -np.c_[y[:, None] * H, np.eye(m)]
    res = linprog(c, A_ub=A_ub, b_ub=-np.ones(m), method="highs")
    assert res.status == 0
    return res.fun


def _linprog_lpboost_nu(H, y, D):
    """The ν-LP over x = (a, ξ, ρ): min −ρ + D·1ᵀξ, ρ − y_i H_i a − ξ_i ≤ 0, 1ᵀa = 1."""
    m, J = H.shape
    c = np.r_[np.zeros(J), D * np.ones(m), -1.0]
    A_ub = np.c_[-y[:, None] * H, -np.eye(m), np.ones(m)]
    A_eq = np.r_[np.ones(J), np.zeros(m + 1)][None, :]
    bounds = [(0, None)] * (J + m) + [(None, None)]
    res = linprog(
        c, A_ub=A_ub, b_ub=np.zeros(m), A_eq=A_eq, b_eq=[1.0], bounds=bounds, method="highs"
    )
    assert res.status == 0
    return -res.fun


def _data(seed=0, m=50, J=15):
    rng = np.random.default_rng(seed)
    H = np.where(rng.normal(size=(m, J)) >= 0, 1.0, -1.0)
    y = np.where(H[:, 0] + H[:, 1] + 0.5 * rng.normal(size=m) >= 0, 1.0, -1.0)
    return H, y


_C_MASTERS = {
    "primal": IncrementalLPMaster,
    "cut": IncrementalLPCutMaster,
    "cut dense": lambda y, C: IncrementalLPCutMaster(y, C, sparse_columns=False),
}


@pytest.mark.parametrize("C", [0.05, 0.5, 5.0])
@pytest.mark.parametrize("master_kind", list(_C_MASTERS))
def test_back_ends_match_linprog_on_identical_columns(C, master_kind):
    H, y = _data()
    rng = np.random.default_rng(7)
    H[:, 2] = np.where(rng.random(y.size) < 0.9, 1.0, -1.0)  # mostly +1: shifted by +1 when sparse
    H[:, 4] = np.where(rng.random(y.size) < 0.9, -1.0, 1.0)  # mostly −1
    H[:5, 6] = 0.0  # not ±1: stored as it is
    master = _C_MASTERS[master_kind](y, C)
    for j in range(H.shape[1]):
        master.add_column(H[:, j])
        inc = master.solve()
        cvx = solve_lpboost_cvxpy(H[:, : j + 1], y, C)
        ref = _linprog_lpboost(H[:, : j + 1], y, C)
        assert inc.primal == pytest.approx(ref, rel=1e-9, abs=1e-9)
        assert cvx.primal == pytest.approx(ref, rel=1e-7, abs=1e-7)
        for res in (inc, cvx):
            assert res.dual == pytest.approx(res.primal, rel=1e-7)  # strong duality
            assert res.alpha.min() >= 0 and res.alpha.max() <= C + 1e-12
            assert np.all(H[:, : j + 1].T @ (y * res.alpha) <= 1 + 1e-7)  # dual feasibility (5)
            assert np.all(y * (H[:, : j + 1] @ res.w) + res.xi >= 1 - 1e-7)  # primal feasibility


@pytest.mark.parametrize("master_kind", list(_C_MASTERS))
def test_empty_master_has_alpha_equal_C(master_kind):
    _, y = _data()
    res = _C_MASTERS[master_kind](y, 0.3).solve()
    np.testing.assert_allclose(res.alpha, 0.3)
    np.testing.assert_allclose(res.xi, 1.0)
    assert res.primal == pytest.approx(0.3 * y.size) and res.dual == pytest.approx(0.3 * y.size)


def _nu_columns(seed=2):
    """±1 columns, some mostly +1 and some mostly −1 (both shifts of the sparse form), a column
    with zeros and a real-valued one (stored as they are)."""
    H, y = _data(seed=seed)
    rng = np.random.default_rng(seed + 100)
    m = y.size
    skewed = np.where(rng.random((m, 4)) < [0.9, 0.1, 0.97, 0.03], 1.0, -1.0)
    other = np.c_[np.where(rng.random(m) < 0.2, 0.0, H[:, 2]), 0.7 * rng.normal(size=m)]
    return np.c_[H[:, :6], skewed, other, H[:, 6:]], y


NU_MASTERS = {
    "primal": IncrementalNuLPMaster,
    "cut": IncrementalNuLPCutMaster,
    "cut-dantzig": lambda y, D, **kw: IncrementalNuLPCutMaster(y, D, pricing="dantzig", **kw),
    "cut-highs": lambda y, D, **kw: IncrementalNuLPCutMaster(y, D, pricing="highs", **kw),
}


@pytest.mark.parametrize("master_kind", list(NU_MASTERS))
@pytest.mark.parametrize("sparse_columns", [True, False])
@pytest.mark.parametrize("nu", [0.05, 0.2, 0.6, 1.0])
def test_nu_back_ends_match_linprog_on_identical_columns(nu, sparse_columns, master_kind):
    """Both ν-masters (the primal grown by columns, the dual grown by cuts) on every restricted LP
    of a column sequence: objective against linprog, and the full NuLPResult's optimality."""
    H, y = _nu_columns(seed=2)
    m = y.size
    D = 1.0 / (nu * m)
    master = NU_MASTERS[master_kind](y, D, sparse_columns=sparse_columns)
    for j in range(H.shape[1]):
        master.add_column(H[:, j])
        inc = master.solve()
        Hj = H[:, : j + 1]
        cvx = solve_lpboost_nu_cvxpy(Hj, y, D)
        ref = _linprog_lpboost_nu(Hj, y, D)
        assert inc.primal == pytest.approx(ref, rel=1e-9, abs=1e-9)
        assert cvx.primal == pytest.approx(ref, rel=1e-7, abs=1e-7)
        for res in (inc, cvx):
            assert res.dual == pytest.approx(res.primal, rel=1e-7, abs=1e-9)  # strong duality
            assert res.u.sum() == pytest.approx(1.0, abs=1e-9)
            assert res.u.min() >= 0 and res.u.max() <= D + 1e-12
            edges = Hj.T @ (y * res.u)
            # β is the dual variable read from the row 1ᵀa = 1 (sign by convention): it must equal
            # the dual objective max_j edge_j computed from u alone
            assert res.beta == pytest.approx(edges.max(), abs=1e-8)
            assert res.a.sum() == pytest.approx(1.0, abs=1e-9) and res.a.min() >= 0
            assert np.all(y * (Hj @ res.a) + res.xi >= res.rho - 1e-8)  # primal feasibility
            assert res.primal == pytest.approx(res.rho - D * res.xi.sum(), abs=1e-12)
            # ξ is the least slack for (a, ρ) (the cut master reads it from reduced costs)
            np.testing.assert_allclose(res.xi, np.maximum(res.rho - y * (Hj @ res.a), 0), atol=1e-8)
        assert inc.a.size == j + 1 and inc.xi.size == m


def test_nu_master_needs_a_column():
    _, y = _data()
    for cls in (IncrementalNuLPMaster, IncrementalNuLPCutMaster):
        with pytest.raises(ValueError, match="at least one column"):
            cls(y, 0.1).solve()
    with pytest.raises(ValueError, match="at least one column"):
        solve_lpboost_nu_cvxpy(np.zeros((y.size, 0)), y, 0.1)


def test_incremental_master_works_after_another_highs_solve_in_the_process():
    """HiGHS's global scheduler is created by the first solve in a process; the LPBoost master
    must not ask for a different thread count afterwards (run() then fails, status 'not set')."""
    import subprocess
    import sys

    code = """
import highspy, numpy as np
from kernbench.methods import LPBoost
first = highspy.Highs(); first.setOptionValue("output_flag", False)
inf = highspy.kHighsInf
first.addCols(1, np.ones(1), np.zeros(1), np.full(1, inf), 0, [], [], [])
first.run()
rng = np.random.default_rng(0)
X = rng.normal(size=(60, 3)); y = np.where(X[:, 0] + 0.3 * rng.normal(size=60) > 0, 1, -1)
model = LPBoost(C=1.0, max_iter=20, solver="highs").fit(X, y)
nu_model = LPBoost(nu=0.2, max_iter=20, solver="highs").fit(X, y)
print(min(model.n_iter_, nu_model.n_iter_))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.split()[-1]) >= 1


@pytest.mark.parametrize("backend", ["incremental", "cvxpy"])
def test_no_highs_banner_on_stdout(backend):
    """HiGHS prints a banner from C++ at the first model of a process; none must reach stdout."""
    import subprocess
    import sys

    code = (
        "import numpy as np\n"
        "from kernbench.solvers.lp import IncrementalLPCutMaster, solve_lpboost_cvxpy\n"
        "y = np.array([1.0, -1.0, 1.0, -1.0]); H = np.array([[1.0], [-1.0], [1.0], [1.0]])\n"
        + (
            "IncrementalLPCutMaster(y, 1.0)\n"
            if backend == "incremental"
            else "solve_lpboost_cvxpy(H, y, 1.0)\n"
        )
        + "print('done')\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert proc.stdout == "done\n"


def test_sparse_nu_columns_store_only_the_minority_entries():
    """The sparse ν-master stores a ±1 column as its minority entries (+ the rows of t and 1ᵀa)."""
    H, y = _nu_columns(seed=3)
    m = y.size
    sparse = IncrementalNuLPMaster(y, 0.1)
    dense_nz = IncrementalNuLPMaster(y, 0.1, sparse_columns=False)
    for master in (sparse, dense_nz):
        master.add_column(H[:, 0])
        master.add_column(H[:, 6])  # 90 % +1
    minority = sum(min(np.sum(H[:, j] > 0), np.sum(H[:, j] < 0)) for j in (0, 6))
    base = 2 * m + m + 1  # ξ_i − ρ rows, the column t, the coefficient of t in its row
    assert sparse._h.getNumNz() == base + minority + 2 * 2  # + t row and 1ᵀa row per column
    assert dense_nz._h.getNumNz() == 2 * m + 2 * m + 2
    assert sparse.solve().primal == pytest.approx(dense_nz.solve().primal, abs=1e-12)


def test_cut_master_stores_sparse_cuts_and_checks_pricing():
    """The cut master stores a ±1 column's cut as its minority entries (+ β and s), dense cuts with
    all m entries; both give the same optimum. An unknown pricing is refused."""
    H, y = _nu_columns(seed=3)
    m = y.size
    sparse = IncrementalNuLPCutMaster(y, 0.1)
    dense_nz = IncrementalNuLPCutMaster(y, 0.1, sparse_columns=False)
    for master in (sparse, dense_nz):
        master.add_column(H[:, 0])
        master.add_column(H[:, 6])  # 90 % +1
    minority = sum(min(np.sum(H[:, j] > 0), np.sum(H[:, j] < 0)) for j in (0, 6))
    base = m + (m + 1)  # the row 1ᵀu = 1, the row s − Σ y_i u_i = 0
    assert sparse._h.getNumNz() == base + minority + 2 * 2  # + β and s per cut
    assert dense_nz._h.getNumNz() == m + 2 * (m + 1)
    assert sparse.solve().primal == pytest.approx(dense_nz.solve().primal, abs=1e-12)
    with pytest.raises(ValueError, match="pricing"):
        IncrementalNuLPCutMaster(y, 0.1, pricing="steepest")
