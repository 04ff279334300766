"""The prefetch hint compiles into numba loops and changes no value."""

from __future__ import annotations

import numba
import numpy as np

from kernbench.solvers.prefetch import prefetch_row


@numba.njit
def _row_sums(A, order, ahead):  # pragma: no cover - numba
    out = np.zeros(A.shape[0])
    for s in range(order.shape[0]):
        if ahead > 0 and s + ahead < order.shape[0]:
            prefetch_row(A, order[s + ahead])
        i = order[s]
        for k in range(A.shape[1]):
            out[i] += A[i, k]
    return out


def test_prefetching_rows_changes_no_value():
    rng = np.random.default_rng(0)
    for dtype in (np.int8, np.float64):
        A = rng.integers(-3, 4, size=(500, 17)).astype(dtype)
        order = rng.permutation(500)
        expected = A.sum(axis=1, dtype=np.float64)
        for ahead in (0, 1, 4, 64):
            np.testing.assert_array_equal(_row_sums(A, order, ahead), expected)
