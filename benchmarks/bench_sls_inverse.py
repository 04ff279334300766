"""CGENS-SLS restricted master: Sherman–Morrison vs Woodbury vs re-solving (11) from scratch.

The restricted master of CGENS-SLS (docs/methods/column_generation.md) is re-solved after every
added column. Three ways, on the same sequence of J random ±1 columns (m points, K = 10 classes, C =
1):

* ``sherman_morrison``: dense S⁻¹ (m × m) updated by (20), S⁻¹[L, 1] by the same rank-one step;
* ``woodbury``: S⁻¹ = C·I − C²Hᵀ(I + C·HHᵀ)⁻¹H with a bordered Cholesky factor (J × J);
* ``direct`` (the peer): the J + 1 normal equations of the bias-unpenalised ridge (10) solved
  from scratch by ``numpy.linalg.solve`` after every column, then U = C·(L − HᵀW − 1bᵀ).

Each variant ends with the same (W, b, U) (checked); the stump search is excluded, so this times
only what the choice of ``inverse=`` changes. Warm-up on a small problem, then the median of
``--repeats`` runs per size; the ratio is direct / variant. Writes
benchmarks/results/bench_sls_inverse.csv.

    python benchmarks/bench_sls_inverse.py [--sizes 300 1000 3000] [--iters 300] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
from _results import write_csv

from kernbench.solvers.incremental_inverse import make_inverse
from kernbench.solvers.simplex import simplex_code, simplex_labels, sls_closed_form

K, C = 10, 1.0


def problem(m: int, J: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    L = simplex_labels(rng.integers(0, K, m), simplex_code(K))
    return rng.choice([-1.0, 1.0], size=(J, m)), L


def run_incremental(kind: str, H: np.ndarray, L: np.ndarray):
    J, m = H.shape
    inv = make_inverse(kind, m, C, max_columns=J)
    R = np.hstack([L, np.ones((m, 1))])
    P = C * R
    l = L.shape[1]
    for j in range(J):
        s, denom = inv.add_column(H[j])  # (20)
        P -= np.outer(s, (s @ R) / denom)
        sol = sls_closed_form(P[:, :l], P[:, l], H[: j + 1], C)  # (11)
    return sol.W, sol.b, sol.U


def run_direct(H: np.ndarray, L: np.ndarray):
    J, m = H.shape
    for j in range(1, J + 1):
        A = np.hstack([H[:j].T, np.ones((m, 1))])
        reg = np.eye(j + 1) / C
        reg[j, j] = 0.0  # the bias is not penalised
        sol = np.linalg.solve(A.T @ A + reg, A.T @ L)
    W, b = sol[:J], sol[J]
    return W, b, C * (L - H.T @ W - b)


VARIANTS = {
    "sherman_morrison": lambda H, L: run_incremental("sherman_morrison", H, L),
    "woodbury": lambda H, L: run_incremental("woodbury", H, L),
    "direct": run_direct,
}


def median_time(fn, H, L, repeats: int) -> tuple[float, tuple]:
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn(H, L)
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[300, 1000, 3000])
    ap.add_argument("--iters", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    Hw, Lw = problem(100, 20)
    for fn in VARIANTS.values():  # warm-up (BLAS, imports)
        fn(Hw, Lw)
    rows = []
    print(f"{'m':>6} {'variant':>17} {'seconds':>9} {'direct / variant':>17}")
    for m in args.sizes:
        H, L = problem(m, args.iters)
        res = {k: median_time(fn, H, L, args.repeats) for k, fn in VARIANTS.items()}
        ref_W = res["direct"][1][0]
        for kind, (sec, (W, _, _)) in res.items():
            err = float(np.abs(W - ref_W).max() / np.abs(ref_W).max())
            ratio = res["direct"][0] / sec
            print(f"{m:>6} {kind:>17} {sec:>9.3f} {ratio:>17.2f}   (max rel |ΔW| {err:.1e})")
            rows.append(
                {"m": m, "J": args.iters, "K": K, "variant": kind, "seconds": round(sec, 4),
                 "direct_over_variant": round(ratio, 3), "max_rel_dW": f"{err:.2e}"}
            )  # fmt: skip
    out = Path(__file__).parent / "results" / "bench_sls_inverse.csv"
    out.parent.mkdir(exist_ok=True)
    write_csv(out, rows)


if __name__ == "__main__":
    main()
