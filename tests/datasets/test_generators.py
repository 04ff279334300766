"""Breiman generators and the circle toy: distributions and Bayes rates against closed forms."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from kernbench.datasets import generators as g

N = 200_000  # Monte Carlo size: standard error of a 2% rate is 3e-4


def _mc_bayes_error(gen, decide, rng, **kw):
    X, y = gen(N, rng, **kw)
    err = float(np.mean(decide(X, a=kw.get("a")) != y))
    p = max(err, 1e-3)
    return err, 4.5 * math.sqrt(p * (1 - p) / N)  # ~4.5 standard errors


def test_twonorm_bayes_rate_matches_phi_of_minus_a_sqrt_d():
    err, tol = _mc_bayes_error(g.twonorm, g.twonorm_bayes_decision, np.random.default_rng(1))
    assert err == pytest.approx(stats.norm.cdf(-2.0), abs=tol)  # a√d = 2 -> 2.275%


def _ringnorm_exact(d: int, a: float) -> float:
    """Closed form: decide +1 iff ‖x − c‖² > τ with c = (4/3)a·1, τ = (8/3)·d·(ln 2 + a²/6);
    ‖x − c‖²/4 is noncentral χ²_d(‖c‖²/4) under N(0, 4I) and ‖x − c‖² is χ²_d(d a²/9) under
    N(a1, I)."""
    tau = (8.0 / 3.0) * d * (math.log(2.0) + a * a / 6.0)
    lam_pos = d * (4.0 * a / 3.0) ** 2 / 4.0
    lam_neg = d * a * a / 9.0
    miss_pos = stats.ncx2.cdf(tau / 4.0, d, lam_pos)
    miss_neg = stats.ncx2.sf(tau, d, lam_neg)
    return 0.5 * (miss_pos + miss_neg)


@pytest.mark.parametrize(
    ("a", "published"), [(2 / math.sqrt(20), 0.0125), (1 / math.sqrt(20), 0.0152)]
)
def test_ringnorm_bayes_rate_matches_the_noncentral_chi2_closed_form(a, published):
    exact = _ringnorm_exact(20, a)
    assert exact == pytest.approx(published, abs=6e-4)  # published Monte-Carlo values
    err, tol = _mc_bayes_error(g.ringnorm, g.ringnorm_bayes_decision, np.random.default_rng(2), a=a)
    assert err == pytest.approx(exact, abs=tol)


def test_threenorm_bayes_rate_matches_a_2d_numerical_integral():
    # means lie in span{1/√d, (1,-1,...)/√d}: the problem reduces exactly to 2-D with offset a√d = 2
    h = 0.02
    u, v = np.meshgrid(np.arange(-9, 9, h), np.arange(-9, 9, h), indexing="ij")
    pdf = lambda mu_u, mu_v: np.exp(-0.5 * ((u - mu_u) ** 2 + (v - mu_v) ** 2)) / (2 * np.pi)  # noqa: E731
    p_pos = 0.5 * pdf(2, 0) + 0.5 * pdf(-2, 0)
    p_neg = pdf(0, 2)
    exact = float(np.sum(np.minimum(0.5 * p_pos, 0.5 * p_neg)) * h * h)
    assert exact == pytest.approx(0.1047, abs=2e-3)  # Breiman's 10.5%
    err, tol = _mc_bayes_error(g.threenorm, g.threenorm_bayes_decision, np.random.default_rng(3))
    assert err == pytest.approx(exact, abs=tol)


@pytest.mark.parametrize("d", [2, 20])
def test_bayes_decisions_equal_brute_force_density_comparison(d):
    rng = np.random.default_rng(4)
    X = rng.normal(scale=2.0, size=(500, d))
    a = 2 / math.sqrt(d)
    I = np.eye(d)  # noqa: E741
    mvn = stats.multivariate_normal
    alt = a * np.array([(-1) ** i for i in range(d)], dtype=float)
    three_pos = np.logaddexp(mvn(a * np.ones(d), I).logpdf(X), mvn(-a * np.ones(d), I).logpdf(X))
    three = np.where(three_pos - math.log(2) >= mvn(alt, I).logpdf(X), 1, -1)
    np.testing.assert_array_equal(g.threenorm_bayes_decision(X), three)
    ring = np.where(mvn(np.zeros(d), 4 * I).logpdf(X) >= mvn(a * np.ones(d), I).logpdf(X), 1, -1)
    np.testing.assert_array_equal(g.ringnorm_bayes_decision(X), ring)
    two = np.where(mvn(a * np.ones(d), I).logpdf(X) >= mvn(-a * np.ones(d), I).logpdf(X), 1, -1)
    np.testing.assert_array_equal(g.twonorm_bayes_decision(X), two)


def test_class_conditional_moments_follow_the_definitions():
    rng = np.random.default_rng(5)
    a = 2 / math.sqrt(20)
    X, y = g.twonorm(N, rng)
    np.testing.assert_allclose(X[y == 1].mean(0), a, atol=0.02)
    np.testing.assert_allclose(X[y == -1].mean(0), -a, atol=0.02)
    X, y = g.ringnorm(N, rng)
    np.testing.assert_allclose(X[y == 1].var(0), 4.0, rtol=0.03)
    np.testing.assert_allclose(X[y == -1].mean(0), a, atol=0.02)
    X, y = g.threenorm(N, rng)
    alt = a * np.array([(-1) ** i for i in range(20)], dtype=float)
    np.testing.assert_allclose(X[y == -1].mean(0), alt, atol=0.02)
    np.testing.assert_allclose(X[y == 1].mean(0), 0.0, atol=0.02)  # ½(a1) + ½(−a1)
    assert abs(np.mean(y == 1) - 0.5) < 0.005  # fair coin


def test_circle_is_balanced_and_noise_free():
    X, y = g.circle(N, np.random.default_rng(6))
    assert X.shape == (N, 2)
    # P(‖x‖² ≤ 2 ln 2) = 1 − exp(−ln 2) = ½ for a χ²₂ variable
    assert abs(np.mean(y == 1) - 0.5) < 0.005
    np.testing.assert_array_equal(g.circle_bayes_decision(X), y)


def test_generators_are_reproducible_and_dimension_aware():
    X1, y1 = g.threenorm(50, np.random.default_rng(7), d=2)
    X2, y2 = g.threenorm(50, np.random.default_rng(7), d=2)
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(y1, y2)
    assert X1.shape == (50, 2) and X1.dtype == np.float64 and set(y1) <= {-1, 1}


def test_cgboost_toy_target_and_noise():
    # f at a centre: x1 + 2 x2 + 1 + the three other bumps (distances² 1, 1, 2 over σ² = 0.1)
    f = g.cgboost_toy_target(np.array([[0.5, 0.5], [0.0, 0.0]]))
    np.testing.assert_allclose(f[0], 1.5 + 1 + 2 * math.exp(-10) + math.exp(-20))
    np.testing.assert_allclose(f[1], 4 * math.exp(-0.5 / 0.1))
    X, y = g.cgboost_toy(N, np.random.default_rng(8), noise=0.05)
    assert X.shape == (N, 2) and y.dtype == np.float64 and np.abs(X).max() <= 1.0
    resid = y - g.cgboost_toy_target(X)
    assert abs(resid.std() - 0.05) < 0.002 and abs(resid.mean()) < 0.002
    X0, y0 = g.cgboost_toy(100, np.random.default_rng(9), noise=0.0)
    np.testing.assert_array_equal(y0, g.cgboost_toy_target(X0))
