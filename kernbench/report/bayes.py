"""Bayesian comparison of two methods (Benavoli, Corani, Demšar & Zaffalon, JMLR 2017).

Both tests answer: how probable is it that method A is better than B by more than a *region of
practical equivalence* (the rope, ±``rope`` in the value's unit: points of error), that the two
are practically equivalent, or that B is better?

* Across data sets, the **Bayesian signed-rank test** (Benavoli et al. 2014): the per-data-set
  mean differences z₁ … z_N, plus one pseudo-observation z₀ = 0 of prior weight ``prior`` (0.5),
  get Dirichlet-process posterior weights w ~ Dir(prior, 1, …, 1). For each draw of w,
  θ_left = Σᵢⱼ wᵢ wⱼ [zᵢ + zⱼ < −2 rope], θ_right = Σᵢⱼ wᵢ wⱼ [zᵢ + zⱼ > 2 rope] (a sum on the
  boundary counts one half) and θ_rope = 1 − θ_left − θ_right; the posterior probability of each
  region is the share of draws in which it has the largest θ. Monte Carlo with a seeded
  :class:`numpy.random.RandomState`, so a store always gives the same numbers.
* On one data set, the **Bayesian correlated t-test** (Corani & Benavoli 2015): with J paired
  realisations whose results correlate by ρ (:func:`kernbench.report.stat_tests.split_correlation`,
  the same ρ as the corrected t-test), the posterior of the mean difference is Student's t with
  J − 1 degrees of freedom, location mean(d) and scale sqrt((1/J + ρ/(1 − ρ)) var(d)); the three
  probabilities are its masses below −rope, within ±rope and above +rope (closed form).

Differences are ``d = a − b``; "left" (d below −rope) is a better where lower values are better
(errors, times), b better otherwise. The implementation follows the paper and baycomp (the
authors' package), against which ``tests/report/test_bayes.py`` checks it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

__all__ = [
    "BAYES_SAMPLES",
    "BAYES_SEED",
    "DECISIVE",
    "BayesResult",
    "correlated_ttest_probs",
    "signed_rank_probs",
]

#: Monte Carlo draws of the signed-rank posterior, and the seed of their generator
BAYES_SAMPLES = 50_000
BAYES_SEED = 0
#: a posterior probability at least this high is read as a decision (Benavoli et al. 2017)
DECISIVE = 0.95


@dataclass(frozen=True)
class BayesResult:
    """Posterior probabilities of ``a`` better (by more than the rope), practically
    equivalent, ``b`` better; ``note`` says when the posterior is degenerate."""

    a: str
    b: str
    p_a: float
    p_rope: float
    p_b: float
    test: str
    note: str | None = None

    def reading(self, threshold: float = DECISIVE) -> str:
        """``a better`` / ``b better`` / ``practically equivalent`` at ``threshold``, else
        ``undecided``."""
        if self.p_rope >= threshold:
            return "practically equivalent"
        if self.p_a >= threshold:
            return f"{self.a} better"
        if self.p_b >= threshold:
            return f"{self.b} better"
        return "undecided"


def _heaviside(a: np.ndarray, threshold: float) -> np.ndarray:
    return (a > threshold).astype(float) + 0.5 * (a == threshold).astype(float)


def signed_rank_probs(
    d: Sequence[float] | np.ndarray,
    rope: float,
    *,
    prior: float = 0.5,
    n_samples: int = BAYES_SAMPLES,
    seed: int = BAYES_SEED,
) -> tuple[float, float, float]:
    """``(P(left), P(rope), P(right))`` of the Bayesian signed-rank test on differences ``d``.

    Parameters
    ----------
    d : sequence of float
        One difference per data set.
    rope : float
        Half-width of the region of practical equivalence (0: no rope; P(rope) is then 0).
    prior : float
        Weight of the pseudo-observation at 0.
    n_samples, seed : int
        Monte Carlo draws of the Dirichlet weights, and the seed of their generator.

    Raises
    ------
    ValueError
        No differences, a negative rope, or fewer than one sample.
    """
    z = np.asarray(d, dtype=float)
    if z.ndim != 1 or z.size == 0:
        raise ValueError("the Bayesian signed-rank test needs at least one difference")
    if rope < 0 or n_samples < 1:
        raise ValueError("rope must be >= 0 and n_samples >= 1")
    z = np.concatenate(([0.0], z))
    sums = z[:, None] + z[None, :]
    weights = np.ones(z.size)
    weights[0] = prior
    w = np.random.RandomState(seed).dirichlet(weights, n_samples)
    samples = np.zeros((n_samples, 3))
    if rope > 0:
        samples[:, 0] = np.einsum("si,ij,sj->s", w, _heaviside(-sums, 2 * rope), w)
        samples[:, 2] = np.einsum("si,ij,sj->s", w, _heaviside(sums, 2 * rope), w)
        samples[:, 1] = 1.0 - samples[:, 0] - samples[:, 2]
    else:
        samples[:, 2] = np.einsum("si,ij,sj->s", w, _heaviside(sums, 0.0), w)
        samples[:, 0] = 1.0 - samples[:, 2]
    winners = np.bincount(np.argmax(samples, axis=1), minlength=3) / n_samples
    return float(winners[0]), float(winners[1]), float(winners[2])


def correlated_ttest_probs(
    d: Sequence[float] | np.ndarray, rho: float, rope: float
) -> tuple[float, float, float, str | None]:
    """``(P(left), P(rope), P(right), note)`` of the Bayesian correlated t-test on the paired
    differences ``d`` of J realisations correlated by ``rho``.

    With no variance (the same difference on every realisation) the posterior is a point mass at
    that difference and ``note`` says so; with fewer than two realisations there is no posterior
    (NaN probabilities, with a note).
    """
    x = np.asarray(d, dtype=float)
    J = x.size
    if J < 2:
        return float("nan"), float("nan"), float("nan"), f"{J} shared realisation(s): no test"
    mean = float(np.mean(x))
    var = float(np.var(x, ddof=1)) * (1.0 / J + rho / (1.0 - rho))
    if var <= 1e-18 * max(1.0, mean * mean):
        left, right = float(mean < -rope), float(mean > rope)
        note = f"the same difference on all {J} realisations: the posterior is a point at it"
        return left, 1.0 - left - right, right, note
    scale = float(np.sqrt(var))
    left = float(stats.t.cdf(-rope, J - 1, mean, scale))
    right = float(stats.t.sf(rope, J - 1, mean, scale))
    return left, max(0.0, 1.0 - left - right), right, None
