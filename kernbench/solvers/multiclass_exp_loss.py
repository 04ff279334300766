"""The exponential-loss multi-class boosting problem of MultiBoost and MultiBoost_cw.

Problem (2)/(7) of the MultiBoost_cw paper (docs/methods/multiboost.md), written through the
class-score matrix F ∈ R^{m×K} (F_ic = w_cᵀ𝕙_c(x_i); MultiBoost shares one learner set, 𝕙_c = h for
every c):

    min_{w ≥ 0}  ‖w‖₁ + (C/p) Σ_i Σ_{y≠y_i} exp(F_iy − F_{i,y_i}),      p = m(K − 1).

Everything a solver needs follows from two matrices computed once per evaluation:

* λ (m × K): the KKT dual (5), λ_iy = (C/p)·exp(−γ_(i,y)) for y ≠ y_i and 0 on the true class;
* U (m × K): the pricing weights of sub-problems (4)/(6), column c is
  u^c_i = Σ_{y≠y_i} λ_iy if y_i = c, and −λ_ic otherwise.

The loss's gradient with respect to F is −U, so the gradient of the objective with respect to the
coefficients of a learner column h in class c is 1 − Σ_i u^c_i h(x_i) = 1 − (pricing score).
This module holds the loss, λ, U, the gradient, the KKT residual of the bound-constrained problem,
one evaluator of the objective for a fixed variable layout (``ClasswiseEvaluator``, shared by the
L-BFGS-B and projected-Newton solves) and the L-BFGS-B restricted solves; MultiBoost_cw's FCD
reuses the first four.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np
from scipy import sparse
from scipy.optimize import minimize

from kernbench.solvers.stump_products import StumpProducts

#: exponents above this are clipped before exp (the objective is then ~e^700: any line search
#: backs off long before, and the clip keeps the value finite)
_MAX_EXPONENT = 700.0


def exp_loss_dual(F: np.ndarray, y_index: np.ndarray, C: float) -> tuple[float, np.ndarray]:
    """The loss term of (2) and the KKT dual λ of (5).

    Parameters
    ----------
    F : ndarray of shape (m, K)
        Class scores F_ic.
    y_index : ndarray of int, shape (m,)
        True class indices.
    C : float
        Regularisation parameter.

    Returns
    -------
    loss : float
        (C/p) Σ_i Σ_{y≠y_i} exp(−γ_(i,y)).
    lam : ndarray of shape (m, K)
        λ_iy = (C/p)·exp(F_iy − F_{i,y_i}) (5), zero on the true class.
    """
    m, K = F.shape
    p = m * (K - 1)
    rows = np.arange(m)
    lam = F - F[rows, y_index][:, None]  # −γ_(i,y) = F_iy − F_{i,y_i}, (1)
    np.minimum(lam, _MAX_EXPONENT, out=lam)
    np.exp(lam, out=lam)
    lam *= C / p  # (5): λ_iy = (C/p)·exp(−γ_(i,y))
    lam[rows, y_index] = 0.0
    return float(lam.sum()), lam


def pricing_weights(lam: np.ndarray, y_index: np.ndarray) -> np.ndarray:
    """The signed sample weights u^c of sub-problems (4)/(6), one column per class.

    u^c_i = Σ_{y≠y_i} λ_iy if y_i = c, and −λ_ic otherwise; Σ_i u^c_i h(x_i) is the left-hand
    side of the dual constraint (3b) for learner h in class c.
    """
    U = -lam.copy()
    rows = np.arange(lam.shape[0])
    U[rows, y_index] = lam.sum(axis=1)  # λ is 0 on the true class, so this is Σ_{y≠y_i} λ_iy
    return U


def kkt_residual(w: np.ndarray, grad: np.ndarray) -> float:
    """Largest violation of the KKT conditions of min f(w) s.t. w ≥ 0.

    At an optimum the gradient is ≥ 0 where w = 0 and = 0 where w > 0; the residual is
    max(max_{w>0} |grad|, max_{w=0} max(0, −grad)) (the projected-gradient norm, ∞-norm).
    """
    w = np.ravel(w)
    grad = np.ravel(grad)
    viol = np.where(w > 0, np.abs(grad), np.maximum(0.0, -grad))
    return float(viol.max()) if viol.size else 0.0


def shared_objective(
    W: np.ndarray, H: np.ndarray, y_index: np.ndarray, C: float
) -> tuple[float, np.ndarray, np.ndarray]:
    """Objective (2) of MultiBoost (shared learners), its gradient, and λ.

    Parameters
    ----------
    W : ndarray of shape (J, K)
        Non-negative coefficients, W_jc for learner j in class c.
    H : ndarray of shape (m, J)
        Learner outputs on the training set.
    y_index : ndarray of int, shape (m,)
    C : float

    Returns
    -------
    value : float
        ‖W‖₁ + (C/p) Σ exp(−γ) (with W ≥ 0, ‖W‖₁ = ΣW).
    grad : ndarray of shape (J, K)
        1 − Hᵀ U.
    lam : ndarray of shape (m, K)
        The KKT dual (5) at W.
    """
    loss, lam = exp_loss_dual(H @ W, y_index, C)
    U = pricing_weights(lam, y_index)
    return float(W.sum()) + loss, 1.0 - H.T @ U, lam


@numba.njit(cache=True)
def _loss_and_pricing_inplace(F, y_index, scale):  # pragma: no cover - numba
    """Overwrite the scores F (m, K) by the pricing weights U of (4)/(6) at λ (5); return the loss.

    One pass over the rows in place of exp_loss_dual + pricing_weights' (m, K) temporaries.
    """
    m, K = F.shape
    loss = 0.0
    for i in range(m):
        yi = y_index[i]
        fy = F[i, yi]
        s = 0.0
        for c in range(K):
            if c != yi:
                e = np.exp(min(F[i, c] - fy, _MAX_EXPONENT)) * scale
                F[i, c] = -e
                s += e
        F[i, yi] = s
        loss += s
    return loss


@dataclass(frozen=True)
class RestrictedSolve:
    """Result of one restricted-master solve.

    Attributes
    ----------
    W : ndarray of shape (J, K)
    objective : float
    lam : ndarray of shape (m, K)
        The KKT dual (5) at W (MultiBoost's next pricing weights come from it).
    kkt : float
        :func:`kkt_residual` at W.
    n_iter : int
        Solver iterations.
    stop_reason : str
        Why the solver stopped ("converged" or its message).
    """

    W: np.ndarray
    objective: float
    lam: np.ndarray
    kkt: float
    n_iter: int
    stop_reason: str


@dataclass(frozen=True)
class LBFGSBSettings:
    """scipy's L-BFGS-B options of the restricted solves (scipy's defaults but ``maxiter``).

    Attributes
    ----------
    maxiter : int
    ftol, gtol : float
    """

    maxiter: int = 15000
    ftol: float = 2.220446049250313e-09
    gtol: float = 1e-5


def solve_shared_lbfgsb(
    H: np.ndarray,
    y_index: np.ndarray,
    C: float,
    W0: np.ndarray,
    *,
    maxiter: int = 15000,
    ftol: float = 2.220446049250313e-09,
    gtol: float = 1e-5,
    products: StumpProducts | None = None,
) -> RestrictedSolve:
    """Solve MultiBoost's restricted problem (2) on fixed columns by L-BFGS-B, warm-started at W0.

    ‖W‖₁ is linear on the feasible set W ≥ 0, so the problem is smooth with simple bounds
    (docs/methods/multiboost.md). The defaults are scipy's ("the default converge setting",
    MultiBoost_cw paper Sec. 3); tighten ``ftol``/``gtol`` for invariant tests.

    Parameters
    ----------
    H : ndarray of shape (m, J)
    y_index : ndarray of int, shape (m,)
    C : float
    W0 : ndarray of shape (J, K), non-negative
    maxiter, ftol, gtol
        L-BFGS-B options.
    products : StumpProducts or None
        H's columns as stumps (:mod:`kernbench.solvers.stump_products`): H W and Hᵀ U through
        each feature's sorted thresholds instead of dense products (equal to rounding).
    """
    J, K = W0.shape
    m = H.shape[0]
    yi = np.ascontiguousarray(y_index, dtype=np.int64)
    scale = float(C) / (m * (K - 1))
    if products is not None and products.n_columns != J:
        raise ValueError(f"products hold {products.n_columns} columns, W0 has {J} rows")
    if products is not None:
        forward, backward = products.forward, products.backward
    else:
        Hf = np.ascontiguousarray(H, dtype=np.float64)  # H_W is a view of a growing buffer

        def forward(Wm: np.ndarray, out: np.ndarray) -> None:
            np.matmul(Hf, Wm, out=out)

        def backward(U: np.ndarray) -> np.ndarray:
            return Hf.T @ U

    F = np.empty((m, K))  # scores, then pricing weights, reused across evaluations

    def fun(w: np.ndarray) -> tuple[float, np.ndarray]:
        Wm = w.reshape(J, K)
        forward(Wm, F)  # F = H W
        loss = _loss_and_pricing_inplace(F, yi, scale)
        grad = backward(F)  # Hᵀ U
        np.subtract(1.0, grad, out=grad)
        return float(Wm.sum()) + loss, grad.ravel()

    res = minimize(
        fun,
        np.maximum(W0, 0.0).ravel(),
        jac=True,
        method="L-BFGS-B",
        bounds=[(0.0, None)] * (J * K),
        options={"maxiter": maxiter, "ftol": ftol, "gtol": gtol},
    )
    W = np.maximum(res.x.reshape(J, K), 0.0)
    value, grad, lam = shared_objective(W, H, y_index, C)
    stop = "converged" if res.success else str(res.message)
    return RestrictedSolve(W, value, lam, kkt_residual(W, grad), int(res.nit), stop)


# ---------------------------------------------------------------------------------------------
# Class-wise learner sets (MultiBoost_cw): one variable per (learner column, class) pair
# ---------------------------------------------------------------------------------------------


def classwise_scores(
    w: np.ndarray, H: np.ndarray, var_col: np.ndarray, var_class: np.ndarray, K: int
) -> np.ndarray:
    """Class scores F (m × K) of a model whose variable v weights column ``var_col[v]`` of H in
    class ``var_class[v]``: F_ic = Σ_{v: class c} w_v H_{i, col(v)}.

    MultiBoost_cw has one variable per learner (its own class); MultiBoost's shared learners are
    the special case of K variables per column, one per class.
    """
    J = H.shape[1]
    W = sparse.csr_matrix((w, (var_col, var_class)), shape=(J, K))  # duplicates add up
    return np.asarray((W.T @ H.T).T)  # one pass over H, no gathered copy


def classwise_objective(
    w: np.ndarray,
    H: np.ndarray,
    y_index: np.ndarray,
    C: float,
    var_col: np.ndarray,
    var_class: np.ndarray,
    K: int,
) -> tuple[float, np.ndarray, np.ndarray]:
    """Objective (7) of MultiBoost_cw, its gradient and λ (5).

    Returns
    -------
    value : float
        Σ w + (C/p) Σ_i Σ_{y≠y_i} exp(−wᵀδh_i(y)) (w ≥ 0).
    grad : ndarray of shape (n_vars,)
        1 − Σ_i u^{c(v)}_i H_{i, col(v)}: one minus the pricing score (4) of each variable.
    lam : ndarray of shape (m, K)
    """
    loss, lam = exp_loss_dual(classwise_scores(w, H, var_col, var_class, K), y_index, C)
    U = pricing_weights(lam, y_index)
    grad = 1.0 - np.einsum("iv,iv->v", H[:, var_col], U[:, var_class])
    return float(w.sum()) + loss, grad, lam


class ClasswiseEvaluator:
    """Objective (7), its gradient and λ (5) for one fixed layout of variables, evaluated often.

    Each class's columns are gathered once into a contiguous block (class-wise sets); when every
    column carries K variables, one per class (MultiBoost's shared learners), H is read as it is
    (F = H W, gradient 1 − HᵀU at (col, class)) instead of K copies of it. The restricted
    solvers (L-BFGS-B here, projected Newton in :mod:`kernbench.solvers.exp_loss_newton`) call it.

    Parameters
    ----------
    H : ndarray of shape (m, J)
    y_index : ndarray of int, shape (m,)
    C : float
    var_col, var_class : ndarray of int, shape (n_vars,)
        Column of H and class of every variable.
    K : int
    """

    def __init__(self, H, y_index, C, var_col, var_class, K) -> None:
        self.H = H
        self.y = np.asarray(y_index, dtype=np.int64)
        self.C = float(C)
        self.K = K
        self.var_col = np.asarray(var_col, dtype=np.int64)
        self.var_class = np.asarray(var_class, dtype=np.int64)
        self.blocks = [np.flatnonzero(self.var_class == c) for c in range(K)]
        J = H.shape[1]
        self.shared = self.var_col.size == J * K and all(
            np.array_equal(np.sort(self.var_col[b]), np.arange(J)) for b in self.blocks
        )
        self._Hc = None
        if not self.shared:  # one copy of each class's columns, outside the evaluations
            self._Hc = [np.ascontiguousarray(H[:, self.var_col[b]]) for b in self.blocks]

    def __call__(self, w: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        """(value, gradient, λ) at w ≥ 0."""
        if self._Hc is None:
            W = np.zeros((self.H.shape[1], self.K))
            W[self.var_col, self.var_class] = w
            loss, lam = exp_loss_dual(self.H @ W, self.y, self.C)
            scores = self.H.T @ pricing_weights(lam, self.y)
            return float(w.sum()) + loss, 1.0 - scores[self.var_col, self.var_class], lam
        F = np.empty((self.H.shape[0], self.K))
        for c, b in enumerate(self.blocks):
            F[:, c] = self._Hc[c] @ w[b]
        loss, lam = exp_loss_dual(F, self.y, self.C)
        U = pricing_weights(lam, self.y)
        grad = np.empty_like(w)
        for c, b in enumerate(self.blocks):
            grad[b] = 1.0 - self._Hc[c].T @ U[:, c]  # 1 − pricing score (4), no gathers
        return float(w.sum()) + loss, grad, lam


def solve_classwise_lbfgsb(
    H: np.ndarray,
    y_index: np.ndarray,
    C: float,
    w0: np.ndarray,
    var_col: np.ndarray,
    var_class: np.ndarray,
    K: int,
    *,
    maxiter: int = 15000,
    ftol: float = 2.220446049250313e-09,
    gtol: float = 1e-5,
) -> RestrictedSolve:
    """Solve the class-wise restricted problem (7) by L-BFGS-B, warm-started at w0 (w ≥ 0).

    The comparison solver of MultiBoost_cw (``solver="lbfgsb"``) and of the FCD benchmark; scipy's
    default tolerances are "the default converge setting". ``RestrictedSolve.W`` holds w (n_vars,).
    """
    evaluate = ClasswiseEvaluator(H, y_index, C, var_col, var_class, K)  # columns gathered once

    def fun(w: np.ndarray) -> tuple[float, np.ndarray]:
        value, grad, _ = evaluate(w)
        return value, grad

    res = minimize(
        fun,
        np.maximum(w0, 0.0),
        jac=True,
        method="L-BFGS-B",
        bounds=[(0.0, None)] * w0.size,
        options={"maxiter": maxiter, "ftol": ftol, "gtol": gtol},
    )
    w = np.maximum(res.x, 0.0)
    value, grad, lam = evaluate(w)
    stop = "converged" if res.success else str(res.message)
    return RestrictedSolve(w, value, lam, kkt_residual(w, grad), int(res.nit), stop)
