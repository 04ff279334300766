"""The statistics of a comparison over data sets, on arrays: is a difference between methods real?

:func:`compare` takes one number per (data set, method) (``scores``), each data set's paired
realisation values and split design, and returns a :class:`Comparison` holding every test: the
frequentist tests of :mod:`kernbench.report.stat_tests` over data sets (Friedman/Iman–Davenport,
the Nemenyi critical difference, exact Wilcoxon with Holm, win/tie/loss) and per data set (the
corrected resampled t-test), and with ``bayes`` the Bayesian tests of
:mod:`kernbench.report.bayes`. It reads no store:
:func:`kernbench.report.significance.build_comparison` turns a store into these arrays (and says
what it left out); :mod:`kernbench.report.significance_text`,
:mod:`kernbench.report.significance_html` and :mod:`kernbench.report.cd_diagram` render the result.

A time-out counted as a loss is a score of +inf (−inf where higher is better): ranked last by the
Friedman test, and for the Wilcoxon test replaced by a value worse than any finite one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from kernbench.report.bayes import (
    BayesResult,
    correlated_ttest_probs,
    signed_rank_probs,
)
from kernbench.report.stat_tests import (
    FriedmanResult,
    PairTest,
    SetTest,
    corrected_ttest,
    critical_difference,
    friedman,
    min_wilcoxon_p,
    rank_matrix,
    split_correlation,
    wilcoxon_holm,
    win_tie_loss,
)

Timeouts = Literal["exclude", "loss"]

#: the default region of practical equivalence, in points of error (the value's unit)
DEFAULT_ROPE = 1.0

__all__ = [
    "DEFAULT_ROPE",
    "Comparison",
    "SplitDesign",
    "Timeouts",
    "compare",
    "lower_is_better",
]


@dataclass(frozen=True)
class SplitDesign:
    """The split design of one data set: ``n_train`` and ``n_test`` rows drawn from ``n_pool``.

    ``source`` says where ``n_pool`` came from: ``recorded``, ``catalogue`` or
    ``n_train + n_test``.
    """

    n_train: int
    n_test: int
    n_pool: int
    source: str

    @property
    def rho(self) -> float:
        return split_correlation(self.n_train, self.n_test, self.n_pool)


@dataclass
class Comparison:
    """Every statistic of a set of methods over data sets (see :func:`compare`).

    ``scores`` is (data sets × methods) of per-dataset means over the realisations every method
    finished; ``datasets`` the data sets used; ``excluded`` names what was left out and why
    (``(what, reason)``); ``dropped`` the realisations left out of a used data set;
    ``timed_out`` the ``(dataset, method)`` pairs with a timed-out realisation; ``designs``
    each data set's split design.
    """

    value: str
    methods: list[str]
    datasets: list[str]
    scores: np.ndarray
    alpha: float
    timeouts: Timeouts
    control: str | None = None
    left_out: list[str] = field(default_factory=list)
    excluded: list[tuple[str, str]] = field(default_factory=list)
    dropped: dict[str, str] = field(default_factory=dict)
    timed_out: list[tuple[str, str]] = field(default_factory=list)
    lower_is_better: bool = True
    friedman: FriedmanResult | None = None
    cd: float | None = None
    pairs: list[PairTest] = field(default_factory=list)
    wtl: np.ndarray | None = None
    per_dataset: dict[str, list[SetTest]] = field(default_factory=dict)
    designs: dict[str, SplitDesign] = field(default_factory=dict)
    rope: float | None = None
    bayes: list[BayesResult] = field(default_factory=list)
    bayes_per_dataset: dict[str, list[BayesResult]] = field(default_factory=dict)

    @property
    def n_pairs(self) -> int:
        return len(self.pairs)

    @property
    def min_p(self) -> float:
        """The smallest Wilcoxon p-value N data sets allow, and after Holm over the pairs."""
        return min_wilcoxon_p(len(self.datasets))

    def rank_of(self, method: str) -> float:
        assert self.friedman is not None
        return float(self.friedman.average_ranks[self.methods.index(method)])


def lower_is_better(value: str) -> bool:
    """Whether a smaller ``value`` is better: every value but an accuracy or an AUC."""
    return "accuracy" not in value and "auc" not in value


def _pairs(methods: Sequence[str], control: str | None) -> list[tuple[str, str]]:
    return [
        (a, b)
        for i, a in enumerate(methods)
        for b in methods[i + 1 :]
        if control is None or control in (a, b)
    ]


def compare(
    scores: np.ndarray,
    methods: Sequence[str],
    datasets: Sequence[str],
    *,
    values: Mapping[str, Mapping[str, Mapping[int, float]]],
    designs: Mapping[str, SplitDesign],
    value: str = "test_error",
    alpha: float = 0.05,
    control: str | None = None,
    timeouts: Timeouts = "exclude",
    bayes: bool = False,
    rope: float | None = None,
) -> Comparison:
    """Every test of ``methods`` over ``datasets``.

    Parameters
    ----------
    scores : ndarray of shape (len(datasets), len(methods))
        One number per (data set, method); ±inf for a time-out counted as a loss.
    methods, datasets : sequence of str
    values : mapping
        ``dataset -> method -> {realisation: value}``: the realisation values the per-data-set
        tests pair (on the realisations both methods of a pair have); needed for the data sets
        with a split design.
    designs : mapping
        ``dataset -> SplitDesign``; a data set without one gets no per-data-set test.
    value : str
        The compared value (lower is better unless it is an accuracy or AUC).
    alpha : float
    control : str, optional
        Compare every method with this one (default: every pair).
    timeouts : "exclude" | "loss"
        Recorded in the result (the caller has applied it to ``scores``).
    bayes : bool
        Also the Bayesian signed-rank test over data sets and the Bayesian correlated t-test per
        data set, with the rope ``rope`` (default :data:`DEFAULT_ROPE` points for errors).
    """
    methods, used = list(methods), list(datasets)
    lower = lower_is_better(value)
    comp = Comparison(
        value,
        methods,
        used,
        scores,
        alpha,
        timeouts,
        control,
        lower_is_better=lower,
        designs=dict(designs),
    )
    k, n = len(methods), len(used)
    if k >= 2 and n >= 2:
        comp.friedman = friedman(rank_matrix(scores, lower_is_better=lower))
        comp.cd = critical_difference(k, n, alpha)
        finite = np.where(np.isinf(scores), np.nan, scores)
        if np.isnan(finite).any():  # a time-out counted as a loss: worse than any finite value
            worst = np.nanmax(np.abs(finite)) if np.isfinite(finite).any() else 1.0
            finite = np.where(np.isnan(finite), (1 if lower else -1) * (10.0 * worst + 1.0), finite)
        comp.pairs = wilcoxon_holm(finite, methods, control, lower_is_better=lower)
        comp.wtl = win_tie_loss(scores, lower_is_better=lower)
    if bayes:
        comp.rope = DEFAULT_ROPE if rope is None else float(rope)
        if k >= 2 and n >= 1:
            comp.bayes = _bayes_over_datasets(comp)
    for d in used:
        design = designs.get(d)
        tests: list[SetTest] = []
        post: list[BayesResult] = []
        for a, b in _pairs(methods, control) if design is not None else ():
            by_method = values[d]
            shared = sorted(set(by_method[a]) & set(by_method[b]))
            diffs = np.array([by_method[a][r] - by_method[b][r] for r in shared])
            mean_diff = float(np.mean(diffs)) if shared else math.nan
            t, p, note = corrected_ttest(diffs, design.rho)
            tests.append(SetTest(a, b, t, p, mean_diff, len(shared), note))
            if bayes and comp.rope is not None:
                left, eq, right, bnote = correlated_ttest_probs(diffs, design.rho, comp.rope)
                pa, pb = (left, right) if lower else (right, left)
                post.append(BayesResult(a, b, pa, eq, pb, "correlated t", bnote))
        comp.per_dataset[d] = tests
        if bayes:
            comp.bayes_per_dataset[d] = post
    return comp


def _bayes_over_datasets(comp: Comparison) -> list[BayesResult]:
    """The Bayesian signed-rank test of every pair (or every pair with the control) on the
    per-data-set means (a time-out counted as a loss is left out of that pair)."""
    out = []
    rope = comp.rope or 0.0
    for a, b in _pairs(comp.methods, comp.control):
        d = comp.scores[:, comp.methods.index(a)] - comp.scores[:, comp.methods.index(b)]
        d = d[np.isfinite(d)]
        if d.size == 0:
            continue
        left, eq, right = signed_rank_probs(d, rope)
        pa, pb = (left, right) if comp.lower_is_better else (right, left)
        out.append(BayesResult(a, b, pa, eq, pb, "signed-rank"))
    return out
