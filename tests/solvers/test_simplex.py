"""Simplex coding and the SLS closed form (11) against independent computations
(docs/methods/column_generation.md)."""

import numpy as np
import pytest

from kernbench.solvers.incremental_inverse import ShermanMorrisonInverse
from kernbench.solvers.simplex import simplex_code, simplex_labels, sls_closed_form


@pytest.mark.parametrize("K", range(2, 11))
def test_simplex_code_is_a_regular_centred_simplex(K):
    codes = simplex_code(K)
    l = K - 1
    assert codes.shape == (l, K)
    gram = codes.T @ codes
    np.testing.assert_allclose(np.diag(gram), 1.0, atol=1e-12)  # unit columns
    off = gram[~np.eye(K, dtype=bool)]
    np.testing.assert_allclose(off, -1.0 / l, atol=1e-12)  # pairwise -1/l
    np.testing.assert_allclose(codes.sum(axis=1), 0.0, atol=1e-12)  # columns sum to 0
    # C_Kᵀ C_K = (1 + 1/l) I − (1/l) 11ᵀ
    np.testing.assert_allclose(gram, (1 + 1 / l) * np.eye(K) - np.ones((K, K)) / l, atol=1e-12)


def test_simplex_code_rejects_one_class():
    with pytest.raises(ValueError, match="at least 2"):
        simplex_code(1)


def test_simplex_labels_rows_are_codes():
    codes = simplex_code(4)
    y = np.array([0, 3, 1, 1, 2])
    L = simplex_labels(y, codes)
    assert L.shape == (5, 3)
    for i, yi in enumerate(y):
        np.testing.assert_array_equal(L[i], codes[:, yi])


def _direct_ridge(H, L, C):
    """min ½‖W‖² + (C/2)‖L − HᵀW − 1bᵀ‖², bias unpenalised, by the normal equations."""
    J, m = H.shape
    A = np.hstack([H.T, np.ones((m, 1))])
    P = np.eye(J + 1) / C
    P[J, J] = 0.0  # the bias is not penalised
    sol = np.linalg.solve(A.T @ A + P, A.T @ L)
    return sol[:J], sol[J]


@pytest.mark.parametrize(("K", "C"), [(3, 0.1), (5, 1.0), (7, 100.0)])
def test_sls_closed_form_equals_direct_ridge_and_satisfies_kkt(K, C):
    rng = np.random.default_rng(K)
    m, J = 60, 12
    y = rng.integers(0, K, m)
    L = simplex_labels(y, simplex_code(K))
    H = rng.choice([-1.0, 1.0], size=(J, m))
    S_inv = np.linalg.inv(H.T @ H + np.eye(m) / C)
    sol = sls_closed_form(S_inv @ L, S_inv @ np.ones(m), H, C)
    W_ref, b_ref = _direct_ridge(H, L, C)
    np.testing.assert_allclose(sol.W, W_ref, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(sol.b, b_ref, rtol=1e-8, atol=1e-8)
    # KKT (18a)-(18c): W = HU, 1ᵀU = 0, O = C⁻¹U with O = L − HᵀW − 1bᵀ
    np.testing.assert_allclose(sol.W, H @ sol.U, atol=1e-10)
    np.testing.assert_allclose(sol.U.sum(axis=0), 0.0, atol=1e-8 * max(C, 1))
    O = L - H.T @ sol.W - sol.b
    np.testing.assert_allclose(O, sol.U / C, atol=1e-9)
    ref_obj = 0.5 * np.sum(W_ref**2) + 0.5 * C * np.sum((L - H.T @ W_ref - b_ref) ** 2)
    assert sol.objective == pytest.approx(ref_obj, rel=1e-10)


def test_sls_objective_non_increasing_as_columns_are_added():
    rng = np.random.default_rng(1)
    m, K, C = 80, 4, 10.0
    y = rng.integers(0, K, m)
    L = simplex_labels(y, simplex_code(K))
    inv = ShermanMorrisonInverse(m, C)
    rows, objs = [], []
    for _ in range(30):
        h = rng.choice([-1.0, 1.0], m)
        inv.add_column(h)
        rows.append(h)
        sol = sls_closed_form(inv.apply(L), inv.apply(np.ones(m)), np.array(rows), C)
        objs.append(sol.objective)
    assert np.all(np.diff(objs) <= 1e-9 * objs[0])
    assert objs[-1] < objs[0]  # random columns still fit something
