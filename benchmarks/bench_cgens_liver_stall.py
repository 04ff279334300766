"""The liver fit on which CGENS's exact-bias SMO stalled, timed for two source trees, paired.

CGENS with its default parameters (exact bias, ``solver_tol`` 1e-3), 250 columns,
``random_state=0``, on the training rows of liver's realisation 0 (60/40 random split, seed 0,
min-max scaling: the first cell of ``bench_cgens_defaults.py``), at ``C ∈ {0.1, 1, 10}``. Each
(tree, C) fit runs in a fresh process whose ``PYTHONPATH`` is that tree; the trees alternate
within each round (order reversed every other round). Printed per fit and as medians per (tree,
C): wall time of the fit, total SMO pair updates along the path, restricted solves stopped by
the step cap, and the final restricted objective; the per-C ratio is old / new median wall time.

    OMP_NUM_THREADS=1 python benchmarks/bench_cgens_liver_stall.py --old ../kernbench-old --new . \
        [--rounds 2] [--label 'main vs branch'] [--append] [--out ...csv]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _results import write_csv

CS = (0.1, 1.0, 10.0)


def fit_once(C: float) -> dict:
    """One CGENS fit in this process (the tree on ``PYTHONPATH``); returns its figures."""
    from kernbench.datasets import make_realisation
    from kernbench.methods.cgens import CGENS
    from kernbench.runner.cell.preprocess import fit_scaler
    from kernbench.runner.plan.cells import plan_cells
    from kernbench.specs.load import parse_spec

    spec = {
        "name": "liver_stall",
        "datasets": ["liver"],
        "protocol": {
            "realisations": "random",
            "n_realisations": 1,
            "train_size": 0.6,
            "stratify": True,
            "seed": 0,
            "cv_folds": 5,
            "preprocess": "minmax",
        },
        "methods": {"CGENS": {"estimator": "cgens", "grid": {"C": [C]}}},
    }
    cell = plan_cells(parse_spec(spec), max_cells=None)[0]
    real = make_realisation(
        cell.dataset.name, dict(cell.dataset.options), cell.protocol, 0, seed=cell.protocol.seed
    )
    scale = fit_scaler(real.X_train, cell.protocol.preprocess, cell.protocol.minmax_range)
    X = scale(real.X_train)
    CGENS(C=C, max_iter=5, random_state=0).fit(X, real.y_train)  # compile out of the timing
    est = CGENS(C=C, max_iter=250, random_state=0)
    t = time.perf_counter()
    est.fit(X, real.y_train)
    wall = time.perf_counter() - t
    return {
        "m": int(X.shape[0]),
        "wall_s": wall,
        "pair_updates": int(sum(est.trace_["solver_iter"])),
        "solves_at_cap": int(sum(s != "tol" for s in est.trace_["solver_stop_reason"])),
        "objective": float(est.final_objective_),
        "n_columns": int(len(est.learners_)),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", type=Path, help="source tree of the previous code")
    ap.add_argument("--new", type=Path, help="source tree of the new code")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).parent / "results" / "bench_cgens_liver_stall.csv",
    )
    ap.add_argument("--label", default="old vs new", help="what is compared (first CSV column)")
    ap.add_argument(
        "--append", action="store_true", help="keep the rows of earlier runs already in --out"
    )
    ap.add_argument("--worker", type=float, help=argparse.SUPPRESS)  # internal: one fit at this C
    args = ap.parse_args()
    if args.worker is not None:
        print(json.dumps(fit_once(args.worker)))
        return
    trees = {"old": args.old.resolve(), "new": args.new.resolve()}
    rows = []
    for r in range(args.rounds):
        order = list(trees) if r % 2 == 0 else list(trees)[::-1]
        for C in CS:
            for label in order:
                env = dict(os.environ, PYTHONPATH=str(trees[label]), OMP_NUM_THREADS="1")
                out = subprocess.run(
                    [sys.executable, __file__, "--worker", str(C)],
                    env=env,
                    capture_output=True,
                    text=True,
                    check=True,
                )
                rec = json.loads(out.stdout.strip().splitlines()[-1])
                row = {
                    "comparison": args.label,
                    "round": r,
                    "tree": label,
                    "C": C,
                    **rec,
                    "load1": round(os.getloadavg()[0], 2),
                }
                rows.append(row)
                print(
                    f"round {r} {label:3} C={C:<4} {rec['wall_s']:7.2f} s  "
                    f"{rec['pair_updates']:9d} pair updates  {rec['solves_at_cap']} at cap  "
                    f"objective {rec['objective']:.6f}  load {row['load1']}",
                    flush=True,
                )
    print()
    for C in CS:
        med = {
            t: statistics.median(x["wall_s"] for x in rows if x["tree"] == t and x["C"] == C)
            for t in trees
        }
        print(
            f"C={C:<4} median wall old {med['old']:.2f} s, new {med['new']:.2f} s: "
            f"old/new = {med['old'] / med['new']:.2f}"
        )
    if args.append and args.out.exists():
        with args.out.open(newline="") as fh:
            rows = list(csv.DictReader(fh)) + rows
    write_csv(args.out, rows)


if __name__ == "__main__":
    main()
