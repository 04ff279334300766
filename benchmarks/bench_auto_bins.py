"""The error cost of AdaBoost's default stump search: binned (``max_bins="auto"``) vs exact.

From 20 000 training points up, ``AdaBoost()`` searches 256-bin histograms instead of every
threshold. This benchmark fits both on the same data and reports the test errors and their
difference (binned − exact), the fit times and their ratio, for twonorm, threenorm and ringnorm
(d = 20, the generators' default offsets), m = 20 000 and 100 000 training points, a test set of
50 000, ``--rounds`` rounds (default 100), ``--seeds`` draws (default 3). Both fits use one thread
so that the times compare the searches.

Usage: ``python benchmarks/bench_auto_bins.py [--seeds 3] [--rounds 100]``; writes
``benchmarks/results/bench_auto_bins.csv``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import numpy as np
from _results import write_csv

from kernbench.datasets.generators import ringnorm, threenorm, twonorm
from kernbench.methods import AdaBoost
from kernbench.weak.stumps import AUTO_BINNED_ROWS, AUTO_MAX_BINS

RESULTS = Path(__file__).parent / "results" / "bench_auto_bins.csv"
GENERATORS = {"twonorm": twonorm, "threenorm": threenorm, "ringnorm": ringnorm}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--sizes", default=f"{AUTO_BINNED_ROWS},100000")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    print(f"{'data':<10} {'m':>7} {'exact err':>9} {'binned err':>10} {'diff':>8} {'time x':>7}")
    for name, gen in GENERATORS.items():
        for m in sizes:
            diffs, ratios, errs = [], [], []
            for seed in range(args.seeds):
                rng = np.random.default_rng(seed)
                X, y = gen(m, rng)
                Xt, yt = gen(50_000, rng)
                res = {}
                for label, bins in (("exact", None), ("binned", AUTO_MAX_BINS)):
                    start = time.perf_counter()
                    model = AdaBoost(args.rounds, max_bins=bins, n_jobs=1).fit(X, y)
                    res[label] = (
                        time.perf_counter() - start,
                        float(np.mean(model.predict(Xt) != yt)),
                    )
                diffs.append(res["binned"][1] - res["exact"][1])
                ratios.append(res["exact"][0] / res["binned"][0])
                errs.append((res["exact"][1], res["binned"][1]))
                rows.append(
                    {"data": name, "m": m, "d": X.shape[1], "rounds": args.rounds,
                     "seed": seed, "exact_error": f"{res['exact'][1]:.5f}",
                     "binned_error": f"{res['binned'][1]:.5f}",
                     "exact_s": f"{res['exact'][0]:.3f}", "binned_s": f"{res['binned'][0]:.3f}",
                     "load_avg_1min": f"{os.getloadavg()[0]:.2f}"}
                )  # fmt: skip
            print(
                f"{name:<10} {m:>7} {statistics.mean(e for e, _ in errs):>9.4f} "
                f"{statistics.mean(b for _, b in errs):>10.4f} {statistics.mean(diffs):>+8.4f} "
                f"{statistics.median(ratios):>6.1f}x",
                flush=True,
            )
    write_csv(RESULTS, rows)


if __name__ == "__main__":
    main()
