"""MultiBoost's restricted master: L-BFGS-B (the paper's solver) vs FCD and projected Newton.

MultiBoost (Shen & Hao) shares each learner column across the K classes, so FCD sees K variables
per stored column (``MultiBoost(solver="fcd")``). Two measurements, on realisation 0 of a random
stratified 75/25 split (features standardised on the training part), C = 10⁴, OMP_NUM_THREADS=1:

1. **Restricted problems from a real run** (``bench_multiboost_master.csv``): an L-BFGS-B
   MultiBoost run of ``--iters`` iterations; at each checkpoint t the restricted problem on its
   first t learners, warm-started at the solution of iteration t − 1 with a zero row (what the
   column-generation loop hands the solver). Timed: L-BFGS-B with scipy's defaults, FCD with
   MultiBoost's default ε (1e-2) and the tighter ε = 1e-3, and projected Newton
   (``solver="newton"``, KKT residual ≤ 1e-6); the solvers' repeats interleaved, medians. Ratio
   = solver time / L-BFGS-B time (> 1: slower than L-BFGS-B); objectives beside.
2. **Fits** (``bench_multiboost_master_fits.csv``): ``--fit-iters`` MultiBoost iterations
   (rel_tol off) with each solver of ``--fit-solvers`` (default lbfgsb,fcd,newton), repeats
   interleaved: median wall and CPU time, final objective, test error, ratio to lbfgsb.

    OMP_NUM_THREADS=1 python benchmarks/bench_multiboost_master.py [--datasets vowel,segment]
        [--iters 20] [--checkpoints 5,10,20] [--fit-iters 10] [--repeats 3]
        [--fit-solvers lbfgsb,fcd,newton]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
from _results import write_csv

from kernbench.datasets import make_realisation
from kernbench.methods.multiboost import MultiBoost
from kernbench.runner.cell.preprocess import fit_scaler
from kernbench.solvers.exp_loss_newton import solve_shared_newton
from kernbench.solvers.fcd import fcd_solve
from kernbench.solvers.multiclass_exp_loss import solve_shared_lbfgsb
from kernbench.specs.types import Protocol

RESULTS = Path(__file__).parent / "results"
PROTOCOL = Protocol(realisations="random", train_size=0.75, stratify=True, seed=0)
C = 1e4  # Lin et al.'s setting for MultiBoost in Figs 1-2 and 6


def load(name: str):
    r = make_realisation(name, {}, PROTOCOL, 0, seed=0)
    scale = fit_scaler(r.X_train, "standardize")
    classes = np.unique(r.y_train)
    return (
        scale(r.X_train),
        np.searchsorted(classes, r.y_train),
        scale(r.X_test),
        np.searchsorted(classes, r.y_test),
    )


def _solvers(Ht, y, W0, K) -> dict:
    """The timed solves of one restricted problem (the new learner's K variables start S)."""
    t = Ht.shape[1]
    vc, vk = np.repeat(np.arange(t), K), np.tile(np.arange(K), t)  # variable (j, c) = j·K + c
    new = np.arange((t - 1) * K, t * K)

    def fcd(eps):
        return lambda: fcd_solve(Ht, y, C, W0.ravel(), vc, vk, K, new, eps=eps, tau_max=None)

    return {
        "lbfgsb": lambda: solve_shared_lbfgsb(Ht, y, C, W0).objective,
        "fcd_1e-2": lambda: fcd(1e-2)().objective,
        "fcd_1e-3": lambda: fcd(1e-3)().objective,
        "newton": lambda: solve_shared_newton(Ht, y, C, W0).objective,
    }


def restricted_problems(name, X, y, iters, checkpoints, repeats) -> list[dict]:
    est = MultiBoost(C=C, max_iter=iters, rel_tol=None).fit(X, y)
    H = est._learner_matrix(X)
    K = est.classes_.size
    rows = []
    for t in checkpoints:
        if t > est.n_iter_ or t < 2:
            continue
        W0 = np.vstack([est.coef_path_[t - 2], np.zeros((1, K))])
        fns = _solvers(np.ascontiguousarray(H[:, :t]), y, W0, K)
        times: dict[str, list[float]] = {k: [] for k in fns}
        objs = {}
        for _ in range(repeats):  # interleaved
            for k, fn in fns.items():
                t0 = time.perf_counter()
                objs[k] = fn()
                times[k].append(time.perf_counter() - t0)
        med = {k: statistics.median(v) for k, v in times.items()}
        row = dict(dataset=name, m=X.shape[0], K=K, iteration=t, n_vars=t * K)
        for k in fns:
            row[f"{k}_s"] = med[k]
            row[f"{k}_obj"] = objs[k]
        row["ratio_fcd_1e-2"] = med["fcd_1e-2"] / med["lbfgsb"]
        row["ratio_fcd_1e-3"] = med["fcd_1e-3"] / med["lbfgsb"]
        row["ratio_newton"] = med["newton"] / med["lbfgsb"]
        print(
            f"{name} t={t:3d}: L-BFGS-B {med['lbfgsb']:.3f}s f={objs['lbfgsb']:.6f} | FCD ε=1e-2 "
            f"{med['fcd_1e-2']:.3f}s f={objs['fcd_1e-2']:.6f} (×{row['ratio_fcd_1e-2']:.1f}) | "
            f"ε=1e-3 {med['fcd_1e-3']:.3f}s f={objs['fcd_1e-3']:.6f} "
            f"(×{row['ratio_fcd_1e-3']:.1f}) | Newton {med['newton']:.3f}s "
            f"f={objs['newton']:.6f} (×{row['ratio_newton']:.2f})",
            flush=True,
        )
        rows.append(row)
    return rows


def fits(name, X, y, Xt, yt, iters, repeats, solvers=("lbfgsb", "fcd", "newton")) -> dict:
    runs: dict[str, list] = {s: [] for s in solvers}
    for _ in range(repeats):  # interleaved
        for solver in runs:
            w0, c0 = time.perf_counter(), time.process_time()
            est = MultiBoost(C=C, max_iter=iters, rel_tol=None, solver=solver).fit(X, y)
            runs[solver].append(
                (time.perf_counter() - w0, time.process_time() - c0, est.trace_["objective"][-1],
                 float(np.mean(est.predict(Xt) != yt)), est.n_iter_)
            )  # fmt: skip
    row = dict(dataset=name, m=X.shape[0], iterations=iters)
    for solver, r in runs.items():
        row[f"{solver}_wall_s"] = statistics.median(x[0] for x in r)
        row[f"{solver}_cpu_s"] = statistics.median(x[1] for x in r)
        row[f"{solver}_objective"] = r[-1][2]
        row[f"{solver}_test_error"] = r[-1][3]
        row[f"{solver}_n_iter"] = r[-1][4]
    parts = [f"{name} fit {iters} it.:"]
    for solver in runs:
        row[f"wall_ratio_{solver}_over_lbfgsb"] = row[f"{solver}_wall_s"] / row["lbfgsb_wall_s"]
        row[f"cpu_ratio_{solver}_over_lbfgsb"] = row[f"{solver}_cpu_s"] / row["lbfgsb_cpu_s"]
        parts.append(
            f"{solver} {row[f'{solver}_wall_s']:.2f}s wall {row[f'{solver}_cpu_s']:.2f}s CPU "
            f"f={row[f'{solver}_objective']:.6f} err={row[f'{solver}_test_error']:.4f} "
            f"(wall ×{row[f'wall_ratio_{solver}_over_lbfgsb']:.2f} of L-BFGS-B) |"
        )
    print(" ".join(parts), flush=True)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="vowel,segment")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--checkpoints", default="5,10,20")
    ap.add_argument("--fit-iters", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--fit-solvers", default="lbfgsb,fcd,newton")
    ap.add_argument("--out", default=str(RESULTS / "bench_multiboost_master.csv"))
    args = ap.parse_args()
    checkpoints = [int(c) for c in args.checkpoints.split(",")]
    # warm-up: numba compilation of FCD's kernels
    Xw = np.random.default_rng(0).normal(size=(60, 3))
    MultiBoost(max_iter=3, solver="fcd").fit(Xw, np.arange(60) % 3)
    problems, fit_rows = [], []
    for name in args.datasets.split(","):
        X, y, Xt, yt = load(name)
        problems += restricted_problems(name, X, y, args.iters, checkpoints, args.repeats)
        if args.fit_iters > 0:
            solvers = tuple(args.fit_solvers.split(","))
            fit_rows.append(fits(name, X, y, Xt, yt, args.fit_iters, args.repeats, solvers))
    write_csv(args.out, problems)
    if fit_rows:
        write_csv(str(args.out).replace(".csv", "_fits.csv"), fit_rows)
    for key, label in (("ratio_fcd_1e-2", "FCD (ε=1e-2)"), ("ratio_newton", "Newton")):
        ratios = [r[key] for r in problems]
        if ratios:
            print(f"median {label} / L-BFGS-B time per restricted solve: ×{np.median(ratios):.2f}")


if __name__ == "__main__":
    main()
