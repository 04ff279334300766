"""Bi, Zhang & Bennett Figs 1-4 from what CG-Boost cells store (traces and prediction grids).

Fig. 1 (``--kind cgboost_fig1``): the toy regression. The target function (drawn from the
generator's parameters recorded with the cell) beside every method's predictions on the
``protocol.decision_grid`` the runner recorded, with the training points; each panel's title
gives the test RMSE and the columns generated per kernel (``experiments/cgboost_fig1.yaml``).

Fig. 2 (``kernbench plot DIR --kind cgboost_fig2``): training, validation and test error (%) against
the number of columns generated, for every CG-Boost cell whose trace has a validation error, with
the stopping points of the termination rules marked:

* TR1 (*): the last column found among the margin-error points before the first full scan, i.e.
  where "stop when no error-point column is violated" ends (stratified CG traces ``error_scan``);
* TR3 (+): the iteration of the best validation error, reached before ``patience`` (25) columns
  without improvement;
* TR2 (x): the last iteration of a run that reached optimality.

Fig. 3 (``--kind cgboost_fig3``): kernel columns scored per iteration and the restricted objective
against the iteration, one line per method (stratified and regular CG side by side when the spec
runs both), per dataset.

Fig. 4 (``--kind cgboost_fig4``): the validation error (%) against the columns generated, one line
per method (the spec runs one per value of C), with the best validation error marked (+) and the
test error dashed: an improper C shows as a validation curve that turns up early
(``experiments/cgboost_fig4.yaml``).

All read realisation 0 of each (dataset, method) through
:func:`kernbench.report.collect.load_experiment`.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from kernbench.datasets import generators
from kernbench.report.collect import Experiment, as_experiment

#: TR3's patience (iterations without a new best validation error), as the estimator's default
PATIENCE = 25


def _trace(exp: Experiment, dataset: str, method: str, realisation: int = 0) -> dict | None:
    row = exp.rows.get((dataset, method), {}).get(realisation)
    if not row or row.get("status") != "done":
        return None
    trace = (row.get("result") or {}).get("trace") or {}
    return trace if trace.get("iteration") else None


def stopping_points(trace: dict[str, Any], patience: int = PATIENCE) -> dict[str, int | None]:
    """0-based iteration indices where TR1, TR3 and TR2 stop on a stored CG-Boost trace.

    TR1: the iteration before the first whose column came from a full scan (None if every column
    came from the error points); TR3: the best validation error if the run went on ``patience``
    iterations past it, else the best so far (None without a validation trace); TR2: the last
    iteration.
    """
    n = len(trace["iteration"])
    scan = trace.get("error_scan")
    tr1 = None
    if scan is not None:
        full = [i for i, v in enumerate(scan) if v == 0]
        tr1 = (full[0] - 1 if full[0] > 0 else None) if full else None
    tr3 = None
    val = np.asarray(trace.get("validation_error") or [np.nan] * n, dtype=float)
    if np.isfinite(val).any():
        best, since = 0, 0
        for i in range(n):
            if val[i] < val[best]:
                best, since = i, 0
            else:
                since += 1
            if since >= patience:
                break
        tr3 = best
    return {"TR1": tr1, "TR3": tr3, "TR2": n - 1}


def cgboost_fig2_figures(source: Experiment | str | os.PathLike[str]) -> dict[str, Figure]:
    """``"<dataset>_<method>" -> Figure`` for every cell with a validation-error trace."""
    exp = as_experiment(source)
    figures: dict[str, Figure] = {}
    for d in exp.datasets:
        for m in exp.methods:
            trace = _trace(exp, d, m)
            if (
                trace is None
                or not np.isfinite(
                    np.asarray(trace.get("validation_error") or [np.nan], dtype=float)
                ).any()
            ):
                continue
            x = np.asarray(trace.get("n_columns") or trace["iteration"], dtype=float)
            fig = Figure(figsize=(5.0, 3.6), layout="constrained")
            ax = fig.subplots()
            for key, label in (
                ("train_error", "training"),
                ("validation_error", "validation"),
                ("test_error", "test"),
            ):
                if key in trace:
                    ax.plot(x, 100.0 * np.asarray(trace[key], dtype=float), label=label)
            test = np.asarray(trace.get("test_error") or trace["train_error"], dtype=float)
            for rule, marker in (("TR1", "*"), ("TR3", "+"), ("TR2", "x")):
                i = stopping_points(trace)[rule]
                if i is not None:
                    ax.plot(x[i], 100.0 * test[i], marker, ms=11, color="k", label=rule)
            ax.set_xlabel("columns generated")
            ax.set_ylabel("error (%)")
            ax.set_title(f"{d}: {m}")
            ax.grid(alpha=0.3)
            ax.legend(fontsize="small")
            figures[f"{d}_{m}"] = fig
    return figures


def cgboost_fig3_figures(source: Experiment | str | os.PathLike[str]) -> dict[str, Figure]:
    """``dataset -> Figure``: kernel columns scored per iteration (top), objective (bottom)."""
    exp = as_experiment(source)
    figures: dict[str, Figure] = {}
    for d in exp.datasets:
        traces = {m: t for m in exp.methods if (t := _trace(exp, d, m)) and "kernel_evals" in t}
        if not traces:
            continue
        fig = Figure(figsize=(6.0, 5.6), layout="constrained")
        top, bottom = fig.subplots(2, 1, sharex=True)
        for i, (m, t) in enumerate(traces.items()):
            it = np.asarray(t["iteration"], dtype=float)
            evals = np.asarray(t["kernel_evals"], dtype=float)
            top.plot(it, evals, color=f"C{i % 10}", label=f"{m} (mean {evals.mean():.0f})")
            bottom.plot(it, np.asarray(t["objective"], dtype=float), color=f"C{i % 10}", label=m)
        top.set_ylabel("kernel columns scored")
        top.set_yscale("log")
        bottom.set_ylabel("restricted objective")
        bottom.set_yscale("log")
        bottom.set_xlabel("iteration (columns generated)")
        top.set_title(d)
        top.legend(fontsize="small")
        for ax in (top, bottom):
            ax.grid(alpha=0.3)
        figures[d] = fig
    return figures


def _row(exp: Experiment, dataset: str, method: str, realisation: int = 0) -> dict | None:
    row = exp.rows.get((dataset, method), {}).get(realisation)
    return row if row and row.get("status") == "done" else None


def _columns_label(trace: dict[str, Any]) -> str:
    """``"L 12 / R 3"``: columns generated per kernel at the end of a stored trace."""
    short = {"linear": "L", "quadratic": "Q", "rbf": "R"}
    parts = [
        f"{short.get(k[8:], k[8:])} {int(v[-1])}"
        for k, v in trace.items()
        if k.startswith("columns_") and v
    ]
    return " / ".join(parts)


def cgboost_fig1_figures(source: Experiment | str | os.PathLike[str]) -> dict[str, Figure]:
    """``dataset -> Figure``: the target surface and each method's prediction surface."""
    exp = as_experiment(source)
    figures: dict[str, Figure] = {}
    for d in exp.datasets:
        rows = {m: r for m in exp.methods if (r := _row(exp, d, m)) and _grid(r)}
        if not rows:
            continue
        first = next(iter(rows.values()))
        grid = _grid(first)
        xx, yy = np.meshgrid(grid["axis_x"], grid["axis_y"])
        panels: list[tuple[str, np.ndarray]] = []
        info = (first.get("result") or {}).get("split_info") or {}
        gen = info.get("generator") or {}
        if gen.get("function") == "cgboost_toy" and exp.protocol.get("preprocess") is None:
            sigma2 = (gen.get("params") or {}).get("sigma2", 0.1)
            target = generators.cgboost_toy_target(
                np.column_stack([xx.ravel(), yy.ravel()]), sigma2
            )
            panels.append(("target", target.reshape(xx.shape)))
        for m, r in rows.items():
            res = r["result"]
            rmse = res.get("test_rmse")
            cols = _columns_label(res.get("trace") or {})
            if res.get("model_size") is not None:
                cols += f" ({res['model_size']} α≠0)"
            title = f"{m}\nRMSE {rmse:.3f}" if rmse is not None else m
            panels.append((f"{title}, {cols}" if cols else title, np.asarray(_grid(r)["values"])))
        lo = min(float(np.min(v)) for _, v in panels)
        hi = max(float(np.max(v)) for _, v in panels)
        levels = np.linspace(lo, hi, 21)
        ncols = min(5, len(panels))
        nrows = -(-len(panels) // ncols)
        fig = Figure(figsize=(3.0 * ncols, 3.2 * nrows), layout="constrained")
        axes = np.atleast_1d(fig.subplots(nrows, ncols, sharex=True, sharey=True)).ravel()
        for ax in axes[len(panels) :]:
            ax.set_visible(False)
        axes = axes[: len(panels)]
        X = np.asarray(grid["train_X"], dtype=float)
        cs = None
        for ax, (title, values) in zip(axes, panels, strict=True):
            cs = ax.contourf(xx, yy, values, levels=levels, cmap="viridis")
            ax.plot(X[:, 0], X[:, 1], ".", color="w", ms=3)
            ax.set_title(title, fontsize="small")
            ax.set_aspect("equal")
        fig.colorbar(cs, ax=list(axes), shrink=0.8)
        figures[d] = fig
    return figures


def _grid(row: dict[str, Any]) -> dict[str, Any] | None:
    return (row.get("result") or {}).get("decision_grid")


def cgboost_fig4_figures(source: Experiment | str | os.PathLike[str]) -> dict[str, Figure]:
    """``dataset -> Figure``: validation (solid) and test (dashed) error against the columns."""
    exp = as_experiment(source)
    figures: dict[str, Figure] = {}
    for d in exp.datasets:
        lines = []
        for m in exp.methods:
            trace = _trace(exp, d, m)
            if trace is None:
                continue
            val = np.asarray(trace.get("validation_error") or [np.nan], dtype=float)
            if np.isfinite(val).any():
                lines.append((m, trace, val))
        if not lines:
            continue
        fig = Figure(figsize=(6.0, 4.0), layout="constrained")
        ax = fig.subplots()
        for i, (m, trace, val) in enumerate(lines):
            x = np.asarray(trace.get("n_columns") or trace["iteration"], dtype=float)
            color = f"C{i % 10}"
            ax.plot(x, 100.0 * val, color=color, label=f"{m} (validation)")
            if "test_error" in trace:
                test = 100.0 * np.asarray(trace["test_error"], dtype=float)
                ax.plot(x, test, "--", color=color, lw=0.8, alpha=0.7)
            best = int(np.nanargmin(val))
            ax.plot(x[best], 100.0 * val[best], "+", ms=12, mew=2, color=color)
        ax.set_xlabel("columns generated")
        ax.set_ylabel("error (%)")
        ax.set_title(f"{d}: validation error (solid), test (dashed), best validation +")
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small")
        figures[d] = fig
    return figures
