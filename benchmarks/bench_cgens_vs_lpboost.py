"""CGENS vs LPBoost (cvxpy; highspy grown by cuts or by columns) training time along the iterations.

CGENS paper Fig. 2 (see docs/papers/cgens.md): pendigits odd-vs-even (the largest binary digit task
in the offline mirror; MNIST is not mirrored), m = 10 000 training points (of 10 992), C = 1 for
both methods (LPBoost in the C-form (4) as the paper times it; the over-regularised C = 1/(νm)
reached its optimum after ~30 columns), ε = 0 so every run does exactly J iterations; the stump
search is included. CGENS uses ``bias_mode="liblinear"`` (the paper used LIBLINEAR) with LIBLINEAR's
default tolerance 0.1 and a 50-epoch cap per restricted solve.

AdaBoost-Stump (same stumps, same data) is the baseline of the ratios printed last.
Times at J ∈ {100, 250, 500} are the cumulative ``trace_["time_s"]`` of one 500-iteration fit
(the same fit a 100-iteration run would perform first). Each method is warmed up on a small fit;
then the median over ``--repeats`` fits (cvxpy: one fit, it takes minutes). Writes
benchmarks/results/bench_cgens_vs_lpboost.csv.

    python benchmarks/bench_cgens_vs_lpboost.py [--n 10000] [--iters 500] [--repeats 3]
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import time
from pathlib import Path

import numpy as np
from lp_primal_masters import IncrementalLPMaster

from kernbench.methods.adaboost import AdaBoost
from kernbench.methods.cgens import CGENS
from kernbench.methods.lpboost import LPBoost

MIRROR = Path(os.environ.get("KERNBENCH_MIRROR", Path(__file__).parents[2] / "shared" / "datasets"))
CHECKPOINTS = (100, 250, 500)


def pendigits_odd_even(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """n random pendigits rows (train + test pooled), features scaled to [0, 1], odd = +1."""
    parts = [
        np.loadtxt(MIRROR / "pendigits" / f, delimiter=",")
        for f in ("pendigits.tra", "pendigits.tes")
    ]
    data = np.vstack(parts)
    idx = np.random.default_rng(seed).permutation(data.shape[0])[:n]
    X, digit = data[idx, :-1] / 100.0, data[idx, -1].astype(int)
    return X, np.where(digit % 2 == 1, 1, -1)


class PrimalLPBoost(LPBoost):
    """LPBoost with the C-form held as the primal (4), grown by columns (the default before the
    cut master: an m-row basis)."""

    _c_master_class = IncrementalLPMaster


def methods(iters: int) -> dict[str, object]:
    # CGENS: warm-started LIBLINEAR-style dual CD, tol 0.1 (LIBLINEAR's default) and a 50-epoch cap
    # per restricted solve (at C = 1 the tolerance is rarely met, see
    # docs/methods/column_generation.md; the cap fired is
    # counted in the printout). The exact-bias SMO is not timed here: without the m × m Gram matrix
    # (m = 10⁴) each pair update costs O(m·J) (see docs/methods/column_generation.md).
    cgens = dict(
        C=1.0,
        tol=0.0,
        max_iter=iters,
        bias_mode="liblinear",
        solver_tol=0.1,
        solver_max_epochs=50,
        gap_trace=False,
    )
    return {
        "AdaBoost-Stump": AdaBoost(n_estimators=iters, weak_learner="stump"),
        "CGENS (liblinear bias)": CGENS(**cgens),
        "CGENS (liblinear, inexact)": CGENS(**cgens, solver_inner_epochs=5),
        "LPBoost (highspy cuts)": LPBoost(C=1.0, tol=0.0, max_iter=iters, solver="highs"),
        "LPBoost (highspy addCol)": PrimalLPBoost(C=1.0, tol=0.0, max_iter=iters, solver="highs"),
        "LPBoost (cvxpy/HiGHS)": LPBoost(
            C=1.0, tol=0.0, max_iter=iters, solver="cvxpy", cvxpy_solver="HIGHS"
        ),
    }


def fit_times(est, X: np.ndarray, y: np.ndarray, iters: int) -> list[float]:
    """Fit time at each checkpoint ≤ iters.

    Exact-per-iteration methods: the cumulative ``trace_["time_s"]`` of one fit of ``iters``
    iterations (its iterate at J is the J-iteration model). Inexact CGENS: one fit per checkpoint
    J, timed wall-clock (it includes the final full solve that makes the J-iteration model).
    """
    cps = [c for c in CHECKPOINTS if c <= iters]
    path = type(est).path_param  # max_iter, AdaBoost's n_estimators
    if getattr(est, "solver_inner_epochs", None) is None:
        est.set_params(**{path: iters})
        est.fit(X, y)
        assert est.n_iter_ == iters, (type(est).__name__, est.n_iter_, est.stop_reason_)
        return [est.trace_["time_s"][c - 1] for c in cps]
    out = []
    for c in cps:
        t0 = time.perf_counter()
        est.set_params(max_iter=c).fit(X, y)
        out.append(time.perf_counter() - t0)
        assert est.n_iter_ == c, (type(est).__name__, est.n_iter_, est.stop_reason_)
    return out


def quality(est) -> str:
    """Final restricted objective and training error of the last fit (same-quality check)."""
    if "objective" not in est.trace_ and not hasattr(est, "final_objective_"):
        return f"train error {est.trace_['train_error'][-1]:.4f}"  # AdaBoost
    obj = getattr(est, "final_objective_", est.trace_["objective"][-1])
    return f"objective {obj:.6g}, train error {est.trace_['train_error'][-1]:.4f}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--iters", type=int, default=500)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument(
        "--cvxpy-iters", type=int, default=100, help="iterations of cvxpy-LPBoost at --n"
    )
    ap.add_argument(
        "--small-n",
        type=int,
        default=2000,
        help="also time CGENS and cvxpy-LPBoost at --iters on this many samples (0: skip)",
    )
    ap.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).parent / "results" / "bench_cgens_vs_lpboost.csv",
    )
    ap.add_argument(
        "--skip", default="", help="comma-separated substrings of method names not to run"
    )
    args = ap.parse_args()
    skip = [t for t in args.skip.split(",") if t]
    runs: list[tuple[str, int, int]] = [
        (name, args.n, args.iters) for name in methods(1) if not any(t in name for t in skip)
    ]
    runs = [(nm, n, args.cvxpy_iters if "cvxpy" in nm else it) for nm, n, it in runs]
    if args.small_n:
        runs += [
            ("CGENS (liblinear bias)", args.small_n, args.iters),
            ("CGENS (liblinear, inexact)", args.small_n, args.iters),
            ("LPBoost (cvxpy/HiGHS)", args.small_n, args.iters),
        ]
    data = {n: pendigits_odd_even(n) for n in {n for _, n, _ in runs}}
    ests = {k: v for k, v in methods(args.iters).items() if any(k == r[0] for r in runs)}
    for est in ests.values():  # warm-up: imports, numba compile, cvxpy canonicalisation
        est.set_params(**{type(est).path_param: 5}).fit(*[a[:500] for a in data[args.n]])
    samples: dict[tuple[str, int], list[list[float]]] = {(nm, n): [] for nm, n, _ in runs}
    for rep in range(args.repeats):  # interleaved: every method once per round (shared machine)
        for name, n, it in runs:
            if "cvxpy" in name and rep > 0:
                continue  # one fit: it takes minutes
            samples[(name, n)].append(fit_times(ests[name], *data[n], it))
            times = ", ".join(f"{t:.2f}s" for t in samples[(name, n)][-1])
            print(f"round {rep}: {name} n={n} J={it}: {times}; {quality(ests[name])}", flush=True)
    rows = []
    med: dict[tuple[str, int], dict[int, float]] = {}
    for (name, n), reps in samples.items():
        cps = CHECKPOINTS[: len(reps[0])]
        med[(name, n)] = {c: statistics.median(r[k] for r in reps) for k, c in enumerate(cps)}
        for c, t in med[(name, n)].items():
            rows.append(
                {
                    "method": name,
                    "n_train": n,
                    "iterations": c,
                    "time_s": round(t, 4),
                    "repeats": len(reps),
                }
            )
    for (name, n), ts in med.items():
        print(f"{name:28s} n={n:6d} " + " ".join(f"J={c}: {t:8.2f}s" for c, t in ts.items()))
    print("\nratio  time(method) / time(CGENS liblinear), same n and J")
    for row in rows:
        ref = med[("CGENS (liblinear bias)", row["n_train"])].get(row["iterations"])
        row["ratio_vs_cgens_liblinear"] = round(row["time_s"] / ref, 3) if ref else ""
        if row["method"] != "CGENS (liblinear bias)":
            print(
                f"{row['method']:28s} n={row['n_train']:6d} J={row['iterations']:4d}: "
                f"{row['ratio_vs_cgens_liblinear']:8.1f}x"
            )
    if ("AdaBoost-Stump", args.n) in med:
        print("\nratio  time(method) / time(AdaBoost-Stump), same n and J (same run)")
        for row in rows:
            ref = med[("AdaBoost-Stump", args.n)].get(row["iterations"])
            if row["n_train"] == args.n and ref:
                row["ratio_vs_adaboost"] = round(row["time_s"] / ref, 3)
                print(
                    f"{row['method']:28s} n={row['n_train']:6d} J={row['iterations']:4d}: "
                    f"{row['ratio_vs_adaboost']:8.1f}x"
                )
    out = args.out
    out.parent.mkdir(exist_ok=True)
    with out.open("w", newline="") as f:
        fields = list(dict.fromkeys(k for row in rows for k in row))
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
