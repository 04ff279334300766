"""CG-Boost: stratified vs regular column generation, mixture vs composite prediction time, and the
OSQP master (warm-started) vs cvxpy per restricted solve.

Data: pendigits odd (+1) vs even (−1) through the ``positive`` dataset option (the largest binary
digit task of the offline mirror; MNIST and covtype are not mirrored), features standardised on the
training part; kernels L, Q, R (σ = mean squared distance), C = 1.

1. ``cg``: stratified vs regular CG to TR2 (or both stopped at ``--cap`` columns) on the same
   training set, for the 2-norm QP (11) (OSQP, ``--n-qp`` points) and/or the 1-norm LP (HiGHS,
   ``--n-lp`` points), ``--norms``: kernel columns scored (pricing work; one column = K_p(·, x_k)
   over the m points, counted every time it is scored, as the paper counts columns calculated per
   iteration without a cache), columns computed (cache misses), columns generated, wall time and
   the final objective; the columns scored until each variant first reaches the common objective
   (the worse of the two finals, the same at TR2: ``scored_to_common_objective``), and until its
   own final objective is within 1 % and 0.1 % (``scored_to_*``).
2. ``predict``: mixture (stratified L,Q,R) vs composite (L+Q+R) models trained on ``--n-lp`` points
   (1-norm, TR2), prediction time on every remaining pendigits row (median of ``--repeats``
   interleaved rounds), by ``predict`` (zero-α columns skipped, linear and quadratic sums
   collapsed) and by the plain Gram path (every working-set column's Gram block).
3. ``master``: one column sequence per ``--n-master`` size (the first ``--columns`` columns a
   2-norm fit generated) re-solved column by column by OSQP warm-started, OSQP cold, the SMO
   master warm-started and cold, cvxpy (Clarabel, rebuilt each time) and, with ``--libsvm``,
   LIBSVM on the Gram matrix; paired: every master solves restricted problem j in turn (order
   rotated) before problem j + 1. Median time per restricted solve, total, the median of the
   paired per-solve ratios (against cvxpy and against OSQP warm-started), the largest objective
   difference to cvxpy, and the solves finished by Clarabel.
4. ``fit``: whole 2-norm fits (QP (11), stratified L,Q,R) per ``--n-fit`` size, paired: the SMO
   master and the OSQP master fit the same training set in turn (``--fit-repeats`` rounds, order
   alternated), each stopped at TR2 or ``--fit-cap`` columns; fit time, columns, final objective,
   and the OSQP/SMO time ratio; with ``--fit-tr2`` also one SMO fit to TR2 (no cap) per size.

5. ``table2_qp`` (only when asked: minutes per model): the four Table 2 models (linear, RBF,
   composite, mixture) under the 2-norm QP to TR2 on one stratified 80/20 split of ``--dataset``
   with ``--C``: test error, FP/FN rates, fit and prediction time, columns per kernel.

Writes benchmarks/results/bench_cgboost.csv (``--out``).

    python benchmarks/bench_cgboost.py [--n-qp 200] [--n-lp 1000] [--norms l2,l1] [--cap N]
        [--n-master 300,1000] [--columns 60] [--libsvm] [--n-fit 300,1000] [--fit-cap 300]
        [--fit-repeats 1] [--fit-tr2]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
from _results import write_csv

from kernbench.datasets.recipes import load_pool
from kernbench.methods.cgboost import CGBoost
from kernbench.solvers.masters import (
    OSQPKernelMaster,
    RowForm,
    SMOKernelMaster,
    SVMKernelMaster,
    solve_kernel_master_cvxpy,
)

OUT = Path(__file__).parent / "results" / "bench_cgboost.csv"
LQR = ("linear", "quadratic", "rbf")


def pendigits_odd_even(n_train: int, seed: int = 0):
    """n_train random rows for training and every other row for testing, standardised."""
    pool = load_pool("pendigits", {"positive": [1, 3, 5, 7, 9]})
    idx = np.random.default_rng(seed).permutation(pool.y.size)
    tr, te = idx[:n_train], idx[n_train:]
    mu, sd = pool.X[tr].mean(0), pool.X[tr].std(0)
    sd[sd == 0] = 1.0
    return (pool.X[tr] - mu) / sd, pool.y[tr], (pool.X[te] - mu) / sd, pool.y[te]


def _scored_to(est: CGBoost, rel: float) -> int:
    """Columns scored (cumulative) until the restricted objective is first within ``rel`` of the
    final one: the pricing work to reach (nearly) the same objective, not to certify it."""
    obj = np.asarray(est.trace_["objective"], dtype=float)
    evals = np.cumsum(est.trace_["kernel_evals"])
    i = int(np.flatnonzero(obj <= est.final_objective_ * (1.0 + rel) + 1e-12)[0])
    return int(evals[i])


def _scored_to_objective(est: CGBoost, target: float) -> tuple[int, int]:
    """(columns scored, columns generated) until the restricted objective first reaches target."""
    obj = np.asarray(est.trace_["objective"], dtype=float)
    hit = np.flatnonzero(obj <= target * (1.0 + 1e-9) + 1e-12)
    if hit.size == 0:
        return -1, -1
    return int(np.sum(est.trace_["kernel_evals"][: hit[0] + 1])), int(hit[0] + 1)


def bench_cg(n: int, norm: str, cap: int | None, rows: list[dict]) -> None:
    X, y, _, _ = pendigits_odd_even(n)
    out = {}
    first = len(rows)
    for stratified in (True, False):
        t0 = time.perf_counter()
        est = CGBoost(
            C=1.0, kernels=LQR, norm=norm, stratified=stratified, max_iter=cap or 10 * n
        ).fit(X, y)
        wall = time.perf_counter() - t0
        name = "stratified" if stratified else "regular"
        out[name] = est
        rows.append(
            dict(
                part="cg",
                norm=norm,
                m=n,
                variant=name,
                termination=est.termination_rule_,
                columns_generated=est.n_iter_,
                columns_scored=est.kernel_evaluations_,
                columns_scored_per_iter=round(est.kernel_evaluations_ / max(est.n_iter_, 1), 1),
                columns_computed=est.kernel_computations_,
                final_objective=est.final_objective_,
                wall_s=round(wall, 3),
                columns_per_kernel=est.n_columns_per_kernel_,
                **{
                    f"scored_to_{tag}": _scored_to(est, rel)
                    for tag, rel in (("1pct", 1e-2), ("0.1pct", 1e-3))
                },
            )
        )
        print(rows[-1])
    s, r = out["stratified"], out["regular"]
    # equal objective: the worse of the two final objectives (the same at TR2), reached by both
    common = max(s.final_objective_, r.final_objective_)
    to = {k: _scored_to_objective(e, common) for k, e in out.items()}
    for row, key in zip(rows[first:], ("stratified", "regular"), strict=True):
        row["scored_to_common_objective"], row["columns_to_common_objective"] = to[key]
    print(
        f"== {norm} m={n}{f' (cap {cap})' if cap else ''}: regular/stratified columns scored "
        f"{r.kernel_evaluations_ / s.kernel_evaluations_:.1f}x in total, per column generated "
        f"{r.kernel_evaluations_ / r.n_iter_:.0f} vs {s.kernel_evaluations_ / s.n_iter_:.0f} "
        f"({(r.kernel_evaluations_ / r.n_iter_) / (s.kernel_evaluations_ / s.n_iter_):.1f}x); "
        f"to the common objective {common:.10g}: {to['regular'][0]} vs {to['stratified'][0]} "
        f"({to['regular'][0] / max(to['stratified'][0], 1):.1f}x; columns "
        f"{to['regular'][1]} vs {to['stratified'][1]}); finals "
        f"{s.final_objective_:.10g} vs {r.final_objective_:.10g}"
    )


def _gram_path(est: CGBoost, X: np.ndarray) -> np.ndarray:
    """The prediction path before zero-α skipping and the quadratic collapse: every working-set
    column's Gram block (the linear kernel collapsed), for comparison in the same run."""
    f = np.full(X.shape[0], float(est.intercept_))
    groups: dict[int, list[int]] = {}
    for j, lrn in enumerate(est.learners_[: est.coef_.shape[0]]):
        groups.setdefault(lrn.group, []).append(j)
    for idx in groups.values():
        first = est.learners_[idx[0]]
        coef = est.coef_[idx]
        if not first.kernels:
            f += coef.sum()
            continue
        C = np.stack([est.learners_[j].centre for j in idx])
        for k in first.kernels:
            f += X @ (C.T @ coef) if k.name == "linear" else k(X, C) @ coef
    return f


def bench_predict(n: int, repeats: int, rows: list[dict]) -> None:
    X, y, Xt, yt = pendigits_odd_even(n)
    models = {
        label: CGBoost(C=1.0, kernels=LQR, norm="l1", **kw).fit(X, y)
        for label, kw in (("mixture L,Q,R", {}), ("composite L+Q+R", {"composite": True}))
    }
    paths = {"predict": lambda est: est.predict(Xt), "gram path": lambda est: _gram_path(est, Xt)}
    times: dict[tuple[str, str], list[float]] = {(m, p): [] for m in models for p in paths}
    for est in models.values():  # warm-up; both paths give the same decision values
        np.testing.assert_allclose(est.decision_function(Xt[:500]), _gram_path(est, Xt[:500]))
    for _ in range(repeats):  # interleaved: every model and path once per round
        for (m, p), ts in times.items():
            t0 = time.perf_counter()
            paths[p](models[m])
            ts.append(time.perf_counter() - t0)
    for (m, p), ts in times.items():
        est = models[m]
        rows.append(
            dict(
                part="predict",
                norm="l1",
                m=n,
                variant=f"{m} ({p})",
                termination=est.termination_rule_,
                columns_generated=est.n_iter_,
                columns_per_kernel=est.n_columns_per_kernel_,
                model_size=est.model_size_,
                n_test=len(yt),
                test_error=round(float(np.mean(est.predict(Xt) != yt)), 4),
                predict_s=round(statistics.median(ts), 5),
                fit_s=round(est.fit_time_, 3),
            )
        )
        print(rows[-1])
    for p in paths:
        mix = statistics.median(times[("mixture L,Q,R", p)])
        comp = statistics.median(times[("composite L+Q+R", p)])
        print(f"== composite/mixture prediction time, {p}: {comp / mix:.1f}x")


def bench_master(n: int, n_cols: int, libsvm: bool, rows: list[dict]) -> None:
    X, y, _, _ = pendigits_odd_even(n)
    est = CGBoost(C=1.0, kernels=LQR, max_iter=n_cols, solver="cvxpy").fit(X, y)
    A = np.column_stack([lrn.predict(X) for lrn in est.learners_])
    form = RowForm.classification(np.where(y == est.classes_[1], 1.0, -1.0))
    masters = {
        "osqp_warm": OSQPKernelMaster(form, 1.0, warm_start=True, eps=1e-7),
        "osqp_cold": OSQPKernelMaster(form, 1.0, warm_start=False, eps=1e-7),
        "smo_warm": SMOKernelMaster(form, 1.0, tol=1e-7),
        "smo_cold": SMOKernelMaster(form, 1.0, tol=1e-7, warm_start=False),
    }
    if libsvm:
        masters["libsvm"] = SVMKernelMaster(form, 1.0, tol=1e-7)
    keys = [*masters, "cvxpy_clarabel"]
    timings: dict[str, list[float]] = {k: [] for k in keys}
    objectives: dict[str, list[float]] = {k: [] for k in keys}
    for master in masters.values():
        master.solve()
    for j in range(A.shape[1]):  # paired: every master solves the same problem j in turn
        for i in range(len(keys)):
            key = keys[(i + j) % len(keys)]  # rotate the order within each pair
            t0 = time.perf_counter()
            if key == "cvxpy_clarabel":
                res = solve_kernel_master_cvxpy(A[:, : j + 1], form, 1.0)
            else:
                masters[key].add_column(A[:, j])
                res = masters[key].solve()
            timings[key].append(time.perf_counter() - t0)
            objectives[key].append(res.primal)
    ref = np.asarray(objectives["cvxpy_clarabel"])
    for key, ts in timings.items():
        rel = float(np.max(np.abs(np.asarray(objectives[key]) - ref) / ref))
        rows.append(
            dict(
                part="master",
                norm="l2",
                m=n,
                variant=key,
                columns_generated=A.shape[1],
                median_solve_s=round(statistics.median(ts), 5),
                total_s=round(sum(ts), 3),
                max_rel_objective_diff_vs_cvxpy=f"{rel:.1e}",
                clarabel_fallbacks=getattr(masters.get(key), "n_fallbacks", 0),
                median_ratio_osqp_warm_over=round(
                    float(statistics.median(np.asarray(timings["osqp_warm"]) / ts)), 2
                ),
            )
        )
        print(rows[-1])
    c = np.asarray(timings["cvxpy_clarabel"])
    for key in masters:
        ratio = c / np.asarray(timings[key])  # per-solve paired ratios
        print(
            f"== m={n}: cvxpy/{key} per restricted solve: median of paired ratios "
            f"{statistics.median(ratio):.2f}x, ratio of medians "
            f"{statistics.median(c) / statistics.median(timings[key]):.2f}x"
        )
    o = np.asarray(timings["osqp_warm"])
    for key in ("smo_warm", "smo_cold", "libsvm"):
        if key in timings:
            print(
                f"== m={n}: osqp_warm/{key} per restricted solve: median of paired ratios "
                f"{statistics.median(o / np.asarray(timings[key])):.2f}x, totals "
                f"{o.sum() / sum(timings[key]):.2f}x"
            )


def bench_fit(n: int, cap: int | None, repeats: int, tr2: bool, rows: list[dict]) -> None:
    """Whole 2-norm fits, SMO master vs OSQP master, paired on one training set."""
    X, y, _, _ = pendigits_odd_even(n)
    times: dict[str, list[float]] = {"smo": [], "osqp": []}
    last: dict[str, CGBoost] = {}
    for r in range(repeats):
        for solver in ("smo", "osqp") if r % 2 == 0 else ("osqp", "smo"):
            t0 = time.perf_counter()
            est = CGBoost(C=1.0, kernels=LQR, solver=solver, max_iter=cap or 10 * n).fit(X, y)
            times[solver].append(time.perf_counter() - t0)
            last[solver] = est
    for solver, ts in times.items():
        est = last[solver]
        rows.append(
            dict(
                part="fit",
                norm="l2",
                m=n,
                variant=f"{solver} (cap {cap})" if cap else solver,
                termination=est.termination_rule_,
                columns_generated=est.n_iter_,
                final_objective=est.final_objective_,
                wall_s=round(statistics.median(ts), 3),
                columns_per_kernel=est.n_columns_per_kernel_,
            )
        )
        print(rows[-1])
    s, o = last["smo"], last["osqp"]
    rel = abs(s.final_objective_ - o.final_objective_) / o.final_objective_
    print(
        f"== fit m={n}{f' (cap {cap})' if cap else ''}: osqp/smo fit time "
        f"{statistics.median(times['osqp']) / statistics.median(times['smo']):.1f}x (medians of "
        f"{repeats}); columns {s.n_iter_} vs {o.n_iter_}; final objectives "
        f"{s.final_objective_:.10g}"
        f" vs {o.final_objective_:.10g} (relative difference {rel:.1e})"
    )
    if tr2:
        t0 = time.perf_counter()
        est = CGBoost(C=1.0, kernels=LQR, solver="smo", max_iter=10 * n).fit(X, y)
        wall = time.perf_counter() - t0
        rows.append(
            dict(
                part="fit",
                norm="l2",
                m=n,
                variant="smo to TR2",
                termination=est.termination_rule_,
                columns_generated=est.n_iter_,
                final_objective=est.final_objective_,
                wall_s=round(wall, 3),
                columns_per_kernel=est.n_columns_per_kernel_,
            )
        )
        print(rows[-1])


def bench_table2_qp(dataset: str, C: float, rows: list[dict]) -> None:
    """The four Table 2 models under the 2-norm QP to TR2 on one stratified 80/20 split."""
    from sklearn.model_selection import train_test_split

    pool = load_pool(dataset)
    Xtr, Xte, ytr, yte = train_test_split(
        pool.X, pool.y, train_size=0.8, stratify=pool.y, random_state=0
    )
    mu, sd = Xtr.mean(0), Xtr.std(0)
    sd[sd == 0] = 1.0
    Xtr, Xte = (Xtr - mu) / sd, (Xte - mu) / sd
    models = {
        "linear": dict(kernels=("linear",)),
        "RBF": dict(kernels=("rbf",)),
        "composite": dict(kernels=("linear", "rbf"), composite=True),
        "mixture": dict(kernels=("linear", "rbf")),
    }
    for label, kw in models.items():
        est = CGBoost(C=C, **kw).fit(Xtr, ytr)
        t0 = time.perf_counter()
        pred = est.predict(Xte)
        t_tst = time.perf_counter() - t0
        pos, neg = yte == 1, yte == -1
        rows.append(
            dict(
                part="table2_qp",
                norm="l2",
                m=len(ytr),
                variant=f"{dataset} {label}",
                termination=est.termination_rule_,
                columns_generated=est.n_iter_,
                columns_per_kernel=est.n_columns_per_kernel_,
                n_test=len(yte),
                test_error=round(float(np.mean(pred != yte)), 4),
                fp_pct=round(100 * float(np.mean(pred[neg] == 1)), 2),
                fn_pct=round(100 * float(np.mean(pred[pos] == -1)), 2),
                fit_s=round(est.fit_time_, 3),
                predict_s=round(t_tst, 5),
            )
        )
        print(rows[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-qp", type=int, default=200)
    ap.add_argument("--n-lp", type=int, default=1000)
    ap.add_argument("--norms", default="l2,l1", help="cg: l2 (at --n-qp) and/or l1 (--n-lp)")
    ap.add_argument("--cap", type=int, default=None, help="cg: stop both at this many columns")
    ap.add_argument("--n-master", default="300", help="master: training sizes, comma-separated")
    ap.add_argument("--columns", type=int, default=60)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--libsvm", action="store_true", help="master: also time the LIBSVM master")
    ap.add_argument("--n-fit", default="300,1000", help="fit: training sizes, comma-separated")
    ap.add_argument("--fit-cap", type=int, default=300, help="fit: column cap (0: TR2)")
    ap.add_argument("--fit-repeats", type=int, default=1)
    ap.add_argument("--fit-tr2", action="store_true", help="fit: also one SMO fit to TR2")
    ap.add_argument("--parts", default="cg,predict,master")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--dataset", default="ionosphere", help="table2_qp: a binary catalogue set")
    ap.add_argument("--C", type=float, default=1.0, help="table2_qp: the slack penalty")
    args = ap.parse_args()
    parts = set(args.parts.split(","))
    rows: list[dict] = []
    if "cg" in parts:
        norms = args.norms.split(",")
        if "l2" in norms:
            bench_cg(args.n_qp, "l2", args.cap, rows)
        if "l1" in norms:
            bench_cg(args.n_lp, "l1", args.cap, rows)
    if "predict" in parts:
        bench_predict(args.n_lp, args.repeats, rows)
    if "master" in parts:
        for n in (int(v) for v in args.n_master.split(",")):
            bench_master(n, args.columns, args.libsvm, rows)
    if "fit" in parts:  # not in the default parts: minutes per OSQP fit
        for n in (int(v) for v in args.n_fit.split(",")):
            bench_fit(n, args.fit_cap or None, args.fit_repeats, args.fit_tr2, rows)
    if "table2_qp" in parts:  # not in the default parts: minutes per model
        bench_table2_qp(args.dataset, args.C, rows)
    args.out.parent.mkdir(exist_ok=True)
    write_csv(args.out, rows)


if __name__ == "__main__":
    main()
