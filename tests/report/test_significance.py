"""Statistics over data sets, checked against Demšar (2006)'s worked example and against
independent computations (scipy's Friedman test, brute-force Holm, the plain t formula)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from kernbench.report.significance import (
    cd_cliques,
    cd_figure,
    corrected_resampled_ttest,
    critical_difference,
    friedman,
    holm,
    nemenyi_q,
    rank_matrix,
    wilcoxon_holm,
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


def test_cd_figure_names_every_method():
    fig = cd_figure([1.2, 2.5, 3.1, 3.2], ["A", "B", "C", "D"], 1.25, "t")
    texts = " ".join(t.get_text() for t in fig.axes[0].texts)
    assert all(name in texts for name in "ABCD") and "CD = 1.25" in texts


def _experiment(cells):
    """An Experiment of ``{(dataset, method): [(status, error), ...]}`` (errors as fractions)."""
    from pathlib import Path

    from kernbench.report.collect import Experiment

    datasets = list(dict.fromkeys(d for d, _ in cells))
    methods = list(dict.fromkeys(m for _, m in cells))
    rows = {
        key: {
            r: {"status": st, "test_error": err, "result": {"n_train": 100, "n_test": 50}}
            for r, (st, err) in enumerate(values)
        }
        for key, values in cells.items()
    }
    return Experiment(Path("."), "t", "t", datasets, methods, rows, dict.fromkeys(datasets, 2))


def test_a_timed_out_cell_leaves_its_dataset_out_or_counts_as_a_loss():
    from kernbench.report.significance import build_comparison, render_comparison

    cells = {}
    for i, d in enumerate(["d1", "d2", "d3", "d4"]):
        cells[(d, "A")] = [("done", 0.10 + 0.01 * i), ("done", 0.12 + 0.01 * i)]
        cells[(d, "B")] = [("done", 0.20), ("done", 0.22)]
        cells[(d, "C")] = [("done", 0.30), ("done", 0.31)]
    cells[("d4", "A")] = [("done", 0.05), ("timeout", None)]
    exp = _experiment(cells)
    excluded = build_comparison(exp)
    assert excluded.datasets == ["d1", "d2", "d3"] and excluded.left_out == ["d4"]
    assert excluded.timed_out == [("d4", "A")]
    assert excluded.friedman.average_ranks.tolist() == [1.0, 2.0, 3.0]
    text = render_comparison(excluded)
    assert "Timed out (their data sets left out): A on d4" in text
    loss = build_comparison(exp, timeouts="loss")
    assert loss.datasets == ["d1", "d2", "d3", "d4"]
    assert loss.friedman.average_ranks.tolist() == pytest.approx([1.5, 1.75, 2.75])
    assert loss.wtl[0, 1].tolist() == [3, 0, 1]  # A loses d4 to B by its time-out
    # a method that timed out everywhere stays in the comparison (and leaves every set out)
    cells.update({(d, "D"): [("timeout", None)] for d in ["d1", "d2", "d3", "d4"]})
    everywhere = build_comparison(_experiment(cells))
    assert everywhere.methods == ["A", "B", "C", "D"] and everywhere.datasets == []
    assert everywhere.friedman is None
    # the corrected t-test per data set: A against C on d1 from the two realisations
    (a, c, t, p) = next(x for x in loss.per_dataset["d1"] if x[:2] == ("A", "C"))
    assert t == pytest.approx(corrected_resampled_ttest([10.0, 12.0], [30.0, 31.0], 100, 50)[0])
