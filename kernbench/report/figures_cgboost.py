"""Bi, Zhang & Bennett Figs 2 and 3 from the per-iteration traces CG-Boost cells store.

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

Both read realisation 0 of each (dataset, method) through
:func:`kernbench.report.collect.load_experiment`.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from kernbench.report.collect import Experiment, as_experiment
from kernbench.report.plot_kinds import plot_kind

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


@plot_kind("cgboost_fig2", "Bi, Zhang & Bennett Fig. 2: termination rules along the columns")
def fig2_figures(source: Experiment | str | os.PathLike[str]) -> dict[str, Figure]:
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


@plot_kind("cgboost_fig3", "Bi, Zhang & Bennett Fig. 3: stratified vs regular column generation")
def fig3_figures(source: Experiment | str | os.PathLike[str]) -> dict[str, Figure]:
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
