"""The 2-norm QPs (11) and (13) with free α and free b by SMO, warm-started across columns."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

import numba
import numpy as np

from kernbench.solvers.column_buffer import ColumnBuffer
from kernbench.solvers.masters.base import (
    KernelMasterResult,
    RowForm,
    bias_only_master,
    master_result,
)
from kernbench.solvers.masters.cvxpy_qp import solve_kernel_master_cvxpy
from kernbench.solvers.masters.interior_point import (
    ColumnRange,
    IPMSwitch,
    snap_to_bounds,
    solve_reduced_dual,
)
from kernbench.solvers.smo import SMOSettings, feasible_alpha, libsvm_rho, smo_with_face_steps

#: gradient rounding noise above which (and above 10·tol) an SMO solve is at the precision floor:
#: the quadratic kernel on features of magnitude 100 gave 1e3-1e5; the badly scaled kernels the
#: interior point and SMO still solve (features 10·N(0, 1), norms ~1e5, C = 100) reached 1e-3
FLOOR_NOISE = 1.0


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
    2. SMO (:func:`kernbench.solvers.smo.smo_solve`, compiled: LIBSVM's second-order
       working-set selection with τ = 1e-12 for non-positive pair curvature; rows of Q from the
       kept G, or from the columns when m > ``gram_max_rows``) in chunks of ``chunk`` =
       max(30, m/10) pair updates. After a chunk that did not converge, steps on the face of the
       free u (:func:`kernbench.solvers.face_steps.face_descent`, shared with CGENS's restricted
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
        # regression: 50 per row (stalled ε-SVR solves ran to 1000 per row before the Clarabel
        # reference solved them; benchmarks/logs/performance.md, "CG-Boost's SMO master")
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
                self._u[:] = snap_to_bounds(u, self._y, self.C)
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
                # regression's snapped to the bounds too (from the interior point's all-free w
                # the next solve crawled through face steps; benchmarks/logs/performance.md,
                # "CG-Boost's SMO master")
                w = np.clip(ref.w, 0.0, self.C)
                u[:] = (
                    feasible_alpha(w, y) if self._classification else snap_to_bounds(w, y, self.C)
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
        return master_result(
            self.rows, self._sample_columns(), alpha, b, u.copy(), self.C, "l2", status, steps
        )
