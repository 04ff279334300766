"""What CG-Boost's restricted masters share: the row form, the result, the protocol.

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

Every back end satisfies :class:`KernelMaster`: columns are added one at a time and each solve
re-optimises over all of them (warm-started where the back end can).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np


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
        :class:`~kernbench.solvers.masters.smo_qp.SMOKernelMaster`).
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


@runtime_checkable
class KernelMaster(Protocol):
    """A restricted CG-Boost master over the columns added so far (one back end).

    The column-generation master (:class:`kernbench.methods.cgboost.CGBoostMaster`) calls
    nothing else.
    """

    rows: RowForm

    @property
    def n_columns(self) -> int:
        """Columns added so far."""
        ...

    @property
    def fallbacks(self) -> dict[str, int]:
        """Solves the back end did not certify by itself, by reason (empty when none)."""
        ...

    def add_column(self, column: np.ndarray) -> None:
        """Append a training column (shape (m,)) as a new α variable."""
        ...

    def solve(self) -> KernelMasterResult:
        """Solve the master over the columns added so far."""
        ...


def master_result(
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
    """The result at (α, b) and multipliers w: exact slacks, w clipped to [0, C], the pricing
    weights and the primal objective (``norm``: "l2" or "l1")."""
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


def bias_only_master(rows: RowForm, C: float) -> KernelMasterResult:
    """The classification master with no column (only b): min C·Σ(1 − y_i b)₊ over b, in
    closed form (b = the majority label, or 0 on a tie)."""
    y = rows.sign
    n_pos, n_neg = float((y > 0).sum()), float((y < 0).sum())
    b = 1.0 if n_pos > n_neg else (-1.0 if n_neg > n_pos else 0.0)
    # dual: u = C on the minority class's margin errors, scaled so that yᵀu = 0
    u = np.where(y > 0, C * min(1.0, n_neg / max(n_pos, 1.0)), 0.0)
    u += np.where(y < 0, C * min(1.0, n_pos / max(n_neg, 1.0)), 0.0)
    return master_result(rows, np.empty((rows.m, 0)), np.zeros(0), b, u, C, "l2", "closed_form", 0)
