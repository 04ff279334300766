"""Statistics over data sets from one store: is a difference between methods real?

:func:`build_comparison` reads a store into a :class:`Comparison`: one number per (data set,
method), the frequentist tests of :mod:`kernbench.report.stat_tests` on it, and with ``bayes``
the Bayesian tests of :mod:`kernbench.report.bayes`. :mod:`kernbench.report.significance_text`
renders it as markdown (``kernbench significance``), :mod:`kernbench.report.significance_html` as
HTML tables (``kernbench report --html``), :mod:`kernbench.report.cd_diagram` draws it.

One number per cell, computed one way: the mean of a cell's realisations in realisation order,
from exact error counts where the value is an error rate (:func:`kernbench.report.stats.cell_mean`,
the number ``kernbench table`` shows), so that neither the order cells finished in nor the order
of the store's rows changes any statistic.

What the comparison leaves out, it names with the reason (:attr:`Comparison.excluded`):

* a method with no finished cell at all (not run, or every cell failed) is left out;
* a realisation some method has no value for (failed, missing) is left out of that data set for
  every method, so that the comparison stays paired: the data set's means are over the
  realisations every method finished;
* a data set where no realisation is complete is left out;
* time-outs: with ``timeouts="exclude"`` (the default) a data set on which any method timed out is
  left out; with ``timeouts="loss"`` a method that timed out on a realisation of a data set is
  ranked last there (its mean is taken as +inf), which counts the time-out as a loss. Failed cells
  are never counted as losses.

Per data set, the corrected resampled t-test (and the Bayesian correlated t-test) uses the
correlation of the split design: ρ = n_test / n_pool, the pool being the rows the training and test
parts are drawn from (:func:`kernbench.report.stat_tests.split_correlation`): recorded with the
split (``split_info["n_pool"]``), else the catalogue's row count for an unfiltered catalogue data
set, else n_train + n_test (Nadeau & Bengio's whole-data design, the most conservative choice).
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from kernbench.cells.records import PERCENT_VALUES
from kernbench.report.bayes import (
    BayesResult,
    correlated_ttest_probs,
    signed_rank_probs,
)
from kernbench.report.collect import Experiment, as_experiment, cell_values
from kernbench.report.stat_tests import (
    FriedmanResult,
    PairTest,
    SetTest,
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
    win_tie_loss,
)
from kernbench.report.stats import cell_mean

Timeouts = Literal["exclude", "loss"]

#: the default region of practical equivalence, in points of error (the value's unit)
DEFAULT_ROPE = 1.0

__all__ = [
    "DEFAULT_ROPE",
    "Comparison",
    "FriedmanResult",
    "PairTest",
    "Pool",
    "SetTest",
    "build_comparison",
    "cd_cliques",
    "corrected_resampled_ttest",
    "critical_difference",
    "friedman",
    "holm",
    "nemenyi_q",
    "rank_matrix",
    "wilcoxon_holm",
    "win_tie_loss",
]


@dataclass(frozen=True)
class Pool:
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
    """Every statistic of one store's methods over its data sets (see the module docstring).

    ``scores`` is (data sets × methods) of per-dataset means over the realisations every method
    finished; ``datasets`` the data sets used; ``excluded`` names what was left out and why
    (``(what, reason)``); ``dropped`` the realisations left out of a used data set;
    ``timed_out`` the ``(dataset, method)`` pairs with a timed-out realisation.
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
    pools: dict[str, Pool] = field(default_factory=dict)
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


def _lower_is_better(value: str) -> bool:
    return "accuracy" not in value and "auc" not in value


def _pool(rows: Sequence[dict[str, Any]]) -> Pool | None:
    """The split design of a data set from any of its rows with sizes (see the module docs)."""
    for row in rows:
        res = row.get("result") or {}
        n_train, n_test = res.get("n_train"), res.get("n_test")
        if not (n_train and n_test):
            continue
        n_train, n_test = int(n_train), int(n_test)
        info = res.get("split_info") or {}
        if isinstance(info.get("n_pool"), int | float) and info["n_pool"] > 0:
            return Pool(n_train, n_test, int(info["n_pool"]), "recorded")
        n = _catalogue_rows(info)
        if n is not None and n >= n_train + n_test:
            return Pool(n_train, n_test, n, "catalogue")
        return Pool(n_train, n_test, n_train + n_test, "n_train + n_test")
    return None


def _catalogue_rows(info: dict[str, Any]) -> int | None:
    """The catalogue's row count of a randomly split, unfiltered catalogue data set."""
    if info.get("split") != "random" or not info.get("dataset"):
        return None
    options = info.get("options") or {}
    if options.get("negative") not in (None, [], ()):  # a subset of the classes: fewer rows
        return None
    from kernbench.datasets.catalog import get_dataset

    try:
        entry = get_dataset(str(info["dataset"]))
    except Exception:  # a user's data set this process does not know
        return None
    n = getattr(entry, "n", None)
    return int(n) if isinstance(n, int) and n > 0 else None


def _pairs(methods: Sequence[str], control: str | None) -> list[tuple[str, str]]:
    return [
        (a, b)
        for i, a in enumerate(methods)
        for b in methods[i + 1 :]
        if control is None or control in (a, b)
    ]


def _status_words(rows: Sequence[dict[str, Any]]) -> str:
    """``3 done, 7 failed``: the cells by status."""
    counts = Counter(row["status"] for row in rows)
    return ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))


def build_comparison(
    source: Experiment | str | os.PathLike[str],
    *,
    value: str = "test_error",
    alpha: float = 0.05,
    control: str | None = None,
    timeouts: Timeouts = "exclude",
    bayes: bool = False,
    rope: float | None = None,
    leave_out: Sequence[str] = (),
) -> Comparison:
    """The statistics over data sets of one store (the plan's methods and data sets).

    Parameters
    ----------
    source : Experiment or path
    value : str
        The table value compared (lower is better unless it is an accuracy or AUC).
    alpha : float
    control : str, optional
        Compare every method with this one (default: every pair).
    timeouts : "exclude" | "loss"
    bayes : bool
        Also the Bayesian signed-rank test over data sets and the Bayesian correlated t-test per
        data set, with the rope ``rope`` (default :data:`DEFAULT_ROPE` points for errors).
    leave_out : sequence of str
        Data sets to leave out (a sensitivity check); named in :attr:`Comparison.excluded`.

    Raises
    ------
    ValueError
        ``control`` is not a method of the store, or has no results; a data set of
        ``leave_out`` is not in the store.
    """
    exp = as_experiment(source)
    if control is not None and control not in exp.methods:
        raise ValueError(f"--control {control!r} is no method of the store ({exp.methods})")
    unknown = [d for d in leave_out if d not in exp.datasets]
    if unknown:
        raise ValueError(
            f"no data set {', '.join(map(repr, unknown))} in the store ({exp.datasets})"
        )
    lower = _lower_is_better(value)
    percent = value in PERCENT_VALUES
    excluded: list[tuple[str, str]] = []

    # methods: left out when no cell of theirs has a value or a time-out (named, with why)
    methods = []
    for m in exp.methods:
        cells = [exp.rows.get((d, m), {}) for d in exp.datasets]
        has_value = any(cell_values(c, value)[0] for c in cells)
        timed = any(row["status"] == "timeout" for c in cells for row in c.values())
        if has_value or timed:
            methods.append(m)
            continue
        rows = [row for c in cells for row in c.values()]
        if not rows:
            excluded.append((m, "not run (no stored cell)"))
        else:
            excluded.append((m, f"no finished cell with a value ({_status_words(rows)})"))
    if control is not None and control not in methods:
        raise ValueError(f"--control {control!r} has no results in the store")

    loss = math.inf if lower else -math.inf
    timed_out: list[tuple[str, str]] = []
    rows_means: list[list[float]] = []
    used: list[str] = []
    left_out: list[str] = []
    dropped: dict[str, str] = {}
    per_values: dict[str, dict[str, dict[int, float]]] = {}
    pools: dict[str, Pool] = {}
    for d in exp.datasets:
        if d in leave_out:
            excluded.append((d, "left out on request (--leave-out)"))
            continue
        cells = {m: exp.rows.get((d, m), {}) for m in methods}
        if not any(cells.values()):
            continue  # not run at all (a partial run, `--only`): not part of the comparison
        vals = {m: cell_values(cells[m], value) for m in methods}
        per_values[d] = {m: v for m, (v, _) in vals.items()}
        pool = _pool([row for c in cells.values() for row in c.values()])
        if pool is not None:
            pools[d] = pool
        timed = [m for m in methods if any(r["status"] == "timeout" for r in cells[m].values())]
        timed_out += [(d, m) for m in timed]
        if timed and timeouts == "exclude":
            left_out.append(d)
            excluded.append((d, f"timed out: {', '.join(timed)}"))
            continue
        # only the realisations every (not timed-out) method finished: the comparison is paired
        finishers = [m for m in methods if m not in timed]
        common = set.intersection(*(set(vals[m][0]) for m in finishers)) if finishers else set()
        every = set().union(*(set(c) for c in cells.values()))
        if finishers and not common:
            left_out.append(d)
            lacking = [m for m in finishers if not vals[m][0]]
            why = (
                f"no finished value from {', '.join(lacking)}"
                if lacking
                else "no realisation every method finished"
            )
            excluded.append((d, why))
            continue
        missing = sorted(every - common)
        if missing and finishers:
            who = sorted({m for m in finishers for r in missing if r not in vals[m][0]})
            dropped[d] = (
                f"realisation(s) {', '.join(str(r + 1) for r in missing)} left out "
                f"(no value from {', '.join(who)}): means over the {len(common)} realisations "
                "every method finished"
            )
        row_means = []
        for m in methods:
            if m in timed:
                row_means.append(loss)
                continue
            v, sizes = vals[m]
            keep = {r: v[r] for r in sorted(common)}
            mean = cell_mean(keep, {r: sizes[r] for r in keep if r in sizes}, percent=percent)
            row_means.append(float(mean))  # type: ignore[arg-type]
        rows_means.append(row_means)
        used.append(d)
    scores = np.array(rows_means, dtype=float).reshape(len(used), len(methods))
    comp = Comparison(
        value,
        methods,
        used,
        scores,
        alpha,
        timeouts,
        control,
        left_out=left_out,
        excluded=excluded,
        dropped=dropped,
        timed_out=timed_out,
        lower_is_better=lower,
        pools=pools,
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
        by_method = per_values[d]
        pool = pools.get(d)
        tests: list[SetTest] = []
        post: list[BayesResult] = []
        for a, b in _pairs(methods, control):
            shared = sorted(set(by_method[a]) & set(by_method[b]))
            diffs = np.array([by_method[a][r] - by_method[b][r] for r in shared])
            mean_diff = float(np.mean(diffs)) if shared else math.nan
            if pool is None:
                continue
            t, p, note = corrected_ttest(diffs, pool.rho)
            tests.append(SetTest(a, b, t, p, mean_diff, len(shared), note))
            if bayes and comp.rope is not None:
                left, eq, right, bnote = correlated_ttest_probs(diffs, pool.rho, comp.rope)
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
