"""CGENS's restricted dual CD with the column buffer held as int8 (now) or float64 (before).

Stump and perceptron columns are ±1, so RestrictedLinearSVM stores them as int8 (exact) and the
dual CD reads an eighth of the bytes per coordinate step. This times the LIBLINEAR-style dual CD
(``dcd_solve``, the solver of CGENS with ``bias_mode="liblinear"``) on the same problem with both
buffers: m rows, J random ±1 columns, C = 1, a fixed number of epochs from the same start,
interleaved, median of ``--repeats``; checks that both give the same α. Writes
benchmarks/results/bench_column_storage.csv.

    OMP_NUM_THREADS=1 python benchmarks/bench_column_storage.py [--m 10000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import numpy as np
from _results import write_csv

from kernbench.solvers.dual_cd import dcd_solve, dual_diagonal


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--m", type=int, default=10_000)
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    m = args.m
    H = np.where(rng.random((m, 512)) < 0.5, -1.0, 1.0)
    y = np.where(H[:, :7].sum(axis=1) + rng.normal(size=m) > 0, 1.0, -1.0)
    rows = []
    for J in (100, 250, 500):
        bufs = {"float64": np.ascontiguousarray(H), "int8": H.astype(np.int8)}
        a0 = np.full(m, 0.5)
        w0 = np.append(H[:, :J].T @ (y * a0), y @ a0)
        times: dict[str, list[float]] = {k: [] for k in bufs}
        alphas = {}
        for P in bufs.values():  # warm-up (compiles each signature)
            dcd_solve(P, J, 1.0, y, a0.copy(), w0.copy(), 1.0, 0.1, 1, 0, dual_diagonal(P, J, 1.0))
        for _ in range(args.repeats):
            for k, P in bufs.items():
                a, w = a0.copy(), w0.copy()
                t = time.perf_counter()
                dcd_solve(P, J, 1.0, y, a, w, 1.0, 0.1, args.epochs, 0, dual_diagonal(P, J, 1.0))
                times[k].append(time.perf_counter() - t)
                alphas[k] = a
        diff = float(np.max(np.abs(alphas["int8"] - alphas["float64"])))
        med = {k: statistics.median(v) for k, v in times.items()}
        ratio = med["float64"] / med["int8"]
        print(
            f"m={m} J={J}: float64 {1e3 * med['float64'] / args.epochs:.2f} ms/epoch, "
            f"int8 {1e3 * med['int8'] / args.epochs:.2f} ms/epoch: {ratio:.2f}x; "
            f"max |alpha diff| {diff:.1e}"
        )
        rows.append(
            {
                "m": m,
                "J": J,
                "float64_ms_per_epoch": round(1e3 * med["float64"] / args.epochs, 3),
                "int8_ms_per_epoch": round(1e3 * med["int8"] / args.epochs, 3),
                "ratio": round(ratio, 3),
                "max_alpha_diff": diff,
                "load1": round(os.getloadavg()[0], 2),
            }
        )
    out = Path(__file__).parent / "results" / "bench_column_storage.csv"
    write_csv(out, rows)


if __name__ == "__main__":
    main()
