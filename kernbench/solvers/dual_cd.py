"""LIBLINEAR's dual coordinate descent for the L1-loss linear SVM, compiled.

The bias is a constant feature (regularised); the dual has no equality constraint and is solved
one coordinate at a time in a random order with shrinking (:func:`dcd_solve`, LIBLINEAR's
``solve_l2r_l1l2_svc``). The rows are read in a random order: the next ones are prefetched
(:mod:`kernbench.solvers.prefetch`). Used by CGENS's restricted SVM with ``bias_mode="liblinear"``
(:mod:`kernbench.solvers.restricted_svm`).
"""

from __future__ import annotations

import numba
import numpy as np

from kernbench.solvers.prefetch import prefetch_entry, prefetch_item

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
