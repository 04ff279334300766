"""A stable sort of (key, value) float pairs by an LSD radix sort on order-preserving integer keys,
allocation-free and compiled: the inner sort of the RCD perceptron's exact line search
(:mod:`kernbench.solvers.rcd`), which sorts m projected values at every update.

The top bytes of each key are sorted first; runs of equal top bytes are short almost always and
are finished by insertion sort, longer ones by further radix passes.
"""

from __future__ import annotations

import numpy as np
from numba import njit

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
