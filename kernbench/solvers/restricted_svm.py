"""The restricted linear SVM (1)/(2) of the CGENS paper over a growing set of explicit columns.

Problem (1): min_{w,b,ξ≥0} ½||w||² + C·1ᵀξ  s.t. y_i(wᵀφ_i + b) ≥ 1 − ξ_i, with φ_i the i-th row
of the column matrix Φ = H_𝒲 ∈ R^{m×J}. Dual (2): max 1ᵀα − ½||Φᵀ(y∘α)||²  s.t. 0 ≤ α ≤ C (and
yᵀα = 0).

:class:`RestrictedLinearSVM` keeps the state of one column-generation run: the columns, α, w and the
dual gradient, so that adding a column and re-solving is a warm start (the new
coordinate's α entry is unchanged, w gains H_newᵀ(y∘α)).

Two ``bias_mode`` values:

``"exact"``
    b is not regularised, the dual keeps the equality yᵀα = 0. Solved by SMO (pairwise dual
    coordinate descent) with LIBSVM's second-order working-set selection and a maintained
    gradient; the Gram matrix K = ΦΦᵀ is kept (updated by a rank-k term per added block) while m
    is small enough (``gram_max_rows``), otherwise kernel rows are computed from Φ on the fly.
    SMO runs in chunks of 3·m pair updates; after a chunk that did not converge, steps on the face
    of the free α's (:func:`face_descent`: a Newton step, or a zero-curvature ray where the face
    is unbounded, until one is not clipped), since pairwise updates stall when the free block of
    Q = (yyᵀ)∘ΦΦᵀ is singular (more free α's than columns). The SMO shrinks its active set as
    LIBSVM does (``shrinking``; see :func:`smo_solve`). Stopping rule: the maximal KKT
    violation m(α) − M(α) ≤ ``tol`` (LIBSVM's rule), or the step cap ``max_epochs · m``.

``"liblinear"``
    b is a constant feature (value 1) and therefore regularised: ½(||w||² + b²); no equality
    constraint. Solved by LIBLINEAR's single-coordinate dual CD for the L1 loss (random order,
    shrinking). Stopping: projected-gradient range PG_max − PG_min ≤ ``tol``, or ``max_epochs``
    epochs.

Each :meth:`RestrictedLinearSVM.solve` returns a :class:`SolveInfo` recording which rule fired.

The SMO and its face steps are :mod:`kernbench.solvers.smo` and :mod:`kernbench.solvers.face_steps`,
the dual CD :mod:`kernbench.solvers.dual_cd`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numba
import numpy as np

from kernbench.solvers.column_buffer import is_sign_valued
from kernbench.solvers.dual_cd import dcd_solve, dual_diagonal
from kernbench.solvers.smo import (
    SMOSettings,
    add_outer,
    feasible_alpha,
    libsvm_rho,
    smo_with_face_steps,
)

BiasMode = Literal["exact", "liblinear"]


@dataclass(frozen=True)
class SolveInfo:
    """What one restricted solve did.

    Attributes
    ----------
    primal, dual : float
        Objective of (1) at (w, b) and of (2) at α (``liblinear``: the problem with ½b² added).
    violation : float
        Projected-gradient KKT violation at exit (the quantity compared with ``tol``).
    n_iter : int
        SMO pair updates (``exact``) or epochs (``liblinear``).
    stop_reason : str
        ``"tol"`` (violation ≤ tol) or ``"max_epochs"`` (the cap fired first).
    """

    primal: float
    dual: float
    violation: float
    n_iter: int
    stop_reason: str

    @property
    def gap(self) -> float:
        """Duality gap primal − dual (≥ 0 up to rounding)."""
        return self.primal - self.dual


@numba.njit(cache=True, fastmath={"reassoc", "contract"})
def _phi_matvec(Phi, J, v):  # pragma: no cover - numba
    """Φv over the first J columns of the (int8) column buffer, accumulated in float64."""
    m = Phi.shape[0]
    out = np.empty(m)
    for i in range(m):
        s = 0.0
        for k in range(J):
            s += v[k] * Phi[i, k]
        out[i] = s
    return out


@numba.njit(cache=True, fastmath={"reassoc", "contract"})
def _phi_rmatvec(Phi, J, u):  # pragma: no cover - numba
    """Φᵀu over the first J columns of the (int8) column buffer, accumulated in float64."""
    m = Phi.shape[0]
    out = np.zeros(J)
    for i in range(m):
        ui = u[i]
        for k in range(J):
            out[k] += ui * Phi[i, k]
    return out


def _is_plus_minus_one(H: np.ndarray) -> bool:
    """All entries ±1 (stumps): every row of the columns has squared norm J."""
    return bool(np.all(np.abs(H) == 1.0))


class RestrictedLinearSVM:
    """Warm-startable solver of the restricted SVM (1)/(2) over a growing column matrix.

    Parameters
    ----------
    y : ndarray of shape (m,)
        Labels in {−1, +1}.
    C : float
        Regularisation parameter of (1).
    bias_mode : {"exact", "liblinear"}
        Unregularised bias (dual equality yᵀα = 0, SMO) or LIBLINEAR's bias-as-feature dual CD.
    tol : float
        Projected-gradient stopping tolerance (see module docstring).
    max_epochs : int
        Cap: epochs (``liblinear``) or ``max_epochs · m`` pair updates (``exact``).
    alpha0 : ndarray of shape (m,) or float, optional
        Initial α (default C/2). In ``exact`` mode it is made feasible for yᵀα = 0 by scaling
        down the class with the larger total.
    gram_max_rows : int
        ``exact`` mode keeps the m × m Gram matrix when m ≤ this, else computes kernel rows on
        the fly (``liblinear`` mode never keeps it: its dual CD works on the columns).
    seed : int
        Seed of the coordinate order (``liblinear``).

    Attributes
    ----------
    alpha : ndarray of shape (m,)
    w : ndarray of shape (J,)
        Column weights, w = Φᵀ(y∘α) (KKT (7)).
    b : float
    n_face_steps : int
        ``exact`` mode: steps on the face of the free α's taken over all solves.
    shrinking : bool
        ``exact`` mode: LIBSVM's shrinking in the SMO (default True; see :func:`smo_solve`).
    max_face_steps, max_free : int
        ``exact`` mode: face steps after one SMO chunk at most (50), and no face step costing
        more than a dense ``max_free``² solve (300; see :func:`face_descent`).
    """

    def __init__(
        self,
        y: np.ndarray,
        C: float,
        *,
        bias_mode: BiasMode = "exact",
        tol: float = 1e-3,
        max_epochs: int = 1000,
        alpha0: np.ndarray | float | None = None,
        gram_max_rows: int = 6000,
        seed: int = 0,
    ) -> None:
        if bias_mode not in ("exact", "liblinear"):
            raise ValueError(f"bias_mode must be 'exact' or 'liblinear', got {bias_mode!r}")
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        if not np.all(np.abs(self.y) == 1.0):
            raise ValueError("labels must be in {-1, +1}")
        self._y_int8 = self.y.astype(np.int8)  # the dual CD's copy: 1 byte per random read
        self.C = float(C)
        self.bias_mode = bias_mode
        self.tol = float(tol)
        self.max_epochs = int(max_epochs)
        self.seed = int(seed)
        m = self.y.shape[0]
        a = np.full(m, self.C / 2.0) if alpha0 is None else np.broadcast_to(alpha0, (m,))
        self.alpha = np.clip(np.array(a, dtype=np.float64), 0.0, self.C)
        if bias_mode == "exact":
            self.alpha = feasible_alpha(self.alpha, self.y)
        # columns with entries in {−1, 0, +1} (stumps, perceptrons) are stored as int8: exact, and
        # the dual CD's row reads (its memory traffic) shrink 8×; the first other column turns the
        # buffer into float64 for good
        self._Phi = np.zeros((m, 16), dtype=np.int8)
        self._plus_minus_one = True  # every column ±1 so far: Q_ii = J + bias² for every row
        self._J = 0
        self._use_gram = bias_mode == "exact" and m <= gram_max_rows  # dual CD never reads it
        self._K = np.zeros((m, m)) if self._use_gram else np.zeros((1, 1))
        self._diag = np.zeros(m)
        self._w = np.zeros(1)  # J entries + the liblinear bias slot
        self._calls = 0
        self.b = 0.0
        self.n_face_steps = 0
        self.max_face_steps = 50
        self.max_free = 300
        self.shrinking = True

    # --- state -------------------------------------------------------------------------------
    @property
    def n_columns(self) -> int:
        return self._J

    @property
    def columns(self) -> np.ndarray:
        """The column matrix Φ = H_𝒲 (shape (m, J); a float64 copy when stored as int8)."""
        Phi = self._Phi[:, : self._J]
        return Phi if Phi.dtype == np.float64 else Phi.astype(np.float64)

    def _matvec(self, v: np.ndarray) -> np.ndarray:
        """Φv."""
        if self._Phi.dtype == np.float64:
            return self._Phi[:, : self._J] @ v
        return _phi_matvec(self._Phi, self._J, np.ascontiguousarray(v, dtype=np.float64))

    def _rmatvec(self, u: np.ndarray) -> np.ndarray:
        """Φᵀu."""
        if self._Phi.dtype == np.float64:
            return self._Phi[:, : self._J].T @ u
        return _phi_rmatvec(self._Phi, self._J, np.ascontiguousarray(u, dtype=np.float64))

    @property
    def w(self) -> np.ndarray:
        return self._w[: self._J].copy()

    def decision_train(self) -> np.ndarray:
        """Training decision values Φw + b."""
        return self._matvec(self._w[: self._J]) + self.b

    def add_columns(self, H_new: np.ndarray) -> np.ndarray:
        """Append columns (shape (m,) or (m, k)); α is kept (warm start), w gains H_newᵀ(y∘α).

        Returns the new columns' pricing scores H_newᵀ(y∘α).
        """
        H_new = np.asarray(H_new, dtype=np.float64)
        if H_new.ndim == 1:
            H_new = H_new[:, None]
        m, k = H_new.shape
        if m != self.y.shape[0]:
            raise ValueError(f"column length {m} != number of samples {self.y.shape[0]}")
        dtype = self._Phi.dtype
        self._plus_minus_one = self._plus_minus_one and _is_plus_minus_one(H_new)
        if dtype != np.float64 and not is_sign_valued(H_new):
            dtype = np.dtype(np.float64)
        if self._J + k > self._Phi.shape[1] or dtype != self._Phi.dtype:
            cap = self._Phi.shape[1]
            if self._J + k > cap:
                cap = max(2 * cap, self._J + k)
            grown = np.zeros((m, cap), dtype=dtype)
            grown[:, : self._J] = self._Phi[:, : self._J]
            self._Phi = grown
        self._Phi[:, self._J : self._J + k] = H_new
        self._J += k
        scores = H_new.T @ (self.y * self.alpha)
        w = np.zeros(self._J + 1)
        w[: self._J - k] = self._w[: self._J - k]
        w[self._J - k : self._J] = scores  # (7) for the new coordinates at the current α
        w[self._J] = self._w[-1]
        self._w = w
        self._diag += np.einsum("ij,ij->i", H_new, H_new)
        if self._use_gram:
            if k == 1:
                add_outer(self._K, np.ascontiguousarray(H_new[:, 0]))
            else:
                self._K += H_new @ H_new.T
        return scores

    # --- objectives ----------------------------------------------------------------------------
    def primal_objective(self, w: np.ndarray | None = None, b: float | None = None) -> float:
        """½||w||² + C·Σ hinge (``liblinear``: + ½b²) at (w, b) (default: the current solution)."""
        w = self._w[: self._J] if w is None else w
        b = self.b if b is None else b
        return self._primal_from(w, self._matvec(w), b)

    def _primal_from(self, w: np.ndarray, phi_w: np.ndarray, b: float) -> float:
        """The primal objective at (w, b) given Φw."""
        margins = self.y * (phi_w + b)
        reg = 0.5 * float(w @ w) + (0.5 * b * b if self.bias_mode == "liblinear" else 0.0)
        return reg + self.C * float(np.maximum(0.0, 1.0 - margins).sum())

    def dual_objective(self, alpha: np.ndarray | None = None) -> float:
        """1ᵀα − ½||Φᵀ(y∘α)||² (``liblinear``: − ½(yᵀα)² for the bias feature)."""
        alpha = self.alpha if alpha is None else alpha
        v = self._rmatvec(self.y * alpha)
        q = float(v @ v)
        if self.bias_mode == "liblinear":
            q += float(self.y @ alpha) ** 2
        return float(alpha.sum()) - 0.5 * q

    # --- solve ---------------------------------------------------------------------------------
    def _gradient(self) -> np.ndarray:
        """∇f(α) = Qα − 1 computed afresh from the columns."""
        return self.y * self._matvec(self._rmatvec(self.y * self.alpha)) - 1.0

    def _smo(self, G: np.ndarray, tol: float, max_steps: int) -> tuple[int, float, bool]:
        """:func:`smo_with_face_steps` in chunks of 3·m pair updates. Returns (steps,
        violation, converged)."""
        settings = SMOSettings(
            chunk=3 * self.y.shape[0],
            shrinking=self.shrinking,
            max_face_steps=self.max_face_steps,
            max_free=self.max_free,
        )
        steps, viol, ok, faces = smo_with_face_steps(
            self._use_gram, self._K, self._Phi, self._J, self._diag, self.y, self.alpha, G,
            self.C, tol, max_steps, lambda: self._gradient, settings,
        )  # fmt: skip
        self.n_face_steps += faces
        return steps, viol, ok

    def _dual_diagonal(self) -> np.ndarray:
        """The dual CD's Q_ii (bias feature 1): with ±1 columns the one value J + 1 (exact in
        float32, as :func:`dual_diagonal` would give for every row), else per row."""
        if self._plus_minus_one and self._J < 2**24:
            return np.array([self._J + 1.0], dtype=np.float32)
        return dual_diagonal(self._Phi, self._J, 1.0)

    def solve(self, tol: float | None = None, max_epochs: int | None = None) -> SolveInfo:
        """Re-solve from the current α (warm start). Returns the :class:`SolveInfo`."""
        tol = self.tol if tol is None else float(tol)
        max_epochs = self.max_epochs if max_epochs is None else int(max_epochs)
        m = self.y.shape[0]
        if self.bias_mode == "exact":
            G = self._gradient()
            steps, viol, ok = self._smo(G, tol, max_epochs * m)
            w = self._rmatvec(self.y * self.alpha)
            self._w = np.append(w, 0.0)
            phi_w = self._matvec(self._w[: self._J])  # Φw: the gradient's and the margins'
            G = self.y * phi_w - 1.0  # fresh gradient (no drift)
            self.b = -libsvm_rho(G, self.y, self.alpha, self.C)
            # the objectives from the products just computed: the values of primal_objective
            # and dual_objective without two more passes over the columns
            primal = self._primal_from(self._w[: self._J], phi_w, self.b)
            dual = float(self.alpha.sum()) - 0.5 * float(w @ w)
            n_iter = int(steps)
        else:
            self._w = np.append(self._rmatvec(self.y * self.alpha), float(self.y @ self.alpha))
            self._calls += 1
            epochs, viol, ok = dcd_solve(
                self._Phi,
                self._J,
                1.0,
                self._y_int8,
                self.alpha,
                self._w,
                self.C,
                tol,
                max_epochs,
                self.seed + self._calls,
                self._dual_diagonal(),
            )
            self.b = float(self._w[self._J])
            primal, dual = self.primal_objective(), self.dual_objective()
            n_iter = int(epochs)
        return SolveInfo(
            primal=primal,
            dual=dual,
            violation=float(viol),
            n_iter=n_iter,
            stop_reason="tol" if ok else "max_epochs",
        )
