"""Steps on the face of the free variables of an SVM dual, where pairwise updates stall.

The dual min f(u) = ½uᵀQu − 1ᵀu, 0 ≤ u ≤ C, yᵀu = 0 with Q = ZZᵀ, Z = y∘A: when more u are
free than the columns A have rank, the pair updates of SMO crawl along flat directions.
:func:`face_step` moves all free u at once (a Newton step on the face, or a zero-curvature ray
when the face is unbounded); :func:`face_descent` repeats it until a step is not clipped.
:func:`project_box_hyperplane` is the projection onto the dual's feasible set the projected
search uses (and CG-Boost's interior point hands over through).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import scipy.linalg

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
    rank-revealing least-squares solves (LAPACK gelsy), slower (benchmarks/logs/performance.md,
    section 6)."""
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
