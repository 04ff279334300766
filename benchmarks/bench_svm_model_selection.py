"""Model selection: SVM-Perc (11 C × 5 folds) vs SVM-Gauss (11 C × 10 γ × 5 folds), Lin & Li VI-B.

Scaling the perceptron kernel −‖x − x′‖₂ is the same as scaling C
(docs/methods/infinite_ensembles.md), so SVM-Perc needs
only a C grid: 55 SVM problems against SVM-Gauss's 550 on LIBSVM grid.py's default grid. Both go
through the runner's own selection code (:func:`kernbench.runner.cell.select.select_fit_score`: the
base
distance matrix computed once per realisation, sliced for every grid point and fold), on the same
realisation of each Lin & Li dataset (60/40 split or 300/3000 sample, minmax [−1, 1] fitted on the
training part), in the same process. One warm-up selection per method, then ``--repeats`` selections
per dataset, interleaved so background load hits both alike; the median is reported. The issue's
goal is a ratio ≥ 8.

Usage: ``python benchmarks/bench_svm_model_selection.py [--repeats 3] [--datasets twonorm,sonar]``;
writes ``benchmarks/results/bench_svm_model_selection.csv``. Needs the dataset mirror for the UCI
sets (``KERNBENCH_MIRROR``).
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np
import sklearn

from kernbench.datasets import make_realisation
from kernbench.methods import SVMGauss, SVMPerc
from kernbench.runner.cell.preprocess import fit_scaler
from kernbench.runner.cell.select import select_fit_score
from kernbench.specs.types import Protocol

RESULTS = Path(__file__).parent / "results" / "bench_svm_model_selection.csv"
C_PERC = [2.0**k for k in range(-17, 4, 2)]  # 11 values: Lin & Li's "55 problems"
C_GAUSS = [2.0**k for k in range(-5, 16, 2)]  # LIBSVM grid.py: 11 C
GAMMA = [2.0**k for k in range(3, -16, -2)]  # ... × 10 γ
FOLDS = 5
DATASETS = {
    "twonorm": {"n_train": 300, "n_test": 3000},
    "ringnorm": {"n_train": 300, "n_test": 3000, "a": 1 / np.sqrt(20)},
    "australian": {},
    "breast": {},
    "german": {},
    "heart": {},
    "ionosphere": {},
    "pima": {},
    "sonar": {},
    "votes84": {},
}
PROTOCOL = Protocol(realisations="random", train_size=0.6, stratify=True, seed=0)


def load(name: str) -> tuple[np.ndarray, ...]:
    r = make_realisation(name, DATASETS[name], PROTOCOL, 0, seed=0)
    scale = fit_scaler(r.X_train, "minmax", (-1.0, 1.0))
    return scale(r.X_train), r.y_train, scale(r.X_test), r.y_test


def select(method: str, X: np.ndarray, y: np.ndarray, Xt: np.ndarray, yt: np.ndarray):
    if method == "SVM-Perc":
        est, grid = SVMPerc(), {"C": C_PERC}
    else:
        est, grid = SVMGauss(), {"C": C_GAUSS, "gamma": GAMMA}
    start = time.perf_counter()
    out = select_fit_score(est, grid, X, y, Xt, yt, cv_folds=FOLDS, cv_seed=0, trace=False)
    return time.perf_counter() - start, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--datasets", default=",".join(DATASETS))
    args = parser.parse_args()
    names = [n for n in args.datasets.split(",") if n]

    X, y, Xt, yt = load(names[0])
    for method in ("SVM-Perc", "SVM-Gauss"):  # warm-up: imports, libsvm, allocator
        select(method, X, y, Xt, yt)

    rows = []
    header = f"{'dataset':12s} {'m':>5s} {'d':>3s} {'Perc s':>8s} {'Gauss s':>8s} {'ratio':>6s}"
    print(header + "   test error % (Perc / Gauss)")
    for name in names:
        X, y, Xt, yt = load(name)
        times: dict[str, list[float]] = {"SVM-Perc": [], "SVM-Gauss": []}
        outs = {}
        for _ in range(args.repeats):
            for method in times:
                t, outs[method] = select(method, X, y, Xt, yt)
                times[method].append(t)
        perc, gauss = (statistics.median(times[k]) for k in ("SVM-Perc", "SVM-Gauss"))
        row = {
            "dataset": name,
            "m_train": X.shape[0],
            "d": X.shape[1],
            "perc_problems": len(C_PERC) * FOLDS,
            "gauss_problems": len(C_GAUSS) * len(GAMMA) * FOLDS,
            "perc_median_s": round(perc, 4),
            "gauss_median_s": round(gauss, 4),
            "ratio_gauss_over_perc": round(gauss / perc, 2),
            "perc_C": outs["SVM-Perc"].params["C"],
            "gauss_C": outs["SVM-Gauss"].params["C"],
            "gauss_gamma": outs["SVM-Gauss"].params["gamma"],
            "perc_test_error_pct": round(100 * outs["SVM-Perc"].test_error, 2),
            "gauss_test_error_pct": round(100 * outs["SVM-Gauss"].test_error, 2),
            "repeats": args.repeats,
        }
        rows.append(row)
        print(
            f"{name:12s} {X.shape[0]:5d} {X.shape[1]:3d} {perc:8.3f} {gauss:8.3f} "
            f"{gauss / perc:6.1f}   {row['perc_test_error_pct']:.2f} / "
            f"{row['gauss_test_error_pct']:.2f}"
        )
    total_p = sum(r["perc_median_s"] for r in rows)
    total_g = sum(r["gauss_median_s"] for r in rows)
    print(f"{'total':12s} {'':5s} {'':3s} {total_p:8.3f} {total_g:8.3f} {total_g / total_p:6.1f}")
    ratios = [r["ratio_gauss_over_perc"] for r in rows]
    print(f"per-dataset ratio: min {min(ratios):.1f}, median {statistics.median(ratios):.1f}")

    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    env = {
        "python": platform.python_version(),
        "sklearn": sklearn.__version__,
        "omp_threads": os.environ.get("OMP_NUM_THREADS", ""),
        "load_1min": round(os.getloadavg()[0], 2),
    }
    with RESULTS.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=[*rows[0], *env])
        writer.writeheader()
        for row in rows:
            writer.writerow({**row, **env})
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
