"""The prefetch hints compile into numba loops and change no value."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from kernbench.solvers.prefetch import prefetch_entry, prefetch_item


@numba.njit
def _row_sums(A, v, order, ahead):  # pragma: no cover - numba
    out = np.zeros(A.shape[0])
    for s in range(order.shape[0]):
        if ahead > 0 and s + ahead < order.shape[0]:
            nxt = order[s + ahead]
            for k in range(A.shape[1]):  # every entry: every line of the row
                prefetch_item(A, nxt, k)
            prefetch_entry(v, nxt)
        i = order[s]
        for k in range(A.shape[1]):
            out[i] += A[i, k]
        out[i] *= v[i]
    return out


@pytest.mark.parametrize("dtype", [np.int8, np.float64])
def test_prefetching_changes_no_value(dtype):
    rng = np.random.default_rng(0)
    A = rng.integers(-3, 4, size=(500, 150)).astype(dtype)  # int8 rows span 3 cache lines
    v = rng.integers(1, 5, size=500).astype(np.float64)
    order = rng.permutation(500)
    expected = A.sum(axis=1, dtype=np.float64) * v
    for ahead in (0, 1, 4, 64):
        np.testing.assert_array_equal(_row_sums(A, v, order, ahead), expected)
