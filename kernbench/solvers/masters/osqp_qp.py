"""The 2-norm master on OSQP, through its lifted dual, warm-started across columns."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import scipy.sparse as sp

from kernbench.solvers.masters.base import (
    KernelMasterResult,
    RowForm,
    dual_objective,
    master_result,
)
from kernbench.solvers.masters.cvxpy_qp import solve_kernel_master_cvxpy


class OSQPKernelMaster:
    """The 2-norm master (7)/(11)/(13) on OSQP, solved through its lifted dual, warm-started.

    The primal (α, b, ξ) form is hard for ADMM: b and the R slacks carry no curvature, and the
    warm-started solves needed thousands of iterations. OSQP solves instead the dual in the
    row multipliers w and the lifted column scores z = Mᵀw (M = the signed rows s_r A_{i_r ·}):

        min_{w, z}  ½‖z‖² − cᵀw   s.t.  z − Mᵀw = 0 (free α) or ≥ 0 (α ≥ 0),
                                        sᵀw = 0 (free b),   0 ≤ w ≤ C.

    At the optimum α = z (Remarks 3.1/4.1: α_j = s_j, or s_j₊ for α ≥ 0), w are the pricing
    multipliers and b is the multiplier of sᵀw = 0. Each solve runs ADMM with a loose tolerance
    first and *polishes* (an exact solve on the guessed active set); while polishing fails the
    tolerance is tightened tenfold (ADMM continues from its iterate) down to ``eps``; a polished
    solution is accepted only when its duality gap certifies it (``gap_tol``). A solve without a
    certified solution at ``eps`` is finished by the cvxpy/Clarabel reference (``n_fallbacks``).
    The problem grows by one variable and one row per column, so each solve sets OSQP up again
    (a small part of a solve's time) and warm-starts it from the previous w,
    z and dual y (the new row's multiplier at its KKT value −z_J).

    Parameters
    ----------
    rows : RowForm
    C : float
    alpha_sign : {"free", "nonneg"}
    bias : bool
    eps : float
        The tightest ADMM tolerance (absolute and relative) tried before the fallback.
    eps_start : float
        The first (loosest) ADMM tolerance of a solve (1e-2: the fastest start with every solve
        exact; at 1e-1 wrong active sets "polish").
    gap_tol : float
        A polished solution is accepted when its duality gap (primal minus the dual objective at
        the clipped multipliers w), and |sᵀw| with a free b, are at most ``gap_tol`` · max(1,
        objective); otherwise the tolerance is tightened (polish can succeed on a nearly right
        active set, ~1e-6 off).
    max_iter : int
        ADMM iterations of one solve over all its tolerance stages; a solve that exhausts them
        goes to the Clarabel fallback (a few slow solves otherwise dominated the total time).
    warm_start : bool
        Warm start from the previous solution (False: cold, for the benchmark).
    """

    def __init__(
        self,
        rows: RowForm,
        C: float,
        *,
        alpha_sign: str = "free",
        bias: bool = True,
        eps: float = 1e-7,
        eps_start: float = 1e-2,
        gap_tol: float = 1e-9,
        max_iter: int = 2000,
        warm_start: bool = True,
    ) -> None:
        self.rows = rows
        self.C = float(C)
        self.nonneg = alpha_sign == "nonneg"
        self.bias = bias
        self.eps = float(eps)
        self.eps_start = max(float(eps_start), self.eps)
        self.gap_tol = float(gap_tol)
        self.max_iter = max_iter
        self.warm = warm_start
        self._cols: list[np.ndarray] = []
        self._M = np.empty((rows.n_rows, 0))
        self._w: np.ndarray | None = None
        self._y: np.ndarray | None = None
        self.n_fallbacks = 0

    @property
    def n_columns(self) -> int:
        return len(self._cols)

    @property
    def fallbacks(self) -> dict[str, int]:
        """``clarabel``: the solves the Clarabel reference finished (none: empty)."""
        return {"clarabel": self.n_fallbacks} if self.n_fallbacks else {}

    def add_column(self, column: np.ndarray) -> None:
        """Append a training column (m,) as a new α variable."""
        col = np.asarray(column, dtype=np.float64)
        self._cols.append(col)
        self._M = np.column_stack([self._M, self.rows.sign * col[self.rows.sample]])

    def A(self) -> np.ndarray:
        """The selected columns, shape (m, J)."""
        return np.column_stack(self._cols) if self._cols else np.empty((self.rows.m, 0))

    def _problem(self) -> tuple[Any, Any, np.ndarray, np.ndarray, np.ndarray]:
        """P, q, the constraint matrix G (CSC, built column by column) and its bounds l, u."""
        rows, M = self.rows, self._M
        R, J, nb = rows.n_rows, M.shape[1], int(self.bias)
        n_con = J + nb + R
        # columns w_r: −M[r, :] in rows 0..J−1, s_r in row J (free b), 1 in row J + nb + r
        w_data = [-M]
        w_idx = [np.broadcast_to(np.arange(J), (R, J))]
        if self.bias:
            w_data.append(rows.sign[:, None])
            w_idx.append(np.full((R, 1), J))
        w_data.append(np.ones((R, 1)))
        w_idx.append((J + nb + np.arange(R))[:, None])
        data = np.r_[np.hstack(w_data).ravel(), np.ones(J)]
        idx = np.r_[np.hstack(w_idx).ravel(), np.arange(J)]
        ptr = np.r_[np.arange(R + 1) * (J + nb + 1), R * (J + nb + 1) + np.arange(1, J + 1)]
        G = sp.csc_matrix((data, idx, ptr), shape=(n_con, R + J))
        P = sp.csc_matrix(
            (np.ones(J), R + np.arange(J), np.r_[np.zeros(R + 1, int), np.arange(1, J + 1)]),
            shape=(R + J, R + J),
        )
        q = np.r_[-rows.rhs, np.zeros(J)]
        lo = np.zeros(n_con)
        hi = np.r_[np.full(J, np.inf if self.nonneg else 0.0), np.zeros(nb), np.full(R, self.C)]
        return P, q, G, lo, hi

    def solve(self) -> KernelMasterResult:
        """Solve the current restricted QP (warm-started; tightened until the polish succeeds)."""
        import osqp

        rows, M = self.rows, self._M
        R, nb = rows.n_rows, int(self.bias)
        P, q, G, lo, hi = self._problem()
        solver = osqp.OSQP()
        eps = self.eps_start
        solver.setup(
            P,
            q,
            G,
            lo,
            hi,
            verbose=False,
            eps_abs=eps,
            eps_rel=eps,
            polishing=True,
            max_iter=self.max_iter,
        )
        if self.warm and self._w is not None:
            s = M.T @ self._w
            z = np.maximum(s, 0.0) if self.nonneg else s
            y_prev = self._y
            Jp = y_prev.size - nb - R  # columns at the previous solve
            y = np.r_[y_prev[:Jp], -z[Jp:], y_prev[Jp:]]
            solver.warm_start(x=np.r_[self._w, z], y=y)
        n_iter, out = 0, None
        while True:
            res = solver.solve(raise_error=False)
            n_iter += int(res.info.iter)
            status = str(res.info.status)
            if res.info.status_polish == 1 and np.all(np.isfinite(res.x)):
                out = self._accept(res, status, n_iter)
                if out is not None or eps <= self.eps:
                    break
            elif eps <= self.eps:
                break
            if n_iter >= self.max_iter:
                break
            eps = max(eps / 10.0, self.eps)
            solver.update_settings(eps_abs=eps, eps_rel=eps, max_iter=self.max_iter - n_iter)
        if out is not None:
            return out
        # no certified polished solution even at the tightest tolerance: finish with the
        # interior-point reference and warm start the next solve from it
        ref = solve_kernel_master_cvxpy(
            self.A(),
            rows,
            self.C,
            alpha_sign="nonneg" if self.nonneg else "free",
            bias=self.bias,
        )
        self.n_fallbacks += 1
        self._w = ref.w.copy()
        self._y = np.r_[-ref.alpha, [ref.b] if self.bias else [], np.zeros(R)]
        return replace(ref, stop_reason=f"osqp_{status}+clarabel", n_iter=n_iter)

    def _accept(self, res: Any, status: str, n_iter: int) -> KernelMasterResult | None:
        """The polished solution if its duality gap certifies it (relative ≤ ``gap_tol``)."""
        rows, M = self.rows, self._M
        R, J = rows.n_rows, M.shape[1]
        x, y = np.asarray(res.x), np.asarray(res.y)
        w = np.clip(x[:R], 0.0, self.C)
        alpha = x[R:].copy()
        if self.nonneg:
            alpha = np.maximum(alpha, 0.0)
        b = float(y[J]) if self.bias else 0.0
        out = master_result(rows, self.A(), alpha, b, w, self.C, "l2", status, n_iter)
        dual = dual_objective(rows, w, M.T @ w, "l2", "nonneg" if self.nonneg else "free")
        scale = max(1.0, abs(out.primal))
        if out.primal - dual > self.gap_tol * scale or (
            self.bias and abs(rows.sign @ w) > self.gap_tol * scale
        ):
            return None
        self._w, self._y = w, y
        return out
