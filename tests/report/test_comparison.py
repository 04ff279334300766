"""The comparison's statistics as pure functions of arrays (no store): numbers against scipy and a
hand computation of the corrected resampled t-test."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from kernbench.report.comparison import SplitDesign, compare, lower_is_better

METHODS = ["a", "b", "c"]
DATASETS = ["d1", "d2", "d3", "d4", "d5"]
SCORES = np.array(
    [
        [10.0, 12.0, 15.0],
        [20.0, 19.0, 25.0],
        [5.0, 7.0, 6.0],
        [30.0, 33.0, 35.0],
        [8.0, 9.5, 9.0],
    ]
)
#: realisation values of d1 (the per-data-set tests pair them)
D1 = {"a": {0: 9.0, 1: 10.0, 2: 11.0}, "b": {0: 11.0, 1: 12.5, 2: 12.5}, "c": {0: 15.0, 1: 15.0}}


def _compare(**kw):
    values = {
        d: {m: {0: float(SCORES[i, j])} for j, m in enumerate(METHODS)}
        for i, d in enumerate(DATASETS)
    }
    values["d1"] = D1
    designs = {"d1": SplitDesign(n_train=100, n_test=50, n_pool=500, source="recorded")}
    return compare(SCORES, METHODS, DATASETS, values=values, designs=designs, **kw)


def test_friedman_and_ranks_match_scipy():
    comp = _compare()
    ranks = np.vstack([stats.rankdata(row) for row in SCORES]).mean(axis=0)
    np.testing.assert_allclose(comp.friedman.average_ranks, ranks)
    chi2, p = stats.friedmanchisquare(*SCORES.T)
    assert comp.friedman.chi2 == pytest.approx(chi2)
    assert comp.friedman.p_chi2 == pytest.approx(p)
    assert comp.lower_is_better and comp.value == "test_error"
    assert comp.n_pairs == 3 and comp.cd is not None and comp.cd > 0


def test_the_per_dataset_test_is_the_corrected_resampled_t_test_on_shared_realisations():
    comp = _compare()
    tests = {(s.a, s.b): s for s in comp.per_dataset["d1"]}
    d = np.array([9.0 - 11.0, 10.0 - 12.5, 11.0 - 12.5])
    rho = 50 / 500
    t = d.mean() / math.sqrt((1 / 3 + rho / (1 - rho)) * d.var(ddof=1))
    assert tests["a", "b"].t == pytest.approx(t)
    assert tests["a", "b"].p == pytest.approx(2 * stats.t.sf(abs(t), 2))
    assert tests["a", "c"].n == 2  # only the realisations both have
    assert "d2" not in comp.per_dataset or comp.per_dataset["d2"] == []  # no split design


def test_a_control_keeps_only_its_pairs_and_a_timeout_loss_ranks_last():
    comp = _compare(control="b")
    assert {(p.a, p.b) for p in comp.pairs} == {("a", "b"), ("b", "c")}
    scores = SCORES.copy()
    scores[0, 0] = math.inf  # a timed out on d1, counted as a loss
    lost = compare(scores, METHODS, DATASETS, values={}, designs={}, timeouts="loss")
    assert lost.friedman.average_ranks[0] > _compare().friedman.average_ranks[0]


def test_bayes_posteriors_sum_to_one_and_higher_is_better_for_accuracies():
    comp = _compare(bayes=True)
    assert comp.rope == 1.0 and len(comp.bayes) == 3
    for r in comp.bayes:
        assert r.p_a + r.p_rope + r.p_b == pytest.approx(1.0)
    assert not lower_is_better("test_accuracy") and lower_is_better("test_error")
