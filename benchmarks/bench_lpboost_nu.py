"""LPBoost's ν-LP master: primal with dense / sparse ±1 columns vs the dual grown by cuts, paired.

For each data set of Shen & Liu's Table I (``experiments/uci_stumps.yaml``, realisation 1's
training set) and each ν, one LPBoost-stump fit of ``--max-iter`` iterations per master variant,
interleaved (all variants once, then again), ``--repeats`` times:

* ``dense``: :class:`IncrementalNuLPMaster` with ``sparse_columns=False`` (primal, addCol, primal
  simplex);
* ``sparse``: :class:`IncrementalNuLPMaster` (the ±1 columns stored as their minority entries);
* ``cut``: :class:`IncrementalNuLPCutMaster` (the dual, one row per column, dual simplex with
  Devex pricing; sparse cuts);
* ``cut-dantzig`` / ``cut-highs``: the same with Dantzig pricing / HiGHS's default choice;
* ``cut-dense``: the same with ``sparse_columns=False``.

Prints CPU medians, each variant's ratio to the first one listed (the baseline), the final
objectives (the optimum of the last restricted LP; paths can differ, degenerate restricted LPs
have many optimal duals), path lengths J and mean simplex iterations per restricted solve.

``--same-columns``: the paths differ between masters, so fit times mix solver speed with path
length. This mode records the column sequence of one fit with the first variant, then times each
variant on exactly those restricted LPs (``add_column`` + ``solve`` per column, interleaved
repeats) and reports the largest difference of any restricted optimum from the first variant's.

Usage: ``OMP_NUM_THREADS=1 KERNBENCH_MIRROR=... python benchmarks/bench_lpboost_nu.py
[--datasets german,image] [--nu 0.05 0.3] [--variants sparse,cut] [--repeats 1]
[--same-columns]``; writes ``benchmarks/results/bench_lpboost_nu.csv`` (or
``bench_lpboost_nu_same_columns.csv``), one row per data set, ν and variant.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from functools import partial
from pathlib import Path

import numpy as np
from _results import write_csv
from lp_primal_masters import IncrementalNuLPMaster

import kernbench.solvers.lp as lp
from kernbench.datasets import make_realisation
from kernbench.methods import LPBoost
from kernbench.runner.plan.cells import plan_cells
from kernbench.specs.load import load_spec

SPEC = Path(__file__).parent.parent / "experiments" / "uci_stumps.yaml"
RESULTS = Path(__file__).parent / "results" / "bench_lpboost_nu.csv"
VARIANTS = {
    "dense": partial(IncrementalNuLPMaster, sparse_columns=False),
    "sparse": partial(IncrementalNuLPMaster, sparse_columns=True),
    "cut": partial(lp.IncrementalNuLPCutMaster, sparse_columns=True),
    "cut-dantzig": partial(lp.IncrementalNuLPCutMaster, pricing="dantzig"),
    "cut-highs": partial(lp.IncrementalNuLPCutMaster, pricing="highs"),
    "cut-dense": partial(lp.IncrementalNuLPCutMaster, sparse_columns=False),
}


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


class _Bench(LPBoost):
    """LPBoost with the ν-master chosen by the benchmark (same parameters, same fit)."""

    _nu_master_class = None  # set per fit


def fit(X, y, nu: float, max_iter: int, variant: str) -> tuple[float, LPBoost]:
    _Bench._nu_master_class = staticmethod(VARIANTS[variant])
    start = time.process_time()
    est = _Bench(nu=nu, max_iter=max_iter, weak_learner="stump").fit(X, y)
    return time.process_time() - start, est


def column_sequence(X, y, nu: float, max_iter: int, variant: str) -> tuple[np.ndarray, list]:
    """The ±1 labels the fit passes to its master and the columns it adds, in order."""
    cols = []
    labels = []
    make = VARIANTS[variant]

    def recording(y_, D):
        labels.append(np.asarray(y_, dtype=np.float64))
        master = make(y_, D)
        add = master.add_column
        master.add_column = lambda h: (cols.append(np.array(h, dtype=np.float64)), add(h))[1]
        return master

    _Bench._nu_master_class = staticmethod(recording)
    _Bench(nu=nu, max_iter=max_iter, weak_learner="stump").fit(X, y)
    return labels[0], cols


def replay(y, D: float, cols: list, variant: str) -> tuple[float, np.ndarray, float]:
    """CPU seconds to solve every restricted LP of ``cols``, their optima, mean pivots/solve."""
    master = VARIANTS[variant](y, D)
    obj, iters = np.empty(len(cols)), 0
    start = time.process_time()
    for k, h in enumerate(cols):
        master.add_column(h)
        res = master.solve()
        obj[k], iters = res.primal, iters + res.n_iter
    return time.process_time() - start, obj, iters / len(cols)


def main_same_columns(args, variants, data) -> list:
    base = variants[0]
    rows = []
    for label, (X, y) in data.items():
        for nu in args.nu:
            ys, cols = column_sequence(X, y, nu, args.max_iter, base)
            D = 1.0 / (nu * X.shape[0])
            times: dict[str, list[float]] = {v: [] for v in variants}
            out = {}
            for _ in range(args.repeats):
                for v in variants:
                    t, obj, it = replay(ys, D, cols, v)
                    times[v].append(t)
                    out[v] = (obj, it)
            med = {v: statistics.median(times[v]) for v in variants}
            for v in variants:
                diff = float(np.max(np.abs(out[v][0] - out[base][0])))
                print(
                    f"{label:9} m={X.shape[0]:>5} nu={nu:<5} {v:11} {med[v]:7.2f} s  "
                    f"{base}/{v} = {med[base] / med[v]:5.2f}  J {len(cols)}  "
                    f"max |obj - {base}| {diff:.1e}  iter/solve {out[v][1]:.1f}",
                    flush=True,
                )
                rows.append(
                    {"mode": "same_columns", "dataset": label, "m": X.shape[0], "nu": nu,
                     "max_iter": args.max_iter, "repeats": args.repeats, "variant": v,
                     "cpu_s_median": f"{med[v]:.3f}",
                     "cpu_s_all": " ".join(f"{t:.2f}" for t in times[v]),
                     "ratio_vs_" + base: f"{med[base] / med[v]:.2f}",
                     "objective": f"{out[v][0][-1]:.12f}", "max_abs_obj_diff": f"{diff:.1e}",
                     "J": len(cols), "simplex_iter_per_solve": f"{out[v][1]:.1f}",
                     "load_avg_1min": f"{os.getloadavg()[0]:.2f}"}
                )  # fmt: skip
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="german,image,diabetes,banana")
    ap.add_argument("--nu", type=float, nargs="+", default=[0.05])
    ap.add_argument("--max-iter", type=int, default=500)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument(
        "--variants", default="dense,sparse,cut", help=f"comma list of {','.join(VARIANTS)}"
    )
    ap.add_argument(
        "--same-columns", action="store_true", help="time the masters on one column sequence"
    )
    args = ap.parse_args()
    variants = args.variants.split(",")
    base = variants[0]
    rows = []
    data = training_sets(args.datasets.split(","))
    if args.same_columns:
        write_csv(
            RESULTS.with_name("bench_lpboost_nu_same_columns.csv"),
            main_same_columns(args, variants, data),
        )
        return
    for label, (X, y) in data.items():
        for nu in args.nu:
            times: dict[str, list[float]] = {v: [] for v in variants}
            ests = {}
            for _ in range(args.repeats):
                for v in variants:
                    t, ests[v] = fit(X, y, nu, args.max_iter, v)
                    times[v].append(t)
            med = {v: statistics.median(times[v]) for v in variants}
            for v in variants:
                e = ests[v]
                obj = e.trace_["objective"][-1]
                iters = np.asarray(e.trace_.get("solver_iter", [np.nan]), dtype=float)
                print(
                    f"{label:9} m={X.shape[0]:>5} nu={nu:<5} {v:10} {med[v]:7.2f} s  "
                    f"{base}/{v} = {med[base] / med[v]:5.2f}  objective {obj:.12f}  "
                    f"J {e.n_iter_}  iter/solve {np.nanmean(iters):.1f}",
                    flush=True,
                )
                rows.append(
                    {"mode": "fit", "dataset": label, "m": X.shape[0], "nu": nu,
                     "max_iter": args.max_iter,
                     "repeats": args.repeats, "variant": v, "cpu_s_median": f"{med[v]:.3f}",
                     "cpu_s_all": " ".join(f"{t:.2f}" for t in times[v]),
                     "ratio_vs_" + base: f"{med[base] / med[v]:.2f}", "objective": f"{obj:.12f}",
                     "J": e.n_iter_, "simplex_iter_per_solve": f"{np.nanmean(iters):.1f}",
                     "load_avg_1min": f"{os.getloadavg()[0]:.2f}"}
                )  # fmt: skip
    write_csv(RESULTS, rows)


if __name__ == "__main__":
    main()
