"""CGENS with its default parameters against AdaBoost-Stump, per cell, through the real runner.

The target: a user who writes ``estimator: cgens`` with no other parameters gets cells that cost
at most 15× AdaBoost-Stump's on the same small-data grid (median per data set). The spec below is
built in memory
and expanded by the runner's own planner; each cell is computed by
:func:`kernbench.runner.cell.compute.run_cell` (realisation, preprocessing, 5-fold CV over the grid
along the path, refit, test), exactly what ``kernbench run`` does in a worker:

* catalogue data sets of 300–600 rows (60/40 random splits, min-max scaling, 10 realisations),
* AdaBoost-Stump: ``n_estimators ∈ {25, 50, 100, 250}`` (scored along one fit per fold),
* CGENS: ``estimator: cgens`` without params, grid ``C ∈ {0.1, 1, 10}`` × ``max_iter`` as above
  (the values of C along one warm-started path per fold, CGENS's default),
* optionally other CGENS settings (``--variant label:json``) in the same run, for comparison, e.g.
  ``--variant 'cold:{"warm_path": false}'`` for one cold fit per value of C.

The cells of one (data set, realisation) run back to back in a rotating order (paired,
interleaved); the ratio is CGENS cell wall time / AdaBoost cell wall time of the same realisation.
Printed: per data set the median and the maximum ratio and the mean test errors; the verdict is
on the median per data set (the worst cell is printed beside it). Writes
benchmarks/results/bench_cgens_defaults.csv.

    OMP_NUM_THREADS=1 python benchmarks/bench_cgens_defaults.py [--realisations 10]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

from _results import write_csv

from kernbench.runner.cell.compute import run_cell
from kernbench.runner.plan.cells import plan_cells
from kernbench.specs.load import parse_spec

DATASETS = ("ionosphere", "wdbc", "liver", "votes84")
PATH = [25, 50, 100, 250]
OUT = Path(__file__).parent / "results" / "bench_cgens_defaults.csv"


def spec(datasets, realisations: int, variants: dict[str, dict]) -> dict:
    methods = {
        "AdaBoost-Stump": {"estimator": "adaboost", "grid": {"n_estimators": PATH}},
        "CGENS": {"estimator": "cgens", "grid": {"C": [0.1, 1, 10], "max_iter": PATH}},
    }
    for label, params in variants.items():
        methods[label] = {
            "estimator": "cgens",
            "params": params,
            "grid": {"C": [0.1, 1, 10], "max_iter": PATH},
        }
    return {
        "name": "bench_cgens_defaults",
        "datasets": list(datasets),
        "protocol": {
            "realisations": "random",
            "n_realisations": realisations,
            "train_size": 0.6,
            "stratify": True,
            "seed": 0,
            "cv_folds": 5,
            "preprocess": "minmax",
        },
        "methods": methods,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--realisations", type=int, default=10)
    ap.add_argument(
        "--variant",
        action="append",
        default=[],
        help="another CGENS setting, label:json, e.g. 'old:{\"solver_tol\": 1e-3}'",
    )
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    variants = {}
    for v in args.variant:
        label, params = v.split(":", 1)
        variants[label] = json.loads(params)
    sp = parse_spec(spec(args.datasets.split(","), args.realisations, variants))
    cells = plan_cells(sp, max_cells=None)
    groups: dict[tuple[str, int], list] = {}
    for c in cells:
        groups.setdefault((c.dataset.label, c.realisation), []).append(c)
    # warm-up: numba compilation and imports out of the timed cells
    for c in groups[next(iter(groups))]:
        run_cell(c)
    rows = []
    for k, (key, group) in enumerate(groups.items()):
        order = group[k % len(group) :] + group[: k % len(group)]  # rotate the order
        for c in order:
            t = time.perf_counter()
            rec = run_cell(c)
            wall = time.perf_counter() - t
            if rec.status != "done":
                raise SystemExit(f"cell {c.key} {rec.status}: {rec.error}")
            rows.append(
                {
                    "dataset": key[0],
                    "realisation": key[1],
                    "method": c.method.label,
                    "wall_s": round(wall, 4),
                    "test_error": rec.test_error,
                    "params": json.dumps(rec.params),
                    "load1": round(os.getloadavg()[0], 2),
                }
            )
        print(
            key,
            "  ".join(f"{r['method']} {r['wall_s']:.2f}s" for r in rows[-len(group) :]),
            flush=True,
        )
    by = {(r["dataset"], r["realisation"], r["method"]): r for r in rows}
    labels = [m for m in sp.methods if m.label != "AdaBoost-Stump"]
    worst: dict[str, float] = {}
    worst_median: dict[str, float] = {}
    print(f"\n{'data set':12} {'method':16} {'ratio med':>9} {'max':>6}  {'err %':>6} (AdaBoost)")
    for ds in dict.fromkeys(r["dataset"] for r in rows):
        reals = sorted({r["realisation"] for r in rows if r["dataset"] == ds})
        ada_err = statistics.mean(by[(ds, r, "AdaBoost-Stump")]["test_error"] for r in reals)
        for m in labels:
            ratios = [
                by[(ds, r, m.label)]["wall_s"] / by[(ds, r, "AdaBoost-Stump")]["wall_s"]
                for r in reals
            ]
            err = statistics.mean(by[(ds, r, m.label)]["test_error"] for r in reals)
            worst[m.label] = max(worst.get(m.label, 0.0), max(ratios))
            median = statistics.median(ratios)
            worst_median[m.label] = max(worst_median.get(m.label, 0.0), median)
            print(
                f"{ds:12} {m.label:16} {statistics.median(ratios):9.2f} {max(ratios):6.2f}"
                f"  {100 * err:6.2f} ({100 * ada_err:.2f})"
            )
    for label, w in worst.items():
        med = worst_median[label]
        verdict = "met" if med <= 15.0 else "MISSED"
        print(
            f"{label}: largest median {med:.2f}x AdaBoost-Stump (target <= 15x): {verdict};"
            f" worst cell {w:.2f}x"
        )
    write_csv(args.out, rows)


if __name__ == "__main__":
    main()
