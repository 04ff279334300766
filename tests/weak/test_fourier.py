"""Sampled Fourier weak learners: pick rule, sampling law (the Gaussian kernel), negation."""

from __future__ import annotations

import numpy as np
import pytest

from kernbench.weak.base import ColumnSet
from kernbench.weak.fourier import FourierFeature, FourierSpace


def test_pick_is_the_brute_force_best_of_the_same_candidates():
    rng = np.random.default_rng(0)
    X, g = rng.normal(size=(50, 4)), rng.normal(size=50)
    space = FourierSpace(X, sigma=0.7, n_candidates=400)
    pick = space.best(g, absolute=True, rng=np.random.default_rng(2))
    Theta, kappa = space.sample(np.random.default_rng(2))
    scores = np.array([np.cos(X @ Theta[:, p] - kappa[p]) @ g for p in range(400)])
    p = int(np.argmax(np.abs(scores)))
    assert pick.score == pytest.approx(abs(scores[p]))
    assert pick.learner.polarity == np.sign(scores[p])
    np.testing.assert_allclose(pick.learner.predict(X), pick.column)
    excl = ColumnSet()
    excl.add(pick.column)
    other = space.best(g, absolute=True, exclude=excl, rng=np.random.default_rng(2))
    assert other.score == pytest.approx(np.sort(np.abs(scores))[-2])


def test_monte_carlo_mean_is_half_the_gaussian_kernel():
    """E[h(x)h(x')] = ½ exp(−||x − x'||²/(2σ²)) for θ ~ N(0, σ⁻²I), κ ~ U[0, 2π]."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(25, 3))
    sigma = 1.3
    space = FourierSpace(X, sigma=sigma)
    Theta, kappa = space.sample(np.random.default_rng(5), P=40_000)
    H = np.cos(X @ Theta - kappa)
    d2 = ((X[:, None] - X[None]) ** 2).sum(-1)
    np.testing.assert_allclose(H @ H.T / H.shape[1], 0.5 * np.exp(-d2 / (2 * sigma**2)), atol=0.02)


def test_negation_and_predict_many():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(10, 2))
    f = FourierFeature(rng.normal(size=2), 0.4)
    np.testing.assert_array_equal(f.negated().predict(X), -f.predict(X))
    # mathematically −h is the feature with κ + π
    np.testing.assert_allclose(FourierFeature(f.theta, f.kappa + np.pi).predict(X), -f.predict(X))
    many = FourierFeature.predict_many([f, f.negated()], X)
    np.testing.assert_array_equal(many[:, 1], -many[:, 0])


def test_sigma_must_be_positive():
    with pytest.raises(ValueError, match="sigma"):
        FourierSpace(np.zeros((3, 2)), sigma=0.0)
