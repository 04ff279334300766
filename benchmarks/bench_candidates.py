"""Sampled candidate scoring (Table II's hot path): compiled fused pass vs the numpy path.

One oracle call of :class:`FourierSpace` / :class:`PerceptronSpace` at m = 560 with P = 2000 fresh
candidates: draw Θ, κ, score every candidate (one (m × D)(D × P) product, the activation, the
weighted column sums), pick the best. "numpy" is the previous path (``np.cos`` / ``np.where`` and a
matrix-vector product; ``_activation = None``), "compiled" the fused numba pass. Same process,
same draws (the generator is re-seeded per call), interleaved, median of ``--calls`` calls; the
number of calls whose chosen candidate differs between the two paths is printed (expected 0).
m = 560 is a 5-fold CV training part of german (700 rows, D = 20), Table II's case; D = 8, 30 and
60 bracket the other sets (splice has 60 features).

Usage: ``python benchmarks/bench_candidates.py [--calls 50] [--d 8 20 30 60]``; writes
``benchmarks/results/bench_candidates.csv``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import numpy as np
from _results import write_csv

from kernbench.weak.fourier import FourierSpace
from kernbench.weak.perceptron import PerceptronSpace

RESULTS = Path(__file__).parent / "results" / "bench_candidates.csv"
M, P = 560, 2000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--d", type=int, nargs="+", default=[8, 20, 30, 60])
    args = parser.parse_args()
    rows = []
    print(f"oracle call, m={M}, P={P} candidates, median of {args.calls} calls (ms)")
    print(f"{'space':<16} {'D':>3} {'numpy':>8} {'compiled':>9} {'speed-up':>9} {'diff picks':>11}")
    for D in args.d:
        rng = np.random.default_rng(D)
        X = rng.normal(size=(M, D)) / np.sqrt(D)
        for space in (
            FourierSpace(X, sigma=1.0, n_candidates=P),
            PerceptronSpace(X, n_candidates=P),
        ):
            cls = type(space)
            activation = cls._activation
            times: dict[str, list[float]] = {"numpy": [], "compiled": []}
            differ = 0
            space.best(rng.normal(size=M), absolute=True)  # warm-up (numba cache load)
            for call in range(args.calls):
                g = rng.normal(size=M)
                picks = {}
                for path in ("numpy", "compiled"):
                    cls._activation = None if path == "numpy" else activation
                    draws = np.random.default_rng(call)
                    start = time.perf_counter()
                    picks[path] = space.best(g, absolute=True, rng=draws)
                    times[path].append(time.perf_counter() - start)
                cls._activation = activation
                differ += not np.array_equal(picks["numpy"].column, picks["compiled"].column)
            med = {k: 1e3 * statistics.median(v) for k, v in times.items()}
            ratio = med["numpy"] / med["compiled"]
            print(
                f"{cls.__name__:<16} {D:>3} {med['numpy']:>8.2f} {med['compiled']:>9.2f} "
                f"{ratio:>8.1f}x {differ:>11d}"
            )
            rows.append(
                {"space": cls.__name__, "m": M, "D": D, "P": P, "calls": args.calls,
                 "numpy_ms": f"{med['numpy']:.3f}", "compiled_ms": f"{med['compiled']:.3f}",
                 "compiled_min_ms": f"{1e3 * min(times['compiled']):.3f}",
                 "speedup": f"{ratio:.2f}", "different_picks": differ,
                 "load_avg_1min": f"{os.getloadavg()[0]:.2f}"}
            )  # fmt: skip
    write_csv(RESULTS, rows)


if __name__ == "__main__":
    main()
