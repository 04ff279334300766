"""LIBLINEAR's dual CD: the same iterates with narrow labels and one diagonal entry, and its
prefetching shuffle is the plain Fisher-Yates."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from kernbench.solvers import dual_cd
from kernbench.solvers.dual_cd import dcd_solve, dual_diagonal


def test_dual_diagonal_is_float32_only_where_float32_holds_it_exactly(svm_problem, sign_problem):
    H, y = sign_problem(seed=5, J=9)
    X, _ = svm_problem(seed=5, m=H.shape[0], J=3)
    for Phi, dtype in ((H.astype(np.int8), np.float32), (H, np.float32), (X, np.float64)):
        qd = dual_diagonal(np.ascontiguousarray(Phi), Phi.shape[1], 1.0)
        assert qd.dtype == dtype
        ref = 1.0 + np.sum(Phi.astype(np.float64) ** 2, axis=1)
        if dtype == np.float32:  # integers: exact in any order
            np.testing.assert_array_equal(qd, ref)
        else:
            np.testing.assert_allclose(qd, ref, rtol=1e-14)
    # bias² = 0.09 (plus integers) needs more digits than float32 has
    assert dual_diagonal(H.astype(np.int8), H.shape[1], 0.3).dtype == np.float64


def test_dual_cd_gives_the_same_iterates_with_narrow_labels_and_diagonal(sign_problem):
    """int8 labels and the float32 Q_ii hold the float64 values exactly: every step is the same."""
    H, y = sign_problem(seed=21, J=12)
    Phi = H.astype(np.int8)
    m, J = Phi.shape
    qd = dual_diagonal(Phi, J, 1.0)
    assert qd.dtype == np.float32
    runs = []
    for labels, diag in ((y, qd.astype(np.float64)), (y.astype(np.int8), qd)):
        alpha, w = np.zeros(m), np.zeros(J + 1)
        out = dcd_solve(Phi, J, 1.0, labels, alpha, w, 0.7, 1e-6, 200, 3, diag)
        runs.append((out, alpha, w))
    assert runs[0][0] == runs[1][0]
    np.testing.assert_array_equal(runs[0][1], runs[1][1])
    np.testing.assert_array_equal(runs[0][2], runs[1][2])


def test_dual_cd_with_one_diagonal_entry_for_all_rows_takes_the_same_steps(sign_problem):
    """±1 columns give Q_ii = J + 1 for every row; passed as one entry, every step is the same."""
    H, y = sign_problem(seed=23, J=10)
    H[:3, 0] = 1.0  # no zeros: stumps
    Phi = H.astype(np.int8)
    m, J = Phi.shape
    full = dual_diagonal(Phi, J, 1.0)
    np.testing.assert_array_equal(full, J + 1.0)
    runs = []
    for diag in (full, np.array([J + 1.0], dtype=np.float32)):
        alpha, w = np.zeros(m), np.zeros(J + 1)
        out = dcd_solve(Phi, J, 1.0, y.astype(np.int8), alpha, w, 0.7, 1e-6, 200, 3, diag)
        runs.append((out, alpha, w))
    assert runs[0][0] == runs[1][0]
    np.testing.assert_array_equal(runs[0][1], runs[1][1])
    np.testing.assert_array_equal(runs[0][2], runs[1][2])


@numba.njit
def _plain_shuffles(index, active, seed, rounds):  # pragma: no cover - numba
    np.random.seed(seed)  # noqa: NPY002 (numba: the legacy generator only)
    for _ in range(rounds):
        for s in range(active):
            r = s + np.random.randint(active - s)  # noqa: NPY002
            tmp = index[s]
            index[s] = index[r]
            index[r] = tmp
    return index


@numba.njit
def _ring_shuffles(index, active, seed, rounds, ahead):  # pragma: no cover - numba
    np.random.seed(seed)  # noqa: NPY002
    ring = np.empty(ahead, dtype=np.int64)
    for _ in range(rounds):
        dual_cd._shuffle_prefix(index, active, ring)
    return index


@pytest.mark.parametrize("active", [1, 5, 16, 17, 300])
@pytest.mark.parametrize("ahead", [1, 16])
def test_shuffle_with_early_draws_is_the_plain_fisher_yates(active, ahead):
    """Drawing each partner `ahead` steps early (to prefetch it) gives the same permutations."""
    start = np.arange(400, dtype=np.int32)[::-1].copy()
    expected = _plain_shuffles(start.copy(), active, 9, 3)
    got = _ring_shuffles(start.copy(), active, 9, 3, ahead)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(got[active:], start[active:])  # the shrunk tail is untouched
