"""Per-iteration trace figures: training and test error vs iteration, one line pair per method.

Iterative methods store a ``trace`` in each cell's result: equal-length lists with ``iteration``,
``train_error`` and ``test_error`` (fractions, drawn in percent) and optionally ``time_s`` and
method-specific keys. A figure per dataset shows the mean over the realisations with status
``done``; a second panel shows ``time_s`` vs iteration when any method recorded it.

Realisations are aligned on the union of their iteration values; a realisation that stopped early
(converged at J < T) keeps its last value for later iterations, exactly as the runner scores every
T >= J with the last staged model.

Figures are built with :class:`matplotlib.figure.Figure` (Agg canvas, no pyplot state), so they
work headless and in worker processes.
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Sequence
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from kernbench.report.collect import Experiment, as_experiment

ERROR_KEYS = ("train_error", "test_error")
TIME_KEY = "time_s"


def mean_trace(traces: Sequence[dict[str, Any]], key: str) -> tuple[np.ndarray, np.ndarray]:
    """Mean of ``trace[key]`` over realisations on the union of their iteration values.

    Parameters
    ----------
    traces : sequence of dict
        Per-realisation traces, each with ``iteration`` and ``key`` of equal length (``None``
        entries are missing values).
    key : str

    Returns
    -------
    (iterations, mean)
        A realisation contributes its last value at or before each iteration (carry forward after
        it stopped) and nothing before its first recorded iteration.
    """
    usable = [t for t in traces if key in t and len(t[key]) and len(t[key]) == len(t["iteration"])]
    if not usable:
        return np.empty(0), np.empty(0)
    grid = np.unique(np.concatenate([np.asarray(t["iteration"], dtype=float) for t in usable]))
    stack = np.full((len(usable), grid.size), np.nan)
    for i, t in enumerate(usable):
        it = np.asarray(t["iteration"], dtype=float)
        y = np.array([np.nan if v is None else v for v in t[key]], dtype=float)
        order = np.argsort(it, kind="stable")
        it, y = it[order], y[order]
        idx = np.searchsorted(it, grid, side="right") - 1  # last recorded iteration <= grid value
        stack[i] = np.where(idx >= 0, y[np.maximum(idx, 0)], np.nan)
    finite = np.isfinite(stack)
    counts = finite.sum(axis=0)
    sums = np.where(finite, stack, 0.0).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    return grid, mean


def _traces(exp: Experiment, dataset: str, method: str) -> list[dict[str, Any]]:
    rows = exp.rows.get((dataset, method), {})
    out = []
    for _, row in sorted(rows.items()):
        trace = (row.get("result") or {}).get("trace")
        if row["status"] == "done" and trace and trace.get("iteration"):
            out.append(trace)
    return out


def trace_figure(title: str, traces_by_method: dict[str, list[dict[str, Any]]]) -> Figure | None:
    """The trace figure of one dataset (``None`` when no method has a trace).

    Left panel: training (dashed) and test (solid) error in percent vs iteration, one colour per
    method. Right panel, when any trace has ``time_s``: seconds vs iteration.
    """
    methods = {m: t for m, t in traces_by_method.items() if t}
    if not methods:
        return None
    has_time = any(TIME_KEY in t for traces in methods.values() for t in traces)
    fig = Figure(figsize=(11.0 if has_time else 6.5, 4.2), layout="constrained")
    axes = fig.subplots(1, 2 if has_time else 1, squeeze=False)[0]
    ax_err = axes[0]
    colours = [f"C{i % 10}" for i in range(len(methods))]
    x_max = 1.0
    for colour, (method, traces) in zip(colours, methods.items(), strict=True):
        n = len(traces)
        for key, style in (("test_error", "-"), ("train_error", "--")):
            it, mean = mean_trace(traces, key)
            if it.size:
                label = f"{method} {key.split('_')[0]} (n={n})"
                ax_err.plot(it, 100.0 * mean, style, color=colour, label=label)
                x_max = max(x_max, float(it.max()))
        if has_time:
            it, mean = mean_trace(traces, TIME_KEY)
            if it.size:
                axes[1].plot(it, mean, "-", color=colour, label=method)
    ax_err.set_xlabel("iteration")
    ax_err.set_ylabel("error (%), mean over realisations")
    ax_err.set_title(textwrap.fill(title, 55), fontsize="medium")  # long spec titles wrap
    ax_err.legend(fontsize="small")
    ax_err.grid(alpha=0.3)
    if has_time:
        axes[1].set_xlabel("iteration")
        axes[1].set_ylabel("time (s), mean over realisations")
        axes[1].set_title("time")
        axes[1].legend(fontsize="small")
        axes[1].grid(alpha=0.3)
    if x_max >= 100:
        for ax in axes:
            ax.set_xscale("log")
    return fig


def trace_figures(source: Experiment | str | os.PathLike[str]) -> dict[str, Figure]:
    """``dataset label -> Figure`` for every dataset with at least one trace (spec order)."""
    exp = as_experiment(source)
    figures = {}
    for d in exp.datasets:
        fig = trace_figure(f"{exp.title}: {d}", {m: _traces(exp, d, m) for m in exp.methods})
        if fig is not None:
            figures[d] = fig
    return figures
