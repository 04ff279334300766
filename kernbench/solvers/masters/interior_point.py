"""The SVM dual of CG-Boost's master in the selected columns' range, by an interior point.

While the columns span a space of small rank r, the dual of (11) / (13) is a problem in r
dimensions (:class:`ColumnRange`), which Clarabel's interior point solves in O(m·r²) per
iteration whatever the degeneracy (:func:`solve_reduced_dual`); :class:`IPMSwitch` decides when
the SMO master (:mod:`kernbench.solvers.masters.smo_qp`) uses it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from kernbench.solvers.column_buffer import ColumnBuffer
from kernbench.solvers.face_steps import project_box_hyperplane
from kernbench.solvers.smo import feasible_alpha


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


def snap_to_bounds(u: np.ndarray, y: np.ndarray, C: float, rel: float = 1e-6) -> np.ndarray:
    """An interior point's u with the entries within ``rel``·C of C, or ``rel``·min(C, max u) of
    0, set to that bound, yᵀu = 0 restored on the rest (projected,
    :func:`kernbench.solvers.face_steps.project_box_hyperplane`).

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
