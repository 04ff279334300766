import io

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from kernbench.report.stats import (
    average_ranks,
    mean_spread,
    not_significantly_worse,
    paired_ttest_pvalue,
    published_stderr,
    row_ranks,
    sample_std,
    standard_error,
    within_tolerance,
)


def test_mean_spread_matches_numpy():
    x = np.random.default_rng(0).uniform(0, 30, size=7)
    mean, std = mean_spread(x, "std")
    assert mean == pytest.approx(np.mean(x))
    assert std == pytest.approx(np.std(x, ddof=1))
    _, se = mean_spread(x, "stderr")
    assert se == pytest.approx(np.std(x, ddof=1) / np.sqrt(7))
    assert sample_std(x) == pytest.approx(std)
    assert standard_error(x) == pytest.approx(se)


def test_mean_spread_small_samples():
    assert mean_spread([], "std") == (None, None)
    assert mean_spread([3.5], "stderr") == (3.5, None)
    with pytest.raises(ValueError, match="spread kind"):
        mean_spread([1.0, 2.0], "var")  # type: ignore[arg-type]


def test_paired_ttest_matches_scipy_and_the_formula():
    rng = np.random.default_rng(1)
    a = rng.normal(10, 1, size=12)
    b = a + rng.normal(0.4, 0.5, size=12)
    p = paired_ttest_pvalue(a, b)
    assert p == pytest.approx(sps.ttest_rel(a, b).pvalue, rel=1e-12)
    # the textbook formula: t = mean(d) / (sd(d) / sqrt(n)), two-sided with n-1 dof
    d = a - b
    t = d.mean() / (d.std(ddof=1) / np.sqrt(d.size))
    assert p == pytest.approx(2 * sps.t.sf(abs(t), df=d.size - 1), rel=1e-10)


def test_paired_ttest_degenerate_cases():
    a = np.array([10.0, 12.0, 11.0])
    assert paired_ttest_pvalue(a, a.copy()) == 1.0  # identical -> not different
    assert paired_ttest_pvalue(a, a + 0.5) == 0.0  # constant shift -> different
    with pytest.raises(ValueError, match="two pairs"):
        paired_ttest_pvalue([1.0], [2.0])
    with pytest.raises(ValueError, match="equal length"):
        paired_ttest_pvalue([1.0, 2.0], [1.0, 2.0, 3.0])


def test_not_significantly_worse_uses_shared_realisations_only():
    rng = np.random.default_rng(2)
    best = {r: 10 + rng.normal() for r in range(8)}
    other = {r: 10.3 + rng.normal() for r in range(2, 10)}  # realisations 2..7 shared
    mark, p = not_significantly_worse(best, other, alpha=0.05)
    shared = range(2, 8)
    expected = sps.ttest_rel([best[r] for r in shared], [other[r] for r in shared]).pvalue
    assert p == pytest.approx(expected)
    assert mark == (expected >= 0.05)


def test_not_significantly_worse_decisions():
    best = {0: 1.0, 1: 2.0, 2: 3.0, 3: 4.0}
    clearly_worse = {0: 11.0, 1: 12.1, 2: 12.9, 3: 14.0}
    noisy = {0: 0.0, 1: 5.0, 2: 1.0, 3: 6.0}
    assert not_significantly_worse(best, clearly_worse)[0] is False
    assert not_significantly_worse(best, noisy)[0] is True
    assert not_significantly_worse(best, dict(best)) == (True, 1.0)
    assert not_significantly_worse(best, {0: 1.0, 9: 2.0}) == (False, None)  # one shared


def test_row_ranks_average_ties_hand_example():
    np.testing.assert_array_equal(row_ranks([3.0, 1.0, 3.0, 2.0]), [3.5, 1.0, 3.5, 2.0])
    np.testing.assert_array_equal(row_ranks([5.0, 5.0, 5.0]), [2.0, 2.0, 2.0])


def test_row_ranks_competition_rule_of_protocols():
    # the ExRM paper's Table 1 rule: equal means ordered by the smaller std; identical pairs share
    # the lower rank
    means = [17.17, 17.17, 16.0, 24.47, 24.47, 30.0]
    stds = [1.25, 2.30, 1.0, 0.89, 0.89, 0.5]
    np.testing.assert_array_equal(row_ranks(means, stds, rule="competition"), [2, 3, 1, 4, 4, 6])


# rows copied from the published exrm_table1.csv reference (dataset, method, n_base, mean, spread,
# rank): the ranks printed in the ExRM paper, with ties on the mean (heart, sonar) and on mean and
# std (diabetes DRM)
EXRM_ROWS = """dataset,method,n_base,mean,spread,rank
diabetes,L1-ExRM,10,24.73,1.44,4
sonar,L1-ExRM,10,23.62,3.64,4
heart,L1-ExRM,10,17.17,1.25,2
diabetes,L2-ExRM,10,24.34,0.92,1
sonar,L2-ExRM,10,23.79,4.36,5
heart,L2-ExRM,10,17.83,1.81,4
diabetes,AdaTree,10,29.24,2.73,7
sonar,AdaTree,10,27.59,6.08,10
heart,AdaTree,10,47.83,3.25,9
diabetes,BagTree,10,30.63,3.38,9
sonar,BagTree,10,25.00,8.26,6
heart,BagTree,10,47.58,1.94,7
diabetes,DRM,10,24.47,0.89,2
sonar,DRM,10,27.07,3.05,9
heart,DRM,10,19.00,2.22,5
diabetes,L1-ExRM,30,33.50,1.92,10
sonar,L1-ExRM,30,23.62,2.82,3
heart,L1-ExRM,30,17.17,2.30,3
diabetes,L2-ExRM,30,25.42,1.41,5
sonar,L2-ExRM,30,21.55,3.66,1
heart,L2-ExRM,30,17.08,1.26,1
diabetes,AdaTree,30,29.85,2.77,8
sonar,AdaTree,30,25.17,7.63,7
heart,AdaTree,30,47.58,3.27,8
diabetes,BagTree,30,28.58,2.81,6
sonar,BagTree,30,21.72,4.24,2
heart,BagTree,30,48.08,4.21,10
diabetes,DRM,30,24.47,0.89,2
sonar,DRM,30,26.55,3.91,8
heart,DRM,30,19.00,2.51,6
"""


def test_competition_ranks_reproduce_printed_exrm_ranks():
    frame = pd.read_csv(io.StringIO(EXRM_ROWS))
    for _, rows in frame.groupby("dataset"):
        assert len(rows) == 10
        ranks = row_ranks(rows["mean"], rows["spread"], rule="competition")
        np.testing.assert_array_equal(ranks, rows["rank"].to_numpy(dtype=float))


def test_average_ranks_skip_incomplete_datasets():
    means = np.array(
        [
            [10.0, 12.0, 11.0],  # ranks 1, 3, 2
            [5.0, 5.0, 7.0],  # ranks 1.5, 1.5, 3
            [1.0, np.nan, 0.5],  # incomplete: left out
        ]
    )
    ranks, n_used = average_ranks(means)
    assert n_used == 2
    np.testing.assert_allclose(ranks, [(1 + 1.5) / 2, (3 + 1.5) / 2, (2 + 3) / 2])
    empty, n0 = average_ranks(np.array([[1.0, np.nan]]))
    assert n0 == 0 and np.isnan(empty).all()


@pytest.mark.parametrize(
    ("ours", "ours_se", "pub", "pub_se", "expected"),
    [
        (27.4, 1.2, 26.97, 0.55, True),  # |0.43| <= 1.5
        (30.0, 0.1, 27.0, 0.1, False),  # 3.0 > max(2*0.141, 1.5)
        (30.0, 1.2, 27.0, 0.9, True),  # 3.0 <= 2*1.5 = 3.0 (boundary)
        (30.0, 1.2, 27.0, 0.89, False),  # 3.0 > 2*sqrt(1.44+0.7921)
        (10.0, None, 8.6, None, True),  # no spreads: floor only
        (10.0, None, 8.4, None, False),
    ],
)
def test_within_tolerance(ours, ours_se, pub, pub_se, expected):
    assert within_tolerance(ours, ours_se, pub, pub_se) is expected


def test_agreement_of_means_uses_standard_errors():
    """Per-run spreads of 5.44 (ours) and 4.7 points (published), 10 runs each, as on sonar.

    The per-run spreads would allow 2 × sqrt(5.44² + 4.7²) ≈ 14.4 points; the standard errors of
    the two means allow 2 × sqrt(5.44²/10 + 4.7²/10) ≈ 4.55 points.
    """
    ours = np.array([20.0, 30.0, 25.0, 35.0, 22.0, 28.0, 18.0, 33.0, 27.0, 26.0])
    se_o = float(np.std(ours, ddof=1) / np.sqrt(ours.size))
    se_p = published_stderr(4.7, "std", 10)
    assert se_p == pytest.approx(4.7 / np.sqrt(10))
    band = 2 * np.sqrt(np.var(ours, ddof=1) / 10 + 4.7**2 / 10)
    mean = float(ours.mean())
    assert within_tolerance(mean, se_o, mean - band + 1e-9, se_p)
    assert not within_tolerance(mean, se_o, mean - band - 1e-6, se_p)
    assert not within_tolerance(mean, se_o, mean - 8.0, se_p)  # inside the old ±14.4 band


@pytest.mark.parametrize(
    ("spread", "kind", "n_runs", "fallback", "expected"),
    [
        (2.0, "std", 4, None, 1.0),  # a standard deviation over 4 runs
        (2.0, "stderr", 4, None, 2.0),  # already a standard error
        (2.0, "std", None, 16, 0.5),  # the paper's count unknown: ours assumed
        (2.0, "std", None, None, 2.0),  # nothing known: one run
        (None, "std", 10, None, 0.0),  # no printed spread
        (2.0, "none", 10, None, 0.0),
    ],
)
def test_published_stderr(spread, kind, n_runs, fallback, expected):
    assert published_stderr(spread, kind, n_runs, n_fallback=fallback) == pytest.approx(expected)
