"""Column groups of stump candidates: equal ids exactly for equal training columns."""

import numpy as np
import pytest

from kernbench.weak.column_groups import stump_column_groups
from kernbench.weak.stumps import StumpSpace


@pytest.mark.parametrize("include_constant", [False, True])
def test_groups_match_explicit_column_comparison(include_constant):
    rng = np.random.default_rng(0)
    X = rng.integers(0, 4, size=(25, 4)).astype(float)  # few values: many duplicate columns
    X[:, 3] = -X[:, 0]  # a mirrored feature gives negated columns
    space = StumpSpace(X, include_constant=include_constant)
    cols = np.array([space.column(i) for i in range(space.n_candidates)])
    unsigned = stump_column_groups(space, signed=False)
    signed = stump_column_groups(space, signed=True)
    n = space.n_candidates
    assert unsigned.shape == (n,) and signed.shape == (2 * n,)
    signed_cols = np.vstack([cols, -cols])
    for i in range(n):
        for j in range(n):
            same_up_to_sign = np.array_equal(cols[i], cols[j]) or np.array_equal(cols[i], -cols[j])
            assert (unsigned[i] == unsigned[j]) == same_up_to_sign
    for i in range(2 * n):
        for j in range(2 * n):
            assert (signed[i] == signed[j]) == np.array_equal(signed_cols[i], signed_cols[j])
    assert len(np.unique(unsigned)) < n  # the data does create duplicates
