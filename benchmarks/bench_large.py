"""AdaBoost-Stump and CGENS from 10⁴ to 10⁶ rows: time, peak memory and the log–log slope.

Twonorm (kernbench.datasets.generators.twonorm, d = 50), 100 rounds (AdaBoost) or 100 columns
(CGENS, C = 1, the paper's LIBLINEAR setting: bias as a feature, ε = 0.1, ≤ 50 warm-started epochs
per restricted solve), for the exact presorted stump search and the binned one (``max_bins=256``).
Each (method, m, search) runs in a fresh Python process (``--one``) so that its peak resident
memory (``ru_maxrss``: data generation, the space and the fit) is its own; the fit time includes
the presort / binning. The slope is the least-squares fit of log(time) on log(m) over the sizes
run (1 = linear scaling).

CGENS with the exact search tells equal columns apart over every candidate (D·m of them: 5·10⁷
at 10⁶ rows); ``--exact-cgens-max`` (default 10⁵) caps the sizes it is run at.

Usage: ``python benchmarks/bench_large.py [--methods adaboost cgens] [--sizes 10000 1000000]
[--rounds 100]``; writes ``benchmarks/results/bench_large.csv``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from _results import write_csv

RESULTS = Path(__file__).parent / "results" / "bench_large.csv"
SIZES = [10_000, 30_000, 100_000, 300_000, 1_000_000]
SEARCHES = {"exact": None, "binned256": 256}
METHODS = {"adaboost": "AdaBoost", "cgens": "CGENS"}


def make(method: str, rounds: int, max_bins: int | None):
    """The estimator a row times."""
    from kernbench.methods import CGENS, AdaBoost

    if method == "adaboost":
        return AdaBoost(n_estimators=rounds, max_bins=max_bins)
    return CGENS(
        C=1.0, max_iter=rounds, max_bins=max_bins, bias_mode="liblinear", solver_tol=0.1,
        solver_max_epochs=50, random_state=0,
    )  # fmt: skip


def one(method: str, m: int, search: str, rounds: int) -> dict[str, object]:
    """Fit once in this process; report time, rounds run, training error and peak memory."""
    from kernbench.datasets.generators import twonorm

    make(method, 2, SEARCHES[search]).fit(*twonorm(500, np.random.default_rng(1), d=50))
    X, y = twonorm(m, np.random.default_rng(0), d=50)
    start = time.perf_counter()
    est = make(method, rounds, SEARCHES[search]).fit(X, y)
    seconds = time.perf_counter() - start
    build = est.trace_["time_s"][0] if est.trace_["time_s"] else float("nan")
    return {
        "method": method, "m": m, "d": 50, "search": search, "rounds": rounds,
        "rounds_run": est.n_iter_,
        "fit_s": round(seconds, 3), "first_round_s": round(build, 3),
        "train_error": round(est.trace_["train_error"][-1], 4),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=SIZES)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--search", nargs="+", default=list(SEARCHES), choices=list(SEARCHES))
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    parser.add_argument("--exact-cgens-max", type=int, default=100_000)
    parser.add_argument("--one", nargs=3, metavar=("METHOD", "M", "SEARCH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        method, m, search = args.one
        print(json.dumps(one(method, int(m), search, args.rounds)))
        return

    rows = []
    print(f"twonorm d=50, {args.rounds} rounds / columns, one fresh process per fit")
    print(
        f"{'method':<9} {'search':<10} {'m':>9} {'fit s':>8} {'1st round s':>12} {'peak MB':>8} "
        f"{'err':>7}"
    )
    for method in args.methods:
        for search in args.search:
            for m in args.sizes:
                if method == "cgens" and search == "exact" and m > args.exact_cgens_max:
                    continue
                cmd = [sys.executable, __file__, "--one", method, str(m), search]
                cmd += ["--rounds", str(args.rounds)]
                out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
                row = json.loads(out.strip().splitlines()[-1])
                rows.append(row)
                print(
                    f"{METHODS[method]:<9} {search:<10} {m:>9d} {row['fit_s']:>8.2f} "
                    f"{row['first_round_s']:>12.2f} {row['peak_rss_mb']:>8.0f} "
                    f"{row['train_error']:>7.4f}",
                    flush=True,
                )
    for method in args.methods:
        for search in args.search:
            sel = [r for r in rows if r["method"] == method and r["search"] == search]
            if len(sel) > 1:
                logm, logt = np.log([r["m"] for r in sel]), np.log([r["fit_s"] for r in sel])
                slope = float(np.polyfit(logm, logt, 1)[0])
                print(f"{METHODS[method]} {search}: log-log slope of fit time vs m = {slope:.3f}")
                for r in sel:
                    r["loglog_slope"] = round(slope, 3)
    for r in rows:
        r["load_avg_1min"] = round(os.getloadavg()[0], 2)
    write_csv(RESULTS, rows)


if __name__ == "__main__":
    main()
