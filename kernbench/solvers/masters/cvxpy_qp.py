"""The cvxpy reference master: either norm, built afresh at every solve."""

from __future__ import annotations

import numpy as np

from kernbench.solvers.column_buffer import ColumnBuffer
from kernbench.solvers.masters.base import KernelMasterResult, RowForm, master_result


def solve_kernel_master_cvxpy(
    A: np.ndarray,
    rows: RowForm,
    C: float,
    *,
    norm: str = "l2",
    alpha_sign: str = "free",
    bias: bool = True,
    solver: str = "CLARABEL",
) -> KernelMasterResult:
    """Build and solve the master on the columns A (m × J) with cvxpy (the reference path).

    Parameters
    ----------
    A : ndarray of shape (m, J)
    rows : RowForm
    C : float
    norm : {"l2", "l1"}
    alpha_sign : {"free", "nonneg"}
    bias : bool
        An unregularised bias b.
    solver : str
        cvxpy solver name (``CLARABEL``, ``OSQP``, ``HIGHS`` for the LP, ...).

    Notes
    -----
    When the solver fails on the problem as written, it is solved once more in column-scaled
    variables β_j = α_j·‖A_j‖ (the same problem; stop reason ``"<status>/rescaled"``). Clarabel's
    own equilibration scales by at most 10⁴, and kernel columns can be far larger: the quadratic
    kernel on raw features of magnitude 100 gives columns of norm ~4·10⁹, on which its KKT
    solves ended in ``NumericalError``.

    Raises
    ------
    RuntimeError
        When neither form is solved.
    """
    import cvxpy as cp

    try:
        return _solve_cvxpy(A, rows, C, norm, alpha_sign, bias, solver, rescale=False)
    except (cp.error.SolverError, RuntimeError) as exc:
        first = exc
    try:
        return _solve_cvxpy(A, rows, C, norm, alpha_sign, bias, solver, rescale=True)
    except (cp.error.SolverError, RuntimeError) as exc:
        raise RuntimeError(
            f"cvxpy/{solver} could not solve the CG-Boost master: {first}; rescaled: {exc}"
        ) from exc


def _solve_cvxpy(
    A: np.ndarray,
    rows: RowForm,
    C: float,
    norm: str,
    alpha_sign: str,
    bias: bool,
    solver: str,
    *,
    rescale: bool,
) -> KernelMasterResult:
    """One cvxpy solve of the master, in α or (``rescale``) in β = α∘‖A_j‖."""
    import cvxpy as cp

    J = A.shape[1]
    d = np.linalg.norm(A, axis=0) if rescale else np.ones(J)
    d[d == 0.0] = 1.0
    beta = cp.Variable(J, nonneg=alpha_sign == "nonneg")
    alpha = cp.multiply(1.0 / d, beta) if rescale else beta
    xi = cp.Variable(rows.n_rows, nonneg=True)
    M = rows.expand(A) / d
    expr = M @ beta if J else np.zeros(rows.n_rows)
    b = cp.Variable() if bias else None
    if b is not None:
        expr = expr + b * rows.sign  # one vector term (not n_rows scalar copies of b)
    margin = expr + xi >= rows.rhs
    reg = 0.5 * cp.sum_squares(alpha) if norm == "l2" else cp.norm1(alpha)
    prob = cp.Problem(cp.Minimize((reg if J else 0) + C * cp.sum(xi)), [margin])
    prob.solve(solver=solver)
    if prob.status not in ("optimal", "optimal_inaccurate"):
        raise RuntimeError(f"cvxpy/{solver} could not solve the CG-Boost master: {prob.status}")
    a = np.asarray(beta.value, dtype=np.float64).reshape(J) / d if J else np.zeros(0)
    bv = float(b.value) if b is not None else 0.0
    w = np.asarray(margin.dual_value, dtype=np.float64)
    status = str(prob.status) + ("/rescaled" if rescale else "")
    return master_result(rows, A, a, bv, w, C, norm, status, 0)


class CvxpyKernelMaster:
    """The master of either norm rebuilt by cvxpy over the columns at every solve (the reference
    back end, :func:`solve_kernel_master_cvxpy`).

    Parameters
    ----------
    rows : RowForm
    C : float
    norm : {"l2", "l1"}
    alpha_sign : {"free", "nonneg"}
    bias : bool
        An unregularised bias b.
    """

    def __init__(
        self,
        rows: RowForm,
        C: float,
        *,
        norm: str = "l2",
        alpha_sign: str = "free",
        bias: bool = True,
    ) -> None:
        self.rows = rows
        self.C = C
        self.norm = norm
        self.alpha_sign = alpha_sign
        self.bias = bias
        self._cols = ColumnBuffer(rows.m)

    @property
    def n_columns(self) -> int:
        return len(self._cols)

    @property
    def fallbacks(self) -> dict[str, int]:
        """None: every solve is the reference's own."""
        return {}

    def add_column(self, column: np.ndarray) -> None:
        """Append a training column (m,)."""
        self._cols.append(column)

    def solve(self) -> KernelMasterResult:
        """Build and solve the master over the columns added so far."""
        return solve_kernel_master_cvxpy(
            self._cols.view(),
            self.rows,
            self.C,
            norm=self.norm,
            alpha_sign=self.alpha_sign,
            bias=self.bias,
        )
