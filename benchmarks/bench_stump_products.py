"""MultiBoost's L-BFGS-B products through the stumps' thresholds, against dense BLAS products.

Each L-BFGS-B evaluation of MultiBoost's restricted problem needs F = H W and Hᵀ U, H the m × J
stump columns (±1), W the J × K coefficients, U the m × K pricing weights.
``kernbench.solvers.stump_products`` computes both through each feature's sorted thresholds
(m·D′·K additions); before, two BLAS products (m·J·K multiply-adds each). Two measurements on
realisation 0 of a random stratified 75/25 split (features standardised on the training part),
OMP_NUM_THREADS=1, the two paths interleaved, medians:

1. **Products** (``bench_stump_products.csv``): J random stumps at the data's own values (ties
   included) and the constant stump, random W and U; time of one H W plus one Hᵀ U, and the
   largest difference between the two paths.
2. **Fits** (``bench_stump_products_fits.csv``, ``--fit-iters`` > 0): MultiBoost at C = 10⁴ (the
   MultiBoost_cw spec's setting) with the stump products and with the dense ones: wall and CPU
   time, iterations, stop reason, test error.

    OMP_NUM_THREADS=1 python benchmarks/bench_stump_products.py [--datasets letter,pendigits]
        [--J 100,250,500] [--repeats 5] [--fit-datasets vowel] [--fit-iters 500]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
from _results import write_csv
from bench_fcd import timed_pair
from bench_multiboost_master import load

import kernbench.methods.multiboost as multiboost
from kernbench.solvers.stump_products import StumpProducts
from kernbench.weak.stumps import Stump

RESULTS = Path(__file__).parent / "results"


def _products(name: str, Js: list[int], repeats: int) -> list[dict]:
    X, y, _, _ = load(name)
    m, D = X.shape
    K = int(y.max()) + 1
    rng = np.random.default_rng(0)
    stumps = [Stump(0, -np.inf, 1)]
    for _ in range(max(Js) - 1):
        f = int(rng.integers(D))
        stumps.append(Stump(f, float(rng.choice(X[:, f])), int(rng.choice([-1, 1]))))
    rows = []
    for J in Js:
        products = StumpProducts(X)
        for s in stumps[:J]:
            products.add(s.feature, s.threshold, s.sign, s.predict(X))
        H = np.column_stack([s.predict(X) for s in stumps[:J]])
        W, U, out = rng.random((J, K)) * 1e-2, rng.normal(size=(m, K)), np.empty((m, K))
        paths = {
            "dense": lambda H=H, W=W, U=U, out=out: (np.matmul(H, W, out=out), H.T @ U),
            "stumps": lambda P=products, W=W, U=U, out=out: (P.forward(W, out), P.backward(U)),
        }
        for run in paths.values():
            run()  # warm-up: compiles, builds the layout
        med = {k: 1e3 * v for k, v in timed_pair(paths, repeats).items()}
        diff = max(
            float(np.abs(products.forward(W, np.empty((m, K))) - H @ W).max()),
            float(np.abs(products.backward(U) - H.T @ U).max()),
        )
        ratio = med["dense"] / med["stumps"]
        print(
            f"{name} m={m} D={D} K={K} J={J}: dense {med['dense']:.2f} ms, "
            f"stumps {med['stumps']:.2f} ms: {ratio:.1f}x; max |diff| {diff:.1e}"
        )
        rows.append(
            {"dataset": name, "m": m, "D": D, "K": K, "J": J, "dense_ms": round(med["dense"], 3),
             "stumps_ms": round(med["stumps"], 3), "ratio": round(ratio, 2), "max_diff": diff,
             "load1": round(os.getloadavg()[0], 2)}
        )  # fmt: skip
    return rows


def _fits(name: str, iters: int) -> list[dict]:
    X, y, Xt, yt = load(name)
    keep = multiboost.SharedExpLossMaster._stump_products
    rows = []
    for path in ("stumps", "dense"):
        if path == "dense":
            multiboost.SharedExpLossMaster._stump_products = lambda self, ws: None
        try:
            est = multiboost.MultiBoost(C=1e4, max_iter=iters)
            t, c = time.perf_counter(), time.process_time()
            est.fit(X, y)
            wall, cpu = time.perf_counter() - t, time.process_time() - c
        finally:
            multiboost.SharedExpLossMaster._stump_products = keep
        err = 100.0 * float(np.mean(est.predict(Xt) != yt))
        print(f"{name} fit, {path}: {wall:.1f} s wall, {cpu:.1f} s CPU, {est.n_iter_} iterations "
              f"({est.stop_reason_}), test error {err:.2f} %")  # fmt: skip
        rows.append(
            {"dataset": name, "path": path, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
             "n_iter": est.n_iter_, "stop_reason": est.stop_reason_, "test_error": round(err, 4),
             "load1": round(os.getloadavg()[0], 2)}
        )  # fmt: skip
    print(f"{name} fit: dense / stumps = {rows[1]['wall_s'] / rows[0]['wall_s']:.2f}x (wall)")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", default="letter,pendigits,satimage")
    ap.add_argument("--J", default="100,250,500")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--fit-datasets", default="vowel")
    ap.add_argument("--fit-iters", type=int, default=0)
    args = ap.parse_args()
    Js = [int(j) for j in args.J.split(",")]
    rows = [r for name in args.datasets.split(",") for r in _products(name, Js, args.repeats)]
    write_csv(RESULTS / "bench_stump_products.csv", rows)
    if args.fit_iters > 0:
        fits = [r for name in args.fit_datasets.split(",") for r in _fits(name, args.fit_iters)]
        write_csv(RESULTS / "bench_stump_products_fits.csv", fits)


if __name__ == "__main__":
    main()
