"""Decision boundaries of 2-D experiments, drawn from the decision grids a store holds.

A spec with ``protocol.decision_grid: N`` makes the runner record, for every cell, the final
model's decision values on an N × N grid and the training points (``kernbench.runner.cell.probes``).
Two plot kinds draw them; neither fits anything:

``boundary``
    a panel per method (realisation 0): training points, the learned boundary F = 0 (thick) and,
    for generated data with a known Bayes rule and no preprocessing, the Bayes-optimal boundary
    (thin); the title gives the chosen parameters, the test error and the Bayes rule's error on
    the same test sample. ``experiments/lin_li_fig2.yaml`` is Lin & Li's Fig. 2 (2-D threenorm).
``boundary_trace``
    the first method's boundary beside the train/test error of every method along the iterations
    (the stored traces): ``experiments/cgens_fig1.yaml`` is Shen & Liu's Fig. 1 (the circle toy).
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from kernbench.datasets.generators import bayes_decision
from kernbench.report.collect import Experiment, as_experiment

_SHORT = {"n_estimators": "T", "max_iter": "T"}  # the papers' names for parameters, in titles


def grid_row(exp: Experiment, dataset: str, method: str, realisation: int = 0) -> dict | None:
    """The finished store row of (dataset, method, realisation) if it holds a decision grid."""
    row = exp.rows.get((dataset, method), {}).get(realisation)
    if row is None or row["status"] != "done":
        return None
    return row if (row.get("result") or {}).get("decision_grid") else None


def _bayes_grid(exp: Experiment, row: dict[str, Any], xx: np.ndarray, yy: np.ndarray):
    """Bayes labels on the grid for generated, unscaled data (None otherwise)."""
    info = (row.get("result") or {}).get("split_info") or {}
    gen = info.get("generator")
    if not gen or exp.protocol.get("preprocess") is not None:
        return None
    rule = bayes_decision(gen["function"], gen.get("params") or {})
    if rule is None:
        return None
    return rule(np.column_stack([xx.ravel(), yy.ravel()])).reshape(xx.shape)


def draw_boundary(ax: Axes, exp: Experiment, row: dict[str, Any], title: str) -> None:
    """One panel: training points, learned boundary (thick), Bayes boundary (thin, if known)."""
    grid = row["result"]["decision_grid"]
    xx, yy = np.meshgrid(grid["axis_x"], grid["axis_y"])
    dec = np.asarray(grid["values"], dtype=float)
    X = np.asarray(grid["train_X"], dtype=float)
    y = np.asarray(grid["train_y"])
    positive = y == np.max(y)
    ax.scatter(*X[positive].T, s=9, marker="o", facecolors="none", edgecolors="tab:blue", lw=0.6)
    ax.scatter(*X[~positive].T, s=9, marker="x", color="tab:red", lw=0.6)
    bayes = _bayes_grid(exp, row, xx, yy)
    if bayes is not None and bayes.min() < bayes.max():
        ax.contour(xx, yy, bayes, levels=[0.0], colors="0.35", linewidths=0.8)
    if dec.min() < 0.0 < dec.max():
        ax.contour(xx, yy, dec, levels=[0.0], colors="k", linewidths=2.2)
    ax.set_xlim(xx[0, 0], xx[0, -1])
    ax.set_ylim(yy[0, 0], yy[-1, 0])
    ax.set_aspect("equal")
    ax.set_title(title, fontsize=10)


def panel_title(method: str, row: dict[str, Any]) -> str:
    """``method (C=…)`` and the test error, with the Bayes rule's error when recorded."""
    chosen = ", ".join(f"{_SHORT.get(k, k)}={v:.4g}" for k, v in (row.get("params") or {}).items())
    head = f"{method} ({chosen})" if chosen else method
    err = f"test error {100 * float(row['test_error']):.1f}%"
    bayes = ((row.get("result") or {}).get("split_info") or {}).get("bayes_test_error")
    if bayes is not None:
        err += f" (Bayes {100 * float(bayes):.1f}%)"
    return f"{head}\n{err}"


def boundary_figures(source: Experiment | str | os.PathLike[str]) -> dict[str, Figure]:
    """``dataset -> Figure`` with a panel per method that recorded a decision grid."""
    exp = as_experiment(source)
    figures: dict[str, Figure] = {}
    for d in exp.datasets:
        rows = {m: r for m in exp.methods if (r := grid_row(exp, d, m)) is not None}
        if not rows:
            continue
        n = len(rows)
        cols = min(n, 2 if n == 4 else 3)
        nrows = math.ceil(n / cols)
        fig = Figure(figsize=(4.5 * cols, 4.5 * nrows), layout="constrained")
        axes = np.atleast_1d(fig.subplots(nrows, cols, sharex=True, sharey=True, squeeze=False))
        for ax, (m, row) in zip(axes.ravel(), rows.items()):
            draw_boundary(ax, exp, row, panel_title(m, row))
        for ax in axes.ravel()[n:]:
            ax.set_visible(False)
        fig.suptitle(f"{exp.title}\n{d}: thick = learned boundary, thin = Bayes-optimal")
        figures[d] = fig
    return figures


def boundary_trace_figures(source: Experiment | str | os.PathLike[str]) -> dict[str, Figure]:
    """``dataset -> Figure``: the first method's boundary, then every method's error curves."""
    exp = as_experiment(source)
    figures: dict[str, Figure] = {}
    for d in exp.datasets:
        first = next((m for m in exp.methods if grid_row(exp, d, m) is not None), None)
        if first is None:
            continue
        fig = Figure(figsize=(10, 4.2), layout="constrained")
        ax, ax2 = fig.subplots(1, 2)
        row = grid_row(exp, d, first)
        draw_boundary(ax, exp, row, panel_title(first, row))
        for m in exp.methods:
            r = exp.rows.get((d, m), {}).get(0)
            trace = ((r or {}).get("result") or {}).get("trace") or {}
            if r is None or r["status"] != "done" or not trace.get("iteration"):
                continue
            it = np.asarray(trace["iteration"])
            (line,) = ax2.plot(
                it, 100 * np.asarray(trace["train_error"], float), label=f"{m} train"
            )
            if trace.get("test_error"):
                test = 100 * np.asarray(trace["test_error"], float)
                ax2.plot(it, test, ls="--", color=line.get_color(), label=f"{m} test")
        ax2.set_xlabel("iteration")
        ax2.set_ylabel("error (%)")
        ax2.set_title("train / test error vs iterations")
        ax2.legend(fontsize="small")
        ax2.grid(alpha=0.3)
        fig.suptitle(f"{exp.title}: {d}")
        figures[d] = fig
    return figures
