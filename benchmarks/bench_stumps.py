"""AdaBoost-Stump: kernbench vs scikit-learn's AdaBoost and HistGradientBoosting with one split.

Two cases, each on one data set, every method in the same process, one warm-up fit each, then
``--repeats`` fits each, interleaved so that background load hits all alike; medians reported:

- ``5000x20`` (make_classification, 200 rounds): kernbench ``AdaBoost`` (exact presorted stump
  search) vs ``AdaBoostClassifier(DecisionTreeClassifier(max_depth=1))``.
- ``1e5x50`` (twonorm, d = 50, 100 rounds): kernbench ``AdaBoost`` exact and binned
  (``max_bins=256``) vs ``HistGradientBoostingClassifier(max_leaf_nodes=2)`` (binned, one split
  per tree, with 1 and with 2 OpenMP threads by default: ``--hgb-threads``; ours is
  single-threaded) and, with ``--sklearn-large``, the AdaBoostClassifier again.

- ``default-1e5x50`` and ``default-1e6x50`` (twonorm, d = 50, 100 rounds): kernbench ``AdaBoost``
  with default settings (``max_bins="auto"``: binned at this size; threads: all cores) and the same
  at one thread (``n_jobs=1``; the models must be identical, checked), vs
  ``HistGradientBoostingClassifier(max_leaf_nodes=2, max_iter=100)`` and
  ``LGBMClassifier(num_leaves=2, n_estimators=100)``, both with all threads (LightGBM is the
  ``bench`` extra: ``pip install "kernbench[bench]"``; left out when it is missing). The warm-up
  fit of these cases runs on the first 5000 rows only (it loads the compiled kernels).

scikit-learn's AdaBoostClassifier is SAMME, which for two classes is discrete AdaBoost with α
doubled (the ``algorithm`` argument is gone in scikit-learn >= 1.8). Every fit includes the
preparation (our presort or binning, HGB's binning). Ratios are peer time / our time, in wall
time and in CPU time of the process (``time.process_time``: robust to time-slicing on a loaded
machine for the single-threaded fits; for HGB with 2 threads it adds both threads' time).

Usage: ``python benchmarks/bench_stumps.py [--repeats 5] [--case 5000x20,1e5x50]``
(``--case default-1e5x50,default-1e6x50 --repeats 1 --out
benchmarks/results/bench_stumps_all_threads.csv`` for the all-threads comparison); writes
``benchmarks/results/bench_stumps.csv`` unless ``--out`` names another file.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import sklearn
from _results import write_csv
from sklearn.datasets import make_classification
from sklearn.ensemble import AdaBoostClassifier, HistGradientBoostingClassifier
from sklearn.tree import DecisionTreeClassifier
from threadpoolctl import threadpool_limits

from kernbench.datasets.generators import twonorm
from kernbench.methods import AdaBoost
from kernbench.solvers.threads import available_cores

RESULTS = Path(__file__).parent / "results" / "bench_stumps.csv"
OURS = "kernbench AdaBoost"
SK_ADA = "sklearn AdaBoostClassifier"


def data_small() -> tuple[np.ndarray, np.ndarray]:
    return make_classification(
        n_samples=5000,
        n_features=20,
        n_informative=10,
        n_redundant=5,
        flip_y=0.05,
        random_state=0,
    )


def data_large(n: int = 100_000) -> tuple[np.ndarray, np.ndarray]:
    return twonorm(n, np.random.default_rng(0), d=50)


def sk_adaboost(rounds: int) -> Callable:
    return lambda X, y: AdaBoostClassifier(
        DecisionTreeClassifier(max_depth=1), n_estimators=rounds, learning_rate=1.0
    ).fit(X, y)


def hgb(rounds: int, threads: int) -> Callable:
    def fit(X: np.ndarray, y: np.ndarray) -> HistGradientBoostingClassifier:
        with threadpool_limits(limits=threads, user_api="openmp"):
            return HistGradientBoostingClassifier(
                max_leaf_nodes=2, max_iter=rounds, early_stopping=False, random_state=0
            ).fit(X, y)

    return fit


def lightgbm(rounds: int, threads: int) -> Callable | None:
    try:
        from lightgbm import LGBMClassifier
    except ImportError:
        return None
    return lambda X, y: LGBMClassifier(
        num_leaves=2, n_estimators=rounds, n_jobs=threads, verbose=-1, random_state=0
    ).fit(X, y)


def n_rounds(model: object) -> int:
    if isinstance(model, AdaBoost):
        return model.n_iter_
    if isinstance(model, HistGradientBoostingClassifier):
        return model.n_iter_
    if hasattr(model, "n_estimators_"):  # LightGBM
        return int(model.n_estimators_)  # type: ignore[attr-defined]
    return len(model.estimators_)  # type: ignore[attr-defined]


def run_case(
    case: str,
    X: np.ndarray,
    y: np.ndarray,
    rounds: int,
    fits: dict[str, Callable],
    repeats: int,
    warmup_rows: int | None = None,
) -> list[dict[str, object]]:
    w = slice(None, warmup_rows)
    models = {name: fit(X[w], y[w]) for name, fit in fits.items()}  # warm-up
    times: dict[str, list[float]] = {name: [] for name in fits}
    cpu: dict[str, list[float]] = {name: [] for name in fits}
    for _ in range(repeats):
        for name, fit in fits.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            models[name] = fit(X, y)
            times[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - start_cpu)
    med = {name: statistics.median(ts) for name, ts in times.items()}
    med_cpu = {name: statistics.median(ts) for name, ts in cpu.items()}
    print(f"\n{case}: n={X.shape[0]}, d={X.shape[1]}, rounds={rounds}, median of {repeats}")
    print(
        f"{'method':<36} {'median s':>9} {'min s':>8} {'cpu s':>8} {'ms/round':>9} "
        f"{'train err':>10}"
    )
    rows = []
    for name in fits:
        err = float(np.mean(models[name].predict(X) != y))
        print(
            f"{name:<36} {med[name]:>9.3f} {min(times[name]):>8.3f} {med_cpu[name]:>8.3f} "
            f"{1e3 * med[name] / rounds:>9.2f} {err:>10.4f}"
        )
        rows.append(
            {"case": case, "method": name, "n": X.shape[0], "d": X.shape[1], "rounds": rounds,
             "rounds_run": n_rounds(models[name]), "repeats": repeats,
             "median_s": f"{med[name]:.4f}", "min_s": f"{min(times[name]):.4f}",
             "median_cpu_s": f"{med_cpu[name]:.4f}", "train_error": f"{err:.4f}"}
        )  # fmt: skip
    ours = [n for n in fits if n.startswith(OURS)]
    for peer in (n for n in fits if not n.startswith(OURS)):
        for name in ours:
            ratio, ratio_cpu = med[peer] / med[name], med_cpu[peer] / med_cpu[name]
            print(f"speed-up {name} vs {peer}: {ratio:.1f}x wall, {ratio_cpu:.1f}x cpu")
            for row in rows:
                if row["method"] == name:
                    row[f"x_vs {peer}"] = f"{ratio:.2f}"
                    row[f"x_cpu_vs {peer}"] = f"{ratio_cpu:.2f}"
    return rows


def default_case(case: str, n: int, repeats: int) -> list[dict[str, object]]:
    """Default AdaBoost-Stump (all threads) vs HGB and LightGBM with all threads, and the check
    that one thread gives the same model."""
    cores = available_cores()
    last: dict[int, AdaBoost] = {}  # the last fit at each thread count (the timed data)

    def ours(threads: int | None) -> Callable:
        def fit(X: np.ndarray, y: np.ndarray) -> AdaBoost:
            last[threads or cores] = AdaBoost(n_estimators=100, n_jobs=threads).fit(X, y)
            return last[threads or cores]

        return fit

    fits: dict[str, Callable | None] = {
        f"{OURS} default ({cores} thr)": ours(None),
        f"{OURS} default (1 thr)": ours(1),
        f"sklearn HGB max_leaf_nodes=2 ({cores} thr)": hgb(100, cores),
        f"LightGBM num_leaves=2 ({cores} thr)": lightgbm(100, cores),
    }
    X, y = data_large(n)
    rows = run_case(case, X, y, 100, {k: f for k, f in fits.items() if f}, repeats, 5000)
    one, every = last[1], last[cores]
    same = one.weak_learners_ == every.weak_learners_ and np.array_equal(
        one.decision_function(X), every.decision_function(X)
    )
    print(f"{case}: identical models and decision values at 1 and {cores} threads: {same}")
    for row in rows:
        row["identical_1_vs_all_threads"] = same
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--case", default="5000x20,1e5x50")
    parser.add_argument("--hgb-threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument(
        "--sklearn-large", action="store_true", help="also time AdaBoostClassifier at 1e5 x 50"
    )
    parser.add_argument("--out", type=Path, default=RESULTS, help="the CSV to write")
    args = parser.parse_args()
    cases = args.case.split(",")
    rows: list[dict[str, object]] = []
    if "5000x20" in cases:
        fits = {
            OURS: lambda X, y: AdaBoost(n_estimators=200).fit(X, y),
            SK_ADA: sk_adaboost(200),
        }
        rows += run_case("5000x20", *data_small(), 200, fits, args.repeats)
    if "1e5x50" in cases:
        fits = {
            OURS: lambda X, y: AdaBoost(n_estimators=100).fit(X, y),
            f"{OURS} max_bins=256": lambda X, y: AdaBoost(n_estimators=100, max_bins=256).fit(X, y),
        }
        for threads in args.hgb_threads:
            fits[f"sklearn HGB max_leaf_nodes=2 ({threads} thr)"] = hgb(100, threads)
        if args.sklearn_large:
            fits[SK_ADA] = sk_adaboost(100)
        rows += run_case("1e5x50", *data_large(), 100, fits, args.repeats)
    for n, case in ((100_000, "default-1e5x50"), (1_000_000, "default-1e6x50")):
        if case in cases:
            rows += default_case(case, n, args.repeats)

    env = {"numpy": np.__version__, "sklearn": sklearn.__version__,
           "lightgbm": _version("lightgbm"),
           "python": platform.python_version(), "cpus": os.cpu_count(),
           "load_avg_1min": f"{os.getloadavg()[0]:.2f}"}  # fmt: skip
    fields: list[str] = []
    for row in rows:
        row.update(env)
        fields += [k for k in row if k not in fields]
    write_csv(args.out, rows, fields)


def _version(package: str) -> str:
    import importlib.metadata

    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return ""


if __name__ == "__main__":
    main()
