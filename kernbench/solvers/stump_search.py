"""Compiled kernels of the decision-stump oracle (kernbench.weak.stumps).

Two searches over the candidate thresholds of every feature d, each returning, for every
candidate, the score Σ_i g_i sign(x_id − t) = G − 2·G_<(t) with G = Σ_i g_i and G_<(t) the sum of
the weights of the points below the threshold:

- :func:`presorted_scores` (exact): the points of each feature were sorted once when the space was
  built; one pass per feature accumulates g in that order and writes G − 2·(running sum) at every
  cut between distinct values. The running sum is the same left-to-right sum ``np.cumsum`` takes,
  so the scores are bitwise those of the vectorised gather + cumsum formulation.
- :func:`binned_histograms` and :func:`binned_scores` (histogram): every value was replaced by its
  bin code once (:func:`bin_codes`); one pass over the rows adds g_i to its bin of every feature,
  then the bins' prefix sums give the scores at the bin boundaries. O(m·D + D·B) per call and no
  random access into g.

The kernels work on a block of independent work (features ``d0:d1`` for the exact search, a range
of fixed row chunks for the histograms, rows for the codes) and release the GIL, so that
:func:`kernbench.solvers.threads.run_blocks` can split a search over threads. A feature's running
sums are the same in any block of features, and the histogram chunks are fixed by the number of
rows and added in chunk order, so the scores are bitwise those of one thread.

Plus :func:`first_near_max`, the oracle's tie rule: the first candidate whose |score| is within
``tol`` of the maximum (:func:`presorted_scores` returns it too, without a second pass).
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def first_near_max(s, tol):  # pragma: no cover - numba
    """Index of the first entry with |s_j| ≥ max_j |s_j| − tol (``s`` non-empty): the oracle's tie
    rule ``np.argmax(np.abs(s) >= np.abs(s).max() - tol)`` in one pass.

    Invariant: M is the maximum so far and c the first index within ``tol`` of it; when M grows,
    c moves forward to the first entry within ``tol`` of the new M (no earlier entry can be), so
    c never moves back and the pass costs O(len(s)).
    """
    M = -np.inf
    c = 0
    for j in range(s.shape[0]):
        a = abs(s[j])
        if a > M:
            M = a
            while abs(s[c]) < M - tol:
                c += 1
    return c


@numba.njit(cache=True, nogil=True)
def presorted_block(
    g, order, offsets, cut_mask, G, n_const, out, write, d0, d1, feature_max
):  # pragma: no cover - numba
    """The running sums of features ``d0:d1`` (``d0`` even) of :func:`presorted_scores`.

    Writes the scores of those features' candidates into ``out`` (all of them when ``write``)
    and ``feature_max[d]``, the largest |score| of feature d (−inf without a candidate). Blocks
    of features are independent: the threads of :func:`kernbench.solvers.threads.run_blocks` take
    one each.

    Notes
    -----
    Branch-free: every sorted position writes the running score into the current slot, which is
    final once the next cut moves on to the following slot. Features go in pairs, two
    independent running sums per loop step, so the latency of one floating-point addition per
    element is paid once for two features; each sum is still taken left to right. The largest
    |score| of a feature comes from the smallest or the largest running sum at its cuts (rounding
    is monotone), so only those two are kept.
    """
    d = d0
    while d < d1:
        pair = d + 1 < d1
        k0, s0 = offsets[d] + n_const, offsets[d + 1] + n_const
        k1, s1 = (offsets[d + 1] + n_const, offsets[d + 2] + n_const) if pair else (0, 0)
        a0, lo0, hi0 = 0.0, np.inf, -np.inf
        a1, lo1, hi1 = 0.0, np.inf, -np.inf
        r = 0
        while k0 < s0 and k1 < s1:  # both features have cuts ahead: one step of each
            a0 += g[order[d, r]]
            a1 += g[order[d + 1, r]]
            if write:
                out[k0] = G - 2.0 * a0  # score = G − 2·G_<(t)
                out[k1] = G - 2.0 * a1
            c0 = cut_mask[d, r]
            c1 = cut_mask[d + 1, r]
            if c0 and a0 < lo0:
                lo0 = a0
            if c0 and a0 > hi0:
                hi0 = a0
            if c1 and a1 < lo1:
                lo1 = a1
            if c1 and a1 > hi1:
                hi1 = a1
            k0 += c0
            k1 += c1
            r += 1
        r0 = r
        while k0 < s0:  # the rest of feature d
            a0 += g[order[d, r0]]
            if write:
                out[k0] = G - 2.0 * a0
            c0 = cut_mask[d, r0]
            if c0 and a0 < lo0:
                lo0 = a0
            if c0 and a0 > hi0:
                hi0 = a0
            k0 += c0
            r0 += 1
        r1 = r
        while k1 < s1:  # the rest of feature d + 1
            a1 += g[order[d + 1, r1]]
            if write:
                out[k1] = G - 2.0 * a1
            c1 = cut_mask[d + 1, r1]
            if c1 and a1 < lo1:
                lo1 = a1
            if c1 and a1 > hi1:
                hi1 = a1
            k1 += c1
            r1 += 1
        feature_max[d] = -np.inf
        if offsets[d] < offsets[d + 1]:
            feature_max[d] = max(abs(G - 2.0 * lo0), abs(G - 2.0 * hi0))
        if pair:
            feature_max[d + 1] = -np.inf
            if offsets[d + 1] < offsets[d + 2]:
                feature_max[d + 1] = max(abs(G - 2.0 * lo1), abs(G - 2.0 * hi1))
        d += 2


@numba.njit(cache=True, nogil=True)
def presorted_pick(
    g, order, offsets, cut_mask, G, n_const, tol, out, write, feature_max
):  # pragma: no cover - numba
    """``first_near_max(out, tol)`` once :func:`presorted_block` has run over every feature:
    only the first feature whose maximum is within ``tol`` of the overall one is scanned (with
    ``write=False`` by recomputing its running sums, which gives bitwise the same scores)."""
    D = order.shape[0]
    M = -np.inf
    if n_const:
        out[0] = G
        M = abs(G)
    for d in range(D):
        M = max(M, feature_max[d])
    floor = M - tol
    if n_const and abs(G) >= floor:
        return 0
    for d in range(D):
        if feature_max[d] >= floor:
            k = offsets[d] + n_const
            stop = offsets[d + 1] + n_const
            if write:
                for j in range(k, stop):
                    if abs(out[j]) >= floor:
                        return j
            r = 0
            acc = 0.0
            while k < stop:  # the same running sums again, compared at the cuts
                acc += g[order[d, r]]
                if cut_mask[d, r]:
                    score = G - 2.0 * acc
                    if abs(score) >= floor:
                        out[k] = score
                        return k
                    k += 1
                r += 1
    return 0


@numba.njit(cache=True, nogil=True)
def presorted_scores(
    g, order, offsets, cut_mask, G, n_const, tol, out, write=True
):  # pragma: no cover
    """Exact scores of every stump candidate for the weights ``g`` (shape (m,)), into ``out``,
    in one thread (:func:`presorted_block` over every feature, then :func:`presorted_pick`).

    Parameters
    ----------
    g : float64 array (m,)
    order : int array (D, m)
        ``order[d]`` sorts feature d (stable).
    offsets : int64 array (D + 1,)
        Candidates of feature d are split candidates ``offsets[d]:offsets[d + 1]``.
    cut_mask : uint8 array (D, m)
        1 where a cut follows sorted position r of feature d (a distinct value comes next).
    G : float
        Σ_i g_i.
    n_const : int
        1 when ``out[0]`` is the constant candidate (score G), else 0.
    tol : float
        Tie tolerance of the returned index.
    out : float64 array (n_const + n_split,), non-empty
    write : bool
        False: only ``out[index]`` is written (the oracle needs no other score; saves the
        memory traffic of writing them all).

    Returns
    -------
    int
        ``first_near_max(out, tol)``, found without a second pass over ``out``.
    """
    D = order.shape[0]
    feature_max = np.empty(D)
    presorted_block(g, order, offsets, cut_mask, G, n_const, out, write, 0, D, feature_max)
    return presorted_pick(g, order, offsets, cut_mask, G, n_const, tol, out, write, feature_max)


@numba.njit(cache=True, nogil=True)
def presorted_scores_many(g, order, offsets, cut_mask, G, n_const, out, d0, d1):  # pragma: no cover
    """:func:`presorted_scores` for K weight vectors at once, features ``d0:d1``: ``g`` (m, K),
    ``G`` (K,), ``out`` (n_const + n_split, K); no tie index. The block starting at feature 0
    writes the constant candidate's row."""
    K = g.shape[1]
    acc = np.empty(K)
    if n_const and d0 == 0:
        for c in range(K):
            out[0, c] = G[c]
    for d in range(d0, d1):
        k = offsets[d] + n_const
        stop = offsets[d + 1] + n_const
        acc[:] = 0.0
        r = 0
        while k < stop:
            i = order[d, r]
            for c in range(K):
                acc[c] += g[i, c]
                out[k, c] = G[c] - 2.0 * acc[c]
            k += cut_mask[d, r]
            r += 1


@numba.njit(cache=True, nogil=True)
def gather_columns(X, rows, d0, d1, out):  # pragma: no cover - numba
    """``out[d − d0, j] = X[rows[j], d]`` for the features ``d0:d1``: the values of the sampled
    rows, one row of ``out`` per feature (gathered and transposed in one pass)."""
    for j in range(rows.shape[0]):
        r = rows[j]
        for d in range(d0, d1):
            out[d - d0, j] = X[r, d]


@numba.njit(cache=True, nogil=True)
def bin_codes(X, padded, codes, r0, r1):  # pragma: no cover - numba
    """Bin codes of rows ``r0:r1``: ``codes[d, i]`` = #{k : t_k ≤ X[i, d]} over feature d's
    sorted thresholds, so that x ≥ t_k exactly when the code exceeds k. ``padded`` (D, 256)
    holds each feature's thresholds (at most 255) followed by +inf; ``codes`` is (D, m), one
    row per feature. Row blocks are independent.

    Notes
    -----
    A binary search of eight fixed steps without branches (each step adds its half-width when the
    threshold just below it is ≤ x): the searches of a row's features do not wait on each other.
    """
    D = X.shape[1]
    for i in range(r0, r1):
        for d in range(D):
            x = X[i, d]
            t = padded[d]
            b = 128 * (t[127] <= x)
            b += 64 * (t[b + 63] <= x)
            b += 32 * (t[b + 31] <= x)
            b += 16 * (t[b + 15] <= x)
            b += 8 * (t[b + 7] <= x)
            b += 4 * (t[b + 3] <= x)
            b += 2 * (t[b + 1] <= x)
            b += t[b] <= x
            codes[d, i] = b


@numba.njit(cache=True, nogil=True)
def binned_histograms(g, codes, chunk_starts, hists, c0, c1):  # pragma: no cover - numba
    """Per-chunk histograms of chunks ``c0:c1``: ``hists[c, d, b]`` = Σ g_i over the rows
    ``chunk_starts[c]:chunk_starts[c + 1]`` whose code ``codes[d, i]`` is b, summed in row order.
    Chunks are independent: the threads of :func:`kernbench.solvers.threads.run_blocks` take a
    range of them each.

    Notes
    -----
    Four features per pass over a chunk's rows: the four bins updated per row are independent
    additions, so their latencies overlap, while the chunk's weights stay in cache for the next
    four features.
    """
    D = codes.shape[0]
    for c in range(c0, c1):
        h = hists[c]
        h[:, :] = 0.0
        lo, hi = chunk_starts[c], chunk_starts[c + 1]
        d = 0
        while d + 3 < D:
            h0, h1, h2, h3 = h[d], h[d + 1], h[d + 2], h[d + 3]
            k0, k1, k2, k3 = codes[d], codes[d + 1], codes[d + 2], codes[d + 3]
            for i in range(lo, hi):
                gi = g[i]
                h0[k0[i]] += gi
                h1[k1[i]] += gi
                h2[k2[i]] += gi
                h3[k3[i]] += gi
            d += 4
        while d < D:
            hd, kd = h[d], codes[d]
            for i in range(lo, hi):
                hd[kd[i]] += g[i]
            d += 1


@numba.njit(cache=True, nogil=True)
def binned_scores(hists, offsets, G, n_const, out):  # pragma: no cover - numba
    """Histogram scores from the chunks' histograms of :func:`binned_histograms`: each bin's
    chunk sums are added in chunk order (into ``hists[0]``), then each feature's prefix sums over
    its bins give the scores at its cuts; feature d has ``offsets[d+1] − offsets[d]`` cuts (one
    bin more). ``out`` as in :func:`presorted_scores` (``out[0]``: the constant candidate when
    ``n_const``).
    """
    n_chunks, D = hists.shape[0], hists.shape[1]
    total = hists[0]
    for c in range(1, n_chunks):
        part = hists[c]
        for d in range(D):
            for b in range(offsets[d + 1] - offsets[d]):
                total[d, b] += part[d, b]
    if n_const:
        out[0] = G
    for d in range(D):
        acc = 0.0
        for k in range(offsets[d], offsets[d + 1]):
            acc += total[d, k - offsets[d]]
            out[n_const + k] = G - 2.0 * acc


@numba.njit(cache=True, nogil=True)
def binned_column(codes, d, k, sign, g, out):  # pragma: no cover - numba
    """The training column of feature d's cut k (local index) with polarity ``sign``:
    ``out[i] = sign`` where x_id ≥ t_k (``codes[d, i] > k``), else −sign. Returns its score
    Σ_i g_i out_i (summed in row order; 0 when ``g`` is empty), without a BLAS dot product,
    whose threads cost more to wake than the sum on a busy machine."""
    acc = 0.0
    weighted = g.shape[0] > 0
    kd = codes[d]
    for i in range(kd.shape[0]):
        v = sign if kd[i] > k else -sign
        out[i] = v
        if weighted:
            acc += v * g[i]
    return acc
