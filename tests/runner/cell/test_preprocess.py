"""Scaling is fitted on the training part only."""

import numpy as np
import pytest

from kernbench.runner.cell.preprocess import fit_scaler


def test_minmax_maps_training_range_and_reuses_it_on_test():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 4)) * [1, 10, 100, 0]  # last column constant
    Xt = rng.normal(size=(20, 4)) * 5
    f = fit_scaler(X, "minmax", (-1.0, 1.0))
    Z = f(X)
    np.testing.assert_allclose(Z[:, :3].min(axis=0), -1.0)
    np.testing.assert_allclose(Z[:, :3].max(axis=0), 1.0)
    np.testing.assert_allclose(Z[:, 3], 0.0)
    lo, hi = X.min(axis=0), X.max(axis=0)
    expect = -1 + 2 * (Xt[:, 0] - lo[0]) / (hi[0] - lo[0])
    np.testing.assert_allclose(f(Xt)[:, 0], expect)


def test_standardize_uses_training_statistics():
    rng = np.random.default_rng(1)
    X = rng.normal(3.0, 2.0, size=(100, 3))
    Xt = rng.normal(size=(10, 3))
    f = fit_scaler(X, "standardize")
    np.testing.assert_allclose(f(X).mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(f(X).std(axis=0), 1.0)
    np.testing.assert_allclose(f(Xt), (Xt - X.mean(axis=0)) / X.std(axis=0))


def test_none_and_unknown():
    X = np.arange(6.0).reshape(3, 2)
    np.testing.assert_array_equal(fit_scaler(X, None)(X), X)
    with pytest.raises(ValueError, match="unknown preprocessing"):
        fit_scaler(X, "whiten")
