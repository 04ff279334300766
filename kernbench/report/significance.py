"""One store -> the comparison over data sets: what is compared, and what is left out and why.

:func:`build_comparison` reads a store into the arrays of
:func:`kernbench.report.comparison.compare` (one number per (data set, method), each data set's
realisation values and split design), which computes every test into a
:class:`~kernbench.report.comparison.Comparison`.
:mod:`kernbench.report.significance_text` renders it as markdown (``kernbench significance``),
:mod:`kernbench.report.significance_html` as HTML tables (``kernbench report --html``),
:mod:`kernbench.report.cd_diagram` draws it.

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
from dataclasses import replace
from typing import Any

import numpy as np

from kernbench.cells.records import PERCENT_VALUES
from kernbench.report.collect import Experiment, as_experiment, cell_values
from kernbench.report.comparison import (
    DEFAULT_ROPE,
    Comparison,
    SplitDesign,
    Timeouts,
    compare,
    lower_is_better,
)
from kernbench.report.stats import cell_mean

__all__ = [
    "DEFAULT_ROPE",
    "Comparison",
    "SplitDesign",
    "Timeouts",
    "build_comparison",
]


def _design(rows: Sequence[dict[str, Any]]) -> SplitDesign | None:
    """The split design of a data set from any of its rows with sizes (see the module docs)."""
    for row in rows:
        res = row.get("result") or {}
        n_train, n_test = res.get("n_train"), res.get("n_test")
        if not (n_train and n_test):
            continue
        n_train, n_test = int(n_train), int(n_test)
        info = res.get("split_info") or {}
        if isinstance(info.get("n_pool"), int | float) and info["n_pool"] > 0:
            return SplitDesign(n_train, n_test, int(info["n_pool"]), "recorded")
        n = _catalogue_rows(info)
        if n is not None and n >= n_train + n_test:
            return SplitDesign(n_train, n_test, n, "catalogue")
        return SplitDesign(n_train, n_test, n_train + n_test, "n_train + n_test")
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
    lower = lower_is_better(value)
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
    designs: dict[str, SplitDesign] = {}
    for d in exp.datasets:
        if d in leave_out:
            excluded.append((d, "left out on request (--leave-out)"))
            continue
        cells = {m: exp.rows.get((d, m), {}) for m in methods}
        if not any(cells.values()):
            continue  # not run at all (a partial run, `--only`): not part of the comparison
        vals = {m: cell_values(cells[m], value) for m in methods}
        per_values[d] = {m: v for m, (v, _) in vals.items()}
        design = _design([row for c in cells.values() for row in c.values()])
        if design is not None:
            designs[d] = design
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
    comp = compare(
        scores,
        methods,
        used,
        values={d: per_values[d] for d in used},
        designs=designs,
        value=value,
        alpha=alpha,
        control=control,
        timeouts=timeouts,
        bayes=bayes,
        rope=rope,
    )
    return replace(comp, left_out=left_out, excluded=excluded, dropped=dropped, timed_out=timed_out)
