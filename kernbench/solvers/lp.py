"""LPBoost's restricted master (4)/(5) of the CGENS paper, by two back ends.

Primal (4): min_{w≥0, ξ≥0} 1ᵀw + C·1ᵀξ  s.t.  y_i Σ_j H_ij w_j + ξ_i ≥ 1  (i = 1..m).
Dual (5):   max 1ᵀα  s.t.  0 ≤ α ≤ C,  Σ_i y_i α_i H_ij ≤ 1  (j = 1..J).

* :func:`solve_lpboost_cvxpy` builds the LP afresh through cvxpy (any installed LP solver; HiGHS by
  default) and reads α from the margin constraints' duals.
* :class:`IncrementalLPMaster` keeps one HiGHS model alive: each new weak learner is one ``addCol``
  (a new primal variable = a new dual constraint), and the next ``run`` restarts the primal
  simplex from the previous optimal basis (still primal feasible: the new variable enters at 0).
  The fast path.

Both return an :class:`LPResult` with the primal (w, ξ), the dual α and both objective values.
"""

from __future__ import annotations

from dataclasses import dataclass

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
    status : str
        The back end's status string ("optimal" when solved).
    n_iter : int
        Simplex iterations of this call (0 when the back end does not report them).
    """

    w: np.ndarray
    xi: np.ndarray
    alpha: np.ndarray
    primal: float
    dual: float
    status: str
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
        status=str(prob.status),
    )


class IncrementalLPMaster:
    """The LPBoost primal (4) held in one HiGHS model and grown column by column.

    Parameters
    ----------
    y : ndarray of shape (m,)
        Labels in {−1, +1}.
    C : float
        Slack penalty.
    time_limit : float, optional
        Per-solve HiGHS time limit in seconds.

    Notes
    -----
    The model starts with the m slack columns ξ_i (cost C) and the m rows ξ_i ≥ 1, whose optimum has
    α = C (the initial dual of METHODS.md §3.2). ``add_column`` appends w_j with cost 1 and entries
    y_i H_ij; ``solve`` re-runs the simplex from the kept basis.
    """

    def __init__(self, y: np.ndarray, C: float, time_limit: float | None = None) -> None:
        import highspy

        self.y = np.asarray(y, dtype=np.float64)
        self.C = float(C)
        m = self.y.shape[0]
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("solver", "simplex")
        # primal simplex: after addCol the kept basis is still primal feasible (the new variable
        # enters at 0) and only the new column is dual infeasible, so primal simplex restarts
        # from it directly; HiGHS's default dual simplex had to repair dual feasibility first
        # (4.5x more time at m = 3000, 150 columns, benchmarks/bench_cgens_vs_lpboost.py data)
        h.setOptionValue("simplex_strategy", 4)
        if time_limit is not None:
            h.setOptionValue("time_limit", float(time_limit))
        inf = highspy.kHighsInf
        idx = np.arange(m, dtype=np.int32)
        h.addCols(m, np.full(m, self.C), np.zeros(m), np.full(m, inf), 0, [], [], [])
        h.addRows(m, np.ones(m), np.full(m, inf), m, idx, idx, np.ones(m))
        self._h = h
        self._inf = inf
        self._m = m
        self._J = 0

    @property
    def n_columns(self) -> int:
        return self._J

    def add_column(self, h_col: np.ndarray) -> None:
        """Append the variable w_J ≥ 0 (cost 1) with constraint entries y_i·h_i."""
        vals = self.y * np.asarray(h_col, dtype=np.float64)
        nz = np.flatnonzero(vals).astype(np.int32)
        self._h.addCol(1.0, 0.0, self._inf, nz.size, nz, vals[nz])
        self._J += 1

    def solve(self) -> LPResult:
        """Re-optimise from the current basis; returns the primal and dual solution."""
        h = self._h
        h.run()
        status = h.modelStatusToString(h.getModelStatus()).lower()
        if status != "optimal":
            raise RuntimeError(f"HiGHS could not solve the LPBoost master: {status}")
        sol = h.getSolution()
        col = np.asarray(sol.col_value, dtype=np.float64)
        xi = np.maximum(col[: self._m], 0.0)
        w = np.maximum(col[self._m :], 0.0)
        alpha = np.clip(np.asarray(sol.row_dual, dtype=np.float64), 0.0, self.C)
        return LPResult(
            w=w,
            xi=xi,
            alpha=alpha,
            primal=float(w.sum() + self.C * xi.sum()),
            dual=float(alpha.sum()),
            status="optimal",
            n_iter=int(h.getInfo().simplex_iteration_count),
        )
