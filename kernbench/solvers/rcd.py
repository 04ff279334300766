"""Perceptron learning by random coordinate descent (RCD), compiled: the exact line search along
one direction and the fused loop over ``max_run`` directions.

The perceptron h(x) = sign(w̃ᵀx̃) on augmented inputs x̃ = (x, 1) minimises the weighted 0/1 loss
Σ_n |y'_n| [h(x_n) ≠ sign(y'_n)]. Each update moves w̃ along one direction u by the exact
minimiser α* of that loss (:func:`exact_step`: a weighted decision stump on z_n = w̃ᵀx̃_n / uᵀx̃_n).
:func:`rcd_loop` is the production loop (preallocated buffers, the radix sort of
:mod:`kernbench.solvers.radix_sort`); :func:`kernbench.solvers.rcd_reference.reference_rcd_loop`
chains the readable :func:`update_wgt` and is the specification it is tested against, bit for
bit. The learner and its oracle space are in :mod:`kernbench.weak.rcd_perceptron`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from kernbench.solvers.radix_sort import _sort_pairs

#: w̃ is rescaled to unit norm when its squared norm exceeds this (LEMGA ``normalize(wgt, 1e10)``)
RESCALE_SQNORM = 1e10
#: merged groups with |Σ g| at most this fraction of Σ|g| count as empty (cancelled duplicates)
ZERO_GROUP_RTOL = 1e-12


@njit(cache=True)
def weighted_error(margin: np.ndarray, yw: np.ndarray) -> float:
    """Σ_n |yw_n| [sign(margin_n) ≠ sign(yw_n)], with sign(0) = +1 for the margin."""
    wrong = (margin >= 0.0) != (yw > 0.0)
    return float(np.sum(np.abs(yw) * (wrong & (yw != 0.0))))


@njit(cache=True)
def exact_step(z: np.ndarray, g: np.ndarray) -> tuple[float, float]:
    """Exact weighted 1-D step: the threshold t minimising Σ_n |g_n| [sign(z_n − t) ≠ sign(g_n)].

    Points with equal z have their g merged; merged groups whose weight cancels are dropped (as
    LEMGA's ``Stump::train_1d`` does). The candidates are the midpoints between consecutive
    remaining z values plus one sentinel below the smallest and one above the largest (at
    distance 1); the first minimiser in increasing order of t is returned.

    Parameters
    ----------
    z : ndarray of shape (n,)
        Projected values z_n = w̃ᵀx̃_n / uᵀx̃_n.
    g : ndarray of shape (n,)
        Signed weights sign(uᵀx̃_n) · y'_n.

    Returns
    -------
    t : float
        The chosen threshold; the step is α* = −t.
    err : float
        The minimal weighted error over the given points.
    """
    n = z.size
    neg_total = float(np.sum(np.abs(g) * (g < 0.0)))  # error of t below all z: every g < 0 wrong
    if n == 0:
        return 0.0, neg_total
    # stable: equal z are merged below, and a fixed order within a group (index order) fixes the
    # rounding of its sum, so the result does not depend on the sort algorithm (see rcd_loop)
    order = np.argsort(z, kind="mergesort")
    zs = z[order]
    csum = np.cumsum(g[order])
    # merge equal z: the last index of each run of equal values
    is_last = np.ones(n, dtype=np.bool_)
    is_last[:-1] = zs[1:] != zs[:-1]
    ends = np.flatnonzero(is_last)
    z_grp = zs[ends]
    c_end = csum[ends]
    g_grp = c_end.copy()
    g_grp[1:] -= c_end[:-1]
    keep = np.abs(g_grp) > ZERO_GROUP_RTOL * np.sum(np.abs(g))
    z_grp = z_grp[keep]
    g_grp = g_grp[keep]
    k = z_grp.size
    if k == 0:
        return 0.0, neg_total
    # err(t_j) = Σ_{g<0}|g| + Σ_{groups below t_j} G: passing a group with G > 0 makes it wrong
    prefix = np.empty(k + 1)
    prefix[0] = 0.0
    prefix[1:] = np.cumsum(g_grp)
    j = int(np.argmin(prefix))  # first minimiser
    if j == 0:
        t = z_grp[0] - 1.0
        if t == z_grp[0]:  # |z| beyond 2**53: keep the sentinel strictly below
            t = z_grp[0] - abs(z_grp[0]) * 1e-12
    elif j == k:
        t = z_grp[k - 1] + 1.0
        if t == z_grp[k - 1]:
            t = z_grp[k - 1] + abs(z_grp[k - 1]) * 1e-12
    else:
        t = 0.5 * (z_grp[j - 1] + z_grp[j])
    return t, neg_total + prefix[j]


@njit(cache=True)
def _project(Xa: np.ndarray, u: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(Xa u, Xa w) in one pass over Xa (faster than two BLAS gemv calls at m ~ 10^2-10^3)."""
    m, p = Xa.shape
    a = np.empty(m)
    o = np.empty(m)
    for n in range(m):
        sa = 0.0
        so = 0.0
        for k in range(p):
            sa += Xa[n, k] * u[k]
            so += Xa[n, k] * w[k]
        a[n] = sa
        o[n] = so
    return a, o


@njit(cache=True)
def update_wgt(
    w: np.ndarray, u: np.ndarray, Xa: np.ndarray, yw: np.ndarray
) -> tuple[np.ndarray, float]:
    """One RCD update of w̃ along u: the exact 1-D step and the rescaling.

    Parameters
    ----------
    w : ndarray of shape (D+1,)
        Current augmented weights (not modified).
    u : ndarray of shape (D+1,)
        Direction.
    Xa : ndarray of shape (m, D+1)
        Augmented inputs x̃_n = (x_n, 1).
    yw : ndarray of shape (m,)
        Signed sample weights y'_n = d_n y_n.

    Returns
    -------
    w_new : ndarray of shape (D+1,)
        w̃ + α*u, rescaled to unit norm when its squared norm exceeds 1e10. The step is kept only
        if it does not increase the weighted error; it can only fail to when some w̃ᵀx̃_n = 0
        exactly, where sign(0) = +1 places the current w̃ on a candidate threshold.
    err_before : float
        The weighted error of ``w`` (before the update).
    """
    a, o = _project(Xa, u, w)  # a_n = uᵀx̃_n, o_n = w̃ᵀx̃_n
    err_before = weighted_error(o, yw)
    moving = a != 0.0  # points with a_n = 0 are unaffected by the step
    z = o[moving] / a[moving]
    g = np.sign(a[moving]) * yw[moving]
    t, err_moving = exact_step(z, g)
    fixed = ~moving
    err_after = err_moving + weighted_error(o[fixed], yw[fixed])
    if err_after > err_before + 1e-12 * np.sum(np.abs(yw)):
        return w.copy(), err_before
    w_new = w - t * u  # α* = −t*
    sq = float(np.dot(w_new, w_new))
    if sq > RESCALE_SQNORM:
        w_new = w_new / np.sqrt(sq)
    return w_new, err_before


@njit(cache=True)
def rcd_loop(
    Xa: np.ndarray, yw: np.ndarray, w0: np.ndarray, directions: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Run the RCD updates along ``directions`` (one row per update) from ``w0``.

    Fused form of :func:`reference_rcd_loop` (same floating-point operations in the same order, so
    the same weights and trace bit for bit): work buffers are allocated once per run, and each
    update is one projection pass (a_n, o_n), one pass that forms the moving points' (z_n, g_n)
    with the error before the update and the error of the fixed points, an in-place sort of the
    pairs, and one pass over the sorted pairs that merges equal z, drops cancelled groups and
    tracks the prefix error and its first minimiser (:func:`exact_step`).

    Returns
    -------
    w : ndarray of shape (D+1,)
        The final w̃.
    trace : ndarray of shape (len(directions) + 1,)
        The weighted error before the first update and after every update.
    """
    m, p = Xa.shape
    n_run = directions.shape[0]
    trace = np.empty(n_run + 1)
    w = w0.copy()
    XaT = np.ascontiguousarray(Xa.T)  # the projection runs over n, contiguous
    a = np.empty(m)
    o = np.empty(m)
    z_buf = np.empty(m)
    g_buf = np.empty(m)
    z_tmp = np.empty(m)
    g_tmp = np.empty(m)
    zu_buf = z_buf.view(np.uint64)
    zu_tmp = z_tmp.view(np.uint64)
    counts = np.empty((8, 256), dtype=np.intp)
    slack = 1e-12 * np.sum(np.abs(yw))  # the "does not increase the error" tolerance
    for r in range(n_run):
        u = directions[r]
        # a_n = uᵀx̃_n, o_n = w̃ᵀx̃_n, each summed over k in order (as _project)
        for n in range(m):
            a[n] = 0.0
            o[n] = 0.0
        for k in range(p):
            uk = u[k]
            wk = w[k]
            for n in range(m):
                x = XaT[k, n]
                a[n] += x * uk
                o[n] += x * wk
        # errors before the step and of the points it cannot move; (z, g) of those it moves
        err_before = 0.0
        err_fixed = 0.0
        neg_total = 0.0  # Σ_{g<0} |g|: the error below every z
        abs_total = 0.0  # Σ |g|, the scale of ZERO_GROUP_RTOL
        n_moving = 0
        for n in range(m):
            y = yw[n]
            wrong = ((o[n] >= 0.0) != (y > 0.0)) & (y != 0.0)
            err_before += abs(y) * wrong  # the terms of weighted_error, without branches
            if a[n] != 0.0:
                gn = np.sign(a[n]) * y
                # −0.0 → +0.0: equal under <, so they must sort as equal (no threshold changes:
                # ±0 − 1, ±0 + 1 and (±0 + z)/2 for z ≠ 0 do not depend on the sign of zero)
                zn = o[n] / a[n] + 0.0
                z_buf[n_moving] = zn if zn == zn else np.nan  # one NaN bit pattern (sorts last)
                g_buf[n_moving] = gn
                abs_total += abs(gn)
                neg_total += abs(gn) * (gn < 0.0)
                n_moving += 1
            else:
                err_fixed += abs(y) * wrong
        if _sort_pairs(zu_buf, g_buf, zu_tmp, g_tmp, n_moving, counts):
            z, g = z_tmp, g_tmp
        else:
            z, g = z_buf, g_buf
        # one pass: merge equal z, drop cancelled groups, prefix error and its first minimiser
        tol = ZERO_GROUP_RTOL * abs_total
        csum = 0.0  # cumsum of the sorted g
        csum_end = 0.0  # csum at the end of the previous group
        prefix = 0.0  # Σ G over the kept groups so far
        best = 0.0  # prefix[j], j = 0 before any group
        j = 0
        k_kept = 0
        z_first = 0.0
        z_lo = 0.0  # z of kept group j - 1
        z_hi = 0.0  # z of kept group j
        want_hi = False
        nan_seen = False  # np.argmin returns the first NaN
        for i in range(n_moving):
            csum += g[i]
            if i == n_moving - 1 or z[i + 1] != z[i]:
                G = csum - csum_end
                csum_end = csum
                if abs(G) > tol:
                    zi = z[i]
                    if k_kept == 0:
                        z_first = zi
                    if want_hi:
                        z_hi = zi
                        want_hi = False
                    k_kept += 1
                    prefix += G
                    if not nan_seen and (prefix < best or np.isnan(prefix)):
                        nan_seen = np.isnan(prefix)
                        best = prefix
                        j = k_kept
                        z_lo = zi
                        want_hi = True
        if k_kept == 0:
            t = 0.0
        elif j == 0:
            t = z_first - 1.0
            if t == z_first:  # |z| beyond 2**53: keep the sentinel strictly below
                t = z_first - abs(z_first) * 1e-12
        elif j == k_kept:
            t = z_lo + 1.0
            if t == z_lo:
                t = z_lo + abs(z_lo) * 1e-12
        else:
            t = 0.5 * (z_lo + z_hi)
        err_after = (neg_total + best) + err_fixed
        trace[r] = err_before
        if err_after > err_before + slack:
            continue  # the step would increase the error: keep w̃
        for k in range(p):
            w[k] = w[k] - t * u[k]  # α* = −t*
        sq = float(np.dot(w, w))
        if sq > RESCALE_SQNORM:
            s = np.sqrt(sq)
            for k in range(p):
                w[k] = w[k] / s
    trace[n_run] = weighted_error(Xa @ w, yw)
    return w, trace
