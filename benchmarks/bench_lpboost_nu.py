"""LPBoost's ν-LP master: sparse (shifted) vs dense ±1 columns, one fit per setting, paired.

For each data set of Shen & Liu's Table I (``experiments/uci_stumps.yaml``, realisation 1's
training set) and each ν, one LPBoost-stump fit of ``--max-iter`` iterations with the ν-master
storing ±1 columns as their minority entries (``sparse_columns=True``, the default) and one with
dense columns, alternating, ``--repeats`` times; prints CPU medians, the ratio, the final
objectives (the optimum is the same LP's) and the path lengths (degenerate restricted LPs can
return other optimal duals, so the paths may differ).

Usage: ``OMP_NUM_THREADS=1 KERNBENCH_MIRROR=... python benchmarks/bench_lpboost_nu.py
[--datasets german,image] [--nu 0.05 0.3] [--repeats 1]``; writes
``benchmarks/results/bench_lpboost_nu.csv``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from _results import write_csv

import kernbench.solvers.lp as lp
from kernbench.datasets import make_realisation
from kernbench.methods import LPBoost
from kernbench.runner.plan import plan_cells
from kernbench.spec import load_spec

SPEC = Path(__file__).parent.parent / "experiments" / "uci_stumps.yaml"
RESULTS = Path(__file__).parent / "results" / "bench_lpboost_nu.csv"


def training_sets(labels: list[str]) -> dict:
    spec = load_spec(str(SPEC))
    out = {}
    for c in plan_cells(spec, max_cells=None):
        if c.method.label == "LPBoost" and c.realisation == 1 and c.dataset.label in labels:
            real = make_realisation(
                c.dataset.name, dict(c.dataset.options), c.protocol, 1, seed=c.protocol.seed
            )
            out[c.dataset.label] = (real.X_train, real.y_train)
    return out


def fit(X, y, nu: float, max_iter: int, sparse: bool) -> tuple[float, LPBoost]:
    original = lp.IncrementalNuLPMaster.__init__

    def init(self, y, D, time_limit=None):
        original(self, y, D, time_limit, sparse_columns=sparse)

    lp.IncrementalNuLPMaster.__init__ = init
    try:
        start = time.process_time()
        est = LPBoost(nu=nu, max_iter=max_iter, weak_learner="stump").fit(X, y)
        return time.process_time() - start, est
    finally:
        lp.IncrementalNuLPMaster.__init__ = original


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="german,image,diabetes,banana")
    ap.add_argument("--nu", type=float, nargs="+", default=[0.05])
    ap.add_argument("--max-iter", type=int, default=500)
    ap.add_argument("--repeats", type=int, default=1)
    args = ap.parse_args()
    rows = []
    data = training_sets(args.datasets.split(","))
    print(f"{'data':10} {'m':>5} {'nu':>5} {'dense s':>8} {'sparse s':>9} {'x':>5}  objective")
    for label, (X, y) in data.items():
        for nu in args.nu:
            times: dict[bool, list[float]] = {True: [], False: []}
            ests = {}
            for _ in range(args.repeats):
                for sparse in (False, True):
                    t, ests[sparse] = fit(X, y, nu, args.max_iter, sparse)
                    times[sparse].append(t)
            dense_s, sparse_s = (statistics.median(times[k]) for k in (False, True))
            obj = {k: e.trace_["objective"][-1] for k, e in ests.items()}
            print(
                f"{label:10} {X.shape[0]:>5} {nu:>5} {dense_s:>8.2f} {sparse_s:>9.2f} "
                f"{dense_s / sparse_s:>5.2f}  {obj[False]:.12f} / {obj[True]:.12f}"
            )
            rows.append(
                {"dataset": label, "m": X.shape[0], "nu": nu, "max_iter": args.max_iter,
                 "repeats": args.repeats, "dense_cpu_s": f"{dense_s:.3f}",
                 "sparse_cpu_s": f"{sparse_s:.3f}", "speedup": f"{dense_s / sparse_s:.2f}",
                 "objective_dense": f"{obj[False]:.12f}", "objective_sparse": f"{obj[True]:.12f}",
                 "J_dense": ests[False].n_iter_, "J_sparse": ests[True].n_iter_,
                 "load_avg_1min": f"{os.getloadavg()[0]:.2f}"}
            )  # fmt: skip
    write_csv(RESULTS, rows)


if __name__ == "__main__":
    main()
