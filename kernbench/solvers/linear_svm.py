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
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, NamedTuple

import numba
import numpy as np
import scipy.linalg

from kernbench.solvers.prefetch import prefetch_entry, prefetch_item

BiasMode = Literal["exact", "liblinear"]
_TAU = 1e-12  # LIBSVM's guard for non-positive pair curvature
#: the exact-bias SMO shrinks its active set every this many pair updates. LIBSVM waits
#: min(m, 1000); here the SMO restarts with every point active after each chunk of face steps,
#: so a short period pays (docs/performance.md has the measurements).
SHRINK_EVERY = 20


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


_GELSY, _GELSY_LWORK = scipy.linalg.lapack.get_lapack_funcs(
    ("gelsy", "gelsy_lwork"), (np.zeros(1),)
)


def lstsq_gelsy(a: np.ndarray, b: np.ndarray, cond: float) -> np.ndarray:
    """The minimum-norm least-squares solution of a x ≈ b by LAPACK's gelsy (QR with column
    pivoting, singular values below ``cond``·σ_max count as zero).

    What ``scipy.linalg.lstsq(a, b, cond=cond, lapack_driver="gelsy", check_finite=False)[0]``
    returns, bit for bit, without its checks and dispatch, which cost more than the solve itself
    at the face steps' sizes (a face descent takes thousands of them per fit).

    Parameters
    ----------
    a : ndarray of shape (m, n), float64
    b : ndarray of shape (m,), float64
    cond : float

    Returns
    -------
    ndarray of shape (n,)
    """
    m, n = a.shape
    rhs = np.zeros((max(m, n), 1))
    rhs[:m, 0] = b
    work, info = _GELSY_LWORK(m, n, 1, cond)
    if info != 0:
        raise ValueError(f"gelsy workspace query failed (info = {info})")
    _, x, _, _, info = _GELSY(
        a, rhs, np.zeros((n, 1), dtype=np.int32), cond, int(work), False, True
    )
    if info < 0:
        raise ValueError(f"illegal value in argument {-info} of gelsy")
    return x[:n, 0]


def _left_singular(Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Left singular vectors and singular values of a wide Z (k × J, k ≤ J), largest first, by
    a QR of Zᵀ and an SVD of its k × k triangle (Zᵀ = QR, R = PΣVᵀ, so Z = VΣ(QP)ᵀ and U = V):
    O(k²J), and as accurate as an SVD of Z (never ZZᵀ, whose condition number is Z's squared).
    One factorisation gives both the face step's ray and its Newton direction; it replaced two
    rank-revealing least-squares solves (LAPACK gelsy), 3× the time at k = 30, J = 720."""
    R = scipy.linalg.qr(Z.T, mode="r", check_finite=False)[0][: Z.shape[0]]
    _, sv, Vt = np.linalg.svd(R)
    return Vt.T, sv


def project_box_hyperplane(v: np.ndarray, y: np.ndarray, C: float, s: float) -> np.ndarray:
    """The Euclidean projection of v onto {x : 0 ≤ x ≤ C, yᵀx = s} (y ∈ {−1, +1}ᵏ).

    The projection is x(μ) = clip(v − μy, 0, C) for the μ with g(μ) = yᵀx(μ) = s. Each term
    y_i x_i(μ) is non-increasing in μ with slope −1 on one interval (z_i − C ≤ μ ≤ z_i for
    y_i = +1, z_i ≤ μ ≤ z_i + C for y_i = −1, z_i = y_i v_i) and constant elsewhere, so g falls
    from n₊C to −n₋C, piecewise linearly between the sorted 2k breakpoints, with slope minus
    the number of open intervals: g at every breakpoint is one cumulative sum, and μ is
    interpolated on the piece where g crosses s. O(k log k). Requires −n₋C ≤ s ≤ n₊C (n± the
    counts of y = ±1), which holds when s = yᵀu for a u in the box.

    Parameters
    ----------
    v : ndarray of shape (k,)
    y : ndarray of shape (k,)
        Labels in {−1, +1}.
    C : float
        Upper bound of the box.
    s : float
        Value of yᵀx.

    Returns
    -------
    ndarray of shape (k,)
    """
    z = y * v
    lo = np.where(y > 0, z - C, z)  # each interval [lo_i, lo_i + C]
    points = np.concatenate([lo, lo + C])
    opens = np.concatenate([np.ones(lo.size), -np.ones(lo.size)])
    order = np.argsort(points, kind="stable")
    points, opens = points[order], opens[order]
    n_open = np.cumsum(opens)[:-1]  # open intervals between consecutive breakpoints
    g = np.empty(points.size)
    g[0] = C * np.count_nonzero(y > 0)
    g[1:] = g[0] - np.cumsum(n_open * np.diff(points))
    j = min(int(np.searchsorted(-g, -s, side="left")), points.size - 1)  # first g[j] ≤ s
    if j == 0 or g[j - 1] == g[j]:
        mu = points[j]
    else:  # linear on [points[j-1], points[j]]
        mu = points[j - 1] + (g[j - 1] - s) / (g[j - 1] - g[j]) * (points[j] - points[j - 1])
    return np.clip(v - mu * y, 0.0, C)


class FaceStep(NamedTuple):
    """What one :func:`face_step` did.

    Attributes
    ----------
    moved : bool
        The dual point changed.
    clipped : bool
        A variable reached a bound before the line minimum (the step stopped there).
    ray : bool
        The face's KKT system was inconsistent and the step followed a zero-curvature ray.
    """

    moved: bool
    clipped: bool
    ray: bool


def face_step(
    A: np.ndarray,
    y: np.ndarray,
    u: np.ndarray,
    grad: np.ndarray,
    C: float,
    *,
    search_wide: bool = False,
) -> FaceStep:
    """One step on the face of the free variables, in place on ``u``.

    The dual is min f(u) = ½uᵀQu − 1ᵀu, 0 ≤ u ≤ C, yᵀu = 0, with Q = ZZᵀ, Z = y∘A (row i of A
    scaled by y_i). On the face of the free variables F (0 < u_F < C, the others fixed) the
    direction solves the face's KKT system Q_FF d + y_F λ = −∇_F, y_Fᵀd = 0 by least squares:
    Q_FF = Z_F Z_Fᵀ is singular while |F| exceeds the rank of A's columns + 1. If the system is
    consistent, d is the Newton step and u moves to the line minimum. If not, the dual is
    unbounded below on the face along the residual r (Z_Fᵀr = 0, y_Fᵀr = 0, slope −‖r‖²: zero
    curvature), and u moves along r. Either step is capped where the first variable reaches a
    bound, which is then set to it exactly. yᵀu is kept.

    Pairwise (SMO) updates make little progress along such flat directions, and so does the
    least-squares Newton step alone (on CG-Boost's master, objective changes near 1e-9 per
    step).

    Parameters
    ----------
    A : ndarray of shape (m, J)
        The columns (any real dtype; only the rows on F are read).
    y : ndarray of shape (m,)
        Labels in {−1, +1}.
    u : ndarray of shape (m,)
        Feasible dual point, updated in place.
    grad : ndarray of shape (m,)
        ∇f(u) = Qu − 1 (read only: the caller refreshes it).
    C : float
        Upper bound of the box.
    search_wide : bool
        Also try :func:`_projected_search` on faces with more free variables than columns (it
        always runs on those with fewer): CG-Boost's kernel master, not CGENS.

    Returns
    -------
    FaceStep
        Whether u moved, whether the step was clipped at a bound, whether it followed a ray.
    """
    F = np.flatnonzero((u > 0.0) & (u < C))
    k = F.size
    if k < 2:
        return FaceStep(False, False, False)
    yF, gF = y[F], grad[F]
    Z = yF[:, None] * A[F]
    eps = np.finfo(float).eps
    # a residual r of the face's system is a ray when ‖r‖² exceeds this; relative to ∇_F, not
    # to the projected ĝ below: at the face's optimum ĝ is round-off, and so is r
    ray_floor = 1e-18 * max(float(gF @ gF), 1e-300)
    column_space = not (
        k <= Z.shape[1] and eps * (k + 1) * C * float(np.einsum("ij,ij->", Z, Z)) <= 1e-6
    )
    if not column_space:
        # No more free variables than columns, and ZZᵀ small enough that the curvatures its
        # least-squares solve treats as zero (below eps·(k+1)·‖ZZᵀ‖ ≤ eps·(k+1)·‖Z‖²_F) move
        # the gradient by < 1e-6 across the box: the (k+1)² KKT matrix is the small system.
        # Its least-squares solution by a complete orthogonal factorisation (LAPACK gelsy, QR
        # with column pivoting: numpy's gelsd solution, at a fraction of its cost; singular
        # values below eps·(k+1)·σ_max count as zero). The border y_F is scaled by β =
        # tr(ZZᵀ)/k (unknown λ/β): an O(1) border beside entries of 1e14 fell under the cut-off.
        G = Z @ Z.T
        beta = max(float(np.trace(G)) / k, 1e-300)
        M = np.zeros((k + 1, k + 1))
        M[:k, :k] = G
        M[:k, k] = beta * yF
        M[k, :k] = beta * yF
        rhs = np.append(-gF, 0.0)
        x = lstsq_gelsy(M, rhs, eps * (k + 1))
        r = (rhs - M @ x)[:k]
        ray = float(r @ r) > ray_floor
        d = r if ray else x[:k]
        to_bound = ray  # a ray is followed to the first bound
    else:
        # More free variables than columns, or a large ZZᵀ: eliminate λ by projecting onto
        # y_F^⊥ (P = I − y_F y_Fᵀ/k); with Ẑ = PZ, ĝ = Pg the system is ẐẐᵀd = −ĝ, d ∈ y_F^⊥,
        # solved in the columns' space without forming ZZᵀ, which is larger when k > J (k²
        # against kJ) and worse conditioned (Z's condition number squared: on the optdigits
        # quadratic kernel, columns of norm 1e7, the (k+1)² solve misread consistent systems
        # as rays, whose jumps to a bound raised the dual, and SMO stalled).
        Zh = Z - np.outer(yF, yF @ Z) / k
        gh = gF - yF * (yF @ gF) / k
        cond = eps * max(k, Z.shape[1])
        if k >= Z.shape[1]:
            # w = Ẑ⁺(−ĝ); the residual r = −ĝ − Ẑw (Ẑᵀr = 0, y_Fᵀr = 0) is the ray, else
            # d = (Ẑᵀ)⁺w is the minimum-norm Newton direction: two k × J least-squares solves
            # (gelsy), O(kJ²)
            w = lstsq_gelsy(Zh, -gh, cond)
            r = -gh - Zh @ w
            ray = float(r @ r) > ray_floor
            d = r if ray else lstsq_gelsy(Zh.T, w, cond)
        else:
            # fewer free variables than columns but a large ZZᵀ (CG-Boost's 2-norm master late
            # in a fit: k ≈ 30, J ≈ 700): one factorisation Ẑ = UΣVᵀ (QR of Ẑᵀ, SVD of its
            # triangle, O(k²J): cheaper there than the two gelsy solves) gives both the ray
            # (the part of −ĝ outside Ẑ's range) and (ẐẐᵀ)⁺(−ĝ) = UΣ⁻²Uᵀ(−ĝ)
            U, sv = _left_singular(Zh)
            keep = sv > cond * (sv[0] if sv.size else 0.0)
            U, sv = U[:, keep], sv[keep]
            c = U.T @ -gh
            r = -gh - U @ c
            ray = float(r @ r) > ray_floor
            d = r if ray else U @ (c / sv**2)
        # the line minimum along d, also on a ray: a true ray's curvature is round-off, so its
        # line minimum lies far beyond the first bound, which caps it
        to_bound = False
    d = d - yF * (yF @ d) / k  # exactly y_Fᵀd = 0 (y_i² = 1)
    slope = float(gF @ d)
    if not slope < 0.0:
        return FaceStep(False, False, ray)
    v = Z.T @ d
    curv = float(v @ v)
    t = -slope / curv if (not to_bound and curv > 1e-300) else np.inf
    with np.errstate(divide="ignore", invalid="ignore"):
        caps = np.where(d > 0, (C - u[F]) / d, np.where(d < 0, -u[F] / d, np.inf))
    first = int(np.argmin(caps))
    clipped = caps[first] <= t
    t_line = t
    t = min(t, float(caps[first]))
    if not (np.isfinite(t) and t > 0.0):
        return FaceStep(False, False, ray)
    uF = u[F] + t * d
    if clipped:
        uF[first] = 0.0 if d[first] < 0 else C
        if column_space and (k < Z.shape[1] or search_wide):  # see _projected_search
            uF = _projected_search(Z, yF, u[F], gF, d, C, t, t_line, caps, uF)
    u[F] = np.clip(uF, 0.0, C)
    return FaceStep(True, bool(clipped), ray)


_N_TRIALS = 6  # trial steps of the projected search at most


def _projected_search(
    Z: np.ndarray,
    yF: np.ndarray,
    uF: np.ndarray,
    gF: np.ndarray,
    d: np.ndarray,
    C: float,
    t_first: float,
    t_line: float,
    caps: np.ndarray,
    clipped: np.ndarray,
) -> np.ndarray:
    """The best of the clipped step and steps along the projected path u(t) = P(u_F + t·d).

    A step stopped at the first bound fixes one variable. On CG-Boost's 2-norm master late in a
    letter fit (J ≈ 720 columns of rank 27, 30 free u) nearly every face is a ray, and fixing
    one variable per step took ~1000 face steps per column. Along the path projected onto
    {0 ≤ u_F ≤ C, y_Fᵀu_F = y_Fᵀu_F(0)} (:func:`project_box_hyperplane`) several variables
    reach their bounds at once. Up to ``_N_TRIALS`` steps between the first bound and the line
    minimum or the last bound along d, whichever is first, geometrically spaced (ratio ≥ 2),
    are scored exactly, f(u + Δ) − f(u) = ∇_FᵀΔ + ½‖Z_FᵀΔ‖², in one product; the best point is
    returned if it is lower than the clipped step, which is returned otherwise (so the step
    never does worse). Used on faces with fewer free variables than columns in the columns'
    space, and on the wider ones too for CG-Boost's kernel master (``search_wide``: with a
    quadratic kernel a column can take hundreds of one-bound steps).
    Where free variables outnumber the columns in CGENS early in a path it fixed few more per
    step and cost more than it saved (measured on liver).
    """
    # past the last bound along d every variable has left the face; far past it u + t·d loses
    # the box's digits (a ray's line minimum can be 1e24)
    t_hi = min(t_line, float(caps[np.isfinite(caps)].max()))
    if not t_hi > 2.0 * t_first:
        return clipped
    n = min(int(np.log2(t_hi / t_first)), _N_TRIALS)
    ts = np.geomspace(t_first, t_hi, n + 1)[1:]  # steps of at least 2×
    s = float(yF @ uF)
    trial = np.empty((uF.size, ts.size + 1))
    trial[:, 0] = clipped
    for j, tj in enumerate(ts, start=1):
        trial[:, j] = project_box_hyperplane(uF + tj * d, yF, C, s)
    D = trial - uF[:, None]
    V = Z.T @ D
    df = gF @ D + 0.5 * np.einsum("ij,ij->j", V, V)
    off = np.abs(yF @ trial - s) > 1e-12 * C * uF.size  # the projection lost yᵀu: not a trial
    df[1:][off[1:]] = np.inf
    best = int(np.argmin(df))
    return trial[:, best] if df[best] < df[0] else clipped


def max_violation(y: np.ndarray, u: np.ndarray, grad: np.ndarray, C: float) -> float:
    """LIBSVM's maximal violating pair gap m(u) − M(u) = max_{I_up} −y∇ + max_{I_low} y∇."""
    up = ((y > 0) & (u < C)) | ((y < 0) & (u > 0))
    low = ((y > 0) & (u > 0)) | ((y < 0) & (u < C))
    if not (up.any() and low.any()):
        return 0.0
    return float((-y * grad)[up].max() + (y * grad)[low].max())


def face_descent(
    A: np.ndarray,
    y: np.ndarray,
    u: np.ndarray,
    grad: np.ndarray,
    C: float,
    tol: float,
    gradient: Callable[[], np.ndarray],
    *,
    max_steps: int = 50,
    max_free: int = 300,
    search_wide: bool = False,
) -> int:
    """Face steps (:func:`face_step`) until one is not clipped, in place on ``u`` and ``grad``.

    A step that is not clipped ends at the optimum of the current face (or on a ray to its
    boundary, see :func:`face_step`); a clipped one fixes one more variable at a bound, so the
    next face is smaller. After each step ``grad`` is replaced by ``gradient()`` (computed afresh
    by the caller from its columns, so no drift accumulates). Stops early when the maximal
    violating pair gap is ≤ ``tol``, when a step does not move, after ``max_steps`` steps, or
    before a step that would cost more than a dense 300 × 300 solve: the step's two |F| × J
    least-squares solves take O(|F|·J·min(|F|, J)), and a step with |F|·J·min(|F|, J) >
    ``max_free``³ is left to the pair updates.

    Parameters
    ----------
    A, y, u, grad, C
        As for :func:`face_step`.
    tol : float
        Stopping tolerance on the maximal violating pair gap.
    gradient : callable
        ``gradient() -> ndarray of shape (m,)``: ∇f at the current ``u``.
    max_steps : int
        Face steps at most.
    max_free : int
        No face step while |F|·J·min(|F|, J) > ``max_free``³ (J: the columns of A).
    search_wide : bool
        Passed to :func:`face_step`.

    Returns
    -------
    int
        Face steps taken.
    """
    taken, J = 0, A.shape[1]
    for _ in range(max_steps):
        k = np.count_nonzero((u > 0.0) & (u < C))
        if k * J * min(k, J) > max_free**3:
            break
        step = face_step(A, y, u, grad, C, search_wide=search_wide)
        if not step.moved:
            break
        taken += 1
        grad[:] = gradient()
        if not step.clipped or max_violation(y, u, grad, C) <= tol:
            break
    return taken


#: the dual CD fetches the row this many places ahead in its permutation, with its α, y and Q_ii
#: (large buffers miss the caches; at 3·10⁵ rows 16 ahead beat 4 and 8, docs/performance.md)
_PREFETCH_AHEAD = 16


@numba.njit(cache=True, fastmath={"reassoc", "contract"})
def _dual_diagonal(Phi, J, bias):  # pragma: no cover - numba
    """Q_ii = bias² + Σ_k Φ_ik² over the first J columns of the buffer, in float64."""
    m = Phi.shape[0]
    qd = np.empty(m)
    for i in range(m):
        s = bias * bias
        for k in range(J):
            s += Phi[i, k] * Phi[i, k]
        qd[i] = s
    return qd


def dual_diagonal(Phi: np.ndarray, J: int, bias: float) -> np.ndarray:
    """The dual CD's Q_ii, in float32 when float32 holds every value exactly, else float64.

    Sign-valued columns give integers (plus bias² = 1), which float32 holds exactly: the same
    values in half the memory, one of the arrays the dual CD reads at a random row each step.
    """
    qd = _dual_diagonal(Phi, J, bias)
    narrow = qd.astype(np.float32)
    return narrow if np.array_equal(narrow, qd) else qd


@numba.njit(cache=True, inline="always")
def _shuffle_prefix(index, active, ring):  # pragma: no cover - numba
    """Fisher–Yates shuffle of ``index[:active]`` in place, from the global numba generator.

    The plain loop (for s: r = s + randint(active − s); swap index[s], index[r]) reads index[r]
    at a random place, a cache miss once the array outgrows the caches. Here each partner r is
    drawn ``len(ring)`` steps before its swap and its entry prefetched; the draws are the same
    calls in the same order, so the permutation is the plain loop's.
    """
    ahead = ring.shape[0]
    for t in range(min(ahead, active)):
        r = t + np.random.randint(active - t)  # noqa: NPY002
        ring[t] = r
        prefetch_entry(index, r)
    for s in range(active):
        slot = s % ahead
        r = ring[slot]
        later = s + ahead
        if later < active:
            ring[slot] = later + np.random.randint(active - later)  # noqa: NPY002
            prefetch_entry(index, ring[slot])
        tmp = index[s]
        index[s] = index[r]
        index[r] = tmp


# reassoc lets LLVM vectorise the dot-product reduction (results differ from the sequential sum only
# by rounding); no nnan/ninf: the shrinking thresholds are ±inf
@numba.njit(cache=True, fastmath={"reassoc", "contract"})
def dcd_solve(Phi, J, bias, y, alpha, w, C, tol, max_epochs, seed, qd):  # pragma: no cover
    """LIBLINEAR's dual CD for the L1-loss SVM (solve_l2r_l1l2_svc), in place on α and w.

    ``Phi`` is the C-contiguous column buffer of which the first J columns are used (a contiguous
    row lets the inner loops vectorise; a sliced view would not). The bias is ``w[J]`` with
    feature value ``bias`` (0 disables it). ``y`` may be int8 (1 byte per row read at random
    instead of 8; the same values). ``qd`` holds Q_ii = bias² + ‖Φ_i‖² (from
    :func:`dual_diagonal`), or one entry when every Q_ii equals it (±1 columns: J + bias²), which
    spares a read at a random row per step. Returns (epochs, violation, converged).
    """
    np.random.seed(seed)  # noqa: NPY002 (numba supports only the legacy global generator)
    m = Phi.shape[0]
    # int32 positions: the permutation is shuffled in place every epoch (a random access per
    # row); at 10⁶ rows the 4 MB array stays in the caches where the 8 MB int64 one did not
    index = np.arange(m).astype(np.int32)
    ring = np.empty(_PREFETCH_AHEAD, dtype=np.int64)
    line = max(1, 64 // Phi.itemsize)  # entries per cache line
    same_q = qd.shape[0] == 1  # one Q_ii for every row
    active = m
    pg_max_old = np.inf
    pg_min_old = -np.inf
    epoch = 0
    violation = np.inf
    while epoch < max_epochs:
        pg_max_new = -np.inf
        pg_min_new = np.inf
        _shuffle_prefix(index, active, ring)  # random permutation of the active set
        s = 0
        while s < active:
            if s + _PREFETCH_AHEAD < active:  # hints: change no value, only the wait
                ahead = index[s + _PREFETCH_AHEAD]
                for k in range(0, J, line):  # every cache line of the row
                    prefetch_item(Phi, ahead, k)
                if J > 1:
                    prefetch_item(Phi, ahead, J - 1)  # the last, for a row not line-aligned
                prefetch_entry(alpha, ahead)
                prefetch_entry(y, ahead)
                if not same_q:
                    prefetch_entry(qd, ahead)
            i = index[s]
            yi = float(y[i])
            dot = w[J] * bias
            for k in range(J):
                dot += w[k] * Phi[i, k]
            g = yi * dot - 1.0
            pg = 0.0
            if alpha[i] == 0.0:
                if g > pg_max_old:  # shrink
                    active -= 1
                    index[s] = index[active]
                    index[active] = i
                    continue
                elif g < 0.0:
                    pg = g
            elif alpha[i] == C:
                if g < pg_min_old:
                    active -= 1
                    index[s] = index[active]
                    index[active] = i
                    continue
                elif g > 0.0:
                    pg = g
            else:
                pg = g
            if pg > pg_max_new:
                pg_max_new = pg
            if pg < pg_min_new:
                pg_min_new = pg
            qi = qd[0] if same_q else qd[i]
            if abs(pg) > 1.0e-12 and qi > 0.0:
                old = alpha[i]
                new = old - g / qi
                if new < 0.0:
                    new = 0.0
                elif new > C:
                    new = C
                alpha[i] = new
                d = (new - old) * yi
                for k in range(J):
                    w[k] += d * Phi[i, k]
                w[J] += d * bias
            s += 1
        epoch += 1
        violation = pg_max_new - pg_min_new
        if violation <= tol:
            if active == m:
                return epoch, violation, True
            active = m  # re-check on the full set before stopping
            pg_max_old = np.inf
            pg_min_old = -np.inf
            continue
        pg_max_old = pg_max_new if pg_max_new > 0 else np.inf
        pg_min_old = pg_min_new if pg_min_new < 0 else -np.inf
    return epoch, violation, False


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


def _is_sign_valued(H: np.ndarray) -> bool:
    """All entries in {−1, 0, +1}: the columns are stored exactly as int8."""
    return bool(np.all((H == 1.0) | (H == -1.0) | (H == 0.0)))


def _is_plus_minus_one(H: np.ndarray) -> bool:
    """All entries ±1 (stumps): every row of the columns has squared norm J."""
    return bool(np.all(np.abs(H) == 1.0))


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
        if dtype != np.float64 and not _is_sign_valued(H_new):
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
