"""Lin & Li's SVM cells (model selection + refit + test) timed for two source trees, paired.

One realisation per dataset (realisation 0 as ``bench_svm_model_selection.py`` builds it: 60/40
split or 300/3000 sample, minmax [−1, 1] on the training part), through the runner's selection
code (:func:`kernbench.runner.cell.select.select_fit_score`) with ``lin_li_table2.yaml``'s grids:
SVM-Gauss 11 C × 10 γ × 5 folds, SVM-Perc and SVM-Stump 11 C × 5 folds. Each (tree, method,
dataset) runs in a fresh process whose ``PYTHONPATH`` is that tree, one warm-up selection on a
small slice first (imports, caches), then ``--repeats`` timed selections; the trees alternate
within each round (order reversed every other round) so that background load hits both alike.
Printed per (method, dataset): median process CPU per selection of each tree, old / new, and
whether the two trees chose the same parameters and gave bitwise the same test error, training
error and CV table (a change that keeps cell values must print ``same``).

    OMP_NUM_THREADS=1 python benchmarks/bench_svm_cells.py --old ../kernbench-main --new . \
        [--methods SVM-Gauss] [--datasets twonorm,german] [--rounds 2] [--repeats 1]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _results import write_csv_with_machine

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "bench_svm_cells.csv"
C_STUMP = [2.0**k for k in range(-17, 4, 2)]  # lin_li_table2.yaml's C grid of SVM-Stump/Perc
DATASETS = "twonorm,ringnorm,australian,breast,german,heart,ionosphere,pima,sonar,votes84"


def run_once(method: str, dataset: str, repeats: int) -> dict:
    """Select, refit and test in this process (the tree on ``PYTHONPATH``); CPU per selection."""
    sys.path.insert(0, str(HERE))
    from bench_svm_model_selection import C_GAUSS, GAMMA, load

    from kernbench.methods import SVMGauss, SVMPerc, SVMStump
    from kernbench.runner.cell.select import select_fit_score

    est, grid = {
        "SVM-Gauss": (SVMGauss(), {"C": C_GAUSS, "gamma": GAMMA}),
        "SVM-Perc": (SVMPerc(), {"C": C_STUMP}),
        "SVM-Stump": (SVMStump(), {"C": C_STUMP}),
    }[method]
    X, y, Xt, yt = load(dataset)
    warm = slice(None, None, max(1, X.shape[0] // 40))  # both classes (sets sorted by class)
    select_fit_score(est, grid, X[warm], y[warm], Xt[:10], yt[:10], cv_seed=0, trace=False)
    cpu = []
    for _ in range(repeats):
        t = time.process_time()
        out = select_fit_score(est, grid, X, y, Xt, yt, cv_folds=5, cv_seed=0, trace=False)
        cpu.append(time.process_time() - t)
    return {
        "cpu": cpu,
        "values": repr((out.params, out.test_error, out.train_error, out.model_size, out.cv)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", type=Path, help="the tree before (e.g. a worktree of main)")
    parser.add_argument("--new", type=Path, default=HERE.parent)
    parser.add_argument("--methods", default="SVM-Gauss")
    parser.add_argument("--datasets", default=DATASETS)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--one", nargs=3, metavar=("METHOD", "DATASET", "REPEATS"))
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_once(args.one[0], args.one[1], int(args.one[2]))))
        return
    trees = {"old": args.old.resolve(), "new": args.new.resolve()}
    rows = []
    for method in args.methods.split(","):
        for dataset in args.datasets.split(","):
            got: dict[str, list[float]] = {"old": [], "new": []}
            values: dict[str, set[str]] = {"old": set(), "new": set()}
            for r in range(args.rounds):
                for label in ("old", "new") if r % 2 == 0 else ("new", "old"):
                    env = dict(os.environ, PYTHONPATH=str(trees[label]), OMP_NUM_THREADS="1")
                    cmd = [sys.executable, __file__, "--one", method, dataset, str(args.repeats)]
                    res = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
                    one = json.loads(res.stdout.strip().splitlines()[-1])
                    got[label] += one["cpu"]
                    values[label].add(one["values"])
            old, new = statistics.median(got["old"]), statistics.median(got["new"])
            same = len(values["old"] | values["new"]) == 1
            rows.append(
                {
                    "method": method,
                    "dataset": dataset,
                    "old_cpu_s": f"{old:.3f}",
                    "new_cpu_s": f"{new:.3f}",
                    "ratio": f"{old / new:.2f}",
                    "values": "same" if same else "DIFFER",
                    "runs": len(got["old"]),
                }
            )
            print(
                f"{method:9s} {dataset:11s} old {old:7.3f} s  new {new:7.3f} s  "
                f"old/new {old / new:5.2f}  values {'same' if same else 'DIFFER'}",
                flush=True,
            )
    tot_old = sum(float(r["old_cpu_s"]) for r in rows)
    tot_new = sum(float(r["new_cpu_s"]) for r in rows)
    print(f"total      old {tot_old:.2f} s  new {tot_new:.2f} s  old/new {tot_old / tot_new:.2f}")
    write_csv_with_machine(args.out, rows, cores=os.cpu_count())


if __name__ == "__main__":
    main()
