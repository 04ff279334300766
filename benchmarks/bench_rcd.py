"""The RCD perceptron (AdaBoost-Perc's base learner): fused ``rcd_loop`` vs the reference loop.

Same data, starting weights and directions for both (drawn as ``train_rcd_perceptron`` draws
them: w̃ ~ U[−0.05, 0.05], LEMGA ``RCD_BIAS`` direction cycles); the reference is
``reference_rcd_loop``, one ``update_wgt`` per update. Inputs N(0, 1), labels from a noisy XOR of
the first two features, weights Dirichlet(1) as in an AdaBoost round. Warm-up (compilation)
first, then the median of ``--runs`` timed calls, interleaved; prints µs per update and the ratio
(reference / fused) and checks that both return identical weights and traces; writes
benchmarks/results/bench_rcd.csv.

    python benchmarks/bench_rcd.py [--m 300 600 1000] [--d 20 24 60] [--max-run 1000] [--runs 7]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
from _results import write_csv

from kernbench.solvers.rcd import rcd_loop
from kernbench.solvers.rcd_reference import reference_rcd_loop
from kernbench.weak.rcd_perceptron import augment, rcd_directions


def problem(m: int, d: int, max_run: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, d))
    y = np.where(X[:, 0] * X[:, 1] + 0.3 * rng.normal(size=m) > 0, 1.0, -1.0)
    yw = rng.dirichlet(np.ones(m)) * y
    w0 = rng.uniform(-0.05, 0.05, size=d + 1)
    return augment(X), yw, w0, rcd_directions(d, max_run, rng)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--m", type=int, nargs="+", default=[300, 600, 1000], help="training points")
    ap.add_argument("--d", type=int, nargs="+", default=[20, 24, 60], help="features, one per m")
    ap.add_argument("--max-run", type=int, default=1000, help="RCD updates per call")
    ap.add_argument("--runs", type=int, default=7, help="timed calls per loop (median)")
    args = ap.parse_args()
    if len(args.m) != len(args.d):
        ap.error(f"--m and --d pair up: got {len(args.m)} values of m and {len(args.d)} of d")
    loops = {"reference": reference_rcd_loop, "fused": rcd_loop}
    rows = []
    for m, d in zip(args.m, args.d):
        Xa, yw, w0, dirs = problem(m, d, args.max_run)
        out = {name: loop(Xa, yw, w0, dirs) for name, loop in loops.items()}  # warm-up
        identical = all(
            np.array_equal(a, b) for a, b in zip(out["reference"], out["fused"], strict=True)
        )
        times: dict[str, list[float]] = {name: [] for name in loops}
        for _ in range(args.runs):
            for name, loop in loops.items():
                t0 = time.perf_counter()
                loop(Xa, yw, w0, dirs)
                times[name].append(time.perf_counter() - t0)
        us = {name: statistics.median(ts) / args.max_run * 1e6 for name, ts in times.items()}
        ratio = us["reference"] / us["fused"]
        rows.append(
            {
                "m": m,
                "d": d,
                "max_run": args.max_run,
                "runs": args.runs,
                "reference_us_per_update": round(us["reference"], 2),
                "fused_us_per_update": round(us["fused"], 2),
                "ratio_reference_over_fused": round(ratio, 2),
                "identical": identical,
            }
        )
        print(
            f"m={m:5d} D={d:3d}  reference {us['reference']:8.2f} µs/update  "
            f"fused {us['fused']:7.2f} µs/update  x{ratio:5.2f}  identical={identical}",
            flush=True,
        )
    path = Path(__file__).parent / "results" / "bench_rcd.csv"
    path.parent.mkdir(exist_ok=True)
    write_csv(path, rows)


if __name__ == "__main__":
    main()
