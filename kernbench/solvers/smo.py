"""LIBSVM's SMO for the SVM dual with an unregularised bias, and what its callers share.

The dual: min f(α) = ½αᵀQα − 1ᵀα, 0 ≤ α ≤ C, yᵀα = 0, with Q = (yyᵀ)∘K and K = ΦΦᵀ the Gram
matrix of the columns Φ (kept, or its rows computed from Φ on the fly). :func:`smo_solve` is the
compiled pairwise dual coordinate descent with LIBSVM's second-order working-set selection
(WSS2 [Fan, Chen & Lin 2005]) and shrinking; :func:`smo_with_face_steps` alternates it with steps
on the face of the free α (:mod:`kernbench.solvers.face_steps`). :func:`feasible_alpha` and
:func:`libsvm_rho` are LIBSVM's feasible start and its bias. Used by CGENS's restricted SVM
(:mod:`kernbench.solvers.restricted_svm`) and CG-Boost's SMO master
(:mod:`kernbench.solvers.masters.smo`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numba
import numpy as np

from kernbench.solvers.face_steps import face_descent

_TAU = 1e-12  # LIBSVM's guard for non-positive pair curvature
#: the exact-bias SMO shrinks its active set every this many pair updates. LIBSVM waits
#: min(m, 1000); here the SMO restarts with every point active after each chunk of face steps,
#: so a short period pays (docs/performance.md has the measurements).
SHRINK_EVERY = 20


@numba.njit(cache=True)
def _kernel_row(use_gram, K, Phi, J, i, buf, act, n_act):  # pragma: no cover - numba
    """Row i of the kernel matrix: K[i] itself with ``use_gram``, else buf with buf[t] = φ_tᵀφ_i
    from the first J columns of Phi for the active t = act[:n_act] only (the SMO reads no other
    entry of a row)."""
    if use_gram:
        return K[i]
    for q in range(n_act):
        t = act[q]
        s = 0.0
        for k in range(J):
            s += Phi[t, k] * Phi[i, k]
        buf[t] = s
    return buf


@numba.njit(cache=True)
def add_outer(K, h):  # pragma: no cover - numba
    """K += hhᵀ in place (the Gram matrix's update for one new column; no m × m temporary).

    Each entry gains the rounded product h_a·h_b, as ``K += np.outer(h, h)`` does.
    """
    m = h.shape[0]
    for a in range(m):
        ha = h[a]
        row = K[a]
        for b in range(m):
            row[b] += ha * h[b]


@numba.njit(cache=True, inline="always")
def _is_up(yt, at, C):  # pragma: no cover - numba
    """α_t can move in direction +y_t (the set I_up)."""
    return (yt > 0 and at < C) or (yt < 0 and at > 0)


@numba.njit(cache=True, inline="always")
def _is_low(yt, at, C):  # pragma: no cover - numba
    """α_t can move in direction −y_t (the set I_low)."""
    return (yt > 0 and at > 0) or (yt < 0 and at < C)


@numba.njit(cache=True, inline="always")
def _track(t, yt, at, gt, C, i, gmax, gmax2):  # pragma: no cover - numba
    """Point t's part in the choice of i: (i, gmax, gmax2) updated with −y_t G_t if t ∈ I_up and
    y_t G_t if t ∈ I_low (ties: the later point)."""
    if _is_up(yt, at, C):
        v = -yt * gt
        if v >= gmax:
            gmax = v
            i = t
    if _is_low(yt, at, C):
        v = yt * gt
        if v >= gmax2:
            gmax2 = v
    return i, gmax, gmax2


@numba.njit(cache=True)
def _select_i(act, n_act, y, alpha, G, C):  # pragma: no cover - numba
    """(i, gmax, gmax2): i maximises −y_t G_t over I_up (value gmax); gmax2 = max y_t G_t over
    I_low; both over the active points act[:n_act] (ties: the last in index order)."""
    gmax = -np.inf
    gmax2 = -np.inf
    i = -1
    for k in range(n_act):
        t = act[k]
        i, gmax, gmax2 = _track(t, y[t], alpha[t], G[t], C, i, gmax, gmax2)
    return i, gmax, gmax2


@numba.njit(cache=True)
def _reconstruct(use_gram, K, Phi, J, y, alpha, G, act, n_act):  # pragma: no cover - numba
    """Recompute G_t = y_t·φ_tᵀw − 1 (w = Σ_s y_s α_s φ_s) for the points outside act[:n_act]
    (their gradient is not updated while they are shrunk), then make every point active."""
    m = y.shape[0]
    inactive = np.ones(m, dtype=np.bool_)
    for k in range(n_act):
        inactive[act[k]] = False
    if use_gram:
        sv = np.flatnonzero(alpha > 0.0)
        for t in range(m):
            if inactive[t]:
                s = 0.0
                for s_ in sv:
                    s += K[t, s_] * (y[s_] * alpha[s_])
                G[t] = y[t] * s - 1.0
    else:
        w = np.zeros(J)
        for s_ in range(m):
            c = y[s_] * alpha[s_]
            if c != 0.0:
                for q in range(J):
                    w[q] += c * Phi[s_, q]
        for t in range(m):
            if inactive[t]:
                s = 0.0
                for q in range(J):
                    s += Phi[t, q] * w[q]
                G[t] = y[t] * s - 1.0
    for t in range(m):
        act[t] = t
    return m


@numba.njit(cache=True)
def _shrink(act, n_act, y, alpha, G, C, gmax, gmax2):  # pragma: no cover - numba
    """Drop from act[:n_act] the bounded points that cannot enter a violating pair while the
    extreme values stay (LIBSVM's ``be_shrunk``); keeps index order. Returns the new count."""
    n = 0
    for k in range(n_act):
        t = act[k]
        yt = y[t]
        at = alpha[t]
        gt = G[t]
        drop = False
        if at >= C:  # upper bound
            drop = -gt > (gmax if yt > 0 else gmax2)
        elif at <= 0.0:  # lower bound
            drop = gt > (gmax2 if yt > 0 else gmax)
        if not drop:
            act[n] = t
            n += 1
    return n


@numba.njit(cache=True)
def smo_solve(  # pragma: no cover - numba
    use_gram, K, Phi, J, diag, y, alpha, G, C, tol, max_steps, shrink
):
    """SMO on dual (2) with yᵀα = 0 (LIBSVM WSS2 [Fan, Chen & Lin 2005]), in place on α and G.

    ``Phi`` is the C-contiguous column buffer of which the first J columns are used; with
    ``use_gram`` the kernel rows are read from K in place instead.

    G is the gradient of f(α) = ½αᵀQα − 1ᵀα, Q = (yyᵀ)∘K, i.e. G_i = y_i φ_iᵀw − 1.
    Each pair update makes two passes over the active points: the choice of j (reading row i),
    then the gradient update fused with the next choice of i and the violation.

    ``shrink``: LIBSVM's shrinking. Every min(m, :data:`SHRINK_EVERY`) updates, bounded points
    that cannot be chosen while the current extreme gradients hold leave the active set and their
    gradient is no longer updated; it is recomputed from w = Φᵀ(y∘α) (or from K) when the
    violation first falls below 10·tol, and before any return, where optimality is checked on all
    points again. G is complete on return either way.
    Returns (steps, violation, converged).
    """
    m = y.shape[0]
    buf_i = np.empty(m)
    buf_j = np.empty(m)
    act = np.arange(m)
    n_act = m
    interval = min(m, SHRINK_EVERY)
    counter = interval
    unshrunk = False
    steps = 0
    i, gmax, gmax2 = _select_i(act, n_act, y, alpha, G, C)
    while True:
        violation = gmax + gmax2  # m(α) − M(α) on the active points
        if shrink and n_act < m and (violation <= tol or i < 0 or steps >= max_steps):
            # optimal (or out of steps) on the active set: check every point
            n_act = _reconstruct(use_gram, K, Phi, J, y, alpha, G, act, n_act)
            i, gmax, gmax2 = _select_i(act, n_act, y, alpha, G, C)
            continue
        if violation <= tol or i < 0:
            return steps, violation, True
        if steps >= max_steps:
            return steps, violation, False
        if shrink:
            counter -= 1
            if counter == 0:
                counter = interval
                if not unshrunk and violation <= 10.0 * tol:
                    unshrunk = True
                    if n_act < m:
                        n_act = _reconstruct(use_gram, K, Phi, J, y, alpha, G, act, n_act)
                        i, gmax, gmax2 = _select_i(act, n_act, y, alpha, G, C)
                n_act = _shrink(act, n_act, y, alpha, G, C, gmax, gmax2)
                continue
        row_i = _kernel_row(use_gram, K, Phi, J, i, buf_i, act, n_act)
        kii = diag[i]
        j = -1
        best = np.inf
        for k in range(n_act):
            t = act[k]
            yt = y[t]
            if _is_low(yt, alpha[t], C):
                b = gmax + yt * G[t]
                if b > 0:
                    a = kii + diag[t] - 2.0 * row_i[t]
                    if a <= 0:
                        a = _TAU
                    v = -(b * b) / a
                    if v <= best:
                        best = v
                        j = t
        if j < 0:
            if n_act < m:
                gmax = -np.inf  # no pair on the active set: check every point
                gmax2 = -np.inf
                continue
            return steps, violation, True
        row_j = _kernel_row(use_gram, K, Phi, J, j, buf_j, act, n_act)
        a = kii + diag[j] - 2.0 * row_i[j]
        if a <= 0:
            a = _TAU
        bij = -y[i] * G[i] + y[j] * G[j]
        # move α_i += y_i·s, α_j −= y_j·s (keeps yᵀα), s ≥ 0, clipped to the box
        cap_i = C - alpha[i] if y[i] > 0 else alpha[i]
        cap_j = alpha[j] if y[j] > 0 else C - alpha[j]
        s = bij / a
        if s > cap_i:
            s = cap_i
        if s > cap_j:
            s = cap_j
        if s <= 0.0:
            if n_act < m:
                gmax = -np.inf  # a blocked pair on the active set: check every point
                gmax2 = -np.inf
                continue
            return steps, violation, True
        alpha[i] += y[i] * s
        alpha[j] -= y[j] * s
        if alpha[i] < 0.0:
            alpha[i] = 0.0
        elif alpha[i] > C:
            alpha[i] = C
        if alpha[j] < 0.0:
            alpha[j] = 0.0
        elif alpha[j] > C:
            alpha[j] = C
        steps += 1
        # ∂G = Q(Δα), Δα = s(y_i e_i − y_j e_j), fused with the next choice of i
        gmax = -np.inf
        gmax2 = -np.inf
        i = -1
        for k in range(n_act):
            t = act[k]
            yt = y[t]
            gt = G[t] + yt * s * (row_i[t] - row_j[t])
            G[t] = gt
            i, gmax, gmax2 = _track(t, yt, alpha[t], gt, C, i, gmax, gmax2)


@dataclass(frozen=True)
class SMOSettings:
    """How :func:`smo_with_face_steps` alternates SMO and face steps.

    Attributes
    ----------
    chunk : int
        Pair updates per SMO call before a face step is tried.
    shrinking : bool
        LIBSVM's shrinking of the active set inside SMO.
    max_face_steps : int
        Face steps after one chunk at most.
    max_free : int
        No face step costing more than ``max_free``³ flops.
    search_wide : bool
        The projected search also on faces with more free variables than columns.
    """

    chunk: int
    shrinking: bool = False
    max_face_steps: int = 50
    max_free: int = 300
    search_wide: bool = False


def smo_with_face_steps(
    use_gram: bool,
    K: np.ndarray,
    Phi: np.ndarray,
    J: int,
    diag: np.ndarray,
    y: np.ndarray,
    alpha: np.ndarray,
    G: np.ndarray,
    C: float,
    tol: float,
    max_steps: int,
    make_gradient: Callable[[], Callable[[], np.ndarray]],
    settings: SMOSettings,
) -> tuple[int, float, bool, int]:
    """SMO (:func:`smo_solve`) in chunks of ``settings.chunk`` pair updates; after a chunk that
    did not converge, steps on the face of the free α (:func:`face_descent`, which reads the
    gradient through ``make_gradient()``, made at the start of every face descent), until the
    violation is ≤ ``tol`` or ``max_steps`` pair updates were made. α and G are updated in place.

    Returns
    -------
    steps, violation, converged, face_steps
    """
    steps = face_steps = 0
    while True:
        n, viol, ok = smo_solve(
            use_gram,
            K,
            Phi,
            J,
            diag,
            y,
            alpha,
            G,
            C,
            tol,
            min(settings.chunk, max_steps - steps),
            settings.shrinking,
        )
        steps += int(n)
        if ok or steps >= max_steps:
            return steps, viol, ok, face_steps
        face_steps += face_descent(
            Phi[:, :J],
            y,
            alpha,
            G,
            C,
            tol,
            make_gradient(),
            max_steps=settings.max_face_steps,
            max_free=settings.max_free,
            search_wide=settings.search_wide,
        )


def feasible_alpha(alpha: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Scale the class with the larger Σα down so that yᵀα = 0 (stays in the box)."""
    alpha = alpha.copy()
    pos, neg = y > 0, y < 0
    sp, sn = alpha[pos].sum(), alpha[neg].sum()
    if sp > sn and sp > 0:
        alpha[pos] *= sn / sp
    elif sn > sp and sn > 0:
        alpha[neg] *= sp / sn
    return alpha


def libsvm_rho(G: np.ndarray, y: np.ndarray, alpha: np.ndarray, C: float) -> float:
    """LIBSVM's ρ (b = −ρ): mean of y_iG_i over free α_i, else the feasible interval's midpoint."""
    yG = y * G
    free = (alpha > 0) & (alpha < C)
    if free.any():
        return float(yG[free].mean())
    at_upper = alpha >= C
    at_lower = alpha <= 0
    ub_set = (at_upper & (y < 0)) | (at_lower & (y > 0))
    lb_set = (at_upper & (y > 0)) | (at_lower & (y < 0))
    ub = yG[ub_set].min() if ub_set.any() else np.inf
    lb = yG[lb_set].max() if lb_set.any() else -np.inf
    if np.isfinite(ub) and np.isfinite(lb):
        return float((ub + lb) / 2.0)
    return float(ub if np.isfinite(ub) else lb if np.isfinite(lb) else 0.0)
