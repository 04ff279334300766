"""Perceptron learning by random coordinate descent (RCD): the AdaBoost-Perc base learner.

docs/methods/adaboost.md (after Ling Li's LEMGA ``perceptron.cpp``, training method ``RCD_BIAS``):
the perceptron h(x) = sign(w̃ᵀx̃) on augmented inputs x̃ = (x, 1) minimises the *weighted* 0/1 loss
Σ_n |y'_n| [h(x_n) ≠ sign(y'_n)] for signed sample weights y'_n = d_n y_n. Starting from
w̃ ~ U[−0.05, 0.05]^{D+1}, each of ``max_run`` updates moves w̃ along one direction u,

    w̃ ← w̃ + α* u,   α* = argmin_α Σ_n |y'_n| [sign((w̃ + αu)ᵀx̃_n) ≠ sign(y'_n)],

solved exactly: with a_n = uᵀx̃_n and z_n = w̃ᵀx̃_n / a_n the problem is a weighted decision stump
on the projected values z (:func:`exact_step`). Directions come in cycles of D+1: the bias direction
first, then D fresh random directions with i.i.d. U[−1, 1] input entries and a zero bias entry.

The sequential loop runs compiled (numba); each step is a sort plus prefix sums, O(m log m + mD).
:func:`rcd_loop` is the fused production loop (preallocated buffers, no temporaries per update);
:func:`reference_rcd_loop` chains the readable :func:`update_wgt` / :func:`exact_step` and is the
specification the fused loop is tested against, bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit

from kernbench.weak.base import Pick

#: w̃ is rescaled to unit norm when its squared norm exceeds this (LEMGA ``normalize(wgt, 1e10)``)
RESCALE_SQNORM = 1e10
#: merged groups with |Σ g| at most this fraction of Σ|g| count as empty (cancelled duplicates)
ZERO_GROUP_RTOL = 1e-12


@dataclass(frozen=True)
class Perceptron:
    """A fitted perceptron h(x) = sign(wᵀx + b), with sign(0) = +1.

    Attributes
    ----------
    w : ndarray of shape (n_features,)
        Input weights.
    b : float
        Bias (the weight of the constant input 1 in x̃ = (x, 1)).
    """

    w: np.ndarray
    b: float

    def decision_function(self, X: np.ndarray) -> np.ndarray:
        """The margin wᵀx + b of each row of ``X``."""
        return np.asarray(X, dtype=np.float64) @ self.w + self.b

    def predict(self, X: np.ndarray) -> np.ndarray:
        """±1 predictions (sign(0) = +1)."""
        return np.where(self.decision_function(X) >= 0.0, 1.0, -1.0)

    def negated(self) -> Perceptron:
        """The perceptron −h, i.e. sign(−wᵀx − b) (equal to −h except where wᵀx + b = 0)."""
        return Perceptron(w=-self.w, b=-self.b)


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
def reference_rcd_loop(
    Xa: np.ndarray, yw: np.ndarray, w0: np.ndarray, directions: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The readable reference loop: :func:`update_wgt` once per row of ``directions``.

    Same contract and, bit for bit, the same results as :func:`rcd_loop`, which is faster.
    """
    n_run = directions.shape[0]
    trace = np.empty(n_run + 1)
    w = w0.copy()
    for r in range(n_run):
        w, trace[r] = update_wgt(w, directions[r], Xa, yw)
    trace[n_run] = weighted_error(Xa @ w, yw)
    return w, trace


#: the first radix sort orders z by the top _TOP_BYTES bytes of its order-preserving key
_TOP_BYTES = 3
#: runs of equal top bytes up to this long are finished by insertion sort, longer ones by radix
_SHORT_RUN = 16
_TOP_BIT = np.uint64(1) << np.uint64(63)


@njit(cache=True)
def _sort_key(bits: np.uint64) -> np.uint64:
    """The bits of a float64 mapped to an unsigned integer in the same order (sign-magnitude)."""
    sign = bits >> np.uint64(63)
    return bits ^ ((np.uint64(0) - sign) | _TOP_BIT)  # negative: flip all; else: set the top bit


@njit(cache=True)
def _radix_pass_bytes(
    zu: np.ndarray,
    g: np.ndarray,
    zu2: np.ndarray,
    g2: np.ndarray,
    lo: int,
    hi: int,
    first: int,
    n_bytes: int,
    counts: np.ndarray,
) -> bool:
    """Stable LSD radix sort of the pairs lo..hi−1 on key bytes first..first+n_bytes−1 (byte 0 the
    least significant), ping-ponging between (``zu``, ``g``) and (``zu2``, ``g2``); a byte that
    every pair shares is skipped. Returns True when the result is in (``zu2``, ``g2``)."""
    counts[:n_bytes, :] = 0
    for i in range(lo, hi):
        key = _sort_key(zu[i])
        for q in range(n_bytes):
            counts[q, (key >> np.uint64(8 * (first + q))) & np.uint64(255)] += 1
    swapped = False
    for q in range(n_bytes):
        c = counts[q]
        shift = np.uint64(8 * (first + q))
        if c[(_sort_key(zu[lo]) >> shift) & np.uint64(255)] == hi - lo:
            continue  # one bucket holds everything: the pass would not move anything
        total = lo
        for b in range(256):
            cb = c[b]
            c[b] = total
            total += cb
        src_u, src_g, dst_u, dst_g = (zu2, g2, zu, g) if swapped else (zu, g, zu2, g2)
        for i in range(lo, hi):
            bits = src_u[i]
            b = (_sort_key(bits) >> shift) & np.uint64(255)
            pos = c[b]
            c[b] = pos + 1
            dst_u[pos] = bits
            dst_g[pos] = src_g[i]
        swapped = not swapped
    return swapped


@njit(cache=True)
def _sort_pairs(
    zu: np.ndarray, g: np.ndarray, zu2: np.ndarray, g2: np.ndarray, n: int, counts: np.ndarray
) -> bool:
    """Stable sort of the pairs (z_i, g_i), i < n, by z, with no allocation.

    ``zu`` holds the bits of z (a uint64 view of the float buffer); z must hold no −0.0 (use +0.0,
    which compares equal) and NaN only as the bit pattern of ``np.nan`` (sorted last, as numba
    does). The result is the order of ``np.argsort(z, kind="mergesort")`` exactly, found without
    comparisons (so without mispredicted branches): a least-significant-digit radix sort on the
    top ``_TOP_BYTES`` bytes of the order-preserving key, then each run of equal top bytes (almost
    all of length 1) by insertion sort if short, by radix on the remaining bytes if long, so the
    worst case stays O(n). ``zu2``/``g2`` are work buffers of the same size, ``counts`` an intp
    array of shape (8, 256). Returns True when the sorted pairs are in (``zu2``, ``g2``).
    """
    if n < 2:
        return False
    low_bytes = 8 - _TOP_BYTES
    swapped = _radix_pass_bytes(zu, g, zu2, g2, 0, n, low_bytes, _TOP_BYTES, counts)
    su, sg, tu, tg = (zu2, g2, zu, g) if swapped else (zu, g, zu2, g2)
    z = su.view(np.float64)
    shift = np.uint64(8 * low_bytes)
    start = 0
    top = _sort_key(su[0]) >> shift
    for i in range(1, n + 1):
        if i < n:
            nxt = _sort_key(su[i]) >> shift
            if nxt == top:
                continue
            top = nxt
        if i - start > _SHORT_RUN:  # a long run: radix on the low bytes, back into (su, sg)
            if _radix_pass_bytes(su, sg, tu, tg, start, i, 0, low_bytes, counts):
                su[start:i] = tu[start:i]
                sg[start:i] = tg[start:i]
        else:
            for k in range(start + 1, i):  # stable insertion sort
                zk = z[k]
                gk = sg[k]
                j = k
                while j > start and zk < z[j - 1]:
                    z[j] = z[j - 1]
                    sg[j] = sg[j - 1]
                    j -= 1
                z[j] = zk
                sg[j] = gk
        start = i
    return swapped


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


def rcd_directions(n_features: int, max_run: int, rng: np.random.Generator) -> np.ndarray:
    """The ``max_run`` RCD directions (LEMGA ``RCD_BIAS``), one per row, shape (max_run, D+1).

    Update r uses row c = (r + D) mod (D+1) of the cycle's direction set, so every cycle of D+1
    updates starts with the bias direction e_bias and continues with D fresh directions whose input
    entries are i.i.d. U[−1, 1] (neither normalised nor orthogonalised) and whose bias entry is 0.
    """
    d = n_features
    n_cycles = -(-max_run // (d + 1))
    cycles = np.zeros((n_cycles, d + 1, d + 1))
    cycles[:, 0, d] = 1.0  # c = D: the bias direction opens the cycle
    cycles[:, 1:, :d] = rng.uniform(-1.0, 1.0, size=(n_cycles, d, d))  # c = 0..D-1
    return cycles.reshape(n_cycles * (d + 1), d + 1)[:max_run]


def augment(X: np.ndarray) -> np.ndarray:
    """x̃ = (x, 1) for every row of ``X``, C-contiguous float64."""
    X = np.asarray(X, dtype=np.float64)
    return np.ascontiguousarray(np.hstack([X, np.ones((X.shape[0], 1))]))


def train_rcd_perceptron(
    X: np.ndarray,
    yw: np.ndarray,
    *,
    max_run: int = 1000,
    rng: np.random.Generator | None = None,
) -> tuple[Perceptron, np.ndarray]:
    """Train a perceptron on signed sample weights by random coordinate descent.

    Parameters
    ----------
    X : ndarray of shape (m, D)
        Training inputs.
    yw : ndarray of shape (m,)
        Signed sample weights y'_n = d_n y_n (AdaBoost: d ≥ 0 summing to 1, y ∈ {−1, +1}).
    max_run : int, default=1000
        Number of direction updates (LEMGA's default).
    rng : numpy Generator, optional
        Source of the initial weights and the directions (``default_rng()`` if None).

    Returns
    -------
    perceptron : Perceptron
    trace : ndarray of shape (max_run + 1,)
        Weighted training error Σ|y'_n|[h(x_n) ≠ sign(y'_n)] before the first update and after each.
    """
    return _train_augmented(augment(X), yw, max_run, rng)


def _train_augmented(
    Xa: np.ndarray, yw: np.ndarray, max_run: int, rng: np.random.Generator | None
) -> tuple[Perceptron, np.ndarray]:
    if rng is None:
        rng = np.random.default_rng()
    d = Xa.shape[1] - 1
    yw = np.ascontiguousarray(yw, dtype=np.float64)
    if yw.shape != (Xa.shape[0],):
        raise ValueError(f"yw has shape {yw.shape}, expected ({Xa.shape[0]},)")
    w0 = rng.uniform(-0.05, 0.05, size=d + 1)  # LEMGA Perceptron::initialize
    directions = rcd_directions(d, int(max_run), rng)
    w, trace = rcd_loop(Xa, yw, w0, directions)
    return Perceptron(w=w[:d].copy(), b=float(w[d])), trace


class RCDPerceptronSpace:
    """Perceptrons trained by RCD, behind the weak-learner oracle protocol (``weak/base.py``).

    Unlike the sampled spaces, the "oracle" here is a local search: ``best(g)`` trains a perceptron
    on the signed weights g, minimising Σ|g_i|[h(x_i) ≠ sign(g_i)], which maximises the score
    Σ g_i h(x_i) = Σ|g_i| − 2·error over what RCD reaches.

    Parameters
    ----------
    X : ndarray of shape (m, D)
        Training inputs.
    max_run : int, default=1000
        RCD updates per call.
    random_state : int or None
        Seed of the generator used when ``best`` is called without ``rng``.
    """

    def __init__(self, X: np.ndarray, max_run: int = 1000, random_state: int | None = None) -> None:
        self.Xa = augment(X)
        self.max_run = int(max_run)
        self._rng = np.random.default_rng(random_state)

    def best(
        self,
        g: np.ndarray,
        *,
        absolute: bool = False,
        exclude: Any = None,
        rng: np.random.Generator | None = None,
    ) -> Pick:
        """Train an RCD perceptron on the signed weights ``g``.

        With ``absolute=True`` the perceptron is negated when its score is negative. ``exclude`` is
        not supported (RCD cannot steer away from given columns); a non-empty one raises.
        """
        if exclude is not None and len(exclude) > 0:
            raise NotImplementedError("RCDPerceptronSpace cannot exclude columns")
        g = np.asarray(g, dtype=np.float64)
        learner, _ = _train_augmented(self.Xa, g, self.max_run, self._rng if rng is None else rng)
        column = learner.predict(self.Xa[:, :-1])
        score = float(g @ column)
        if absolute and score < 0.0:
            learner = learner.negated()
            column = learner.predict(self.Xa[:, :-1])
            score = float(g @ column)
        return Pick(learner=learner, column=column, score=score)
