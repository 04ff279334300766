"""AdaBoost-Stump: kernbench vs AdaBoostClassifier(DecisionTreeClassifier(max_depth=1)).

Same data (n=5000, d=20), same number of rounds (200), same process. One warm-up fit each, then
``REPEATS`` fits each, interleaved so that background load hits both alike; the median is reported.
scikit-learn's AdaBoostClassifier is SAMME, which for two classes is discrete AdaBoost with α
doubled (the ``algorithm`` argument is gone in scikit-learn >= 1.8; SAMME is the only algorithm).

Usage: ``python benchmarks/bench_stumps.py [--repeats 5]``; writes
``benchmarks/results/bench_stumps.csv``.
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import sklearn
from sklearn.datasets import make_classification
from sklearn.ensemble import AdaBoostClassifier
from sklearn.tree import DecisionTreeClassifier

from kernbench.methods import AdaBoost

N_SAMPLES, N_FEATURES, N_ROUNDS = 5000, 20, 200
RESULTS = Path(__file__).parent / "results" / "bench_stumps.csv"


def make_data() -> tuple[np.ndarray, np.ndarray]:
    return make_classification(
        n_samples=N_SAMPLES,
        n_features=N_FEATURES,
        n_informative=10,
        n_redundant=5,
        flip_y=0.05,
        random_state=0,
    )


def fit_ours(X: np.ndarray, y: np.ndarray) -> AdaBoost:
    return AdaBoost(n_estimators=N_ROUNDS).fit(X, y)


def fit_sklearn(X: np.ndarray, y: np.ndarray) -> AdaBoostClassifier:
    return AdaBoostClassifier(
        DecisionTreeClassifier(max_depth=1), n_estimators=N_ROUNDS, learning_rate=1.0
    ).fit(X, y)


def timed(fit: Callable, X: np.ndarray, y: np.ndarray) -> tuple[float, object]:
    start = time.perf_counter()
    model = fit(X, y)
    return time.perf_counter() - start, model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    X, y = make_data()
    fits = {"kernbench AdaBoost": fit_ours, "sklearn AdaBoostClassifier": fit_sklearn}
    models = {name: fit(X, y) for name, fit in fits.items()}  # warm-up
    times: dict[str, list[float]] = {name: [] for name in fits}
    for _ in range(args.repeats):
        for name, fit in fits.items():
            seconds, models[name] = timed(fit, X, y)
            times[name].append(seconds)

    errors = {name: float(np.mean(m.predict(X) != y)) for name, m in models.items()}
    medians = {name: statistics.median(ts) for name, ts in times.items()}
    ours, peer = "kernbench AdaBoost", "sklearn AdaBoostClassifier"
    ratio = medians[peer] / medians[ours]

    print(f"AdaBoost-Stump, n={N_SAMPLES}, d={N_FEATURES}, T={N_ROUNDS}, median of {args.repeats}")
    print(f"{'method':<28} {'median s':>9} {'min s':>8} {'train err':>10} {'rounds':>7}")
    for name in fits:
        model = models[name]
        n_rounds = model.n_iter_ if isinstance(model, AdaBoost) else len(model.estimators_)
        print(
            f"{name:<28} {medians[name]:>9.3f} {min(times[name]):>8.3f} "
            f"{errors[name]:>10.4f} {n_rounds:>7d}"
        )
    print(f"speed-up (sklearn / kernbench): {ratio:.1f}x")

    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    with RESULTS.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(
            ["method", "n", "d", "rounds", "repeats", "median_s", "min_s", "train_error",
             "speedup_vs_sklearn", "numpy", "sklearn", "python", "cpus"]
        )  # fmt: skip
        for name in fits:
            writer.writerow(
                [name, N_SAMPLES, N_FEATURES, N_ROUNDS, args.repeats, f"{medians[name]:.4f}",
                 f"{min(times[name]):.4f}", f"{errors[name]:.4f}",
                 f"{medians[peer] / medians[name]:.2f}", np.__version__, sklearn.__version__,
                 platform.python_version(), os.cpu_count()]
            )  # fmt: skip
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
