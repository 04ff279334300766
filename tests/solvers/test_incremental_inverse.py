"""Sherman–Morrison (20) and the Woodbury form against the direct inverse
(docs/methods/column_generation.md)."""

import numpy as np
import pytest

from kernbench.solvers.incremental_inverse import (
    ShermanMorrisonInverse,
    WoodburyInverse,
    make_inverse,
)


def _rel_fro(A, B):
    return np.linalg.norm(A - B) / np.linalg.norm(B)


@pytest.mark.parametrize("C", [0.01, 1.0, 1000.0])
@pytest.mark.parametrize("cls", [ShermanMorrisonInverse, WoodburyInverse])
def test_after_each_of_50_columns_equals_direct_inverse(cls, C):
    rng = np.random.default_rng(0)
    m = 200
    inv = cls(m, C) if cls is ShermanMorrisonInverse else cls(m, C, capacity=3)  # forces growth
    rows = []
    for j in range(50):
        h = rng.choice([-1.0, 1.0], m)
        check = j % 7 == 0 or j == 49
        S_old = inv.dense() if check else None
        s, denom = inv.add_column(h)
        rows.append(h)
        if check:
            np.testing.assert_allclose(s, S_old @ h, rtol=1e-9, atol=1e-12 * C)
            assert denom == pytest.approx(1.0 + h @ S_old @ h, rel=1e-9)
            H = np.array(rows)
            direct = np.linalg.inv(H.T @ H + np.eye(m) / C)
            assert _rel_fro(inv.dense(), direct) < 1e-8
    assert inv.n_columns == 50


def test_apply_matches_dense_on_blocks_and_vectors():
    rng = np.random.default_rng(3)
    m, C = 50, 5.0
    wb = WoodburyInverse(m, C)
    V = rng.normal(size=(m, 4))
    np.testing.assert_allclose(wb.apply(V), C * V)  # J = 0: S⁻¹ = C·I
    for _ in range(10):
        wb.add_column(rng.choice([-1.0, 1.0], m))
    np.testing.assert_allclose(wb.apply(V), wb.dense() @ V, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(wb.apply(V[:, 0]), wb.dense() @ V[:, 0], rtol=1e-10, atol=1e-10)


def test_repeated_column_keeps_woodbury_positive_definite():
    rng = np.random.default_rng(4)
    m, C = 30, 100.0
    wb, sm = WoodburyInverse(m, C), ShermanMorrisonInverse(m, C)
    h = rng.choice([-1.0, 1.0], m)
    for _ in range(3):  # the same column three times: HHᵀ singular, M = I + C·HHᵀ is not
        wb.add_column(h)
        sm.add_column(h)
    H = np.array([h, h, h])
    direct = np.linalg.inv(H.T @ H + np.eye(m) / C)
    assert _rel_fro(wb.dense(), direct) < 1e-8
    assert _rel_fro(sm.dense(), direct) < 1e-8


def test_make_inverse_auto_rule():
    assert isinstance(make_inverse("auto", 1000, 1.0, max_columns=500), WoodburyInverse)
    assert isinstance(make_inverse("auto", 100, 1.0, max_columns=500), ShermanMorrisonInverse)
    assert isinstance(make_inverse("woodbury", 10, 1.0, max_columns=500), WoodburyInverse)
    with pytest.raises(ValueError, match="unknown inverse kind"):
        make_inverse("cholesky", 10, 1.0, max_columns=5)
