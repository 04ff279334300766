"""Shen & Liu Fig. 3: test error and training time vs iteration for the multi-class methods.

Built from the per-iteration traces the runner stores for every iterative cell (``iteration``,
``test_error`` from the staged predictions of the final, CV-selected fit, and the method's own
cumulative ``time_s``). One column per dataset; top row test error (%), bottom row training time
(s); one line per method. By default (our choice): values at iterations
{10, 25, 50, 100, 200, 300, 400, 500} of one run (``realisation=0``) with the CV-selected C; pass
``realisation=None`` for the mean over all finished realisations instead.

A method that stopped early at J < T (converged) keeps its last value for every later iteration,
as the runner scores its path.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from kernbench.report.collect import Experiment, as_experiment
from kernbench.report.figures import mean_trace

#: the iterations Fig. 3 records (our choice; the paper does not list them)
FIG3_ITERATIONS: tuple[int, ...] = (10, 25, 50, 100, 200, 300, 400, 500)
#: the trace keys drawn: (key, axis label, scale to display units)
FIG3_ROWS: tuple[tuple[str, str, float], ...] = (
    ("test_error", "test error (%)", 100.0),
    ("time_s", "training time (s)", 1.0),
)


def values_at(trace: dict[str, Any], key: str, iterations: Sequence[int]) -> np.ndarray:
    """``trace[key]`` at the given iterations, carrying the last value past an early stop.

    Iterations before the first recorded one are NaN; so are missing keys.
    """
    if key not in trace or not trace.get("iteration"):
        return np.full(len(iterations), np.nan)
    it, mean = mean_trace([trace], key)
    idx = np.searchsorted(it, np.asarray(iterations, dtype=float), side="right") - 1
    return np.where(idx >= 0, mean[np.maximum(idx, 0)], np.nan)


def fig3_series(
    exp: Experiment,
    dataset: str,
    method: str,
    key: str,
    iterations: Sequence[int] = FIG3_ITERATIONS,
    realisation: int | None = 0,
) -> np.ndarray:
    """One curve of Fig. 3: ``key`` at ``iterations`` for (dataset, method).

    Parameters
    ----------
    exp : Experiment
        From :func:`kernbench.report.collect.load_experiment`.
    dataset, method : str
        Row and column labels of the experiment.
    key : str
        A trace key (``"test_error"``, ``"time_s"``, ...).
    iterations : sequence of int
    realisation : int or None
        One run (the protocol's choice) or None for the mean over the finished realisations.

    Returns
    -------
    ndarray of shape (len(iterations),)
        NaN where no finished cell has the value.
    """
    rows = exp.rows.get((dataset, method), {})
    traces = [
        (r, (row.get("result") or {}).get("trace"))
        for r, row in sorted(rows.items())
        if row.get("status") == "done"
    ]
    traces = [(r, t) for r, t in traces if t and t.get("iteration")]
    if realisation is not None:
        traces = [(r, t) for r, t in traces if r == realisation]
    if not traces:
        return np.full(len(iterations), np.nan)
    stack = np.array([values_at(t, key, iterations) for _, t in traces])
    with np.errstate(invalid="ignore"):
        return np.nanmean(stack, axis=0) if np.isfinite(stack).any() else stack[0]


def fig3_table(
    source: Experiment | str | os.PathLike[str],
    iterations: Sequence[int] = FIG3_ITERATIONS,
    realisation: int | None = 0,
) -> list[dict[str, Any]]:
    """Tidy rows (dataset, method, iteration, test_error_pct, time_s) of every Fig. 3 curve."""
    exp = as_experiment(source)
    out = []
    for d in exp.datasets:
        for m in exp.methods:
            err = fig3_series(exp, d, m, "test_error", iterations, realisation)
            sec = fig3_series(exp, d, m, "time_s", iterations, realisation)
            if np.all(np.isnan(err)) and np.all(np.isnan(sec)):
                continue
            for t, e, s in zip(iterations, err, sec):
                out.append(
                    {
                        "dataset": d,
                        "method": m,
                        "iteration": int(t),
                        "test_error_pct": None if np.isnan(e) else round(100.0 * float(e), 4),
                        "time_s": None if np.isnan(s) else float(s),
                    }
                )
    return out


def fig3_figure(
    source: Experiment | str | os.PathLike[str],
    datasets: Sequence[str] | None = None,
    iterations: Sequence[int] = FIG3_ITERATIONS,
    realisation: int | None = 0,
) -> Figure | None:
    """Fig. 3: test error (top) and training time (bottom) vs iteration, a column per dataset.

    Returns None when no dataset has a trace.
    """
    exp = as_experiment(source)
    names = list(datasets) if datasets is not None else exp.datasets
    curves = {
        d: {
            m: [fig3_series(exp, d, m, key, iterations, realisation) for key, _, _ in FIG3_ROWS]
            for m in exp.methods
        }
        for d in names
    }
    curves = {
        d: {m: c for m, c in by_m.items() if not all(np.all(np.isnan(s)) for s in c)}
        for d, by_m in curves.items()
    }
    curves = {d: by_m for d, by_m in curves.items() if by_m}
    if not curves:
        return None
    n = len(curves)
    fig = Figure(figsize=(3.2 * n + 0.8, 6.0), layout="constrained")
    axes = fig.subplots(2, n, squeeze=False)
    colours = {m: f"C{i % 10}" for i, m in enumerate(exp.methods)}
    x = np.asarray(iterations, dtype=float)
    for col, (d, by_method) in enumerate(curves.items()):
        for row, (_, label, scale) in enumerate(FIG3_ROWS):
            ax = axes[row, col]
            for m, series in by_method.items():
                ax.plot(x, scale * series[row], "o-", ms=3, color=colours[m], label=m)
            ax.set_xlabel("iteration")
            if col == 0:
                ax.set_ylabel(label)
            if row == 0:
                ax.set_title(d)
            ax.grid(alpha=0.3)
    axes[0, 0].legend(fontsize="small")
    run = "mean over realisations" if realisation is None else f"realisation {realisation}"
    fig.suptitle(f"{exp.title} — Fig. 3 layout ({run})", fontsize="medium")
    return fig


def multiclass_figures(source: Experiment | str | os.PathLike[str]) -> dict[str, Figure]:
    """``{"fig3": Figure}`` (empty without traces)."""
    fig = fig3_figure(as_experiment(source))
    return {"fig3": fig} if fig is not None else {}
