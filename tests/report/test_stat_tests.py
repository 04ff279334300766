"""The tests over data sets and on one data set, checked against Demšar (2006)'s worked example
and against independent computations (scipy's Friedman test, a brute-force enumeration of the
Wilcoxon signed-rank distribution, brute-force Holm, the corrected t by hand)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from kernbench.report.stat_tests import (
    cd_cliques,
    corrected_resampled_ttest,
    corrected_ttest,
    critical_difference,
    friedman,
    holm,
    min_wilcoxon_p,
    nemenyi_q,
    rank_matrix,
    split_correlation,
    wilcoxon_holm,
    wilcoxon_signed_rank,
    win_tie_loss,
)

#: Demšar (2006), Table 6: AUC of C4.5, C4.5+m, C4.5+cf, C4.5+m+cf on fourteen data sets
#: (adult (sample), breast cancer, breast cancer wisconsin, cmc, ionosphere, iris, liver
#: disorders, lung cancer, lymphography, mushroom, primary tumor, rheum, voting, wine)
DEMSAR_AUC = np.array(
    [
        [0.763, 0.768, 0.771, 0.798],
        [0.599, 0.591, 0.590, 0.569],
        [0.954, 0.971, 0.968, 0.967],
        [0.628, 0.661, 0.654, 0.657],
        [0.882, 0.888, 0.886, 0.898],
        [0.936, 0.931, 0.916, 0.931],
        [0.661, 0.668, 0.609, 0.685],
        [0.583, 0.583, 0.563, 0.625],
        [0.775, 0.838, 0.866, 0.875],
        [1.000, 1.000, 1.000, 1.000],
        [0.940, 0.962, 0.965, 0.962],
        [0.619, 0.666, 0.614, 0.669],
        [0.972, 0.981, 0.975, 0.975],
        [0.957, 0.978, 0.946, 0.970],
    ]
)
VOTING = 12


def demsar_ranks() -> np.ndarray:
    """The paper's ranks: those of the printed AUCs, except on voting, where C4.5+cf and
    C4.5+m+cf print the same 0.975 but the paper ranks them 2 and 3 (its unrounded AUCs)."""
    ranks = rank_matrix(DEMSAR_AUC, lower_is_better=False)
    assert list(ranks[VOTING]) == [4.0, 1.0, 2.5, 2.5]  # the printed values tie
    ranks[VOTING] = [4.0, 1.0, 2.0, 3.0]
    return ranks


def test_demsar_worked_example_is_reproduced():
    res = friedman(demsar_ranks())
    assert np.round(res.average_ranks, 3).tolist() == [3.143, 2.000, 2.893, 1.964]
    assert round(res.chi2, 2) == 9.28
    assert round(res.f, 2) == 3.69
    assert res.n == 14 and res.k == 4
    # "F(3, 39) critical value 2.85 at 0.05": the hypothesis is rejected
    assert stats.f.ppf(0.95, 3, 39) == pytest.approx(2.845, abs=1e-3) and res.p_f < 0.05
    assert round(nemenyi_q(4, 0.05), 3) == 2.569
    assert round(critical_difference(4, 14, 0.05), 2) == 1.25
    # at alpha = 0.10 (q = 2.291, CD = 1.12) C4.5 is worse than C4.5+m and C4.5+m+cf only
    assert round(nemenyi_q(4, 0.10), 3) == 2.291
    cd10 = critical_difference(4, 14, 0.10)
    assert round(cd10, 2) == 1.12
    r = res.average_ranks
    assert r[0] - r[1] > cd10 and r[0] - r[3] > cd10 and r[0] - r[2] < cd10
    assert cd_cliques(r, cd10) == [(3, 1, 2), (2, 0)]


def test_friedman_statistic_agrees_with_scipy_without_ties():
    rng = np.random.default_rng(0)
    scores = rng.normal(size=(12, 5))
    res = friedman(rank_matrix(scores))
    ref = stats.friedmanchisquare(*scores.T)
    assert res.chi2 == pytest.approx(ref.statistic) and res.p_chi2 == pytest.approx(ref.pvalue)
    n, k = scores.shape
    assert res.f == pytest.approx((n - 1) * res.chi2 / (n * (k - 1) - res.chi2))


def test_holm_against_its_definition():
    p = np.array([0.01, 0.04, 0.03, 0.005])
    # sorted: 0.005*4=0.02, 0.01*3=0.03, 0.03*2=0.06, 0.04*1=0.04 -> running max 0.06
    assert holm(p).tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.9, 0.8]).tolist() == [1.0, 1.0]


def test_wilcoxon_pairs_all_or_against_a_control():
    rng = np.random.default_rng(1)
    s = rng.normal(size=(15, 3)) + np.array([0.0, 0.5, 1.5])
    every = wilcoxon_holm(s, ["a", "b", "c"])
    assert [(t.a, t.b) for t in every] == [("a", "b"), ("a", "c"), ("b", "c")]
    ref = stats.wilcoxon(s[:, 0], s[:, 2], zero_method="zsplit").pvalue
    assert every[1].p == pytest.approx(ref)
    assert [t.p_holm for t in every] == pytest.approx(holm([t.p for t in every]).tolist())
    control = wilcoxon_holm(s, ["a", "b", "c"], control="c")
    assert [(t.a, t.b) for t in control] == [("a", "c"), ("b", "c")]


def test_win_tie_loss():
    s = np.array([[1.0, 2.0], [3.0, 3.0], [5.0, 4.0], [0.0, 1.0]])
    wtl = win_tie_loss(s)
    assert wtl[0, 1].tolist() == [2, 1, 1] and wtl[1, 0].tolist() == [1, 1, 2]


def test_corrected_resampled_ttest_widens_the_plain_paired_test():
    a = np.array([10.0, 12.0, 11.0, 13.0, 12.5])
    b = np.array([11.0, 12.5, 12.0, 13.0, 14.0])
    t, p = corrected_resampled_ttest(a, b, n_train=200, n_test=100)
    d = a - b
    expected = d.mean() / math.sqrt((1 / 5 + 100 / 200) * d.var(ddof=1))
    assert t == pytest.approx(expected)
    assert p == pytest.approx(2 * stats.t.sf(abs(expected), 4))
    plain = stats.ttest_rel(a, b).pvalue
    assert p > plain  # the correction is conservative
    assert corrected_resampled_ttest([1.0, 2.0], [1.0, 2.0], 10, 5) == (0.0, 1.0)


def _enumerated_p(d: np.ndarray) -> float:
    """The two-sided Wilcoxon p by brute force: every one of the 2^n sign patterns of the
    non-zero differences, zero differences splitting their ranks, |R+ − R−| as the statistic."""
    ranks = stats.rankdata(np.abs(d))
    nonzero = d != 0
    observed = abs(ranks[d > 0].sum() - ranks[d < 0].sum())
    hits = total = 0
    for signs in itertools.product((-1.0, 1.0), repeat=int(nonzero.sum())):
        signed = np.asarray(signs) * ranks[nonzero]
        total += 1
        hits += abs(signed.sum()) >= observed - 1e-9
    return hits / total


def test_wilcoxon_exact_with_ties_and_zeros_against_an_enumeration():
    # ties in |d| (0.5 three times, 2.0 twice) and two zero differences
    x = np.array([10.0, 11.5, 9.0, 12.0, 10.5, 14.0, 8.0, 13.0, 9.5, 11.0, 12.5, 7.0])
    y = np.array([10.5, 11.0, 9.0, 14.0, 10.0, 14.0, 10.0, 13.5, 12.5, 9.2, 13.9, 8.1])
    d = x - y
    assert (d == 0).sum() == 2 and len(set(np.abs(d))) < len(d) - 2
    res = wilcoxon_signed_rank(x, y)
    assert res.method == "exact" and res.n_zero == 2
    assert res.p == pytest.approx(_enumerated_p(d), rel=1e-12)
    ranks = stats.rankdata(np.abs(d))
    assert res.r_plus + res.r_minus == pytest.approx(ranks.sum())
    assert res.statistic == min(res.r_plus, res.r_minus)
    # scipy's "auto" would switch to the normal approximation here; ours is the exact value
    approx = stats.wilcoxon(x, y, zero_method="zsplit", method="asymptotic").pvalue
    assert res.p != pytest.approx(approx, rel=1e-3)


def test_wilcoxon_exact_agrees_with_scipy_without_ties_and_normal_above_the_limit():
    rng = np.random.default_rng(7)
    x, y = rng.normal(size=18), rng.normal(size=18) + 0.4
    exact = wilcoxon_signed_rank(x, y)
    assert exact.p == pytest.approx(stats.wilcoxon(x, y, method="exact").pvalue, rel=1e-12)
    normal = wilcoxon_signed_rank(x, y, exact_max_n=10)
    assert normal.method == "normal" and normal.p == pytest.approx(exact.p, abs=0.02)


def test_equal_error_counts_tie_whatever_the_last_bit():
    a = np.array([298 / 1350 * 100, 5.0, 7.0])
    b = np.array([22.074074074074076, 6.0, 6.5])  # 298/1350 one bit off
    assert a[0] != b[0]
    assert rank_matrix(np.vstack([a, b]).T)[0].tolist() == [1.5, 1.5]
    assert win_tie_loss(np.vstack([a, b]).T)[0, 1].tolist() == [1, 1, 1]


def test_wilcoxon_says_which_method_is_better():
    s = np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 3.5], [4.0, 3.9], [1.0, 3.0]])
    (t,) = wilcoxon_holm(s, ["lo", "hi"])
    assert t.better == "lo"
    (t,) = wilcoxon_holm(s, ["lo", "hi"], lower_is_better=False)
    assert t.better == "hi"


def test_too_few_data_sets_for_any_rejection():
    assert min_wilcoxon_p(3) == 0.25 and min_wilcoxon_p(6) == 0.03125
    s = np.array([[1.0, 2.0], [1.0, 3.0], [1.0, 4.0]])  # a wins everywhere
    (t,) = wilcoxon_holm(s, ["a", "b"])
    assert t.p == 0.25


def test_corrected_test_with_the_pool_against_a_hand_computation():
    # 300 training and 1000 test rows from a pool of 5000: rho = 1000/5000 = 0.2, so the
    # variance factor is 1/J + 0.2/0.8 = 0.2 + 0.25 = 0.45 (not 0.2 + 1000/300 = 3.53)
    assert split_correlation(300, 1000, 5000) == pytest.approx(0.2)
    assert split_correlation(300, 1000) == pytest.approx(1000 / 1300)
    assert split_correlation(300, 1000, 900) == pytest.approx(1000 / 1300)  # never below n1 + n2
    d = np.array([1.0, 2.0, 3.0, 4.0, 6.0])  # mean 3.2, var 3.7
    t, p, note = corrected_ttest(d, 0.2)
    assert note is None
    assert t == pytest.approx(3.2 / math.sqrt(0.45 * 3.7))  # 3.2 / 1.290349 = 2.47995
    assert t == pytest.approx(2.479950, abs=1e-6)
    assert p == pytest.approx(2 * stats.t.sf(2.479950, 4), abs=1e-6)
    whole = corrected_resampled_ttest(d, np.zeros(5), 300, 1000)
    assert whole[0] == pytest.approx(3.2 / math.sqrt((0.2 + 1000 / 300) * 3.7))


def test_degenerate_cases_are_stated_never_inf_or_zero():
    # the same non-zero difference on every realisation: no variance, no test
    for J in (2, 3):
        t, p, note = corrected_ttest(np.full(J, 1.5), 0.5)
        assert t is None and p is None and "no variance" in note
        assert all(
            math.isnan(v) for v in corrected_resampled_ttest(np.full(J, 1.5), np.zeros(J), 5, 5)
        )
    assert corrected_ttest(np.zeros(3), 0.5) == (0.0, 1.0, None)
    t, p, note = corrected_ttest([1.0], 0.5)
    assert t is None and "1 shared" in note
    # every data set ranks the methods alike: F_F's denominator is 0
    ranks = np.tile([1.0, 2.0, 3.0], (3, 1))
    res = friedman(ranks)
    assert res.f is None and res.p_f is None and "same order" in res.note
    assert math.isfinite(res.chi2) and 0 < res.p_chi2 < 1
