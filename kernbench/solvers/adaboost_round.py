"""Compiled per-round updates of discrete AdaBoost (kernbench.methods.adaboost), bitwise numpy's.

A round after the weak-learner search updates length-m vectors: the weighted error, the
reweighting, the normalisation, the ensemble output and its training error. Written with numpy,
that is about fifteen calls, each allocating a temporary. The two kernels here do the same
arithmetic in two passes without temporaries, and every sum is taken in
the order numpy takes it (:func:`pairwise_sum`), so the weights, α and the picks are bitwise those
of the numpy formulation (tests/solvers/test_adaboost_round.py).
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def _block_sum(a, lo, n):  # pragma: no cover - numba
    """numpy's sum of a block of n ≤ 128 terms ``a[lo:lo + n]``: below 8 terms left to right,
    else eight interleaved accumulators combined as ((r0 + r1) + (r2 + r3)) + ((r4 + r5) +
    (r6 + r7)), then the remaining n mod 8 terms."""
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    i = 8
    stop = n - n % 8
    while i < stop:
        j = lo + i
        r0 += a[j]
        r1 += a[j + 1]
        r2 += a[j + 2]
        r3 += a[j + 3]
        r4 += a[j + 4]
        r5 += a[j + 5]
        r6 += a[j + 6]
        r7 += a[j + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@numba.njit(cache=True)
def pairwise_sum(a):  # pragma: no cover - numba
    """``a.sum()`` of a contiguous float64 vector, bitwise as numpy computes it (numpy's
    ``pairwise_sum``): blocks of at most 128 terms by :func:`_block_sum`; a longer range is split
    into two halves, the first a multiple of 8 terms, whose sums are added. The recursion runs on
    an explicit stack (numba's on-disk cache does not hold recursive functions safely)."""
    n = a.shape[0]
    if n <= 128:
        return _block_sum(a, 0, n)
    lo_s = np.empty(64, dtype=np.int64)  # frames: range start, length, stage (0, 1, 2)
    n_s = np.empty(64, dtype=np.int64)
    st_s = np.empty(64, dtype=np.int64)
    vals = np.empty(64)
    top, nv = 1, 0
    lo_s[0], n_s[0], st_s[0] = 0, n, 0
    while top > 0:
        f = top - 1
        lo, k, st = lo_s[f], n_s[f], st_s[f]
        if k <= 128:
            vals[nv] = _block_sum(a, lo, k)
            nv += 1
            top -= 1
            continue
        half = k // 2
        half -= half % 8
        if st == 0:  # first half
            st_s[f] = 1
            lo_s[top], n_s[top], st_s[top] = lo, half, 0
            top += 1
        elif st == 1:  # second half
            st_s[f] = 2
            lo_s[top], n_s[top], st_s[top] = lo + half, k - half, 0
            top += 1
        else:  # both done: first + second
            vals[nv - 2] = vals[nv - 2] + vals[nv - 1]
            nv -= 1
            top -= 1
    return vals[0]


@numba.njit(cache=True)
def weighted_error(d, y, h, scratch):  # pragma: no cover - numba
    """ε = ``d[y * h < 0].sum()``: the misclassified weights are gathered in order into
    ``scratch`` (length ≥ m) and summed as numpy sums them. The gather has no branch (every
    weight is written, the slot advances on a mistake): mistakes are unpredictable."""
    n = 0
    for i in range(d.shape[0]):
        scratch[n] = d[i]
        n += y[i] * h[i] < 0.0
    return pairwise_sum(scratch[:n])


@numba.njit(cache=True)
def reweight(d, y, h, up, down, F, alpha, y_pos):  # pragma: no cover - numba
    """One AdaBoost update in place; returns (Z, number of training errors of the new F).

    ``d ← d·exp(−α y h)`` for outputs h_i ∈ {−1, 0, +1}: ``up`` = e^α where y_i h_i < 0,
    ``down`` = e^(−α) where y_i h_i > 0 (numpy's exponentials of ±α, passed in: the same values
    numpy's vector exp gives) and 1 where h_i = 0; ``Z = Σ d``, ``d ← d / Z``, ``F ← F + α·h``
    and the count of ``(F ≥ 0) ≠ y_pos`` (sign(0) = +1).
    """
    m = d.shape[0]
    for i in range(m):
        yh = y[i] * h[i]
        # a select, not a branch (mistakes are unpredictable); d·1 = d exactly where h_i = 0
        d[i] = d[i] * (up if yh < 0.0 else (down if yh > 0.0 else 1.0))
    Z = pairwise_sum(d)
    errors = 0
    for i in range(m):
        d[i] = d[i] / Z
        F[i] = F[i] + alpha * h[i]
        errors += (F[i] >= 0.0) != y_pos[i]
    return Z, errors
