"""LPBoost's restricted masters, in two forms and by two back ends.

C-form, (4)/(5) of the CGENS paper:

    primal (4): min_{w≥0, ξ≥0} 1ᵀw + C·1ᵀξ  s.t.  y_i Σ_j H_ij w_j + ξ_i ≥ 1  (i = 1..m),
    dual (5):   max 1ᵀα  s.t.  0 ≤ α ≤ C,  Σ_i y_i α_i H_ij ≤ 1  (j = 1..J).

ν-form, the soft-margin LP of Demiriz, Bennett & Shawe-Taylor (2002), D = 1/(ν·m), ν ∈ (0, 1]:

    primal: max_{ρ, a≥0, ξ≥0} ρ − D·1ᵀξ  s.t.  y_i Σ_j H_ij a_j + ξ_i ≥ ρ  (i = 1..m),  1ᵀa = 1,
    dual:   min_{u, β} β  s.t.  Σ_i u_i y_i H_ij ≤ β  (j = 1..J),  1ᵀu = 1,  0 ≤ u ≤ D.

A ν-form optimum (a*, ξ*, ρ*; u*, β*) with β* > 0 gives w = a*/ρ*, ξ*/ρ*, α = u*/β*, an optimum of
(4)/(5) with C = D/β* (β* = ρ* − D·1ᵀξ*; it is D/ρ* only without margin errors).

* :func:`solve_lpboost_cvxpy` / :func:`solve_lpboost_nu_cvxpy` build the LP afresh through cvxpy
  (any installed LP solver; HiGHS by default) and read the duals from the constraints.
* :class:`IncrementalLPCutMaster` / :class:`IncrementalNuLPCutMaster` keep one HiGHS model of
  the dual alive: each new weak learner is one ``addRow`` (a cut Σ_i α_i y_i H_ij ≤ 1, or
  Σ_i u_i y_i H_ij ≤ β), re-solved by dual simplex from the kept basis, which has J rows.
  LPBoost's default for both forms (docs/performance.md section 8). The primal grown by
  ``addCol`` (an m-row basis; same results) is the peer they are measured and tested against,
  in ``benchmarks/lp_primal_masters.py``; :class:`CFormHighs` and :class:`NuHighs` are what both
  sides share.

The C-form returns an :class:`LPResult`, the ν-form a :class:`NuLPResult`; both carry the primal
solution, the dual solution and both objective values.
"""

from __future__ import annotations

import contextlib
import os
import sys
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np


@dataclass(frozen=True)
class LPResult:
    """Solution of the restricted LPBoost master.

    Attributes
    ----------
    w : ndarray of shape (J,)
        Column weights (≥ 0).
    xi : ndarray of shape (m,)
        Slacks (≥ 0).
    alpha : ndarray of shape (m,)
        Dual variables of the margin constraints, 0 ≤ α ≤ C.
    primal, dual : float
        1ᵀw + C·1ᵀξ and 1ᵀα (equal at an optimum: strong duality).
    stop_reason : str
        The back end's status string ("optimal" when solved).
    n_iter : int
        Simplex iterations of this call (0 when the back end does not report them).
    """

    w: np.ndarray
    xi: np.ndarray
    alpha: np.ndarray
    primal: float
    dual: float
    stop_reason: str
    n_iter: int = 0


def solve_lpboost_cvxpy(H: np.ndarray, y: np.ndarray, C: float, solver: str = "HIGHS") -> LPResult:
    """Solve the LPBoost primal (4) on the columns H (m × J) with cvxpy.

    Parameters
    ----------
    H : ndarray of shape (m, J)
        Weak-learner outputs on the training points.
    y : ndarray of shape (m,)
        Labels in {−1, +1}.
    C : float
        Slack penalty.
    solver : str
        A cvxpy solver name (``"HIGHS"``, ``"CLARABEL"``, ``"SCIPY"``, ...).

    Returns
    -------
    LPResult
    """
    import cvxpy as cp

    m, J = H.shape
    w = cp.Variable(J, nonneg=True)
    xi = cp.Variable(m, nonneg=True)
    margin = cp.multiply(y, H @ w) + xi >= 1  # constraint of (4)
    prob = cp.Problem(cp.Minimize(cp.sum(w) + C * cp.sum(xi)), [margin])
    if str(solver).upper() == "HIGHS":
        new_highs()  # the first HiGHS model of the process prints a banner; this one, silenced
    prob.solve(solver=solver)
    if prob.status not in ("optimal", "optimal_inaccurate"):
        raise RuntimeError(f"cvxpy/{solver} could not solve the LPBoost master: {prob.status}")
    alpha = np.clip(np.asarray(margin.dual_value, dtype=np.float64), 0.0, C)
    wv = np.maximum(np.asarray(w.value, dtype=np.float64), 0.0)
    xv = np.maximum(np.asarray(xi.value, dtype=np.float64), 0.0)
    return LPResult(
        w=wv,
        xi=xv,
        alpha=alpha,
        primal=float(wv.sum() + C * xv.sum()),
        dual=float(alpha.sum()),
        stop_reason=str(prob.status),
    )


_HIGHS_BANNER_SHOWN = False


def new_highs() -> Any:
    """A new ``highspy.Highs`` model, without HiGHS's banner on stdout.

    HiGHS prints "Running HiGHS ..." from C++ on file descriptor 1 when the first model of a process
    is built, before any option can switch output off; in a run that text landed in the middle of
    the output. That first construction runs with descriptor 1 pointed at /dev/null.
    """
    import highspy

    global _HIGHS_BANNER_SHOWN
    if _HIGHS_BANNER_SHOWN:
        return highspy.Highs()
    with _stdout_fd_silenced():
        h = highspy.Highs()
    _HIGHS_BANNER_SHOWN = True
    return h


@contextlib.contextmanager
def _stdout_fd_silenced() -> Iterator[None]:
    """Point file descriptor 1 at /dev/null (C-level writes included) for the block."""
    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError, AttributeError):  # no usable descriptor 1: nothing to silence
        yield
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        yield
    finally:
        _flush_c_stdio()
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)


def _flush_c_stdio() -> None:
    """``fflush(NULL)``: C's buffered stdout goes to /dev/null too, not after the restore."""
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).fflush(None)


class IncrementalLP(Protocol):
    """An LPBoost master kept across column additions (C-form or ν-form, either side)."""

    @property
    def n_columns(self) -> int:
        """Columns (weak learners) added so far."""
        ...

    def add_column(self, h_col: np.ndarray) -> None:
        """Add the training column of a new weak learner (a primal variable, or a dual cut)."""
        ...

    def solve(self) -> LPResult | NuLPResult:
        """Re-optimise from the kept basis (:class:`LPResult` for the C-form, :class:`NuLPResult`
        for the ν-form)."""
        ...


class IncrementalHighs:
    """One HiGHS model kept alive across column additions (shared by the incremental masters).

    Primal simplex: after ``addCol`` the kept basis is still primal feasible (the new variable
    enters at 0) and only the new column is dual infeasible, so primal simplex restarts from it
    directly, where HiGHS's default dual simplex would first repair dual feasibility
    (benchmarks/bench_cgens_vs_lpboost.py compares the two). The ``threads`` option is
    left alone (HiGHS's global scheduler; tests/solvers/test_lp.py).
    """

    def __init__(self, y: np.ndarray, time_limit: float | None) -> None:
        import highspy

        self.y = np.asarray(y, dtype=np.float64)
        h = new_highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("solver", "simplex")
        h.setOptionValue("simplex_strategy", 4)
        if time_limit is not None:
            h.setOptionValue("time_limit", float(time_limit))
        self._h = h
        self._inf = highspy.kHighsInf
        self._m = self.y.shape[0]
        self._J = 0

    @property
    def n_columns(self) -> int:
        return self._J

    def _signed_column(self, h_col: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(indices, values) of the nonzero entries y_i·h_i of a new column."""
        vals = self.y * np.asarray(h_col, dtype=np.float64)
        nz = np.flatnonzero(vals).astype(np.int32)
        return nz, vals[nz]

    def _majority_shifted(
        self, h_col: np.ndarray, sparse: bool
    ) -> tuple[np.ndarray, np.ndarray, float | None]:
        """Nonzero (indices, values) of y_i·(h_i − c) and c, the majority value of a ±1 column,
        when ``sparse`` (its entries equal to c vanish); else of y_i·h_i and None."""
        if sparse and np.all(np.abs(h_col) == 1.0):
            c = 1.0 if np.count_nonzero(h_col > 0) * 2 >= h_col.size else -1.0
            return (*self._signed_column(h_col - c), c)
        return (*self._signed_column(h_col), None)

    def _run(self, what: str):
        """Re-optimise from the kept basis; the HiGHS solution (error unless optimal)."""
        h = self._h
        h.run()
        status = h.modelStatusToString(h.getModelStatus()).lower()
        if status != "optimal":
            raise RuntimeError(f"HiGHS could not solve the {what} master: {status}")
        return h.getSolution()

    def _simplex_iterations(self) -> int:
        return int(self._h.getInfo().simplex_iteration_count)


class CFormHighs(IncrementalHighs, ABC):
    """What both C-form masters share: C, and the solve that reads (w, ξ, α) from the HiGHS
    solution (:meth:`_unpack`, one per side of the LP)."""

    def __init__(self, y: np.ndarray, C: float, time_limit: float | None) -> None:
        super().__init__(y, time_limit)
        self.C = float(C)

    @abstractmethod
    def _unpack(self, sol) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(w, ξ, α) from the HiGHS solution of this side of the LP."""

    def solve(self) -> LPResult:
        """Re-optimise from the current basis; returns the primal and dual solution."""
        m = self._m
        if self._J == 0:  # no column: the box's corner α = C, ξ = 1 is the optimum
            w, xi, alpha, n_iter = np.zeros(0), np.ones(m), np.full(m, self.C), 0
        else:
            w, xi, alpha = self._unpack(self._run("LPBoost"))
            n_iter = self._simplex_iterations()
        return LPResult(
            w=w,
            xi=xi,
            alpha=alpha,
            primal=float(w.sum() + self.C * xi.sum()),
            dual=float(alpha.sum()),
            stop_reason="optimal",
            n_iter=n_iter,
        )


class IncrementalLPCutMaster(CFormHighs):
    """The LPBoost dual (5) held in one HiGHS model and grown cut by cut (dual simplex).

    Parameters
    ----------
    y : ndarray of shape (m,)
        Labels in {−1, +1}.
    C : float
        Slack penalty (the box 0 ≤ α ≤ C).
    time_limit : float, optional
        Per-solve HiGHS time limit in seconds.
    sparse_columns : bool, default=True
        Store the cut of a ±1 column shifted by its majority value (see Notes).

    Notes
    -----
    Same LP and same :class:`LPResult` as the primal grown by columns
    (``benchmarks/lp_primal_masters.py``), from the other side, as the CGENS paper timed
    LPBoost (its LP solver was given the dual (5)). HiGHS minimises −1ᵀα
    over 0 ≤ α_i ≤ C with one row Σ_i α_i y_i H_ij ≤ 1 per ``add_column``. With no cut the
    optimum is α = C; a new cut leaves the kept basis dual feasible (its slack enters the basis),
    so dual simplex restarts from it, on a basis of J (+1) rows where the primal master's has m.
    Duals in HiGHS's convention (reduced cost = c − Aᵀ·row_dual): w_j = −row_dual of cut j, and
    α_i's reduced cost is y_i Σ_j H_ij w_j − 1, so ξ_i = max(0, −reduced cost of α_i).

    ``sparse_columns``: a free s = Σ_i y_i α_i (row s − Σ_i y_i α_i = 0) lets the cut of a ±1
    column be stored as Σ_i y_i (h_i − c) α_i + c·s ≤ 1, c its majority value: only the minority
    entries remain. Degenerate restricted LPs have many optimal (α, w); this master can return
    other ones than the primal grown by columns (the optima agree).
    """

    def __init__(
        self,
        y: np.ndarray,
        C: float,
        time_limit: float | None = None,
        sparse_columns: bool = True,
    ) -> None:
        super().__init__(y, C, time_limit)
        self.sparse_columns = bool(sparse_columns)
        h = self._h
        h.setOptionValue("simplex_strategy", 1)  # dual simplex: a new cut keeps dual feasibility
        h.setOptionValue("simplex_dual_edge_weight_strategy", 1)  # Devex, as the ν cut master
        m, inf = self._m, self._inf
        idx = np.arange(m, dtype=np.int32)
        h.addCols(m, -np.ones(m), np.zeros(m), np.full(m, self.C), 0, [], [], [])  # α
        if self.sparse_columns:
            h.addCol(0.0, -inf, inf, 0, [], [])  # s = Σ_i y_i α_i
            h.addRow(0.0, 0.0, m + 1, np.r_[idx, m].astype(np.int32), np.r_[-self.y, 1.0])
        self._s_col = m
        self._first_cut = 1 if self.sparse_columns else 0

    def add_column(self, h_col: np.ndarray) -> None:
        """Append the cut Σ_i α_i y_i h_i ≤ 1 (shifted by its majority value when sparse)."""
        h_col = np.asarray(h_col, dtype=np.float64)
        nz, vals, c = self._majority_shifted(h_col, self.sparse_columns)
        if c is not None:
            nz, vals = np.r_[nz, self._s_col].astype(np.int32), np.r_[vals, c]
        self._h.addRow(-self._inf, 1.0, nz.size, nz, vals)
        self._J += 1

    def _unpack(self, sol) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """α are primal values; w = −(cut duals), ξ = −(α's reduced costs)."""
        m = self._m
        w = np.maximum(-np.asarray(sol.row_dual, dtype=np.float64)[self._first_cut :], 0.0)
        xi = np.maximum(-np.asarray(sol.col_dual, dtype=np.float64)[:m], 0.0)
        alpha = np.clip(np.asarray(sol.col_value, dtype=np.float64)[:m], 0.0, self.C)
        return w, xi, alpha


@dataclass(frozen=True)
class NuLPResult:
    """Solution of the restricted ν-form LPBoost master (Demiriz et al. 2002).

    Attributes
    ----------
    a : ndarray of shape (J,)
        Column weights (≥ 0, summing to 1).
    xi : ndarray of shape (m,)
        Slacks (≥ 0).
    rho : float
        The soft margin ρ.
    u : ndarray of shape (m,)
        Dual variables of the margin constraints, 0 ≤ u ≤ D, 1ᵀu = 1.
    beta : float
        Dual variable of 1ᵀa = 1: the largest edge Σ_i u_i y_i H_ij over the restricted columns.
    primal, dual : float
        ρ − D·1ᵀξ and β (equal at an optimum: strong duality).
    stop_reason : str
        The back end's status string ("optimal" when solved).
    n_iter : int
        Simplex iterations of this call (0 when the back end does not report them).
    """

    a: np.ndarray
    xi: np.ndarray
    rho: float
    u: np.ndarray
    beta: float
    primal: float
    dual: float
    stop_reason: str
    n_iter: int = 0


def solve_lpboost_nu_cvxpy(
    H: np.ndarray, y: np.ndarray, D: float, solver: str = "HIGHS"
) -> NuLPResult:
    """Solve the ν-form LPBoost primal on the columns H (m × J) with cvxpy.

    Parameters
    ----------
    H : ndarray of shape (m, J)
        Weak-learner outputs on the training points (J ≥ 1: 1ᵀa = 1 needs a column).
    y : ndarray of shape (m,)
        Labels in {−1, +1}.
    D : float
        Slack penalty 1/(ν·m); the LP is bounded for D·m ≥ 1 (ν ≤ 1).
    solver : str
        A cvxpy solver name (``"HIGHS"``, ``"CLARABEL"``, ``"SCIPY"``, ...).

    Returns
    -------
    NuLPResult
    """
    import cvxpy as cp

    m, J = H.shape
    if J == 0:
        raise ValueError("the ν-form master needs at least one column (1ᵀa = 1)")
    a = cp.Variable(J, nonneg=True)
    xi = cp.Variable(m, nonneg=True)
    rho = cp.Variable()
    margin = cp.multiply(y, H @ a) + xi >= rho
    simplex = cp.sum(a) == 1
    prob = cp.Problem(cp.Maximize(rho - D * cp.sum(xi)), [margin, simplex])
    if str(solver).upper() == "HIGHS":
        new_highs()  # the first HiGHS model of the process prints a banner; this one, silenced
    prob.solve(solver=solver)
    if prob.status not in ("optimal", "optimal_inaccurate"):
        raise RuntimeError(f"cvxpy/{solver} could not solve the ν-LPBoost master: {prob.status}")
    u = np.clip(np.asarray(margin.dual_value, dtype=np.float64), 0.0, D)
    # cvxpy's dual of 1ᵀa = 1 is β itself (the dual of a_j: Σ_i u_i y_i H_ij ≤ β; its sign is
    # checked against HiGHS and against max_j of the edges in tests/solvers/test_lp.py)
    beta = float(np.asarray(simplex.dual_value, dtype=np.float64))
    av = np.maximum(np.asarray(a.value, dtype=np.float64), 0.0)
    xv = np.maximum(np.asarray(xi.value, dtype=np.float64), 0.0)
    rv = float(rho.value)
    return NuLPResult(
        a=av,
        xi=xv,
        rho=rv,
        u=u,
        beta=beta,
        primal=rv - D * float(xv.sum()),
        dual=beta,
        stop_reason=str(prob.status),
    )


class NuHighs(IncrementalHighs, ABC):
    """What both ν-form masters share: D, the sparse-column switch, and the solve that reads
    (a, ξ, ρ, u, β) from the HiGHS solution (:meth:`_unpack`, one per side of the LP)."""

    def __init__(
        self, y: np.ndarray, D: float, time_limit: float | None, sparse_columns: bool
    ) -> None:
        super().__init__(y, time_limit)
        self.D = float(D)
        self.sparse_columns = bool(sparse_columns)

    @abstractmethod
    def _unpack(self, sol) -> tuple[np.ndarray, np.ndarray, float, np.ndarray, float]:
        """(a, ξ, ρ, u, β) from the HiGHS solution of this side of the LP."""

    def solve(self) -> NuLPResult:
        """Re-optimise from the current basis; returns the primal and dual solution."""
        if self._J == 0:
            raise ValueError("the ν-form master needs at least one column (1ᵀa = 1)")
        a, xi, rho, u, beta = self._unpack(self._run("ν-LPBoost"))
        return NuLPResult(
            a=a,
            xi=xi,
            rho=rho,
            u=u,
            beta=beta,
            primal=rho - self.D * float(xi.sum()),
            dual=beta,
            stop_reason="optimal",
            n_iter=self._simplex_iterations(),
        )


class IncrementalNuLPCutMaster(NuHighs):
    """The ν-form LPBoost *dual* held in one HiGHS model and grown cut by cut (dual simplex).

    Parameters
    ----------
    y : ndarray of shape (m,)
        Labels in {−1, +1}.
    D : float
        Slack penalty 1/(ν·m) (the LP is bounded for D·m ≥ 1).
    time_limit : float, optional
        Per-solve HiGHS time limit in seconds.
    sparse_columns : bool, default=True
        Store the cut of a ±1 column shifted by its majority value (see Notes).
    pricing : {"devex", "dantzig", "highs"}, default="devex"
        Dual simplex edge weights (``simplex_dual_edge_weight_strategy`` 1 / 0 / HiGHS's choice,
        starting with dual steepest edge); Devex is the default as the fastest on the LPBoost
        fits that docs/performance.md section 8 measures.

    Notes
    -----
    Same LP and same :class:`NuLPResult` as the primal grown by columns
    (``benchmarks/lp_primal_masters.py``), from the other side.
    HiGHS minimises β over u_1..u_m (cost 0, 0 ≤ u_i ≤ D) and β (cost 1, free), with the row
    1ᵀu = 1 and one row Σ_i u_i y_i H_ij − β ≤ 0 per ``add_column`` (a cut). A new cut leaves the
    kept basis dual feasible (its slack enters the basis), so dual simplex restarts from it; the
    basis has J + 1 (+1) rows instead of m + 1 (+1). Duals in HiGHS's convention (reduced cost =
    c − Aᵀ·row_dual): a_j = −row_dual of cut j (≥ 0, Σ_j a_j = 1 from β's reduced cost), ρ = the
    dual of 1ᵀu = 1, and u_i's reduced cost is y_i Σ_j H_ij a_j − ρ, so ξ_i = max(0, −reduced
    cost of u_i).

    ``sparse_columns``: a free variable s = Σ_i y_i u_i (row s − Σ_i y_i u_i = 0) lets the cut of a
    ±1 column be stored as Σ_i y_i (h_i − c) u_i + c·s − β ≤ 0, c its majority value: only the
    minority entries remain. Degenerate restricted LPs have many optimal (u, a); this master can
    return other ones than the primal grown by columns (the optima agree).
    """

    def __init__(
        self,
        y: np.ndarray,
        D: float,
        time_limit: float | None = None,
        sparse_columns: bool = True,
        pricing: str = "devex",
    ) -> None:
        super().__init__(y, D, time_limit, sparse_columns)
        self._h.setOptionValue("simplex_strategy", 1)  # dual simplex: a new cut keeps dual feas.
        edge_weights = {"dantzig": 0, "devex": 1, "highs": -1}
        if pricing not in edge_weights:
            raise ValueError(f"pricing must be one of {sorted(edge_weights)}, got {pricing!r}")
        self._h.setOptionValue("simplex_dual_edge_weight_strategy", edge_weights[pricing])
        m, inf = self._m, self._inf
        idx = np.arange(m, dtype=np.int32)
        h = self._h
        h.addCols(m, np.zeros(m), np.zeros(m), np.full(m, self.D), 0, [], [], [])  # u
        h.addCol(1.0, -inf, inf, 0, [], [])  # β
        h.addRow(1.0, 1.0, m, idx, np.ones(m))  # 1ᵀu = 1
        if self.sparse_columns:
            h.addCol(0.0, -inf, inf, 0, [], [])  # s = Σ_i y_i u_i
            h.addRow(0.0, 0.0, m + 1, np.r_[idx, m + 1].astype(np.int32), np.r_[-self.y, 1.0])
        self._s_col = m + 1
        self._first_cut = 2 if self.sparse_columns else 1

    def add_column(self, h_col: np.ndarray) -> None:
        """Append the cut Σ_i u_i y_i h_i − β ≤ 0 (shifted by its majority value when sparse)."""
        h_col = np.asarray(h_col, dtype=np.float64)
        nz, vals, c = self._majority_shifted(h_col, self.sparse_columns)
        extra_cols = [self._m] + ([] if c is None else [self._s_col])  # β (and s)
        extra_vals = [-1.0] + ([] if c is None else [c])
        idx = np.r_[nz, extra_cols].astype(np.int32)
        self._h.addRow(-self._inf, 0.0, idx.size, idx, np.r_[vals, extra_vals])
        self._J += 1

    def _unpack(self, sol) -> tuple[np.ndarray, np.ndarray, float, np.ndarray, float]:
        """(u, β) are primal values; a = −(cut duals), ρ = dual of 1ᵀu = 1, ξ = −(u's reduced
        costs)."""
        m = self._m
        col = np.asarray(sol.col_value, dtype=np.float64)
        col_dual = np.asarray(sol.col_dual, dtype=np.float64)
        row_dual = np.asarray(sol.row_dual, dtype=np.float64)
        a = np.maximum(-row_dual[self._first_cut :], 0.0)
        xi = np.maximum(-col_dual[:m], 0.0)
        return a, xi, float(row_dual[0]), np.clip(col[:m], 0.0, self.D), float(col[m])
