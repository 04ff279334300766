"""H W and Hᵀ U through the stumps' sorted thresholds against the dense products, column by
column as a working set grows; non-stump columns refused; L-BFGS-B's restricted optimum kept."""

import numpy as np
import pytest

from kernbench.solvers.multiclass_exp_loss import solve_shared_lbfgsb
from kernbench.solvers.stump_products import StumpProducts
from kernbench.weak.stumps import Stump


def _stumps(X, n, rng):
    """n stumps on X's features: thresholds at data values (ties), repeated thresholds with
    both signs, the constant stump (−inf) and thresholds above every value."""
    out = []
    for _ in range(n):
        f = int(rng.integers(X.shape[1]))
        t = float(rng.choice(np.r_[X[:, f], -np.inf, X[:, f].max() + 1.0]))
        out.append(Stump(f, t, int(rng.choice([-1, 1]))))
    out.append(Stump(out[0].feature, out[0].threshold, -out[0].sign))  # same cut, other sign
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_products_equal_the_dense_ones_after_every_added_column(seed):
    rng = np.random.default_rng(seed)
    m, D, K = 200, 6, 5
    X = rng.integers(0, 7, size=(m, D)).astype(float)  # many ties
    X[:, 0] = rng.normal(size=m)  # and one continuous feature
    products, columns = StumpProducts(X), []
    for stump in _stumps(X, 60, rng):
        column = stump.predict(X)
        assert products.add(stump.feature, stump.threshold, stump.sign, column)
        columns.append(column)
        H = np.column_stack(columns)
        W = rng.random((H.shape[1], K))
        U = rng.normal(size=(m, K))
        np.testing.assert_allclose(products.forward(W, np.empty((m, K))), H @ W, atol=1e-12)
        np.testing.assert_allclose(products.backward(U), H.T @ U, atol=1e-11)
    assert products.valid and products.n_columns == len(columns)


def test_a_column_that_is_not_its_stumps_prediction_is_refused():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(50, 3))
    products = StumpProducts(X)
    first = Stump(1, float(X[7, 1]), 1)
    assert products.add(first.feature, first.threshold, first.sign, first.predict(X))
    other = Stump(2, float(X[3, 2]), -1)
    column = other.predict(X)
    column[np.argmax(X[:, 2])] *= -1.0  # one point on the wrong side of the cut
    assert not products.add(other.feature, other.threshold, other.sign, column)
    assert not products.valid
    assert not products.add(1, first.threshold, 1, first.predict(X))  # and it stays refused


def test_a_sign_other_than_plus_or_minus_one_is_refused():
    products = StumpProducts(np.zeros((4, 1)))
    assert not products.add(0, -np.inf, 2, np.full(4, 2.0))
    assert not products.valid


@pytest.mark.parametrize("C", [10.0, 1000.0])
def test_lbfgsb_with_stump_products_reaches_the_dense_optimum(C):
    rng = np.random.default_rng(4)
    m, K = 80, 4
    X = rng.normal(size=(m, 3))
    y = np.argmax(X @ rng.normal(size=(3, K)) + 0.5 * rng.normal(size=(m, K)), axis=1)
    stumps = [Stump(0, -np.inf, 1)] + _stumps(X, 12, rng)
    products = StumpProducts(X)
    for s in stumps:
        assert products.add(s.feature, s.threshold, s.sign, s.predict(X))
    H = np.column_stack([s.predict(X) for s in stumps])
    W0 = np.zeros((H.shape[1], K))
    tight = dict(ftol=1e-15, gtol=1e-10)
    dense = solve_shared_lbfgsb(H, y, C, W0, **tight)
    fast = solve_shared_lbfgsb(H, y, C, W0, products=products, **tight)
    # measured under OpenBLAS's SkylakeX, Haswell and Prescott kernels: objectives within 5e-14
    # relative, KKT residuals at most 3.6e-5 at C = 1000 (at C = 1e4 the duplicated columns leave
    # L-BFGS-B's line search stalling short of the tolerance on some kernels, either product)
    assert fast.objective == pytest.approx(dense.objective, rel=1e-9)
    assert fast.kkt < 1e-6 * C


def test_products_of_another_working_set_size_are_an_error():
    X = np.arange(10.0)[:, None]
    products = StumpProducts(X)
    stump = Stump(0, 4.5, 1)
    products.add(stump.feature, stump.threshold, stump.sign, stump.predict(X))
    H = np.column_stack([stump.predict(X), -stump.predict(X)])
    with pytest.raises(ValueError, match="1 columns"):
        solve_shared_lbfgsb(H, np.arange(10) % 3, 1.0, np.zeros((2, 3)), products=products)
