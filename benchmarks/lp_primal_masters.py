"""LPBoost's restricted masters as primals grown by columns: the peer of the cut masters.

:class:`IncrementalLPMaster` / :class:`IncrementalNuLPMaster` keep one HiGHS model of the primal
(C-form (4), ν-form) alive: each new weak learner is one ``addCol`` (a new primal variable = a new
dual constraint), and the next ``run`` restarts the primal simplex from the previous optimal basis
(still primal feasible: the new variable enters at 0). Their basis has m rows, where the cut
masters LPBoost uses (:mod:`kernbench.solvers.lp`, the dual grown by ``addRow``) have J rows; the
results are the same. Used by ``bench_cgens_vs_lpboost.py`` and ``bench_lpboost_nu.py``, and by
the tests that check both sides agree.
"""

from __future__ import annotations

import numpy as np

from kernbench.solvers.lp import CFormHighs, NuHighs

__all__ = ["IncrementalLPMaster", "IncrementalNuLPMaster"]


class IncrementalLPMaster(CFormHighs):
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
    α = C (the initial dual, docs/methods/column_generation.md). ``add_column`` appends w_j with
    cost 1 and entries y_i H_ij; ``solve`` re-runs the simplex from the kept basis.
    """

    def __init__(self, y: np.ndarray, C: float, time_limit: float | None = None) -> None:
        super().__init__(y, C, time_limit)
        m, inf = self._m, self._inf
        idx = np.arange(m, dtype=np.int32)
        self._h.addCols(m, np.full(m, self.C), np.zeros(m), np.full(m, inf), 0, [], [], [])
        self._h.addRows(m, np.ones(m), np.full(m, inf), m, idx, idx, np.ones(m))

    def add_column(self, h_col: np.ndarray) -> None:
        """Append the variable w_J ≥ 0 (cost 1) with constraint entries y_i·h_i."""
        nz, vals = self._signed_column(h_col)
        self._h.addCol(1.0, 0.0, self._inf, nz.size, nz, vals)
        self._J += 1

    def _unpack(self, sol) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(w, ξ) are primal values; α the margin rows' duals."""
        col = np.asarray(sol.col_value, dtype=np.float64)
        alpha = np.clip(np.asarray(sol.row_dual, dtype=np.float64), 0.0, self.C)
        return np.maximum(col[self._m :], 0.0), np.maximum(col[: self._m], 0.0), alpha


class IncrementalNuLPMaster(NuHighs):
    """The ν-form LPBoost primal held in one HiGHS model and grown column by column.

    Parameters
    ----------
    y : ndarray of shape (m,)
        Labels in {−1, +1}.
    D : float
        Slack penalty 1/(ν·m) (the LP is bounded for D·m ≥ 1).
    time_limit : float, optional
        Per-solve HiGHS time limit in seconds.
    sparse_columns : bool, default=True
        Store ±1 columns shifted by their majority value (see Notes); other columns as they are.

    Notes
    -----
    HiGHS minimises −ρ + D·1ᵀξ. Columns: ξ_1..ξ_m (cost D, ≥ 0), ρ (cost −1, free), then one a_j
    (cost 0, ≥ 0) per ``add_column``. Rows: the m margin rows y_i Σ_j H_ij a_j + ξ_i − ρ ≥ 0, and
    the row 1ᵀa = 1, which no point satisfies without a column, so it is added with the first
    column (a_1 = 1 then makes the model feasible); every later ``addCol`` keeps the basis primal
    feasible. Duals in HiGHS's convention (reduced cost = c − Aᵀ·row_dual): the margin rows give
    u = row_dual ≥ 0 (the dual constraints of ρ and ξ_i give 1ᵀu = 1, u ≤ D), and the reduced cost
    of a_j, −Σ_i u_i y_i H_ij − γ ≥ 0 with γ the dual of 1ᵀa = 1, gives β = −γ.

    ``sparse_columns`` (default): a free column t = Σ_j c_j a_j (entries y_i in the margin rows,
    defined by the row t − Σ_j c_j a_j = 0) lets a ±1 column be stored as y_i·(h_i − c_j) with
    c_j its majority value, so only its minority entries (≤ m/2; few for a stump near the edge of
    the data) are nonzero. Same LP and optimum; HiGHS's pricing and factorisation work on half the
    nonzeros or fewer. Degenerate restricted LPs
    have many optimal duals u; the simplex may return another of them than with dense columns,
    so column-generation paths can differ after some iterations (the optima do not). t's reduced
    cost fixes the dual of its row, and β = −γ still holds.
    """

    def __init__(
        self,
        y: np.ndarray,
        D: float,
        time_limit: float | None = None,
        sparse_columns: bool = True,
    ) -> None:
        super().__init__(y, D, time_limit, sparse_columns)
        m, inf = self._m, self._inf
        idx = np.arange(m, dtype=np.int32)
        h = self._h
        h.addCols(m, np.full(m, self.D), np.zeros(m), np.full(m, inf), 0, [], [], [])  # ξ
        h.addCol(-1.0, -inf, inf, 0, [], [])  # ρ
        rows = np.r_[idx, idx].astype(np.int32)
        cols = np.r_[idx, np.full(m, m)].astype(np.int32)
        vals = np.r_[np.ones(m), -np.ones(m)]
        order = np.lexsort((cols, rows))  # row-wise: ξ_i − ρ ≥ 0
        starts = np.arange(0, 2 * m, 2, dtype=np.int32)
        h.addRows(m, np.zeros(m), np.full(m, inf), 2 * m, starts, cols[order], vals[order])
        if self.sparse_columns:
            # t = Σ_j c_j a_j (free), entering every margin row as y_i·t: row t − Σ_j c_j a_j = 0
            h.addCol(0.0, -inf, inf, m, idx, self.y.copy())
            h.addRow(0.0, 0.0, 1, np.array([m + 1], dtype=np.int32), np.ones(1))
        self._t_row = m  # the row t − Σ_j c_j a_j = 0 (sparse columns only)
        self._sum_row = m + 1 if self.sparse_columns else m  # the row 1ᵀa = 1
        self._a_start = m + 2 if self.sparse_columns else m + 1  # the first column a_1

    def add_column(self, h_col: np.ndarray) -> None:
        """Append a_J ≥ 0 (cost 0) with margin entries y_i·h_i and 1 in the row 1ᵀa = 1.

        With ``sparse_columns`` the margin entries are y_i·(h_i − c) for the majority value c of
        the ±1 column (its entries equal to c vanish) and −c goes into the row of t: the margin
        rows still read y_i Σ_j a_j h_ij + ξ_i − ρ ≥ 0 once t = Σ_j c_j a_j is substituted.
        """
        h_col = np.asarray(h_col, dtype=np.float64)
        nz, vals, c = self._majority_shifted(h_col, self.sparse_columns)
        extra_rows = [] if c is None else [self._t_row]
        extra_vals = [] if c is None else [-c]
        if self._J == 0:
            idx = np.r_[nz, extra_rows].astype(np.int32)
            self._h.addCol(0.0, 0.0, self._inf, idx.size, idx, np.r_[vals, extra_vals])
            col = np.array([self._a_start], dtype=np.int32)
            self._h.addRow(1.0, 1.0, 1, col, np.ones(1))
        else:
            idx = np.r_[nz, extra_rows, self._sum_row].astype(np.int32)
            vals = np.r_[vals, extra_vals, 1.0]
            self._h.addCol(0.0, 0.0, self._inf, idx.size, idx, vals)
        self._J += 1

    def _unpack(self, sol) -> tuple[np.ndarray, np.ndarray, float, np.ndarray, float]:
        """(a, ξ, ρ) are primal values; u the margin rows' duals, β = −(dual of 1ᵀa = 1)."""
        m = self._m
        col = np.asarray(sol.col_value, dtype=np.float64)
        row_dual = np.asarray(sol.row_dual, dtype=np.float64)
        a = np.maximum(col[self._a_start :], 0.0)
        u = np.clip(row_dual[:m], 0.0, self.D)
        return a, np.maximum(col[:m], 0.0), float(col[m]), u, -float(row_dual[self._sum_row])
