"""Figures 1, 2 and 5 of Shen & Liu ("From Kernel Machines to Ensemble Learning").

Each ``plot_*`` function takes arrays (or fitted results) and writes one PNG; the ``compute_*``
helpers produce those arrays with kernbench's estimators:

* Fig. 1: 2-D toy data (x ~ N(0, I₂), class +1 outside radius √(2 ln 2), 500 train / 5000 test,
  PROTOCOLS §1): CGENS's decision boundary, and train/test error vs iteration, CGENS vs AdaBoost.
* Fig. 2: training time vs iterations and vs training size, CGENS vs LPBoost (log scale), from
  ``benchmarks/bench_cgens_vs_lpboost.py``-style timings.
* Fig. 5: per-feature selection frequencies on spambase, CGENS vs AdaBoost (selected weak learners
  using the feature / T, averaged over runs); from a results store, ``kernbench plot --kind fig5``
  (:mod:`kernbench.report.figures_features`).

Usage::

    python -m kernbench.report.figures_cgens fig1 --out results/cgens_fig1.png
    python -m kernbench.report.figures_cgens fig2   # from the benchmark CSV

Figures use :class:`matplotlib.figure.Figure` (Agg canvas, no pyplot state).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Circle

from kernbench.datasets.generators import circle
from kernbench.methods.adaboost import AdaBoost
from kernbench.methods.cgens import CGENS
from kernbench.report.figures_features import fig5_figure
from kernbench.weak.stumps import feature_usage

TOY_RADIUS = float(np.sqrt(2 * np.log(2)))  # the median of ||x|| for x ~ N(0, I₂): balanced


def _save(fig: Figure, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    FigureCanvasAgg(fig)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    return path


def staged_errors(est: Any, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Error fraction after each iteration of an IterativeMixin estimator."""
    return np.array([np.mean(p != y) for p in est.staged_predict(X)])


def compute_fig1(
    n_train: int = 500, n_test: int = 5000, C: float = 10.0, T: int = 200, seed: int = 0
) -> dict[str, Any]:
    """Fit CGENS (stumps, C = 10) and AdaBoost on the toy data; errors along the iterations."""
    X, y = circle(n_train, np.random.default_rng(seed), TOY_RADIUS)  # the dataset `circle`
    Xt, yt = circle(n_test, np.random.default_rng(seed + 1), TOY_RADIUS)
    out: dict[str, Any] = {"X": X, "y": y, "curves": {}}
    for name, est in {
        "CGENS": CGENS(C=C, max_iter=T),
        "AdaBoost": AdaBoost(n_estimators=T),
    }.items():
        est.fit(X, y)
        out["curves"][name] = {
            "train": staged_errors(est, X, y),
            "test": staged_errors(est, Xt, yt),
        }
        if name == "CGENS":
            g = np.linspace(-3.5, 3.5, 300)
            xx, yy = np.meshgrid(g, g)
            out["grid"] = (xx, yy, est.decision_function(np.c_[xx.ravel(), yy.ravel()]))
    return out


def plot_fig1(
    X: np.ndarray,
    y: np.ndarray,
    grid: tuple[np.ndarray, np.ndarray, np.ndarray],
    curves: Mapping[str, Mapping[str, np.ndarray]],
    path: str | Path,
) -> Path:
    """Left: training points and the decision boundary F = 0; right: error (%) vs iteration."""
    fig = Figure(figsize=(10, 4.2))
    ax, ax2 = fig.subplots(1, 2)
    xx, yy, dec = grid
    ax.contourf(xx, yy, dec.reshape(xx.shape) >= 0, levels=[-0.5, 0.5, 1.5], alpha=0.15)
    ax.contour(xx, yy, dec.reshape(xx.shape), levels=[0.0], colors="k", linewidths=1.5)
    ax.scatter(*X[y > 0].T, s=6, c="tab:red", label="+1 (outside)")
    ax.scatter(*X[y <= 0].T, s=6, c="tab:blue", label="−1 (inside)")
    ax.add_patch(Circle((0, 0), TOY_RADIUS, fill=False, ls="--", color="gray"))
    ax.set_aspect("equal")
    ax.set_title("CGENS (stumps) decision boundary")
    ax.legend(loc="upper right", fontsize=7)
    for name, c in curves.items():
        it = np.arange(1, len(c["train"]) + 1)
        (line,) = ax2.plot(it, 100 * np.asarray(c["train"]), label=f"{name} train")
        ax2.plot(
            it, 100 * np.asarray(c["test"]), ls="--", color=line.get_color(), label=f"{name} test"
        )
    ax2.set_xlabel("iteration")
    ax2.set_ylabel("error (%)")
    ax2.legend()
    ax2.set_title("train / test error vs iterations")
    return _save(fig, path)


def plot_fig2(
    iterations: Sequence[int],
    times_vs_iter: Mapping[str, Sequence[float]],
    sizes: Sequence[int] | None,
    times_vs_size: Mapping[str, Sequence[float]] | None,
    path: str | Path,
    caption: str = "",
) -> Path:
    """CPU time vs iterations (top) and vs training size (bottom, optional), log scale."""
    panels = 2 if sizes is not None and times_vs_size else 1
    fig = Figure(figsize=(6, 3.6 * panels))
    axes = np.atleast_1d(fig.subplots(panels, 1))
    for name, t in times_vs_iter.items():
        axes[0].semilogy(iterations, t, marker="o", label=name)
    axes[0].set_xlabel("iterations")
    axes[0].set_ylabel("training time (s)")
    axes[0].legend()
    if panels == 2:
        for name, t in times_vs_size.items():
            axes[1].loglog(sizes, t, marker="o", label=name)
        axes[1].set_xlabel("training examples")
        axes[1].set_ylabel("training time (s)")
        axes[1].legend()
    if caption:
        fig.suptitle(caption, fontsize=8)
    return _save(fig, path)


def feature_frequencies(learner_lists: Sequence[Sequence[Any]], n_features: int) -> np.ndarray:
    """Mean over runs of (# selected stumps using feature d) / (# stumps), d = 0..D−1 (Fig. 5).

    The per-run share is :func:`kernbench.weak.stumps.feature_usage` (what fitted stump ensembles
    store as ``feature_usage_``); every learner must be a stump.
    """
    freq = np.zeros(n_features)
    for learners in learner_lists:
        usage = feature_usage(learners, n_features)
        if usage is None:
            raise ValueError("feature frequencies are defined for decision stumps only")
        freq += usage
    return freq / max(len(learner_lists), 1)


def plot_fig5(freqs: Mapping[str, np.ndarray], path: str | Path) -> Path:
    """Bar chart of feature-selection frequencies (features numbered from 1, as in the paper)."""
    return _save(fig5_figure(freqs), path)


def read_timing_csv(csv_path: str | Path) -> dict[str, dict[int, float]]:
    """Benchmark CSV rows -> {"<method> (m = <n_train>)": {iterations: time_s}}."""
    import csv

    curves: dict[str, dict[int, float]] = {}
    with Path(csv_path).open() as f:
        for row in csv.DictReader(f):
            key = f"{row['method']} (m = {row['n_train']})"
            curves.setdefault(key, {})[int(row["iterations"])] = float(row["time_s"])
    return curves


def fig2_from_csv(csv_path: str | Path, path: str | Path) -> Path:
    """Fig. 2 (time vs iterations, log scale) from ``bench_cgens_vs_lpboost.py``'s CSV.

    One curve per (method, training size) row group of the CSV.
    """
    curves = read_timing_csv(csv_path)
    fig = Figure(figsize=(6, 3.6))
    ax = fig.subplots()
    for name, pts in curves.items():
        its = sorted(pts)
        ax.semilogy(its, [pts[i] for i in its], marker="o", label=name)
    ax.set_xlabel("iterations")
    ax.set_ylabel("training time (s)")
    ax.legend(fontsize=6)
    ax.set_title("pendigits odd vs even, stumps, C = 1", fontsize=8)
    return _save(fig, path)


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("figure", choices=["fig1", "fig2"])
    ap.add_argument("--out", default=None, help="PNG path (default results/cgens_<figure>.png)")
    ap.add_argument(
        "--csv",
        default="benchmarks/results/bench_cgens_vs_lpboost.csv",
        help="fig2: the benchmark CSV",
    )
    args = ap.parse_args(argv)
    out = args.out or f"results/cgens_{args.figure}.png"
    if args.figure == "fig2":
        print(fig2_from_csv(args.csv, out))
        return
    d = compute_fig1()
    print(plot_fig1(d["X"], d["y"], d["grid"], d["curves"], out))


if __name__ == "__main__":
    main()
