"""The classification master (11) solved by LIBSVM on the selected columns' Gram matrix."""

from __future__ import annotations

import numpy as np

from kernbench.solvers.masters.base import (
    KernelMasterResult,
    RowForm,
    bias_only_master,
    master_result,
)
from kernbench.solvers.smo import add_outer


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

    @property
    def fallbacks(self) -> dict[str, int]:
        """None: LIBSVM certifies every solve to its own tolerance."""
        return {}

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
        return master_result(
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
