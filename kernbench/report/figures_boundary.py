"""Lin & Li Fig. 2: decision boundaries of four ensembles on 2-D threenorm, with the Bayes boundary.

Four learners are trained on the same 300 points of 2-D threenorm (PROTOCOLS §2, Fig. 2; a = 2/√2):
SVM-Stump and SVM-Perc (C by 5-fold CV over Lin & Li's grid 2^-17..2^3, through the runner's own
selection code), AdaBoost-Stump and AdaBoost-Perc (T = 100 fixed). Each panel draws the training
points, the learner's boundary (thick) and the Bayes-optimal boundary (thin), where the two class
densities are equal, on a 300 × 300 grid over [−4, 4]². The panel title gives the test error on a
fresh 3000-point sample and the Bayes rule's error on the same sample.

Usage::

    python -m kernbench.report.figures_boundary --out results/lin_li_fig2.png

The figure is built with :class:`matplotlib.figure.Figure` (Agg canvas, no pyplot state).
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from kernbench.datasets.generators import threenorm, threenorm_bayes_decision
from kernbench.methods import AdaBoost, SVMPerc, SVMStump
from kernbench.runner.select import select_fit_score
from kernbench.seeds import derive_seed

#: Lin & Li's C grid for the distance kernels: log2 C = −17, −15, ..., 3 (PROTOCOLS §2(a))
C_GRID: tuple[float, ...] = tuple(2.0**k for k in range(-17, 4, 2))
PANEL_ORDER = ("SVM-Stump", "SVM-Perc", "AdaBoost-Stump", "AdaBoost-Perc")
_SHORT = {"n_estimators": "T"}  # the paper's name for a parameter, in panel titles
#: RCD updates per perceptron, as in experiments/lin_li_table1.yaml (README "Lin & Li")
MAX_RUN = 200


@dataclass(frozen=True)
class BoundaryPanel:
    """One learner's boundary on the plotting grid.

    Attributes
    ----------
    label : str
        Method name (panel title).
    decision : ndarray of shape (grid_size, grid_size)
        Decision values on the grid (the boundary is their zero level).
    params : dict
        Chosen hyper-parameters (C for the SVMs, T for AdaBoost).
    test_error : float
        Error on the held-out sample, in [0, 1].
    """

    label: str
    decision: np.ndarray
    params: dict[str, Any]
    test_error: float


def threenorm_2d(
    n_train: int = 300, n_test: int = 3000, *, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Training and test samples of 2-D threenorm (a = 2/√2), seeded by (seed, "lin_li_fig2")."""
    X, y = threenorm(n_train, np.random.default_rng(derive_seed(seed, "lin_li_fig2", "train")), d=2)
    Xt, yt = threenorm(n_test, np.random.default_rng(derive_seed(seed, "lin_li_fig2", "test")), d=2)
    return X, y, Xt, yt


def boundary_panels(
    X: np.ndarray,
    y: np.ndarray,
    X_test: np.ndarray,
    y_test: np.ndarray,
    grid_points: np.ndarray,
    *,
    seed: int = 0,
    n_estimators: int = 100,
    max_run: int = MAX_RUN,
    cv_folds: int = 5,
    c_grid: tuple[float, ...] = C_GRID,
) -> list[BoundaryPanel]:
    """Fit the four learners on (X, y) and evaluate their decision values on ``grid_points``.

    Parameters
    ----------
    X, y : training sample (labels ±1)
    X_test, y_test : held-out sample for the panel titles
    grid_points : ndarray of shape (n_grid, 2)
        Points where decision values are evaluated (row-major plotting grid).
    seed : int
        Seeds the CV folds and the RCD perceptrons.
    n_estimators, max_run : int
        AdaBoost's T and RCD's updates per perceptron. Both AdaBoosts keep boosting past a
        zero-error round (``zero_error="continue"``, LEMGA's rule), as in Table I's spec.
    cv_folds : int
        Folds of the C search for the SVMs.
    c_grid : tuple of float
        C values searched.

    Returns
    -------
    list of BoundaryPanel, in the order of :data:`PANEL_ORDER`.
    """
    learners: list[tuple[str, Any, dict[str, list[Any]]]] = [
        ("SVM-Stump", SVMStump(), {"C": list(c_grid)}),
        ("SVM-Perc", SVMPerc(), {"C": list(c_grid)}),
        ("AdaBoost-Stump", AdaBoost(n_estimators, weak_learner="stump", zero_error="continue"), {}),
        (
            "AdaBoost-Perc",
            AdaBoost(
                n_estimators,
                weak_learner="perceptron",
                max_run=max_run,
                zero_error="continue",
                random_state=derive_seed(seed, "lin_li_fig2", "AdaBoost-Perc"),
            ),
            {},
        ),
    ]
    panels = []
    for label, est, grid in learners:
        if grid:
            chosen = select_fit_score(
                est,
                grid,
                X,
                y,
                X[:0],
                y[:0],
                cv_folds=cv_folds,
                cv_seed=derive_seed(seed, "lin_li_fig2", label, "cv"),
                trace=False,
            ).params
            est.set_params(**chosen)
        else:
            chosen = {"n_estimators": n_estimators}
        est.fit(X, y)
        panels.append(
            BoundaryPanel(
                label=label,
                decision=est.decision_function(grid_points),
                params=chosen,
                test_error=float(np.mean(est.predict(X_test) != y_test)),
            )
        )
    return panels


def boundary_figure(
    X: np.ndarray,
    y: np.ndarray,
    panels: list[BoundaryPanel],
    axis: np.ndarray,
    bayes_error: float,
) -> Figure:
    """The 2 × 2 figure: training points, learner boundary (thick), Bayes boundary (thin).

    ``axis`` holds the grid coordinates (the same for both dimensions); every panel's ``decision``
    has shape (len(axis), len(axis)) with rows along the second coordinate.
    """
    xx, yy = np.meshgrid(axis, axis)
    bayes = threenorm_bayes_decision(np.column_stack([xx.ravel(), yy.ravel()])).reshape(xx.shape)
    fig = Figure(figsize=(9.0, 9.0), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(2, 2, sharex=True, sharey=True)
    for ax, panel in zip(axes.ravel(), panels):
        ax.scatter(*X[y > 0].T, s=9, marker="o", facecolors="none", edgecolors="tab:blue", lw=0.6)
        ax.scatter(*X[y < 0].T, s=9, marker="x", color="tab:red", lw=0.6)
        ax.contour(xx, yy, bayes, levels=[0.0], colors="0.35", linewidths=0.8)
        dec = panel.decision.reshape(xx.shape)
        if dec.min() < 0.0 < dec.max():
            ax.contour(xx, yy, dec, levels=[0.0], colors="k", linewidths=2.2)
        chosen = ", ".join(f"{_SHORT.get(k, k)}={v:.4g}" for k, v in panel.params.items())
        ax.set_title(
            f"{panel.label} ({chosen})\n"
            f"test error {100 * panel.test_error:.1f}% (Bayes {100 * bayes_error:.1f}%)",
            fontsize=10,
        )
        ax.set_xlim(axis[0], axis[-1])
        ax.set_ylim(axis[0], axis[-1])
        ax.set_aspect("equal")
    fig.suptitle(
        "2-D threenorm: thick = learned boundary, thin = Bayes-optimal boundary (Lin & Li Fig. 2)"
    )
    return fig


def plot_boundaries(
    out: str | os.PathLike[str],
    *,
    n_train: int = 300,
    n_test: int = 3000,
    seed: int = 0,
    n_estimators: int = 100,
    max_run: int = MAX_RUN,
    grid_size: int = 300,
    extent: float = 4.0,
) -> tuple[Path, list[BoundaryPanel]]:
    """Draw Lin & Li's Fig. 2 and write it as PNG to ``out``.

    Parameters
    ----------
    out : path
        PNG file to write (parent directories are created).
    n_train, n_test : int
        Sizes of the training sample and of the held-out sample used for the titles.
    seed : int
        Seeds the data, the CV folds and AdaBoost-Perc.
    n_estimators, max_run : int
        AdaBoost's T (PROTOCOLS: 100) and the RCD updates per perceptron (:data:`MAX_RUN`).
    grid_size, extent : int, float
        The plotting grid: ``grid_size``² points over [−extent, extent]².

    Returns
    -------
    path : Path
        The written file.
    panels : list of BoundaryPanel
    """
    X, y, Xt, yt = threenorm_2d(n_train, n_test, seed=seed)
    axis = np.linspace(-extent, extent, grid_size)
    xx, yy = np.meshgrid(axis, axis)
    grid_points = np.column_stack([xx.ravel(), yy.ravel()])
    panels = boundary_panels(
        X, y, Xt, yt, grid_points, seed=seed, n_estimators=n_estimators, max_run=max_run
    )
    bayes_error = float(np.mean(threenorm_bayes_decision(Xt) != yt))
    fig = boundary_figure(X, y, panels, axis, bayes_error)
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    return path, panels


def main(argv: list[str] | None = None) -> None:
    """Command line: ``python -m kernbench.report.figures_boundary --out FILE.png``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results/lin_li_fig2.png", help="PNG file to write")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-train", type=int, default=300)
    parser.add_argument("--n-estimators", type=int, default=100, help="AdaBoost T")
    parser.add_argument("--max-run", type=int, default=MAX_RUN, help="RCD updates per perceptron")
    parser.add_argument("--grid-size", type=int, default=300)
    args = parser.parse_args(argv)
    path, panels = plot_boundaries(
        args.out,
        n_train=args.n_train,
        seed=args.seed,
        n_estimators=args.n_estimators,
        max_run=args.max_run,
        grid_size=args.grid_size,
    )
    for p in panels:
        print(f"{p.label:15s} {p.params}  test error {100 * p.test_error:.2f}%")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
