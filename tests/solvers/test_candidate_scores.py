"""The fused candidate-scoring pass against numpy, and the chosen candidates against the old path.

The old path is still in :func:`kernbench.weak.perceptron.pick_from_candidates` with
``activation=None`` (one BLAS product, ``np.cos`` / ``np.where``, one matrix-vector product), so
the spaces with their compiled scoring can be compared with it on the same random draws.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest

from kernbench.methods import AdaBoost
from kernbench.solvers.candidate_scores import COS_ARG_LIMIT, _cos, candidate_scores
from kernbench.weak.base import ColumnSet
from kernbench.weak.fourier import FourierSpace
from kernbench.weak.perceptron import PerceptronSpace, sign_pm1


@numba.njit(fastmath={"contract"})
def cos_values(x, out):  # pragma: no cover - numba
    """out = cos(x) elementwise with the package's polynomial cosine (its kernels' flags)."""
    for j in range(x.shape[0]):
        out[j] = _cos(x[j])


def test_polynomial_cosine_is_within_a_few_ulp_of_the_c_library() -> None:
    rng = np.random.default_rng(0)
    x = np.concatenate(
        [
            np.linspace(-50.0, 50.0, 200_001),
            rng.normal(scale=300.0, size=100_000),
            rng.uniform(-COS_ARG_LIMIT, COS_ARG_LIMIT, size=100_000),
            np.arange(-2000, 2001) * (np.pi / 2),  # the quadrant boundaries, cos ≈ 0 or ±1
            [0.0, -0.0, 1e-300, np.pi / 4, -np.pi / 4, COS_ARG_LIMIT, -COS_ARG_LIMIT],
        ]
    )
    out = np.empty_like(x)
    cos_values(x, out)
    ref = np.cos(x)
    assert np.max(np.abs(out - ref)) <= 4.5e-16
    assert np.all(np.abs(out) <= 1.0)


@pytest.mark.parametrize("activation", ["cos", "sign"])
@pytest.mark.parametrize("scale", [0.3, 3.0, 3e5])
def test_scores_equal_the_numpy_formula(activation: str, scale: float) -> None:
    """Including P larger than one block and arguments beyond the polynomial's range."""
    rng = np.random.default_rng(int(scale * 10))
    m, D, P = 300, 7, 15_000
    X, g = rng.normal(size=(m, D)), rng.normal(size=m)
    Theta, kappa = rng.normal(size=(D, P)) * scale, rng.uniform(0, 2 * np.pi, size=P)
    Z = X @ Theta - kappa
    expected = (np.cos(Z) if activation == "cos" else sign_pm1(Z)).T @ g
    got = candidate_scores(X, g, Theta, kappa, activation)
    # z = θᵀx − κ itself is only known to rounding (BLAS blocking): cos(z) moves by ~ulp(|z|)
    ulp_z = np.finfo(float).eps * max(1.0, np.abs(Z).max())
    np.testing.assert_allclose(got, expected, rtol=0, atol=8 * ulp_z * np.abs(g).sum())


def _old_and_new(space, g, seed, **kw):
    """The pick with the compiled scores, and with the numpy path, from the same draws."""
    new = space.best(g, rng=np.random.default_rng(seed), **kw)
    activation = type(space)._activation
    try:
        type(space)._activation = None
        old = space.best(g, rng=np.random.default_rng(seed), **kw)
    finally:
        type(space)._activation = activation
    return new, old


@pytest.mark.parametrize("space_cls", [FourierSpace, PerceptronSpace])
@pytest.mark.parametrize("absolute", [True, False])
def test_same_candidates_as_the_numpy_path_for_fixed_seeds(space_cls: type, absolute: bool):
    rng = np.random.default_rng(7)
    X = rng.normal(size=(560, 12))
    kw = {"sigma": 2.0} if space_cls is FourierSpace else {}
    space = space_cls(X, n_candidates=2000, **kw)
    excl = ColumnSet()
    for seed in range(12):
        g = rng.normal(size=560)
        new, old = _old_and_new(space, g, seed, absolute=absolute, exclude=excl)
        np.testing.assert_array_equal(new.learner.theta, old.learner.theta)
        assert new.learner.kappa == old.learner.kappa
        assert new.learner.polarity == old.learner.polarity
        np.testing.assert_array_equal(new.column, old.column)
        assert new.score == pytest.approx(old.score, rel=1e-12)
        excl.add(new.column)  # later calls also exercise the exclusion path


def test_adaboost_with_sampled_perceptrons_is_unchanged() -> None:
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 5))
    y = np.where(X[:, 0] - X[:, 1] + 0.3 * rng.normal(size=200) > 0, 1, -1)
    new = AdaBoost(n_estimators=15, weak_learner="perceptron_sampled", random_state=3).fit(X, y)
    try:
        PerceptronSpace._activation = None
        old = AdaBoost(n_estimators=15, weak_learner="perceptron_sampled", random_state=3).fit(X, y)
    finally:
        PerceptronSpace._activation = "sign"
    np.testing.assert_array_equal(new.estimator_weights_, old.estimator_weights_)
    for a, b in zip(new.weak_learners_, old.weak_learners_):
        np.testing.assert_array_equal(a.theta, b.theta)
        assert (a.kappa, a.polarity) == (b.kappa, b.polarity)


@pytest.mark.parametrize("activation", ["cos", "sign"])
@pytest.mark.parametrize(("m", "D", "P"), [(560, 30, 2000), (1300, 18, 2000), (77, 5, 3001)])
def test_row_blocks_give_the_scores_of_the_whole_product(
    activation: str, m: int, D: int, P: int
) -> None:
    """Z is formed by blocks of rows (some of them partial): the scores are those of the whole
    m × P product passed through the same compiled kernel in one go, up to rounding. Not to the
    bit: OpenBLAS may compute a partial block's rows with another micro-kernel than the whole
    product's (its Prescott kernels do, its SkylakeX ones do not), and the blocks are fixed by
    L2_ENTRIES alone, so the scores do not depend on the number of threads either way."""
    from kernbench.solvers.candidate_scores import (
        L2_ENTRIES,
        cos_column_sums,
        sign_column_sums,
    )

    assert m > L2_ENTRIES // P  # more than one block, the last one partial
    rng = np.random.default_rng(m + D)
    X = rng.normal(size=(m, D)) / np.sqrt(D)
    Theta = rng.normal(size=(D, P))
    kappa = rng.uniform(0.0, 2.0 * np.pi, size=P)
    g = rng.normal(size=m)
    whole = np.zeros(P)
    kernel = cos_column_sums if activation == "cos" else sign_column_sums
    kernel(np.ascontiguousarray(X @ Theta), kappa, g, whole)
    scale = float(np.abs(g).sum())  # no score exceeds Σ|g_i|; a sum of m terms, m ≤ 1300
    np.testing.assert_allclose(
        candidate_scores(X, g, Theta, kappa, activation), whole, rtol=0, atol=1e-12 * scale
    )
