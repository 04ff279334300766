"""Block-coordinate solver of the relaxed Diversity Regularized Machine (a reconstruction).

T linear ν-SVM-style learners (w_t, b_t, ρ_t) on N points x_i ∈ R^M, labels y_i = ±1, coupled by a
diversity penalty. The relaxed, convex problem solved here (``docs/methods/exrm.md`` explains where
it comes from and what is reconstructed)::

    min  Σ_t [ −ρ_t + (1/(νN)) Σ_i (ρ_t − y_i(w_tᵀx_i + b_t))₊ ]  +  μ Σ_{t<t'} ½‖w_t + w_t'‖²
    s.t. ‖w_t‖₂ ≤ 1  for every t.

Under ‖w_t‖ = ‖w_t'‖ = 1 the pair term equals cos(w_t, w_t') + 1, so the relaxation agrees with a
cosine-penalised problem wherever the norm constraints are active. Blocks are minimised exactly in
turn (so the objective never increases). For block t, with s_t = Σ_{t'≠t} w_t' and κ = μ(T − 1),
the Lagrangian dual in (α, λ) gives

* α = argmin ‖Σ_i α_i y_i x_i − μ s_t‖² over {0 ≤ α_i ≤ 1/(νN), Σ_{y_i=+1} α_i = Σ_{y_i=−1} α_i = ½}
  (the hinge loss makes α independent of λ; a QP with a fixed Hessian, solved by OSQP);
* a = Σ_i α_i y_i x_i − μ s_t, λ = max{0, (‖a‖ − κ)/2}, w_t = a/(κ + 2λ);
* (b_t, ρ_t) exactly for that w_t: with f_i = w_tᵀx_i, ρ_t − b_t is the k-th smallest f_i over the
  positive class and ρ_t + b_t the k-th smallest −f_i over the negative class, k = ⌈νN/2⌉.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
import osqp
import scipy.sparse as sp


@dataclass
class DRMResult:
    """Output of :func:`drm_bcd`.

    Attributes
    ----------
    W : ndarray of shape (T, M)
        The learners w_t as rows.
    b, rho, lam : ndarray of shape (T,)
        Biases, margins ρ_t and the norm-constraint multipliers λ_t (λ_t > 0 ⇒ ‖w_t‖ = 1).
    objective : float
        The relaxed objective at exit.
    n_sweeps : int
    stop_reason : {"converged", "max_iter"}
    trace : dict of lists
        Per sweep: ``objective``, ``time_s`` (cumulative), ``min_norm`` (smallest ‖w_t‖),
        ``max_cosine`` (largest pairwise cosine).
    coef_path, intercept_path : ndarray of shape (n_sweeps, M) and (n_sweeps,)
        The averaged predictor after each sweep.
    """

    W: np.ndarray
    b: np.ndarray
    rho: np.ndarray
    lam: np.ndarray
    objective: float
    n_sweeps: int
    stop_reason: str
    trace: dict[str, list[float]] = field(default_factory=dict)
    coef_path: np.ndarray | None = None
    intercept_path: np.ndarray | None = None


def drm_objective(
    X: np.ndarray,
    y: np.ndarray,
    W: np.ndarray,
    b: np.ndarray,
    rho: np.ndarray,
    nu: float,
    mu: float,
) -> float:
    """The relaxed DRM objective at (W, b, ρ) (W: (T, M)); the norm constraints are not checked."""
    N = X.shape[0]
    margins = y[:, None] * (X @ W.T + b)  # (N, T)
    loss = np.maximum(rho - margins, 0.0).sum(axis=0) / (nu * N)
    total = W.sum(axis=0)
    sq = np.einsum("tm,tm->t", W, W)
    # Σ_{t<t'} ½‖w_t + w_t'‖² = ½[(T − 2)Σ_t‖w_t‖² + ‖Σ_t w_t‖²]
    T = W.shape[0]
    pair = 0.5 * ((T - 2) * sq.sum() + total @ total) if T > 1 else 0.0
    return float(np.sum(-rho + loss) + mu * pair)


def margin_and_bias(f: np.ndarray, y: np.ndarray, nu: float) -> tuple[float, float]:
    """Exact (ρ, b) minimising −ρ + (1/(νN))Σ_i(ρ − y_i(f_i + b))₊ for fixed scores f.

    The problem separates in u = ρ − b (positive class) and v = ρ + b (negative class); each is a
    k-th order statistic, k = ⌈νN/2⌉.
    """
    k = max(1, math.ceil(nu * f.size / 2 - 1e-12))
    u = np.partition(f[y > 0], k - 1)[k - 1]
    v = np.partition(-f[y < 0], k - 1)[k - 1]
    return float((u + v) / 2), float((v - u) / 2)


class _AlphaQP:
    """min_α ‖Aᵀα − c‖² over the two capped simplices; Hessian fixed, linear term updated."""

    def __init__(self, A: np.ndarray, y: np.ndarray, upper: float, tol: float) -> None:
        N = A.shape[0]
        self.A = A
        H = 2.0 * (A @ A.T)
        H[np.diag_indices_from(H)] += 1e-12  # keeps OSQP's factorisation well posed
        rows = sp.vstack(
            [
                sp.csc_matrix((y > 0).astype(float)[None, :]),
                sp.csc_matrix((y < 0).astype(float)[None, :]),
                sp.identity(N, format="csc"),
            ],
            format="csc",
        )
        lo = np.concatenate([[0.5, 0.5], np.zeros(N)])
        hi = np.concatenate([[0.5, 0.5], np.full(N, upper)])
        self.solver = osqp.OSQP()
        self.solver.setup(
            sp.triu(sp.csc_matrix(H), format="csc"),
            np.zeros(N),
            rows,
            lo,
            hi,
            eps_abs=tol,
            eps_rel=tol,
            max_iter=200000,
            polishing=True,
            verbose=False,
        )

    def solve(self, c: np.ndarray, alpha0: np.ndarray | None) -> np.ndarray:
        self.solver.update(q=-2.0 * (self.A @ c))
        if alpha0 is not None:
            self.solver.warm_start(x=alpha0)
        res = self.solver.solve(raise_error=False)
        alpha = np.asarray(res.x, dtype=np.float64)
        if alpha.shape != (self.A.shape[0],) or not np.all(np.isfinite(alpha)):
            raise RuntimeError(f"the DRM block QP failed: OSQP status {res.info.status!r}")
        return alpha


def drm_bcd(
    X: np.ndarray,
    y: np.ndarray,
    n_learners: int,
    *,
    nu: float = 0.5,
    mu: float = 1.0,
    max_sweeps: int = 50,
    tol: float = 1e-4,
    qp_tol: float = 1e-6,
    rng: np.random.Generator | None = None,
    record_path: bool = True,
) -> DRMResult:
    """Block-coordinate descent on the relaxed DRM problem (module docstring).

    Parameters
    ----------
    X : ndarray of shape (N, M)
    y : ndarray of shape (N,), labels ±1
    n_learners : int
        T.
    nu : float
        ν ∈ (0, 1]; must not exceed 2·min(N₊, N₋)/N (else the problem is unbounded).
    mu : float
        Weight of the diversity penalty.
    max_sweeps : int
        Cap on sweeps over t = 1..T.
    tol : float
        Stop when the relative change of the objective over a sweep is below ``tol``.
    qp_tol : float
        OSQP's absolute and relative tolerance for the α sub-problem.
    rng : numpy Generator
        Draws the random unit-norm initial learners.

    Returns
    -------
    DRMResult
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    N, M = X.shape
    T = int(n_learners)
    n_small = min(int(np.sum(y > 0)), int(np.sum(y < 0)))
    if nu * N > 2 * n_small + 1e-12:
        raise ValueError(
            f"specified nu={nu} is infeasible: it must be at most 2·min(class counts)/N = "
            f"{2 * n_small / N:.4g}"
        )
    rng = np.random.default_rng() if rng is None else rng
    t_start = time.perf_counter()
    W = rng.standard_normal((T, M))
    W /= np.linalg.norm(W, axis=1, keepdims=True)
    b = np.zeros(T)
    rho = np.zeros(T)
    for t in range(T):
        rho[t], b[t] = margin_and_bias(X @ W[t], y, nu)
    lam = np.zeros(T)
    alphas: list[np.ndarray | None] = [None] * T
    A = y[:, None] * X
    qp = _AlphaQP(A, y, 1.0 / (nu * N), qp_tol)
    kappa = mu * (T - 1)

    trace: dict[str, list[float]] = {
        "objective": [],
        "time_s": [],
        "min_norm": [],
        "max_cosine": [],
    }
    coef_path: list[np.ndarray] = []
    intercept_path: list[float] = []
    obj_prev = drm_objective(X, y, W, b, rho, nu, mu)
    total = W.sum(axis=0)
    stop_reason = "max_iter"
    sweep = 0
    for sweep in range(1, max_sweeps + 1):  # noqa: B007 (the count is returned)
        for t in range(T):
            s = total - W[t]
            alpha = qp.solve(mu * s, alphas[t])
            alphas[t] = alpha
            a = A.T @ alpha - mu * s
            norm_a = float(np.linalg.norm(a))
            lam[t] = max(0.0, (norm_a - kappa) / 2.0)
            denom = kappa + 2.0 * lam[t]
            w_new = a / denom if denom > 0 else np.zeros(M)
            total += w_new - W[t]
            W[t] = w_new
            rho[t], b[t] = margin_and_bias(X @ w_new, y, nu)
        obj = drm_objective(X, y, W, b, rho, nu, mu)
        norms = np.linalg.norm(W, axis=1)
        trace["objective"].append(obj)
        trace["time_s"].append(time.perf_counter() - t_start)
        trace["min_norm"].append(float(norms.min()))
        trace["max_cosine"].append(_max_cosine(W, norms))
        if record_path:
            coef_path.append(W.mean(axis=0))
            intercept_path.append(float(b.mean()))
        if abs(obj - obj_prev) <= tol * max(1.0, abs(obj_prev)):
            stop_reason = "converged"
            break
        obj_prev = obj
    return DRMResult(
        W=W,
        b=b,
        rho=rho,
        lam=lam,
        objective=drm_objective(X, y, W, b, rho, nu, mu),
        n_sweeps=sweep,
        stop_reason=stop_reason,
        trace=trace,
        coef_path=np.array(coef_path).reshape(-1, M) if record_path else None,
        intercept_path=np.array(intercept_path) if record_path else None,
    )


def _max_cosine(W: np.ndarray, norms: np.ndarray) -> float:
    if W.shape[0] < 2 or np.any(norms == 0):
        return float("nan")
    U = W / norms[:, None]
    G = U @ U.T
    return float(np.max(G[~np.eye(W.shape[0], dtype=bool)]))
