"""The 1-norm master (4) in one HiGHS model grown by ``addCol``, re-solved from its basis."""

from __future__ import annotations

import numpy as np

from kernbench.solvers.lp import IncrementalHighs
from kernbench.solvers.masters.base import KernelMasterResult, RowForm, master_result


class IncrementalKernelLPMaster(IncrementalHighs):
    """The 1-norm master (4) (α ≥ 0) or its free-α form in one HiGHS model, grown by ``addCol``.

    Columns: ξ_r (cost C, ≥ 0), then b (cost 0, free) when ``bias``, then per selected column
    α⁺_j (cost 1, ≥ 0, entries s_r A_{i_r j}) and, for free α, α⁻_j (cost 1, ≥ 0, the negated
    entries), so α_j = α⁺_j − α⁻_j and ‖α‖₁ = Σ(α⁺ + α⁻) at an optimum. Rows: the margin rows
    ≥ c_r. The row duals are the multipliers w.

    Parameters
    ----------
    rows : RowForm
    C : float
    alpha_sign : {"free", "nonneg"}
    bias : bool
    time_limit : float, optional
    """

    def __init__(
        self,
        rows: RowForm,
        C: float,
        *,
        alpha_sign: str = "free",
        bias: bool = True,
        time_limit: float | None = None,
    ) -> None:
        super().__init__(rows.sign, time_limit)
        self.rows = rows
        self.C = float(C)
        self.free = alpha_sign == "free"
        self.bias = bias
        R, inf = self._m, self._inf
        idx = np.arange(R, dtype=np.int32)
        h = self._h
        h.addCols(R, np.full(R, self.C), np.zeros(R), np.full(R, inf), 0, [], [], [])
        h.addRows(R, rows.rhs, np.full(R, inf), R, idx, idx, np.ones(R))
        if bias:
            h.addCol(0.0, -inf, inf, R, idx, rows.sign.astype(np.float64))
        self._cols: list[np.ndarray] = []

    @property
    def fallbacks(self) -> dict[str, int]:
        """None: HiGHS solves every LP to optimality (or raises)."""
        return {}

    def add_column(self, column: np.ndarray) -> None:
        """Append α_j (α⁺_j and, for free α, α⁻_j) for the training column (m,)."""
        col = np.asarray(column, dtype=np.float64)
        nz, vals = self._signed_column(col[self.rows.sample])
        self._h.addCol(1.0, 0.0, self._inf, nz.size, nz, vals)
        if self.free:
            self._h.addCol(1.0, 0.0, self._inf, nz.size, nz, -vals)
        self._cols.append(col)
        self._J += 1

    def solve(self) -> KernelMasterResult:
        """Re-optimise from the kept basis."""
        sol = self._run("CG-Boost 1-norm")
        x = np.asarray(sol.col_value, dtype=np.float64)
        R, nb = self._m, int(self.bias)
        b = float(x[R]) if self.bias else 0.0
        ab = np.maximum(x[R + nb :], 0.0)
        alpha = ab[0::2] - ab[1::2] if self.free else ab
        A = np.column_stack(self._cols) if self._cols else np.empty((self.rows.m, 0))
        w = np.asarray(sol.row_dual, dtype=np.float64)
        return master_result(
            self.rows, A, alpha, b, w, self.C, "l1", "optimal", self._simplex_iterations()
        )
