"""Our restricted linear-SVM solvers vs scikit-learn's LIBSVM (precomputed linear Gram) and cvxpy.

Same problems for all: m points, J random ±1 stump-like columns, C = 1, unregularised bias (SVC and
cvxpy solve exactly problem (1)). Ours: SMO with exact bias (tol 1e-3, LIBSVM's default) and the
LIBLINEAR-style dual CD (tol 0.1, bias regularised: a slightly different problem, timed for
reference). One cold solve each; warm-up first, median of ``--repeats``. Prints time ratios
(peer / ours) and the relative objective difference to cvxpy; writes
benchmarks/results/bench_dual_cd.csv.

    python benchmarks/bench_dual_cd.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import cvxpy as cp
import numpy as np
from _results import write_csv
from sklearn.svm import SVC

from kernbench.solvers.restricted_svm import RestrictedLinearSVM

SIZES = ((500, 50), (2000, 100), (4000, 200))


def problem(m: int, J: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, 5))
    d, t = rng.integers(0, 5, size=J), rng.normal(size=J)
    H = np.where(X[:, d] >= t, 1.0, -1.0)
    y = np.where(np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.3 * rng.normal(size=m) > 0, 1.0, -1.0)
    return H, y


def ours(H, y, mode):
    svm = RestrictedLinearSVM(y, 1.0, bias_mode=mode, tol=1e-3 if mode == "exact" else 0.1)
    svm.add_columns(H)
    return svm.solve().primal


def primal(H, y, w, b):
    return 0.5 * w @ w + np.maximum(0, 1 - y * (H @ w + b)).sum()


def svc(H, y):
    K = H @ H.T
    s = SVC(kernel="precomputed", C=1.0, tol=1e-3, cache_size=2000).fit(K, y)
    w = H[s.support_].T @ s.dual_coef_.ravel()
    return primal(H, y, w, s.intercept_[0])


def cvx(H, y):
    w, b = cp.Variable(H.shape[1]), cp.Variable()
    obj = 0.5 * cp.sum_squares(w) + cp.sum(cp.pos(1 - cp.multiply(y, H @ w + b)))
    return cp.Problem(cp.Minimize(obj)).solve(solver="CLARABEL")


def timed(fn, repeats):
    fn()  # warm-up
    out, ts = None, []
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts), out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    rows = []
    for m, J in SIZES:
        H, y = problem(m, J)
        res = {
            "ours SMO exact": timed(lambda H=H, y=y: ours(H, y, "exact"), args.repeats),
            "ours DCD liblinear": timed(lambda H=H, y=y: ours(H, y, "liblinear"), args.repeats),
            "SVC precomputed": timed(lambda H=H, y=y: svc(H, y), args.repeats),
            "cvxpy/Clarabel": timed(lambda H=H, y=y: cvx(H, y), max(1, args.repeats // 2)),
        }
        ref_t, _ = res["ours SMO exact"]
        ref_obj = res["cvxpy/Clarabel"][1]
        for name, (t, obj) in res.items():
            rows.append(
                {
                    "m": m,
                    "J": J,
                    "solver": name,
                    "time_s": round(t, 5),
                    "ratio_vs_ours_exact": round(t / ref_t, 2),
                    "objective_rel_diff_vs_cvxpy": f"{(obj - ref_obj) / ref_obj:.2e}",
                }
            )
            print(
                f"m={m:5d} J={J:4d} {name:20s} {t:9.4f}s  x{t / ref_t:7.2f}  "
                f"obj rel diff {(obj - ref_obj) / ref_obj:+.1e}",
                flush=True,
            )
    out = Path(__file__).parent / "results" / "bench_dual_cd.csv"
    out.parent.mkdir(exist_ok=True)
    write_csv(out, rows)


if __name__ == "__main__":
    main()
