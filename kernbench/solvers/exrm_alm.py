"""ALM solver of the Exclusivity Regularized Machine problem (Guo, Wang & Ling, Alg. 1-2).

Problem (5), with the linear feature map φ(x) = x, N points x_i ∈ R^M, labels y_i ∈ {−1, +1}, and C
linear components W = [w_1 … w_C] ∈ R^{M×C}, b ∈ R^C::

    min_{W,b}  ½ Σ_k (Σ_c |W_kc|)²  +  λ Σ_c Σ_i (1 − y_i(x_iᵀw_c + b_c))₊^p,      p ∈ {1, 2}.

The paper splits it with P = W and E = Y − (XᵀP + 1bᵀ) (6) and runs an inexact augmented-Lagrangian
(ALM) scheme on the Lagrangian (7): one pass of W (Alg. 1: a reweighted solve of each row of W,
(10)-(11)), b (12), E (14)/(15) and P (17), then the multiplier and penalty updates (18). With one
component (C = 1) the regulariser is ½‖w‖² and the scheme is the primal SVM ("PSVM") solver.

All rows of Alg. 1 are independent, so they are iterated together as one (M, C) array. The default
engine runs the whole loop compiled (numba) with one streamed sweep over the rows of X per outer
iteration (see ``_alm_loop``: the multiplier update is deferred to the next sweep, the b-step uses
carried column sums); the vectorised numpy engine, which follows the printed order step by step, is
the reference it is tested against. One outer iteration costs O(NMC + M²C) with no N-sized
temporaries. The page ``docs/methods/exrm.md`` states the algorithm and the corrections to the
printed text in full.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numba
import numpy as np


@dataclass
class ExRMResult:
    """Output of :func:`exrm_alm`.

    Attributes
    ----------
    W : ndarray of shape (M, C)
        The components w_c as columns (the ALM's W variable at exit).
    b : ndarray of shape (C,)
    objective : float
        Problem (5) at (W, b).
    n_iter : int
        Outer iterations run.
    stop_reason : str
        ``"converged"`` (|Δ objective| < tol) or ``"max_iter"``.
    trace : dict of lists
        One entry per outer iteration: ``objective`` (5) at (W, b), ``residual_pw`` ‖P − W‖_F,
        ``residual_e`` ‖E − Y + XᵀP + 1bᵀ‖_F, ``mu`` (the penalty used in that iteration),
        ``inner_iter`` (Alg. 1 sweeps), and with the numpy engine ``time_s`` (cumulative seconds).
    coef_path, intercept_path : ndarray of shape (n_iter, M) and (n_iter,)
        The ensemble mean (w_e, b_e) after each iteration (when ``record_path``).
    """

    W: np.ndarray
    b: np.ndarray
    objective: float
    n_iter: int
    stop_reason: str
    trace: dict[str, list[float]] = field(default_factory=dict)
    coef_path: np.ndarray | None = None
    intercept_path: np.ndarray | None = None


def exrm_objective(
    X: np.ndarray, y: np.ndarray, W: np.ndarray, b: np.ndarray, lam: float, p: int
) -> float:
    """Problem (5): ½Σ_k(Σ_c|W_kc|)² + λ Σ_{c,i} (1 − y_i(x_iᵀw_c + b_c))₊^p.

    Parameters
    ----------
    X : ndarray of shape (N, M)
    y : ndarray of shape (N,), values ±1
    W : ndarray of shape (M, C)
    b : ndarray of shape (C,)
    lam : float
    p : {1, 2}
    """
    row_l1 = np.abs(W).sum(axis=1)
    slack = X @ W
    slack += b
    slack *= -y[:, None]
    slack += 1.0
    np.maximum(slack, 0.0, out=slack)
    loss = slack.sum() if p == 1 else np.vdot(slack, slack)
    return float(0.5 * (row_l1 @ row_l1) + lam * loss)


def l12_row_prox_reweighted(
    V: np.ndarray,
    mu: float,
    W0: np.ndarray,
    *,
    max_iter: int = 50,
    tol: float = 1e-8,
    eps: float = 1e-8,
) -> tuple[np.ndarray, int]:
    """Alg. 1: solve the W sub-problem (8) row by row with the reweighting (10)-(11).

    Each row w (length C) minimises ½‖w‖₁² + (μ/2)‖w − v‖², v = P_k + Q_k/μ, which is (8) up to a
    constant. Alg. 1 alternates G = Diag(‖w‖₁/(|w_c| + ϵ)) (10) and w = μv/(G + μ) (11) (G is
    diagonal, so (11) is elementwise), for every row at once.

    Parameters
    ----------
    V : ndarray of shape (M, C)
        μP + Q divided by μ (the centre of the proximal term).
    mu : float
    W0 : ndarray of shape (M, C)
        Warm start (the previous W).
    max_iter, tol, eps : inner iteration cap, stop when max |ΔW| < tol, ϵ of (10).

    Returns
    -------
    W : ndarray of shape (M, C)
    n_iter : int
    """
    W = W0
    muV = mu * V
    n_iter = 0
    for n_iter in range(1, max_iter + 1):  # noqa: B007 (the count is returned)
        absW = np.abs(W)
        G = absW.sum(axis=1, keepdims=True) / (absW + eps)  # (10)
        W_new = muV / (G + mu)  # (11), (μP_k + Q_k)(G + μI)⁻¹
        delta = float(np.max(np.abs(W_new - W))) if W.size else 0.0
        W = W_new
        if delta < tol:
            break
    return W, n_iter


def e_step(S: np.ndarray, y_col: np.ndarray, weight: float, p: int) -> np.ndarray:
    """Elementwise argmin_E weight·(Y∘E)₊^p + ½‖E − S‖², the E sub-problem (13).

    Where y·s ≤ 0 the loss is inactive and E = S; elsewhere (Ω = [Y∘S > 0]) E is S shrunk toward 0
    by ``weight`` (p = 1, (14)) or divided by 1 + 2·weight (p = 2, (15)).

    Parameters
    ----------
    S : ndarray of shape (N, C)
    y_col : ndarray of shape (N, 1) or (N, C), labels ±1
    weight : float
        λ/μ.
    p : {1, 2}
    """
    omega = y_col * S > 0
    if p == 1:
        shrunk = S - np.clip(S, -weight, weight)  # (14): sgn(S)·max(|S| − λ/μ, 0)
    else:
        shrunk = S * (1.0 / (1.0 + 2.0 * weight))  # (15)
    return np.where(omega, shrunk, S)


def exrm_alm(
    X: np.ndarray,
    y: np.ndarray,
    n_components: int,
    lam: float,
    p: int,
    *,
    max_iter: int = 500,
    tol: float = 0.05,
    mu0: float = 1.0,
    rho: float = 1.1,
    mu_max: float | None = None,
    inner_max_iter: int = 50,
    inner_tol: float = 1e-8,
    eps: float = 1e-8,
    record_path: bool = True,
    engine: str = "numba",
) -> ExRMResult:
    """Alg. 2: the ALM for problem (5) (``n_components`` = 1: PSVM).

    Parameters
    ----------
    X : ndarray of shape (N, M)
        Training points as rows (the paper's X is this matrix transposed).
    y : ndarray of shape (N,)
        Labels in {−1, +1}.
    n_components : int
        C, the number of components.
    lam : float
        λ > 0.
    p : {1, 2}
        Hinge (p = 1) or squared hinge (p = 2) loss.
    max_iter : int
        Cap on outer iterations.
    tol : float
        Stop when |obj_t − obj_{t−1}| < tol, obj = (5) at (W, b) (the paper's rule with 0.05).
        0 disables it.
    mu0, rho : float
        μ⁽⁰⁾ and the growth factor of (18) (the paper's 1 and 1.1).
    mu_max : float or None
        Optional ceiling on μ (None: μ grows without bound, as published).
    inner_max_iter, inner_tol, eps : Alg. 1's cap, stop threshold and ϵ of (10).
    record_path : bool
        Keep the ensemble mean after every iteration (for staged predictions).
    engine : {"numba", "numpy"}
        The compiled loop (one sweep over the rows of X per iteration), or the vectorised numpy
        reference, in the printed order, it is tested against. The numba engine records no
        per-iteration time.

    Returns
    -------
    ExRMResult
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    N, M = X.shape
    C = int(n_components)
    if engine == "numba":
        return _exrm_alm_compiled(
            X,
            y,
            C,
            lam,
            p,
            max_iter,
            tol,
            mu0,
            rho,
            mu_max,
            inner_max_iter,
            inner_tol,
            eps,
            record_path,
        )
    if engine != "numpy":
        raise ValueError(f"unknown engine {engine!r}; expected 'numba' or 'numpy'")
    t_start = time.perf_counter()

    # initialisation of Alg. 2
    W = np.ones((M, C))
    b = np.zeros(C)
    P = np.zeros((M, C))
    Q = np.ones((M, C))
    Z = np.zeros((N, C))
    E = np.zeros((N, C))  # first used by the b-step; Alg. 2 leaves it implicit, zero here
    mu = float(mu0)
    y_col = y[:, None]
    # K = (I + XXᵀ)⁻¹ in the paper's orientation: (I + XᵀX)⁻¹ here, M × M, inverted once
    # (eigenvalues ≥ 1, so the explicit inverse is well conditioned: one matmul per step)
    gram = X.T @ X
    gram[np.diag_indices_from(gram)] += 1.0
    K = np.linalg.inv(gram)

    trace: dict[str, list[float]] = {
        "objective": [],
        "residual_pw": [],
        "residual_e": [],
        "mu": [],
        "inner_iter": [],
        "time_s": [],
    }
    coef_path: list[np.ndarray] = []
    intercept_path: list[float] = []
    obj_prev = exrm_objective(X, y, W, b, lam, p)
    stop_reason = "max_iter"
    XP = X @ P  # XᵀP in the paper's orientation, N × C
    inv_N = 1.0 / N
    t = 0
    for t in range(1, max_iter + 1):  # noqa: B007 (the count is returned)
        Q_mu = Q / mu
        # W-step, Alg. 1 on (8): centre P + Q/μ
        W, n_inner = l12_row_prox_reweighted(
            P + Q_mu, mu, W, max_iter=inner_max_iter, tol=inner_tol, eps=eps
        )
        R = y_col - XP
        R -= Z / mu  # Y − XᵀP − Z/μ
        # b-step (12): b = (1/N)(Y − E − XᵀP − Z/μ)ᵀ1, with the current E and P
        b = (R - E).sum(axis=0) * inv_N
        # E-step (13)-(15) on S = Y − XᵀP − 1bᵀ − Z/μ
        R -= b
        E = e_step(R, y_col, lam / mu, p)
        # P-step (17): P = K(W − Q/μ + X(M_ − E)), M_ − E = Y − 1bᵀ − Z/μ − E = S + XᵀP − E
        R += XP
        R -= E
        P = K @ (W - Q_mu + X.T @ R)
        XP = X @ P
        # multipliers and penalty (18)
        R_e = XP + b
        R_e += E
        R_e -= y_col  # E − Y + XᵀP + 1bᵀ
        R_pw = P - W
        Z += mu * R_e
        Q += mu * R_pw
        mu_used = mu
        mu = rho * mu if mu_max is None else min(rho * mu, mu_max)

        obj = exrm_objective(X, y, W, b, lam, p)
        trace["objective"].append(obj)
        trace["residual_pw"].append(float(np.sqrt(np.vdot(R_pw, R_pw))))
        trace["residual_e"].append(float(np.sqrt(np.vdot(R_e, R_e))))
        trace["mu"].append(mu_used)
        trace["inner_iter"].append(n_inner)
        trace["time_s"].append(time.perf_counter() - t_start)
        if record_path:
            coef_path.append(W.sum(axis=1) * (1.0 / C))
            intercept_path.append(float(b.sum()) / C)
        if tol > 0 and abs(obj - obj_prev) < tol:
            stop_reason = "converged"
            break
        obj_prev = obj

    return ExRMResult(
        W=W,
        b=b,
        objective=exrm_objective(X, y, W, b, lam, p),
        n_iter=t,
        stop_reason=stop_reason,
        trace=trace,
        coef_path=np.array(coef_path).reshape(-1, M) if record_path else None,
        intercept_path=np.array(intercept_path) if record_path else None,
    )


def _exrm_alm_compiled(
    X: np.ndarray,
    y: np.ndarray,
    C: int,
    lam: float,
    p: int,
    max_iter: int,
    tol: float,
    mu0: float,
    rho: float,
    mu_max: float | None,
    inner_max_iter: int,
    inner_tol: float,
    eps: float,
    record_path: bool,
) -> ExRMResult:
    N, M = X.shape
    gram = X.T @ X
    gram[np.diag_indices_from(gram)] += 1.0
    K = np.linalg.inv(gram)
    W = np.ones((M, C))
    b = np.zeros(C)
    rec = np.zeros((max_iter, 5))  # objective, ‖P − W‖, ‖E − Y + XᵀP + 1bᵀ‖, μ, Alg. 1 sweeps
    coef_path = np.zeros((max_iter, M))
    b_path = np.zeros(max_iter)
    n_iter, converged = _alm_loop(
        X, y, K, W, b, float(lam), int(p), int(max_iter), float(tol),
        float(mu0), float(rho), np.inf if mu_max is None else float(mu_max), int(inner_max_iter),
        float(inner_tol), float(eps), rec, coef_path, b_path,
    )  # fmt: skip
    rec = rec[:n_iter]
    trace = {
        "objective": rec[:, 0].tolist(),
        "residual_pw": rec[:, 1].tolist(),
        "residual_e": rec[:, 2].tolist(),
        "mu": rec[:, 3].tolist(),
        "inner_iter": rec[:, 4].astype(int).tolist(),
    }
    return ExRMResult(
        W=W,
        b=b,
        objective=exrm_objective(X, y, W, b, lam, p),
        n_iter=int(n_iter),
        stop_reason="converged" if converged else "max_iter",
        trace=trace,
        coef_path=coef_path[:n_iter].copy() if record_path else None,
        intercept_path=b_path[:n_iter].copy() if record_path else None,
    )


@numba.njit(cache=True)
def _alm_loop(
    X,
    y,
    K,
    W,
    b,
    lam,
    p,
    max_iter,
    tol,
    mu0,
    rho,
    mu_max,
    inner_max,
    inner_tol,
    eps,
    rec,
    coef_path,
    b_path,
):  # pragma: no cover - numba
    """Alg. 2 as in the numpy engine, with one streamed sweep over the rows of X per iteration.

    Exact rearrangements (only the rounding order differs from the numpy engine):

    * the multiplier update Z += μ(E − Y + XᵀP + 1bᵀ) of iteration t needs x_iᵀP_t, which the
      sweep of iteration t + 1 computes anyway (its S uses the same P_t); so that update is applied
      to row i in the next sweep, just before row i is used, and its residual is summed there (the
      last one in a final sweep);
    * the b-step needs the column sums of Z, XᵀP and E before the sweep: Σ_i x_iᵀP is (Σ_i x_i)ᵀP,
      Σ_i E is summed in the previous sweep and Σ_i Z is carried with Z's update;
    * the objective (5) at (W_t, b_t) needs x_iᵀW_t, from the same product as x_iᵀP.

    The sweep goes over blocks of 256 rows: one BLAS product X_b[P W], the elementwise steps on the
    block's rows of Z and E (branch-free), and one BLAS product X_bᵀ(M_ − E)_b into the P-step's
    right-hand side. So each iteration reads X once and reads and writes Z and E once, with 3NMC
    multiply-adds and no N-sized temporaries. W and b are updated in place.
    """
    N, M = X.shape
    C = W.shape[1]
    C2 = 2 * C
    P = np.zeros((M, C))
    Q = np.ones((M, C))
    Z = np.zeros((N, C))
    E = np.zeros((N, C))
    V = np.zeros((M, C))
    W_new = np.zeros((M, C))
    PW = np.zeros((M, C2))  # [P_{t−1} W_t]
    T = np.zeros((M, C))  # Xᵀ(M_ − E)
    block = min(N, 256)
    XPW = np.zeros((block, C2))  # x_iᵀ[P W] for one block of rows
    Rb = np.zeros((block, C))  # M_ − E for one block of rows
    Tb = np.zeros((M, C))
    b_prev = np.zeros(C)
    sum_z = np.zeros(C)  # Σ_i Z_ic (after the pending update)
    sum_e = np.zeros(C)  # Σ_i E_ic
    sum_xp = np.zeros(C)  # Σ_i x_iᵀP_c
    sum_x = np.zeros(M)
    sum_y = 0.0
    for i in range(N):
        sum_y += y[i]
        for k in range(M):
            sum_x[k] += X[i, k]
    # objective at the start (W = 1, b = 0)
    reg = 0.0
    for k in range(M):
        s = 0.0
        for c in range(C):
            s += abs(W[k, c])
        reg += s * s
    loss = 0.0
    for i0 in range(0, N, block):
        i1 = min(i0 + block, N)
        xw = Rb[: i1 - i0]
        np.dot(X[i0:i1], W, xw)
        for j in range(i1 - i0):
            for c in range(C):
                slack = max(1.0 - y[i0 + j] * (xw[j, c] + b[c]), 0.0)
                loss += slack if p == 1 else slack * slack
    obj_prev = 0.5 * reg + lam * loss
    mu = mu0
    mu_prev = 0.0  # the multiplier update pending from the previous iteration (none at first)
    n_done = max_iter
    converged = False
    for t in range(max_iter):
        inv_mu = 1.0 / mu
        # W-step, Alg. 1 on (8): all rows together, centre V = P + Q/μ
        for k in range(M):
            for c in range(C):
                V[k, c] = P[k, c] + Q[k, c] * inv_mu
        n_inner = 0
        for _ in range(inner_max):
            n_inner += 1
            delta = 0.0
            for k in range(M):
                row = 0.0
                for c in range(C):
                    row += abs(W[k, c])
                for c in range(C):
                    g = row / (abs(W[k, c]) + eps)  # (10)
                    wn = mu * V[k, c] / (g + mu)  # (11)
                    d = abs(wn - W[k, c])
                    if d > delta:
                        delta = d
                    W_new[k, c] = wn
            W[:, :] = W_new
            if delta < inner_tol:
                break
        # Σ_i of the pending multiplier update, then the b-step (12)
        for c in range(C):
            sum_z[c] += mu_prev * (sum_e[c] - sum_y + sum_xp[c] + N * b_prev[c])
        for c in range(C):
            b[c] = (sum_y - sum_xp[c] - sum_z[c] * inv_mu - sum_e[c]) / N
        for k in range(M):
            for c in range(C):
                PW[k, c] = P[k, c]
                PW[k, C + c] = W[k, c]
                T[k, c] = 0.0
        for c in range(C):
            sum_e[c] = 0.0
        w = lam / mu
        shrink = 1.0 / (1.0 + 2.0 * w)
        r_e = 0.0
        loss = 0.0
        # the row sweep, in blocks of rows: x_iᵀ[P W] and the Xᵀ(M_ − E) update by BLAS per block
        for i0 in range(0, N, block):
            i1 = min(i0 + block, N)
            nb = i1 - i0
            Xb = X[i0:i1]
            xpw = XPW[:nb]
            rb = Rb[:nb]
            np.dot(Xb, PW, xpw)
            for j in range(nb):
                i = i0 + j
                yi = y[i]
                for c in range(C):
                    xp = xpw[j, c]
                    # pending (18) of the previous iteration: Z += μ(E − Y + XᵀP + 1bᵀ)
                    d = E[i, c] - yi + xp + b_prev[c]
                    r_e += d * d
                    z = Z[i, c] + mu_prev * d
                    Z[i, c] = z
                    # E-step (13)-(15) on S = Y − XᵀP − Z/μ − 1bᵀ
                    s = yi - xp - z * inv_mu - b[c]
                    # (branch-free selects: the signs are data-dependent and mispredict)
                    active = yi * s > 0.0
                    if p == 1:
                        cut = min(max(s, -w), w)
                        e = s - (cut if active else 0.0)  # (14): sgn(S)·max(|S| − λ/μ, 0)
                    else:
                        e = s * (shrink if active else 1.0)  # (15)
                    E[i, c] = e
                    sum_e[c] += e
                    rb[j, c] = s + xp - e  # M_ − E
                    slack = max(1.0 - yi * (xpw[j, C + c] + b[c]), 0.0)
                    loss += slack if p == 1 else slack * slack
            np.dot(Xb.T, rb, Tb)
            for k in range(M):
                for c in range(C):
                    T[k, c] += Tb[k, c]
        if t > 0:
            rec[t - 1, 2] = np.sqrt(r_e)
        # P-step (17): P = K(Xᵀ(M_ − E) + W − Q/μ)
        for k in range(M):
            for c in range(C):
                T[k, c] += W[k, c] - Q[k, c] * inv_mu
        np.dot(K, T, P)
        for c in range(C):
            acc = 0.0
            for k in range(M):
                acc += sum_x[k] * P[k, c]
            sum_xp[c] = acc
        # Q update of (18) (Z's is applied in the next sweep)
        r_pw = 0.0
        for k in range(M):
            for c in range(C):
                d = P[k, c] - W[k, c]
                r_pw += d * d
                Q[k, c] += mu * d
        for c in range(C):
            b_prev[c] = b[c]
        mu_prev = mu
        rec[t, 1] = np.sqrt(r_pw)
        rec[t, 3] = mu
        rec[t, 4] = n_inner
        mu = min(rho * mu, mu_max)
        reg = 0.0
        for k in range(M):
            s = 0.0
            for c in range(C):
                s += abs(W[k, c])
            reg += s * s
        obj = 0.5 * reg + lam * loss
        rec[t, 0] = obj
        for k in range(M):
            acc = 0.0
            for c in range(C):
                acc += W[k, c]
            coef_path[t, k] = acc / C
        acc = 0.0
        for c in range(C):
            acc += b[c]
        b_path[t] = acc / C
        if tol > 0.0 and abs(obj - obj_prev) < tol:
            n_done = t + 1
            converged = True
            break
        obj_prev = obj
    # the residual of the last multiplier update needs x_iᵀP once more
    r_e = 0.0
    for i0 in range(0, N, block):
        i1 = min(i0 + block, N)
        xp = Rb[: i1 - i0]
        np.dot(X[i0:i1], P, xp)
        for j in range(i1 - i0):
            for c in range(C):
                d = E[i0 + j, c] - y[i0 + j] + xp[j, c] + b[c]
                r_e += d * d
    rec[n_done - 1, 2] = np.sqrt(r_e)
    return n_done, converged
