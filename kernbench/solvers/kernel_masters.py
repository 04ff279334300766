"""Restricted masters of CG-Boost: 2-norm QPs on OSQP, 1-norm LPs on HiGHS, and a cvxpy reference.

Every master is one *row form*. A row r belongs to sample i_r with sign s_r and right-hand side c_r:

    min_{α, b, ξ ≥ 0}  R(α) + C·Σ_r ξ_r   s.t.   s_r (Σ_j A_{i_r j} α_j + b) + ξ_r ≥ c_r,

with A the m × J matrix of the selected columns and

* classification (Bi, Zhang & Bennett (4), (7), (11)): one row per point, s = y, c = 1;
* ε-insensitive regression (13): two rows per point, s = (+1, −1), c = (y − ε, −y − ε);
* R(α) = ½‖α‖² (2-norm) or ‖α‖₁ (1-norm); α ≥ 0 (``alpha_sign="nonneg"``, (4)/(7)) or free (11);
* b free (unregularised, kept in every restricted problem, §4.1) or absent (``bias=False``; a
  regularised bias is the constant column, a column like any other).

The row multipliers w_r ∈ [0, C] give the pricing weights g_i = Σ_{r: i_r = i} s_r w_r (y_i u_i for
classification, u_i − v_i for regression), and the score of a column a is s(a) = gᵀa. With free b
the dual carries Σ_i g_i = 0. The dual objective at w is

    2-norm: Σ_r c_r w_r − ½ Σ_j s_j²  (free α)  or  − ½ Σ_j max(s_j, 0)²  (α ≥ 0),
    1-norm: Σ_r c_r w_r, feasible iff |s_j| ≤ 1 (free) or s_j ≤ 1 (α ≥ 0) for every column j.

Back ends: :class:`OSQPKernelMaster` (2-norm; the QP is re-set-up with each new column and
warm-started from the previous primal and dual solution), :class:`IncrementalKernelLPMaster`
(1-norm; one HiGHS model grown by ``addCol``, re-solved from the previous basis, as LPBoost's
master), :class:`SVMKernelMaster` (the classification QP (11) with free b is an SVM whose
features are the selected columns: LIBSVM on their Gram matrix, from scratch each time),
:class:`SMOKernelMaster` (the same SVM dual by a warm-started SMO that keeps u and the gradient
across columns) and :func:`solve_kernel_master_cvxpy` (either norm, built afresh: the reference).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numba
import numpy as np
import scipy.sparse as sp

from kernbench.solvers.column_buffer import ColumnBuffer
from kernbench.solvers.linear_svm import (
    SMOSettings,
    add_outer,
    feasible_alpha,
    libsvm_rho,
    project_box_hyperplane,
    smo_with_face_steps,
)
from kernbench.solvers.lp import _IncrementalHighs

__all__ = [
    "IncrementalKernelLPMaster",
    "KernelMasterResult",
    "OSQPKernelMaster",
    "RowForm",
    "SMOKernelMaster",
    "SVMKernelMaster",
    "dual_objective",
    "solve_kernel_master_cvxpy",
]


#: gradient rounding noise above which (and above 10·tol) an SMO solve is at the precision floor:
#: the quadratic kernel on features of magnitude 100 gave 1e3-1e5; the badly scaled kernels the
#: interior point and SMO still solve (features 10·N(0, 1), norms ~1e5, C = 100) reached 1e-3
FLOOR_NOISE = 1.0


@dataclass(frozen=True)
class RowForm:
    """The rows of a master: sample index, sign and right-hand side of each constraint.

    Attributes
    ----------
    sample : ndarray of int, shape (n_rows,)
    sign : ndarray of float, shape (n_rows,)
    rhs : ndarray of float, shape (n_rows,)
    m : int
        Number of samples.
    """

    sample: np.ndarray
    sign: np.ndarray
    rhs: np.ndarray
    m: int

    @classmethod
    def classification(cls, y: np.ndarray) -> RowForm:
        """y_i(Σ_j K_ij α_j + b) + ξ_i ≥ 1 (labels ±1)."""
        y = np.asarray(y, dtype=np.float64)
        m = y.size
        return cls(np.arange(m), y.copy(), np.ones(m), m)

    @classmethod
    def regression(cls, y: np.ndarray, epsilon: float) -> RowForm:
        """Σ_j K_ij α_j + b + ξ_i ≥ y_i − ε and −(Σ_j K_ij α_j + b) + η_i ≥ −y_i − ε (13)."""
        y = np.asarray(y, dtype=np.float64)
        m = y.size
        return cls(
            np.r_[np.arange(m), np.arange(m)],
            np.r_[np.ones(m), -np.ones(m)],
            np.r_[y - epsilon, -y - epsilon],
            m,
        )

    @property
    def n_rows(self) -> int:
        return int(self.sample.size)

    def expand(self, A: np.ndarray) -> np.ndarray:
        """s_r A[i_r] for every row: the constraint coefficients of the columns A (m × J)."""
        return self.sign[:, None] * A[self.sample]

    def weights(self, w: np.ndarray) -> np.ndarray:
        """Pricing weights g_i = Σ_{r: i_r = i} s_r w_r."""
        return np.bincount(self.sample, weights=self.sign * w, minlength=self.m)

    def slacks(self, f: np.ndarray) -> np.ndarray:
        """Exact slacks ξ_r = max(0, c_r − s_r f_{i_r}) of model values f (m,)."""
        return np.maximum(self.rhs - self.sign * f[self.sample], 0.0)


@dataclass(frozen=True)
class KernelMasterResult:
    """Solution of a restricted CG-Boost master.

    Attributes
    ----------
    alpha : ndarray of shape (J,)
        Column coefficients.
    b : float
        Bias (0 without one).
    xi : ndarray of shape (n_rows,)
        Exact slacks of (α, b).
    w : ndarray of shape (n_rows,)
        Row multipliers in [0, C].
    g : ndarray of shape (m,)
        Pricing weights Σ_r s_r w_r per sample.
    primal : float
        R(α) + C·Σξ at (α, b) with the exact slacks.
    stop_reason : str
        How the solve ended: the back end's status, or the SMO path (see
        :class:`SMOKernelMaster`).
    n_iter : int
        Solver iterations of this call.
    """

    alpha: np.ndarray
    b: float
    xi: np.ndarray
    w: np.ndarray
    g: np.ndarray
    primal: float
    stop_reason: str
    n_iter: int = 0


def _result(
    rows: RowForm,
    A: np.ndarray,
    alpha: np.ndarray,
    b: float,
    w: np.ndarray,
    C: float,
    norm: str,
    status: str,
    n_iter: int,
) -> KernelMasterResult:
    f = A @ alpha + b
    xi = rows.slacks(f)
    reg = 0.5 * float(alpha @ alpha) if norm == "l2" else float(np.abs(alpha).sum())
    w = np.clip(w, 0.0, C)
    return KernelMasterResult(
        alpha=alpha,
        b=float(b),
        xi=xi,
        w=w,
        g=rows.weights(w),
        primal=reg + C * float(xi.sum()),
        stop_reason=status,
        n_iter=n_iter,
    )


def dual_objective(
    rows: RowForm, w: np.ndarray, scores: np.ndarray, norm: str, alpha_sign: str
) -> float:
    """The master dual objective at multipliers w given all column scores s_j = gᵀK_j.

    2-norm: cᵀw − ½Σ s_j² (free α) or − ½Σ max(s_j, 0)² (α ≥ 0). 1-norm: cᵀw (the caller checks
    dual feasibility |s_j| ≤ 1 or s_j ≤ 1).
    """
    lin = float(rows.rhs @ w)
    if norm == "l1":
        return lin
    s = scores if alpha_sign == "free" else np.maximum(scores, 0.0)
    return lin - 0.5 * float(s @ s)


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
    return _result(rows, A, a, bv, w, C, norm, status, 0)


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
        out = _result(rows, self.A(), alpha, b, w, self.C, "l2", status, n_iter)
        dual = dual_objective(rows, w, M.T @ w, "l2", "nonneg" if self.nonneg else "free")
        scale = max(1.0, abs(out.primal))
        if out.primal - dual > self.gap_tol * scale or (
            self.bias and abs(rows.sign @ w) > self.gap_tol * scale
        ):
            return None
        self._w, self._y = w, y
        return out


class IncrementalKernelLPMaster(_IncrementalHighs):
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
        return _result(
            self.rows, A, alpha, b, w, self.C, "l1", "optimal", self._simplex_iterations()
        )


class SVMKernelMaster:
    """The classification QP (11) (free α, unregularised b) as an SVM on the selected columns.

    (11) is the SVM min ½‖α‖² + C·Σξ s.t. y_i(Σ_j K_ij α_j + b) + ξ_i ≥ 1 whose features are the
    selected kernel columns, i.e. the kernel G = K_𝒲 K_𝒲ᵀ (m × m, grown by k kᵀ per new column).
    LIBSVM (scikit-learn's ``SVC(kernel="precomputed")``) solves its dual from scratch each time;
    its multipliers are the u of (11), α = K_𝒲ᵀ(y∘u) and b is LIBSVM's intercept. Not warm-started
    but fast; accurate to LIBSVM's tolerance (~1e-5 relative in the objective at ``tol=1e-7``).

    Parameters
    ----------
    rows : RowForm
        A classification row form.
    C : float
    tol : float
        LIBSVM's stopping tolerance.
    """

    def __init__(self, rows: RowForm, C: float, *, tol: float = 1e-7):
        if rows.n_rows != rows.m or not np.all(rows.rhs == 1.0):
            raise ValueError("SVMKernelMaster solves the classification master only")
        self.rows = rows
        self.C = float(C)
        self.tol = float(tol)
        self._cols: list[np.ndarray] = []
        self._G = np.zeros((rows.m, rows.m))

    @property
    def n_columns(self) -> int:
        return len(self._cols)

    def add_column(self, column: np.ndarray) -> None:
        """Append a training column (m,) as a new feature: G += k kᵀ."""
        col = np.ascontiguousarray(column, dtype=np.float64)
        self._cols.append(col)
        add_outer(self._G, col)

    def solve(self) -> KernelMasterResult:
        """Solve the SVM dual on the current Gram matrix."""
        from sklearn.svm import SVC

        if not self._cols:  # no feature: min C·Σ(1 − y_i b)₊ over b, an LP in one variable
            return self._bias_only()
        y = self.rows.sign
        svc = SVC(C=self.C, kernel="precomputed", tol=self.tol, cache_size=200, max_iter=-1)
        svc.fit(self._G, y)
        sign = 1.0 if svc.classes_[1] > 0 else -1.0  # decision > 0 <-> classes_[1]
        g = np.zeros(self.rows.m)
        g[svc.support_] = sign * svc.dual_coef_[0]  # y_i u_i
        A = np.column_stack(self._cols)
        alpha = A.T @ g
        return _result(
            self.rows,
            A,
            alpha,
            sign * float(svc.intercept_[0]),
            np.abs(g),
            self.C,
            "l2",
            "libsvm",
            int(np.sum(svc.n_iter_)),
        )

    def _bias_only(self) -> KernelMasterResult:
        return bias_only_master(self.rows, self.C)


def bias_only_master(rows: RowForm, C: float) -> KernelMasterResult:
    """The classification master with no column (only b): min C·Σ(1 − y_i b)₊ over b, in
    closed form (b = the majority label, or 0 on a tie)."""
    y = rows.sign
    n_pos, n_neg = float((y > 0).sum()), float((y < 0).sum())
    b = 1.0 if n_pos > n_neg else (-1.0 if n_neg > n_pos else 0.0)
    # dual: u = C on the minority class's margin errors, scaled so that yᵀu = 0
    u = np.where(y > 0, C * min(1.0, n_neg / max(n_pos, 1.0)), 0.0)
    u += np.where(y < 0, C * min(1.0, n_pos / max(n_neg, 1.0)), 0.0)
    return _result(rows, np.empty((rows.m, 0)), np.zeros(0), b, u, C, "l2", "closed_form", 0)


class ColumnRange:
    """An orthonormal basis B (m × r) of the selected columns' range, with H = (BᵀA)(BᵀA)ᵀ.

    The dual of (11) reads A only through AAᵀ = BHBᵀ, so while the rank r is small it is a
    problem in r dimensions, whatever the number of columns J. Each column k is orthogonalised
    against B by classical Gram-Schmidt applied twice (c = Bᵀk, k − Bc, once more); a residual
    above ``rtol``·‖k‖ becomes a new basis vector, a smaller one is dropped (so AAᵀ is kept to
    ~``rtol`` relative), and H += ccᵀ with c the column's coordinates in B. O(m·r) per column.
    Tracking stops once r exceeds ``max_rank`` (rank only grows).

    Parameters
    ----------
    m : int
        Column length.
    max_rank : int
        Stop tracking when the rank exceeds this.
    rtol : float
        Relative residual below which a column adds no basis vector.
    """

    def __init__(self, m: int, max_rank: int, rtol: float = 1e-10) -> None:
        self.max_rank = int(max_rank)
        self.rtol = float(rtol)
        self._B = ColumnBuffer(m)
        self._H = np.zeros((0, 0))
        self.exceeded = max_rank < 0

    @property
    def rank(self) -> int:
        return len(self._B)

    @property
    def B(self) -> np.ndarray:
        """The basis, shape (m, r)."""
        return self._B.view()

    @property
    def H(self) -> np.ndarray:
        """(BᵀA)(BᵀA)ᵀ, shape (r, r)."""
        return self._H

    def add(self, column: np.ndarray) -> None:
        """Take the next selected column into the basis and into H."""
        if self.exceeded:
            return
        B = self.B
        c = B.T @ column
        res = column - B @ c
        c2 = B.T @ res
        res -= B @ c2
        c += c2
        nrm = float(np.linalg.norm(res))
        if nrm > self.rtol * float(np.linalg.norm(column)):
            if self.rank + 1 > self.max_rank:
                self.exceeded = True
                self._H = np.zeros((0, 0))
                return
            self._B.append(res / nrm)
            c = np.append(c, nrm)
            H = np.zeros((c.size, c.size))
            H[:-1, :-1] = self._H
            self._H = H
        self._H += np.outer(c, c)


def solve_reduced_dual(
    basis: ColumnRange, y: np.ndarray, C: float, c: np.ndarray | None = None
) -> np.ndarray:
    """The dual of (11) or (13) in the columns' range, by Clarabel's interior point.

    min ½ vᵀHv − cᵀu over (u, v) subject to v = Bᵀ(y∘u), yᵀu = 0, 0 ≤ u ≤ C: the dual
    max cᵀu − ½‖Aᵀ(y∘u)‖² written with AAᵀ = BHBᵀ, with y the rows' signs and c their
    right-hand sides (classification: c = 1; regression (13): the 2m rows of the ε-tube, c =
    (y − ε, −y − ε), A the columns expanded to the rows). Its KKT system eliminates the diagonal
    u block into an r × r one: O(m·r²) per iteration, 13-18 iterations, whatever the degeneracy
    of the dual (hundreds of u at each bound for a few free: pairwise and face steps crawl
    there). Only u is returned: the caller's SMO certifies or finishes it and takes b from its
    own gradient.

    Parameters
    ----------
    basis : ColumnRange
        The columns' range (over the rows).
    y : ndarray of shape (n_rows,)
        The rows' signs.
    C : float
    c : ndarray of shape (n_rows,), optional
        The rows' right-hand sides (default: all 1, the classification dual).

    Returns
    -------
    ndarray of shape (m,)
        The interior point's u, clipped to [0, C], yᵀu = 0 restored.

    Raises
    ------
    RuntimeError
        When Clarabel ends neither ``Solved`` nor ``AlmostSolved``.
    """
    import clarabel

    m, r = y.size, basis.rank
    B, H = basis.B, basis.H
    T = sp.csc_matrix(np.triu(H))  # the v block of P; the u block is zero
    P = sp.csc_matrix(
        (T.data, T.indices + m, np.r_[np.zeros(m, dtype=T.indptr.dtype), T.indptr]),
        shape=(m + r, m + r),
    )
    lin = np.ones(m) if c is None else np.asarray(c, dtype=np.float64)
    q = np.concatenate([-lin, np.zeros(r)])
    # the constraints, written column by column in CSC (scipy's block assembly cost more than
    # Clarabel's solve): u_i has −y_i B_i· in the rows v − Bᵀ(y∘u) = 0, y_i in the
    # row yᵀu = 0, −1 in its row of u ≥ 0 and 1 in its row of u ≤ C; v_k has 1 in row k
    i = np.arange(m)
    data = np.hstack([-(B * y[:, None]), y[:, None], -np.ones((m, 1)), np.ones((m, 1))])
    idx = np.hstack(
        [
            np.broadcast_to(np.arange(r), (m, r)),
            np.full((m, 1), r),
            (r + 1 + i)[:, None],
            (r + 1 + m + i)[:, None],
        ]
    )
    ptr = np.r_[np.arange(m + 1) * (r + 3), m * (r + 3) + np.arange(1, r + 1)]
    A = sp.csc_matrix(
        (np.r_[data.ravel(), np.ones(r)], np.r_[idx.ravel(), np.arange(r)], ptr),
        shape=(r + 1 + 2 * m, m + r),
    )
    rhs = np.concatenate([np.zeros(r + 1 + m), np.full(m, C)])
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    cones = [clarabel.ZeroConeT(r + 1), clarabel.NonnegativeConeT(2 * m)]
    sol = clarabel.DefaultSolver(P, q, A, rhs, cones, settings).solve()
    status = str(sol.status)
    if status not in ("Solved", "AlmostSolved"):
        raise RuntimeError(f"Clarabel could not solve the reduced CG-Boost dual: {status}")
    return feasible_alpha(np.clip(np.asarray(sol.x[:m]), 0.0, C), y)


def _snap_to_bounds(u: np.ndarray, y: np.ndarray, C: float, rel: float = 1e-6) -> np.ndarray:
    """An interior point's u with the entries within ``rel``·C of C, or ``rel``·min(C, max u) of
    0, set to that bound, yᵀu = 0 restored on the rest (projected,
    :func:`kernbench.solvers.linear_svm.project_box_hyperplane`).

    An interior point leaves every u strictly inside the box (about μ/slack from a bound); SMO
    continuing from there sees all m variables free, too many for a face step, and runs to its
    step cap at the first solve after the hand-over. Snapped, only the margin's u stay free.
    """
    u = np.clip(u, 0.0, C)
    # relative to u's own scale below: a separable problem's u can all be far below C (optdigits'
    # quadratic kernel: Σu ≈ 5e-5 at C = 100), and rel·C would snap every one of them to 0
    u[u <= rel * min(C, float(u.max()))] = 0.0
    u[u >= (1.0 - rel) * C] = C
    free = (u > 0.0) & (u < C)
    target = -float(y[~free] @ u[~free])
    yf = y[free]
    if free.any() and -C * np.count_nonzero(yf < 0) <= target <= C * np.count_nonzero(yf > 0):
        u[free] = project_box_hyperplane(u[free], yf, C, target)
        return u
    return feasible_alpha(u, y)


@numba.njit(cache=True)
def _add_feature(G, grad, k, y, u, use_gram):  # pragma: no cover - numba
    """G += k kᵀ (when kept) and ∇ += (y∘k)·(kᵀ(y∘u)) in place: Q = diag(y) G diag(y) gains
    (y∘k)(y∘k)ᵀ, so ∇ = Qu − 1 gains (y∘k)((y∘k)ᵀu)."""
    m = k.shape[0]
    s = 0.0
    for t in range(m):
        s += k[t] * y[t] * u[t]
    for t in range(m):
        grad[t] += y[t] * k[t] * s
    if use_gram:
        for i in range(m):
            ki = k[i]
            for t in range(m):
                G[i, t] += ki * k[t]


@dataclass
class IPMSwitch:
    """When :class:`SMOKernelMaster` solves by the interior point instead of SMO.

    The master moves to the interior point after an SMO solve that needed at least
    ``face_steps`` face steps (a degenerate low-rank dual), and stays there while its predicted
    cost (its last solve's seconds per m·r², times m·r²) stays below that SMO solve's time. A
    failed interior-point solve moves the master back to SMO; after ``max_failures`` failures it
    stays on SMO for the rest of the fit.

    Attributes
    ----------
    face_steps : int or None
        Face steps in one SMO solve that move the master to the interior point (0: from the first
        column; None: never).
    max_failures : int
        Interior-point failures after which SMO is used for good.
    active : bool
        The next solve is by the interior point.
    smo_time : float
        Seconds of the SMO solve that moved the master to the interior point.
    rate : float
        Seconds per m·r² of the last interior-point solve.
    n_solves, n_failures : int
        Interior-point solves, and those that stopped short.
    """

    face_steps: int | None = 200
    max_failures: int = 3
    active: bool = False
    smo_time: float = np.inf
    rate: float = 0.0
    n_solves: int = 0
    n_failures: int = 0

    def __post_init__(self) -> None:
        self.active = self.face_steps == 0

    def use(self, m: int, rank: int, exceeded: bool, at_floor: bool = False) -> bool:
        """Whether this solve is by the interior point (columns of rank ``rank``; ``exceeded``:
        the rank passed the largest one the column range is kept for; ``at_floor``: the
        gradient's rounding noise is above the tolerance, where no solver certifies the solve
        and SMO's own feasible point is kept)."""
        if self.active and (at_floor or self.rate * m * rank * rank > self.smo_time):
            self.active = False  # the rank has grown: an interior point would now cost more
        return self.active and not exceeded

    def solved(self, seconds: float, m: int, rank: int) -> None:
        self.rate = seconds / (m * max(rank, 1) ** 2)
        self.n_solves += 1

    def failed(self) -> None:
        """The interior point stopped short: this solve and the next ones by SMO, until a slow
        one moves the master back."""
        self.active = False
        self.n_failures += 1

    def after_smo(self, face_steps: int, seconds: float, exceeded: bool) -> None:
        """An SMO solve of its own took ``face_steps`` face steps and ``seconds``."""
        if (
            self.face_steps is not None
            and face_steps >= self.face_steps
            and not exceeded
            and self.n_failures < self.max_failures
        ):
            self.active = True
            self.smo_time = seconds


class SMOKernelMaster:
    """The 2-norm QP with free α and unregularised b by SMO, warm-started across columns:
    classification (11) and ε-insensitive regression (13).

    As for :class:`SVMKernelMaster`, (11) is the SVM whose features are the selected columns K_𝒲;
    its dual is max 1ᵀu − ½uᵀQu, 0 ≤ u ≤ C, yᵀu = 0 with Q = diag(y) G diag(y), G = K_𝒲K_𝒲ᵀ.
    The master keeps the dual point u (always feasible) and the gradient ∇ = Qu − 1 between
    solves. A new column k changes G by k kᵀ and ∇ by (y∘k)·(kᵀ(y∘u)) (O(m), plus O(m²) for the
    kept G), and the next solve continues SMO from u, so a solve after one new column typically
    needs a few pair updates instead of a solve from u = 0.

    One solve:

    1. Before the first column (only b in 𝒲) the closed form :func:`bias_only_master`; its u
       starts the SMO of the first column.
    2. SMO (:func:`kernbench.solvers.linear_svm.smo_solve`, compiled: LIBSVM's second-order
       working-set selection with τ = 1e-12 for non-positive pair curvature; rows of Q from the
       kept G, or from the columns when m > ``gram_max_rows``) in chunks of ``chunk`` =
       max(30, m/10) pair updates. After a chunk that did not converge, steps on the face of the
       free u (:func:`kernbench.solvers.linear_svm.face_descent`, shared with CGENS's restricted
       SVM: a Newton step, or a zero-curvature ray when the face is unbounded), at most
       ``max_face_steps`` of them and none costing more than ``max_free``³ flops. Pair steps alone
       crawl when the selected columns have a small rank and many u are free (a stratified fit's
       linear columns); the face steps move all free u at once.
    3. Stop at LIBSVM's maximal violating pair gap m(u) − M(u) ≤ ``tol``. Then α = K_𝒲ᵀ(y∘u) and
       b = −ρ with LIBSVM's ρ (mean of y_i∇_i over the free u_i, else the midpoint of its
       feasible interval), from a gradient recomputed from the columns (no drift).
    4. A solve that reaches ``max_steps`` pair updates is finished by the cvxpy/Clarabel reference
       (stop reason ``smo+clarabel``, counted in ``n_fallbacks``); its multipliers, made feasible,
       start the next solve. When the reference fails too, the solve keeps SMO's own feasible
       point (stop reason ``smo_step_cap``).
    5. No gap below the gradient's rounding noise can be certified. The noise is measured as the
       largest difference between ∇ computed from the columns and from the kept G (equal in
       exact arithmetic); above max(10·``tol``, :data:`FLOOR_NOISE`) the solve is at the
       precision floor: it stops at the gap ``tol`` + 4·noise or after ``floor_chunks`` chunks,
       without the interior point, with SMO's own feasible point (stop reason ``...@floor``).
       Columns of norm 10⁵-10⁹ (the quadratic kernel on raw features of magnitude 100) gave
       noise 1e3-1e5, where every solve otherwise ran to its step cap; well-scaled problems
       stay below it (digits' 64 features in [0, 1], C = 100, 300 columns: at most 0.15·tol).

    Every solve not certified by SMO's own stopping test is counted by its reason in
    ``fallbacks``.

    Regression (13) is the same dual over its 2m rows r (multipliers w = (u, v)): Q_rr' =
    s_r s_r' G_{i_r i_r'} and ∇ = Qw − c with c the rows' right-hand sides (LIBSVM's ε-SVR
    form), so the same pair updates and face steps apply to the columns expanded to the rows,
    K_{i_r j}, and so does the interior point below (its linear term c); it starts from w = 0
    (no closed form before the first column). Its duals stall in the same way as
    classification's once columns of a small rank pile up (scikit-learn's 200-point regression
    check data: thousands of face steps per column at rank 26-66).

    Some duals defeat both kinds of step: most u at a bound and the faces of the few free ones
    nearly all rays, when the columns span a space of small rank r. Such a dual is small in the
    columns' range: with an orthonormal basis B of it (:class:`ColumnRange`, kept while
    r ≤ ``ipm_max_rank``), AAᵀ = BHBᵀ and :func:`solve_reduced_dual` solves it by Clarabel's
    interior point in O(m·r²) per iteration whatever the degeneracy. :class:`IPMSwitch` decides
    when the master uses it (stop reason ``ipm``): after an SMO solve that needed at least
    ``ipm_face_steps`` face steps, while r ≤ ``ipm_max_rank``, the interior point's predicted cost
    (its last solve's time per m·r²) stays below that SMO solve's time, and it has not failed
    ``IPMSwitch.max_failures`` times. Its u, snapped to the bounds (within 1e-6 of min(C, max u)),
    starts SMO, whose stopping test certifies it or which finishes it (stop reason ``ipm+smo``): the
    interior point's own α = Aᵀ(y∘u) is not accurate enough for the margins on badly scaled
    kernels.

    Parameters
    ----------
    rows : RowForm
        A classification or regression row form.
    C : float
    tol : float
        Stopping tolerance on the maximal violating pair gap.
    max_steps : int, optional
        SMO pair updates per solve (default 1000 per row for classification, 50 per row for
        regression) before the Clarabel fallback.
    gram_max_rows : int
        Keep G (m × m, 8m² bytes) when m ≤ this; otherwise compute kernel rows from the columns.
    warm_start : bool
        Continue from the previous u (False: every solve starts from u = 0, for the benchmark
        and the tests).
    ipm_max_rank : int
        Largest rank of the columns for which the interior point is used (its cost grows as
        m·r² per iteration).
    ipm_face_steps : int or None
        Face steps in one SMO solve after which the next solves use the interior point (0:
        from the first column; None: never).

    Attributes
    ----------
    n_face_steps, n_fallbacks, n_ipm_solves, n_ipm_failures : int
        Face steps taken, SMO solves finished by Clarabel, solves by the interior point and
        interior-point solves that stopped short (that solve then by SMO), over all solves.
    fallbacks : dict of str to int
        Solves not certified by SMO's own stopping test, by reason: ``precision_floor`` (step 5),
        ``step_cap`` (SMO reached ``max_steps``; Clarabel finished the solve),
        ``clarabel_rescaled`` (Clarabel solved it only in column-scaled variables, see
        :func:`solve_kernel_master_cvxpy`) and ``clarabel_failed`` (Clarabel failed in both
        forms: SMO's last point was kept).
    floor_chunks : int
        SMO chunks (each followed by face steps) of a solve at the precision floor (10).
    max_face_steps, max_free : int
        Face steps after one SMO chunk at most (50), and no face step costing more than
        ``max_free``³ flops (|F|·J·min(|F|, J) ≤ 600³, |F| the free u and J the columns).
    """

    def __init__(
        self,
        rows: RowForm,
        C: float,
        *,
        tol: float = 1e-7,
        max_steps: int | None = None,
        gram_max_rows: int = 6000,
        warm_start: bool = True,
        ipm_max_rank: int = 200,
        ipm_face_steps: int | None = 200,
    ) -> None:
        self._classification = rows.n_rows == rows.m and bool(np.all(rows.rhs == 1.0))
        m = rows.n_rows  # the dual's variables: one per row
        # the rows' first occurrences of the samples: the columns in sample space (regression)
        self._first = None if self._classification else np.unique(rows.sample, return_index=True)[1]
        self._c = np.ascontiguousarray(rows.rhs, dtype=np.float64)
        self.rows = rows
        self.C = float(C)
        self.tol = float(tol)
        # regression: 50 per row (iris, ε = 0.1: two solves stalled to 1000 per row, 30-46 s
        # each, where the Clarabel reference then solved them)
        per_row = 1000 if self._classification else 50
        self.max_steps = per_row * m if max_steps is None else int(max_steps)
        self.warm = warm_start
        self._y = np.ascontiguousarray(rows.sign, dtype=np.float64)
        self._use_gram = m <= gram_max_rows
        self._G = np.zeros((m, m)) if self._use_gram else np.zeros((1, 1))
        self._diag = np.zeros(m)
        self._cols = ColumnBuffer(m)
        self._range = ColumnRange(m, ipm_max_rank if ipm_face_steps is not None else -1)
        self.ipm = IPMSwitch(face_steps=ipm_face_steps)
        self._u = np.zeros(m)
        self._grad = -self._c.copy()  # ∇ = Qu − c
        self.n_face_steps = 0
        self.n_fallbacks = 0
        self.fallbacks: dict[str, int] = {}
        self.chunk = max(30, m // 10)
        self.max_face_steps = 50
        self.max_free = 600
        self.floor_chunks = 10

    @property
    def n_columns(self) -> int:
        return len(self._cols)

    @property
    def n_ipm_solves(self) -> int:
        return self.ipm.n_solves

    @property
    def n_ipm_failures(self) -> int:
        return self.ipm.n_failures

    def A(self) -> np.ndarray:
        """The selected columns, expanded to the rows (classification: as given), shape (R, J)."""
        return self._cols.view()

    def _sample_columns(self) -> np.ndarray:
        """The selected columns over the samples, shape (m, J)."""
        return self.A() if self._first is None else self.A()[self._first]

    def _count(self, reason: str) -> None:
        self.fallbacks[reason] = self.fallbacks.get(reason, 0) + 1

    def add_column(self, column: np.ndarray) -> None:
        """Append a training column (m,): G += k kᵀ, ∇ += (y∘k)·(kᵀ(y∘u)); u is kept."""
        col = np.asarray(column, dtype=np.float64)
        col = np.ascontiguousarray(col if self._first is None else col[self.rows.sample])
        self._cols.append(col)
        self._range.add(col)
        self._diag += col * col
        _add_feature(self._G, self._grad, col, self._y, self._u, self._use_gram)

    def _fresh_gradient(self) -> np.ndarray:
        A = self.A()
        return self._y * (A @ (A.T @ (self._y * self._u))) - self._c

    def _gradient_after(self, before: np.ndarray) -> Callable[[], np.ndarray]:
        """∇ after a face step from ``before``: with G kept, ∇ + y∘(G_{:,S}(y_S∘Δu_S)) over the
        entries S that moved (O(m·|S|), as SMO's own updates; the columns' product costs
        O(m·J), a sizeable part of a face step); else afresh. The solve
        ends on a gradient computed afresh either way."""
        if not self._use_gram:
            return self._fresh_gradient
        y, u, G = self._y, self._u, self._G

        def gradient() -> np.ndarray:
            S = np.flatnonzero(u != before)
            delta = y[S] * (u[S] - before[S])
            before[S] = u[S]
            return self._grad + y * (delta @ G[S])  # G symmetric: rows S are columns S

        return gradient

    def _gradient_noise(self) -> float:
        """The rounding noise of the gradient at the current u: the largest difference between
        ∇ computed from the columns, y∘(A(Aᵀ(y∘u))) − c, and from the kept Gram matrix,
        y∘(G(y∘u)) − c (equal in exact arithmetic; 0 without a kept G or a column)."""
        if not self._use_gram or not len(self._cols):
            return 0.0
        via_gram = self._y * (self._G @ (self._y * self._u)) - self._c
        return float(np.max(np.abs(via_gram - self._fresh_gradient())))

    def solve(self) -> KernelMasterResult:
        """Continue SMO from the kept u until the maximal violating pair gap is ≤ ``tol``."""
        if not len(self._cols) and self._classification:
            # no feature: the closed form, whose u starts the first SMO
            res = bias_only_master(self.rows, self.C)
            self._u = res.w.copy()
            self._grad = -np.ones(self.rows.m)
            return res
        m, r = self.rows.n_rows, self._range.rank
        noise = self._gradient_noise()
        floor = noise > max(10.0 * self.tol, FLOOR_NOISE)  # step 5: the precision floor
        status = "smo"
        if self.ipm.use(
            m, r, self._range.exceeded, at_floor=floor
        ):  # the interior point in the columns' range
            start = time.perf_counter()
            try:
                u = solve_reduced_dual(self._range, self._y, self.C, self._c)
            except RuntimeError:  # Clarabel stopped short: this solve by SMO, from the last point
                self.ipm.failed()
            else:
                self.ipm.solved(time.perf_counter() - start, m, r)
                # snapped to the bounds, the interior point's u is SMO's start: SMO's stopping
                # test certifies it (0 steps) or finishes it; the interior point's own
                # α = Aᵀ(y∘u) is not accurate enough for the margins on badly scaled kernels
                self._u[:] = _snap_to_bounds(u, self._y, self.C)
                self._grad[:] = self._fresh_gradient()
                status = "ipm"
        if not self.warm and status == "smo":
            self._u = np.zeros(m)
            self._grad = -self._c.copy()
        y, u, grad = self._y, self._u, self._grad
        tol, max_steps = self.tol, self.max_steps
        if floor:
            tol += 4.0 * noise
            max_steps = min(max_steps, self.floor_chunks * self.chunk)
        start = time.perf_counter()
        settings = SMOSettings(
            chunk=self.chunk,
            # no column (regression's first solve): no face to step on
            max_face_steps=self.max_face_steps if len(self._cols) else 0,
            max_free=self.max_free,
            # the projected search on faces with more free u than columns too (a face step
            # that fixes one u at a time otherwise)
            search_wide=True,
        )
        steps, _, ok, faces = smo_with_face_steps(
            self._use_gram,
            self._G,
            self._cols.storage,  # C-ordered; smo_solve reads its first J columns
            len(self._cols),
            self._diag,
            y,
            u,
            grad,
            self.C,
            tol,
            max_steps,
            lambda: self._gradient_after(u.copy()),
            settings,
        )
        self.n_face_steps += faces
        if status == "smo":  # an SMO solve of its own, not the interior point's finish
            self.ipm.after_smo(
                faces,
                time.perf_counter() - start,
                self._range.exceeded,
            )
        ok = ok or floor  # at the floor, SMO's own point: no solver certifies a smaller gap
        if not ok:  # pairwise steps stalled (a degenerate dual): the interior-point reference
            self._count("step_cap")
            try:
                ref = solve_kernel_master_cvxpy(self._sample_columns(), self.rows, self.C)
            except RuntimeError:
                # Clarabel failed in both forms: SMO's own (feasible, not certified) point
                self._count("clarabel_failed")
                status = f"{status}_step_cap"
            else:
                self.n_fallbacks += 1
                if ref.stop_reason.endswith("/rescaled"):
                    self._count("clarabel_rescaled")
                # clipped to [0, C], yᵀu = 0 restored: the next solve continues from it;
                # regression's snapped to the bounds too (from the interior point's all-free
                # w, the next iris solve took 35 s of face steps)
                w = np.clip(ref.w, 0.0, self.C)
                u[:] = (
                    feasible_alpha(w, y) if self._classification else _snap_to_bounds(w, y, self.C)
                )
                grad[:] = self._fresh_gradient()
                return replace(ref, stop_reason=f"{status}+clarabel", n_iter=steps)
        grad[:] = self._fresh_gradient()  # b from a drift-free gradient
        b = -libsvm_rho(grad, y, u, self.C)
        alpha = self.A().T @ (y * u)
        if status == "ipm" and (steps or faces):
            status = "ipm+smo"  # SMO finished the interior point's solve
        if floor:
            self._count("precision_floor")
            status += "@floor"
        return _result(
            self.rows, self._sample_columns(), alpha, b, u.copy(), self.C, "l2", status, steps
        )
