"""The Bayesian tests against independent numbers: baycomp 1.0.3 (the authors' package, run once
outside the project on the same inputs; its numbers are recorded here) and the closed form."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from kernbench.report.bayes import BayesResult, correlated_ttest_probs, signed_rank_probs

# baycomp.SignedRankTest.probs(Y, X, rope, nsamples=50000, random_state=0): its differences are
# X − Y, "left" is X − Y below −rope, as ours on d = X − Y
X = np.array([12.1, 8.4, 30.2, 5.5, 17.0, 22.3, 9.9, 14.6, 3.2, 26.8, 11.0, 7.7])
Y = np.array([13.0, 9.9, 30.0, 7.9, 17.4, 24.1, 10.0, 16.2, 3.1, 29.0, 11.9, 8.3])
BAYCOMP_SIGNED_RANK = {
    0.5: (0.93864, 0.06136, 0.0),
    1.0: (0.4206, 0.5794, 0.0),
    0.0: (0.9997, 0.0, 0.0003),
}
# baycomp.CorrelatedTTest.probs(B, A, rope, runs): differences A − B, rho = 1 / (n / runs)
A = np.array([20.1, 21.5, 19.8, 22.0, 20.7, 21.1, 19.5, 20.9, 21.8, 20.2])
B = np.array([21.0, 22.9, 20.1, 22.6, 22.0, 21.5, 20.9, 21.2, 23.0, 21.1])
BAYCOMP_CORRELATED = {
    (0.5, 0.1): (0.9473178235215616, 0.05263612820157504, 4.6048276863386306e-05),
    (1.0, 0.2): (0.31751433170384225, 0.6824562585730729, 2.9409723084850015e-05),
}


@pytest.mark.parametrize("rope", sorted(BAYCOMP_SIGNED_RANK))
def test_signed_rank_matches_baycomp(rope):
    ours = signed_rank_probs(X - Y, rope, n_samples=50_000, seed=0)
    assert ours == pytest.approx(BAYCOMP_SIGNED_RANK[rope], abs=1e-12)


@pytest.mark.parametrize(("rope", "rho"), sorted(BAYCOMP_CORRELATED))
def test_correlated_t_matches_baycomp_and_the_closed_form(rope, rho):
    left, eq, right, note = correlated_ttest_probs(A - B, rho, rope)
    assert note is None
    assert (left, eq, right) == pytest.approx(BAYCOMP_CORRELATED[(rope, rho)], abs=1e-12)
    d = A - B
    scale = math.sqrt(d.var(ddof=1) * (1 / d.size + rho / (1 - rho)))
    assert left == pytest.approx(stats.t.cdf((-rope - d.mean()) / scale, d.size - 1))


def test_signed_rank_is_seeded_and_reads_a_clear_case():
    d = np.full(20, -3.0) + np.linspace(-0.5, 0.5, 20)  # a better by about 3 points everywhere
    first = signed_rank_probs(d, 1.0, n_samples=2000, seed=5)
    assert first == signed_rank_probs(d, 1.0, n_samples=2000, seed=5)
    assert first[0] > 0.99
    same = signed_rank_probs(np.zeros(10), 1.0, n_samples=2000)
    assert same == (0.0, 1.0, 0.0)  # every difference inside the rope


def test_degenerate_correlated_t_is_stated():
    left, eq, right, note = correlated_ttest_probs(np.full(3, 2.0), 0.5, 1.0)
    assert (left, eq, right) == (0.0, 0.0, 1.0) and "point" in note
    left, eq, right, note = correlated_ttest_probs([1.0], 0.5, 1.0)
    assert math.isnan(left) and "1 shared" in note


def test_reading():
    assert BayesResult("a", "b", 0.96, 0.03, 0.01, "t").reading() == "a better"
    assert BayesResult("a", "b", 0.01, 0.97, 0.02, "t").reading() == "practically equivalent"
    assert BayesResult("a", "b", 0.5, 0.3, 0.2, "t").reading() == "undecided"
