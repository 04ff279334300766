"""Lin et al. (ACCV 2012) Figs 1-2 and 6: MultiBoost_cw against the multi-class boosting baselines.

Figs 1-2 layout (``kernbench plot RESULTS --kind multiboost_cw``): one column per dataset; top row
test error (%), bottom row training time (s), both against the boosting iteration; one line per
method, the mean over the finished realisations, and the legend carries each method's final test
error as mean ± std (as the paper's legends do). Curves come from the per-iteration traces the
runner stores (:func:`kernbench.report.figures_multiclass.fig3_series`), so a method that stopped
early keeps its last value.

Fig. 6 (``kernbench paper multiboost-cw-fig6``): the objective of (2) against
the iteration and against the cumulative solver time, one line per solver (FCD with τ_max ∈ {1, 2,
5, ∞}, L-BFGS-B), from ``benchmarks/bench_fcd.py``'s replay CSV.

The convergence claim is measured by :func:`iterations_to_train_error`: the first iteration at
which a method's training error reaches a threshold; ``kernbench paper
multiboost-cw-convergence`` prints it as markdown for 10 %, 5 % and 0 % together
with the final test error (mean ± std) and training time of every cell group.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from kernbench.report.collect import Experiment, as_experiment
from kernbench.report.figures_multiclass import fig3_series
from kernbench.report.render import rows_markdown

#: iterations the curves are drawn at (the paper's figures run to 500)
ITERATIONS: tuple[int, ...] = (1, 2, 3, 5, 7, 10, 15, 20, 30, 40, 50, 70, 100, 150, 200, 250, 300,
                               350, 400, 450, 500)  # fmt: skip
ROWS: tuple[tuple[str, str, float], ...] = (
    ("test_error", "test error (%)", 100.0),
    ("time_s", "training time (s)", 1.0),
)


def final_test_errors(exp: Experiment, dataset: str, method: str) -> np.ndarray:
    """Final test errors (fractions) of the finished realisations of one (dataset, method)."""
    rows = exp.rows.get((dataset, method), {})
    vals = [row.get("test_error") for row in rows.values() if row.get("status") == "done"]
    return np.array([float(v) for v in vals if v is not None])


def iterations_to_train_error(
    exp: Experiment, dataset: str, method: str, threshold: float, realisation: int = 0
) -> int | None:
    """First iteration whose training error (staged, from the store) is ≤ ``threshold``.

    None when the method never reaches it (or has no finished trace).
    """
    row = exp.rows.get((dataset, method), {}).get(realisation)
    trace = ((row or {}).get("result") or {}).get("trace") or {}
    errs = trace.get("train_error")
    if not errs:
        return None
    hit = np.flatnonzero(np.asarray(errs, dtype=float) <= threshold)
    return int(trace["iteration"][hit[0]]) if hit.size else None


def figs12_figure(
    source: Experiment | str | os.PathLike[str],
    datasets: Sequence[str] | None = None,
    iterations: Sequence[int] = ITERATIONS,
) -> Figure | None:
    """Test error and training time vs iteration, one column per dataset (None without traces)."""
    exp = as_experiment(source)
    names = list(datasets) if datasets is not None else exp.datasets
    x = np.asarray(iterations, dtype=float)
    panels: dict[str, dict[str, list[np.ndarray]]] = {}
    for d in names:
        by_m = {
            m: [fig3_series(exp, d, m, key, iterations, realisation=None) for key, _, _ in ROWS]
            for m in exp.methods
        }
        by_m = {m: c for m, c in by_m.items() if not all(np.all(np.isnan(s)) for s in c)}
        if by_m:
            panels[d] = by_m
    if not panels:
        return None
    n = len(panels)
    fig = Figure(figsize=(3.4 * n + 0.8, 6.2), layout="constrained")
    axes = fig.subplots(2, n, squeeze=False)
    colours = {m: f"C{i % 10}" for i, m in enumerate(exp.methods)}
    for col, (d, by_m) in enumerate(panels.items()):
        for row, (_, label, scale) in enumerate(ROWS):
            ax = axes[row, col]
            for m, series in by_m.items():
                name = m
                if row == 0:
                    final = 100.0 * final_test_errors(exp, d, m)
                    if final.size:
                        name = f"{m} {final.mean():.1f} ± {final.std():.1f}"
                ax.plot(x, scale * series[row], "-", lw=1.4, color=colours[m], label=name)
            ax.set_xlabel("iteration")
            if row == 1:
                ax.set_yscale("log")
            if col == 0:
                ax.set_ylabel(label)
            if row == 0:
                ax.set_title(d)
                ax.legend(fontsize="x-small")
            ax.grid(alpha=0.3)
    fig.suptitle(f"{exp.title} (mean over realisations)", fontsize="medium")
    return fig


def multiboost_cw_figures(source: Experiment | str | os.PathLike[str]) -> dict[str, Figure]:
    """``{"figs1_2": Figure}`` (empty without traces)."""
    fig = figs12_figure(as_experiment(source))
    return {"figs1_2": fig} if fig is not None else {}


def read_fig6_csv(csv_path: str | Path) -> dict[str, dict[str, dict[str, np.ndarray]]]:
    """``dataset -> solver -> {"iteration", "objective", "time_s"}`` from the replay CSV."""
    out: dict[str, dict[str, dict[str, list[float]]]] = {}
    with Path(csv_path).open() as fh:
        for row in csv.DictReader(fh):
            cur = out.setdefault(row["dataset"], {}).setdefault(
                row["solver"], {"iteration": [], "objective": [], "time_s": []}
            )
            for key in cur:
                cur[key].append(float(row[key]))
    return {
        d: {s: {k: np.asarray(v) for k, v in c.items()} for s, c in by_s.items()}
        for d, by_s in out.items()
    }


def fig6_figure(csv_path: str | Path) -> Figure:
    """Fig. 6: objective of (2) vs iteration (top) and vs solver time (bottom), per dataset."""
    data = read_fig6_csv(csv_path)
    n = len(data)
    fig = Figure(figsize=(3.4 * n + 0.8, 6.2), layout="constrained")
    axes = fig.subplots(2, n, squeeze=False)
    for col, (d, by_s) in enumerate(data.items()):
        for s, c in by_s.items():
            axes[0, col].plot(c["iteration"], c["objective"], label=s)
            axes[1, col].plot(c["time_s"], c["objective"], label=s)
        axes[0, col].set_title(d)
        axes[0, col].set_xlabel("iteration")
        axes[1, col].set_xlabel("cumulative solver time (s)")
        axes[1, col].set_xscale("log")
        for ax in axes[:, col]:
            ax.set_yscale("log")
            ax.grid(alpha=0.3)
    axes[0, 0].set_ylabel("objective of (2)")
    axes[1, 0].set_ylabel("objective of (2)")
    axes[0, 0].legend(fontsize="small")
    fig.suptitle("FCD (τ_max) vs L-BFGS-B on the same restricted problems, C = 1e4")
    return fig


def convergence_table(
    source: Experiment | str | os.PathLike[str],
    thresholds: Sequence[float] = (0.10, 0.05, 0.0),
    methods: Sequence[str] = ("CW", "CW-1", "MultiBoost", "Ada.MO", "Ada.MH", "Ada.ECC"),
    realisation: int = 0,
) -> list[dict[str, Any]]:
    """Rows (dataset, threshold, iterations per method) to reach each training error."""
    exp = as_experiment(source)
    rows = []
    for d in exp.datasets:
        for thr in thresholds:
            row: dict[str, Any] = {"dataset": d, "train_error_le": thr}
            for m in methods:
                if (d, m) in exp.rows:
                    row[m] = iterations_to_train_error(exp, d, m, thr, realisation)
            rows.append(row)
    return rows


def summary_rows(source: Experiment | str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Rows (dataset, method, n, final test error % mean and sample std, training time s mean)."""
    exp = as_experiment(source)
    out = []
    for (d, m), rows in exp.rows.items():
        done = [r for r in rows.values() if r.get("status") == "done"]
        if not done:
            continue
        err = 100.0 * final_test_errors(exp, d, m)
        fit = [float((r.get("result") or {}).get("fit_time_s") or np.nan) for r in done]
        out.append(
            {
                "dataset": d,
                "method": m,
                "n": len(done),
                "test_error_pct": round(float(err.mean()), 2),
                "test_error_std": round(
                    float(err.std(ddof=1)) if err.size > 1 else 0.0, 2
                ),  # as the table
                "fit_time_s": round(float(np.mean(fit)), 2),
            }
        )
    return out


def convergence_report(results_dir: str | os.PathLike[str]) -> str:
    """The convergence check as markdown: iterations to each training error (realisation 0), then
    each method's final test error and fit time."""
    return (
        "Iterations to reach a training error (realisation 0; – : not reached)\n\n"
        + rows_markdown(convergence_table(results_dir))
        + "\n\nFinal test error and fit time (mean over the finished realisations)\n\n"
        + rows_markdown(summary_rows(results_dir))
    )


def save_fig6(csv_path: str | Path, out: str | Path) -> Path:
    """Fig. 6 drawn from the FCD benchmark's replay CSV and saved as the PNG ``out``."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig = fig6_figure(csv_path)
    FigureCanvasAgg(fig)
    fig.savefig(out, dpi=120)
    return out
