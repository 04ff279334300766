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
features are the selected columns: LIBSVM on their Gram matrix) and
:func:`solve_kernel_master_cvxpy` (either norm, built afresh: the reference).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import scipy.sparse as sp

from kernbench.solvers.lp import _IncrementalHighs

__all__ = [
    "IncrementalKernelLPMaster",
    "KernelMasterResult",
    "OSQPKernelMaster",
    "RowForm",
    "SVMKernelMaster",
    "dual_objective",
    "solve_kernel_master_cvxpy",
]


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
    status : str
        Back-end status.
    n_iter : int
        Solver iterations of this call.
    """

    alpha: np.ndarray
    b: float
    xi: np.ndarray
    w: np.ndarray
    g: np.ndarray
    primal: float
    status: str
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
        status=status,
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
    """
    import cvxpy as cp

    J = A.shape[1]
    alpha = cp.Variable(J, nonneg=alpha_sign == "nonneg")
    xi = cp.Variable(rows.n_rows, nonneg=True)
    M = rows.expand(A)
    expr = M @ alpha if J else np.zeros(rows.n_rows)
    b = cp.Variable() if bias else None
    if b is not None:
        expr = expr + b * rows.sign  # one vector term (not n_rows scalar copies of b)
    margin = expr + xi >= rows.rhs
    reg = 0.5 * cp.sum_squares(alpha) if norm == "l2" else cp.norm1(alpha)
    prob = cp.Problem(cp.Minimize((reg if J else 0) + C * cp.sum(xi)), [margin])
    prob.solve(solver=solver)
    if prob.status not in ("optimal", "optimal_inaccurate"):
        raise RuntimeError(f"cvxpy/{solver} could not solve the CG-Boost master: {prob.status}")
    a = np.asarray(alpha.value, dtype=np.float64).reshape(J) if J else np.zeros(0)
    bv = float(b.value) if b is not None else 0.0
    w = np.asarray(margin.dual_value, dtype=np.float64)
    return _result(rows, A, a, bv, w, C, norm, str(prob.status), 0)


class OSQPKernelMaster:
    """The 2-norm master (7)/(11)/(13) on OSQP, grown column by column and warm-started.

    Variables x = (α_1..α_J, b, ξ_1..ξ_R); P = diag(1_J, 0, 0), q = (0, 0, C·1). Constraint rows:
    the R margin rows, the R rows ξ ≥ 0 and, for α ≥ 0, J rows α ≥ 0 (last, so they only grow).
    OSQP cannot change a problem's dimensions, so each solve sets the problem up again and warm
    starts it from the previous primal x (new α at 0) and dual y (new rows at 0); the row
    multipliers are w = −y of the margin rows (OSQP's sign for an active lower bound).

    Parameters
    ----------
    rows : RowForm
    C : float
    alpha_sign : {"free", "nonneg"}
    bias : bool
    eps : float
        OSQP's absolute and relative tolerance; the solution is polished.
    max_iter : int
        ADMM iteration cap; a solve that does not converge within it (ADMM is slow on the
        LP-like parts: no curvature in b and ξ) is finished by the cvxpy/Clarabel reference
        (counted in ``n_fallbacks``) and the next solve is warm-started from that solution.
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
        max_iter: int = 4000,
        warm_start: bool = True,
    ) -> None:
        self.rows = rows
        self.C = float(C)
        self.nonneg = alpha_sign == "nonneg"
        self.bias = bias
        self.eps = eps
        self.max_iter = max_iter
        self.warm = warm_start
        self._cols: list[np.ndarray] = []
        self._x: np.ndarray | None = None
        self._y: np.ndarray | None = None
        self.n_fallbacks = 0

    @property
    def n_columns(self) -> int:
        return len(self._cols)

    def add_column(self, column: np.ndarray) -> None:
        """Append a training column (m,) as a new α variable (enters at 0)."""
        self._cols.append(np.asarray(column, dtype=np.float64))
        if self._x is not None:
            J = len(self._cols) - 1
            self._x = np.r_[self._x[:J], 0.0, self._x[J:]]
            if self.nonneg:
                self._y = np.r_[self._y, 0.0]

    def A(self) -> np.ndarray:
        """The selected columns, shape (m, J)."""
        return np.column_stack(self._cols) if self._cols else np.empty((self.rows.m, 0))

    def _osqp(self, P: Any, q: np.ndarray, G: Any, lo: np.ndarray, warm: bool) -> Any:
        import osqp

        solver = osqp.OSQP()
        solver.setup(
            P,
            q,
            G,
            lo,
            np.full(lo.size, np.inf),
            verbose=False,
            eps_abs=self.eps,
            eps_rel=self.eps,
            polishing=True,
            max_iter=self.max_iter,
        )
        if warm:
            solver.warm_start(x=self._x, y=self._y)
        return solver.solve(raise_error=False)

    def solve(self) -> KernelMasterResult:
        """Solve the current restricted QP (warm-started; retried cold if ADMM stalls)."""
        rows = self.rows
        R, J, nb = rows.n_rows, len(self._cols), int(self.bias)
        A = self.A()
        n = J + nb + R
        P = sp.diags(np.r_[np.ones(J), np.zeros(nb + R)], format="csc")
        q = np.r_[np.zeros(J + nb), np.full(R, self.C)]
        blocks = [sp.csc_matrix(rows.expand(A))] if J else []
        if self.bias:
            blocks.append(sp.csc_matrix(rows.sign[:, None]))
        blocks.append(sp.identity(R, format="csc"))
        G = [
            sp.hstack(blocks, format="csc"),
            sp.hstack([sp.csc_matrix((R, J + nb)), sp.identity(R)]),
        ]
        lower = [rows.rhs, np.zeros(R)]
        if self.nonneg and J:
            G.append(sp.hstack([sp.identity(J), sp.csc_matrix((J, nb + R))]))
            lower.append(np.zeros(J))
        Gm = sp.vstack(G, format="csc")
        lo = np.concatenate(lower)
        warm = self.warm and self._x is not None and self._x.size == n and self._y.size == lo.size
        res = self._osqp(P, q, Gm, lo, warm)
        status = str(res.info.status)
        if not status.startswith("solved"):
            # ADMM can crawl on these LP-like problems (zero curvature in b and ξ): finish the
            # solve with the interior-point reference and warm start the next solve from it
            ref = solve_kernel_master_cvxpy(
                A, rows, self.C, alpha_sign="nonneg" if self.nonneg else "free", bias=self.bias
            )
            self.n_fallbacks += 1
            self._x = np.r_[ref.alpha, [ref.b] if self.bias else [], ref.xi]
            self._y = np.r_[-ref.w, np.zeros(lo.size - R)]
            return replace(ref, status="osqp_max_iter+clarabel", n_iter=int(res.info.iter))
        self._x, self._y = np.asarray(res.x), np.asarray(res.y)
        alpha = self._x[:J].copy()
        if self.nonneg:
            alpha = np.maximum(alpha, 0.0)
        b = float(self._x[J]) if self.bias else 0.0
        w = -self._y[:R]
        return _result(rows, A, alpha, b, w, self.C, "l2", status, int(res.info.iter))


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
        col = np.asarray(column, dtype=np.float64)
        self._cols.append(col)
        self._G += np.outer(col, col)

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
        y = self.rows.sign
        n_pos, n_neg = float((y > 0).sum()), float((y < 0).sum())
        b = 1.0 if n_pos > n_neg else (-1.0 if n_neg > n_pos else 0.0)
        # dual: u = C on the minority class's margin errors, scaled so that yᵀu = 0
        u = np.where(y > 0, self.C * min(1.0, n_neg / max(n_pos, 1.0)), 0.0)
        u += np.where(y < 0, self.C * min(1.0, n_pos / max(n_neg, 1.0)), 0.0)
        return _result(
            self.rows, np.empty((self.rows.m, 0)), np.zeros(0), b, u, self.C, "l2", "closed_form", 0
        )
