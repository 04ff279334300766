"""Training time against iterations and against training size (Shen & Liu Fig. 2 layout).

Reads the stored per-iteration traces (``time_s``: cumulative fit time, the weak-learner search
included) and each cell's training-set size; fits nothing. One figure per store:

* top: training time vs iteration, one line per method, on the dataset with the most training
  points (mean over its finished realisations);
* bottom (when the store holds several datasets): time at iteration ``T`` vs training size, one
  line per method, log–log, where ``T`` is the largest iteration every such trace reached.

``experiments/cgens_fig2.yaml`` is CGENS vs LPBoost on pendigits odd-vs-even at several sizes.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from kernbench.report.collect import Experiment, as_experiment
from kernbench.report.figures import mean_trace


def _done_traces(exp: Experiment, d: str, m: str) -> list[dict[str, Any]]:
    rows = exp.rows.get((d, m), {}).values()
    return [
        r["result"]["trace"]
        for r in rows
        if r["status"] == "done" and ((r.get("result") or {}).get("trace") or {}).get("time_s")
    ]


def _n_train(exp: Experiment, d: str) -> int | None:
    sizes = [
        (r.get("result") or {}).get("n_train")
        for (dd, _), cell in exp.rows.items()
        if dd == d
        for r in cell.values()
    ]
    sizes = [int(s) for s in sizes if s]
    return max(sizes) if sizes else None


def common_iteration(exp: Experiment) -> int | None:
    """The largest iteration every stored time trace reached (None without traces)."""
    ends = [
        len(t["time_s"]) for d in exp.datasets for m in exp.methods for t in _done_traces(exp, d, m)
    ]
    return min(ends) if ends else None


def time_points(exp: Experiment) -> dict[str, list[tuple[int, float]]]:
    """``method -> [(n_train, mean time at the common iteration)]`` over datasets, sorted by n."""
    T = common_iteration(exp)
    if T is None:
        return {}
    out: dict[str, list[tuple[int, float]]] = {}
    for m in exp.methods:
        for d in exp.datasets:
            traces = _done_traces(exp, d, m)
            n = _n_train(exp, d)
            if traces and n:
                mean = float(np.mean([t["time_s"][T - 1] for t in traces]))
                out.setdefault(m, []).append((n, mean))
    return {m: sorted(v) for m, v in out.items()}


def time_figures(source: Experiment | str | os.PathLike[str]) -> dict[str, Figure]:
    """``{"time": Figure}`` (empty when no method recorded ``time_s``)."""
    exp = as_experiment(source)
    sized = [(n, d) for d in exp.datasets if (n := _n_train(exp, d))]
    traced = [(n, d) for n, d in sized if any(_done_traces(exp, d, m) for m in exp.methods)]
    if not traced:
        return {}
    n_top, d_top = max(traced)
    points = time_points(exp)
    two = len(traced) > 1
    fig = Figure(figsize=(6.5, 7.0 if two else 3.8), layout="constrained")
    axes = np.atleast_1d(fig.subplots(2 if two else 1, 1))
    for m in exp.methods:
        traces = _done_traces(exp, d_top, m)
        if traces:
            it, mean = mean_trace(traces, "time_s")
            axes[0].semilogy(it, mean, label=m)
    axes[0].set_xlabel("iterations")
    axes[0].set_ylabel("training time (s)")
    axes[0].set_title(f"{d_top}: m = {n_top}")
    axes[0].legend(fontsize="small")
    axes[0].grid(alpha=0.3, which="both")
    if two:
        T = common_iteration(exp)
        for m, pts in points.items():
            axes[1].loglog([n for n, _ in pts], [t for _, t in pts], marker="o", label=m)
        axes[1].set_xlabel("training examples")
        axes[1].set_ylabel(f"training time at {T} iterations (s)")
        axes[1].legend(fontsize="small")
        axes[1].grid(alpha=0.3, which="both")
    fig.suptitle(exp.title, fontsize="medium")
    return {"time": fig}
