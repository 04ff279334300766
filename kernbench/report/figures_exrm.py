"""Guo, Wang & Ling (ExRM): Fig. 1 panels and the dataset-averaged tables, read from results stores.

Everything here reads stores written by ``kernbench run`` (nothing is refitted):

* ``exrm_fig1`` (a ``kernbench plot`` kind) draws whichever Fig. 1 panels a store supports:
  - **λ effect** (panels 1-2): train and test error against λ, one curve per number of components,
    for p = 2 and p = 1 (``experiments/exrm_fig1_lambda.yaml``: methods with ``lam`` in their
    parameters);
  - **convergence** (panel 3): the objective (5) per ALM iteration from the stored traces,
    normalised to [0, 1] per run (``experiments/exrm_fig1_convergence.yaml``);
  - **time vs N** (panel 4): mean fit time against the number of training points, log-log
    (``experiments/exrm_fig1_time.yaml``, datasets with an ``n_train`` option).
* ``average_table`` (Table 3): each method's test error averaged over the datasets, beside the
  published average.
* ``equivalence_table``: ExRM_C(λ) beside PSVM(λ/C), at the paper's stopping rule and at the
  optimum, with the objective gap of the paper's rule (``experiments/exrm_equivalence.yaml``).

    kernbench paper exrm-table3 results/exrm_table3
    kernbench paper exrm-equivalence results/exrm_equivalence
    kernbench plot results/exrm_fig1_lambda --kind exrm_fig1
"""

from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from kernbench.report.collect import Experiment, as_experiment, load_experiment


# ----------------------------------------------------------------------------- store helpers
def _method_params(exp: Experiment) -> dict[str, tuple[str, dict[str, Any]]]:
    """label -> (estimator, fixed parameters) from the stored spec."""
    out = {}
    for m in exp.spec.get("methods") or []:
        out[m["label"]] = (str(m.get("estimator")), dict(m.get("params") or {}))
    return out


def _done(exp: Experiment, dataset: str, method: str) -> list[dict[str, Any]]:
    cell = exp.rows.get((dataset, method), {})
    return [row for _, row in sorted(cell.items()) if row.get("status") == "done"]


def _mean(values: list[float]) -> float:
    return float(np.mean(values)) if values else float("nan")


def field_mean(exp: Experiment, dataset: str, method: str, key: str) -> float:
    """Mean over finished realisations of a row field (``test_error``, ``train_error``) or of a
    result field (``fit_time_s``); NaN when none."""
    vals = []
    for row in _done(exp, dataset, method):
        v = row.get(key)
        if v is None:
            v = (row.get("result") or {}).get(key)
        if v is not None and np.isfinite(float(v)):
            vals.append(float(v))
    return _mean(vals)


def final_objective(row: dict[str, Any]) -> float | None:
    """The last ``objective`` of a stored trace (ExRM/PSVM/DRM), None without one."""
    trace = (row.get("result") or {}).get("trace") or {}
    obj = trace.get("objective") or trace.get("method_objective")
    return float(obj[-1]) if obj else None


# ----------------------------------------------------------------------------- Fig. 1 panels
def lambda_curves(exp: Experiment) -> dict[int, dict[str, dict[str, np.ndarray]]]:
    """p -> curve label -> {"lam", "train", "test"} (errors in %, mean over realisations).

    A curve groups the methods that differ only in ``lam``: ``ExRM_C`` by ``n_components`` and
    ``PSVM``; the first dataset of the store is used.
    """
    if not exp.datasets:
        return {}
    dataset = exp.datasets[0]
    groups: dict[int, dict[str, list[tuple[float, float, float]]]] = {}
    for label, (est, params) in _method_params(exp).items():
        if est not in ("exrm", "psvm") or "lam" not in params:
            continue
        p = int(params.get("p", 2))
        name = "PSVM" if est == "psvm" else f"ExRM_{int(params.get('n_components', 10))}"
        train = field_mean(exp, dataset, label, "train_error")
        test = field_mean(exp, dataset, label, "test_error")
        if np.isnan(test):
            continue
        groups.setdefault(p, {}).setdefault(name, []).append(
            (float(params["lam"]), 100 * train, 100 * test)
        )
    out: dict[int, dict[str, dict[str, np.ndarray]]] = {}
    for p, curves in groups.items():
        for name, pts in curves.items():
            if len(pts) < 2:
                continue
            arr = np.array(sorted(pts))
            out.setdefault(p, {})[name] = {"lam": arr[:, 0], "train": arr[:, 1], "test": arr[:, 2]}
    return out


def lambda_figure(exp: Experiment) -> Figure | None:
    """Panels 1-2: train (dashed) and test (solid) error against λ, one panel per p."""
    curves = lambda_curves(exp)
    if not curves:
        return None
    ps = sorted(curves, reverse=True)  # p = 2 first, as in the paper
    fig = Figure(figsize=(5.0 * len(ps), 4.0), layout="constrained")
    axes = fig.subplots(1, len(ps), squeeze=False)[0]
    for ax, p in zip(axes, ps, strict=True):
        for i, (name, c) in enumerate(sorted(curves[p].items(), key=_curve_order)):
            colour = f"C{i}"
            ax.plot(c["lam"], c["test"], "o-", ms=3, color=colour, label=f"L{p}-{name} test")
            ax.plot(c["lam"], c["train"], "s--", ms=3, color=colour, label=f"L{p}-{name} train")
        ax.set_xlabel("λ")
        ax.set_ylabel("error (%)")
        ax.set_title(f"p = {p} ({exp.datasets[0]})")
        ax.grid(alpha=0.3)
        ax.legend(fontsize="x-small", ncol=2)
    return fig


def _curve_order(item: tuple[str, Any]) -> tuple[int, int]:
    name = item[0]
    return (1, 0) if name == "PSVM" else (0, int(name.split("_")[1]))


def convergence_curves(
    exp: Experiment, realisation: int = 0
) -> dict[str, dict[str, tuple[np.ndarray, np.ndarray]]]:
    """dataset -> method -> (iteration, objective normalised to [0, 1]) for one realisation."""
    out: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]] = {}
    for d in exp.datasets:
        for m in exp.methods:
            row = exp.rows.get((d, m), {}).get(realisation)
            if not row or row.get("status") != "done":
                continue
            trace = (row.get("result") or {}).get("trace") or {}
            obj = trace.get("objective")
            if not obj or len(obj) < 2:
                continue
            obj = np.asarray(obj, dtype=float)
            span = obj.max() - obj.min()
            norm = (obj - obj.min()) / span if span > 0 else np.zeros_like(obj)
            out.setdefault(d, {})[m] = (np.arange(1, obj.size + 1), norm)
    return out


def convergence_figure(exp: Experiment) -> Figure | None:
    """Panel 3: normalised objective against the ALM iteration."""
    curves = convergence_curves(exp)
    if not curves:
        return None
    fig = Figure(figsize=(5.0 * len(curves), 4.0), layout="constrained")
    axes = fig.subplots(1, len(curves), squeeze=False)[0]
    for ax, (d, by_method) in zip(axes, curves.items(), strict=True):
        for i, (m, (it, norm)) in enumerate(by_method.items()):
            ax.plot(it, norm, "-", color=f"C{i % 10}", label=f"{m} ({it.size} it.)")
        ax.set_xlabel("iteration")
        ax.set_ylabel("objective (normalised)")
        ax.set_title(f"convergence ({d}, realisation 0)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize="x-small")
    return fig


def time_curves(exp: Experiment) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """method -> (N, mean fit seconds) over the datasets with an ``n_train`` option."""
    sizes = {}
    for d in exp.spec.get("datasets") or []:
        n = (d.get("options") or {}).get("n_train")
        if n is not None:
            sizes[str(d["label"])] = int(n)
    out = {}
    for m in exp.methods:
        pts = [(n, field_mean(exp, d, m, "fit_time_s")) for d, n in sizes.items()]
        pts = sorted((n, t) for n, t in pts if np.isfinite(t))
        if len(pts) >= 2:
            arr = np.array(pts, dtype=float)
            out[m] = (arr[:, 0], arr[:, 1])
    return out


def loglog_slope(n: np.ndarray, seconds: np.ndarray) -> float:
    """Least-squares slope of log(seconds) on log(n)."""
    return float(np.polyfit(np.log(n), np.log(seconds), 1)[0])


def time_figure(exp: Experiment) -> Figure | None:
    """Panel 4: fit time against the number of training points (log-log), with slopes."""
    curves = time_curves(exp)
    if not curves:
        return None
    fig = Figure(figsize=(5.5, 4.0), layout="constrained")
    ax = fig.subplots()
    for i, (m, (n, sec)) in enumerate(curves.items()):
        ax.loglog(
            n, sec, "o-", ms=3, color=f"C{i % 10}", label=f"{m} (slope {loglog_slope(n, sec):.2f})"
        )
    ax.set_xlabel("training points N")
    ax.set_ylabel("fit time (s, mean over realisations)")
    ax.set_title("training time vs N")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize="x-small")
    return fig


def exrm_fig1_figures(source: Experiment | str | os.PathLike[str]) -> dict[str, Figure]:
    """``{panel name: Figure}`` for the Fig. 1 panels this store supports (``kernbench plot``)."""
    exp = as_experiment(source)
    figs = {"lambda": lambda_figure(exp), "time": time_figure(exp)}
    if figs["lambda"] is None and figs["time"] is None:  # a λ grid or an N grid has traces too
        figs["convergence"] = convergence_figure(exp)
    return {k: v for k, v in figs.items() if v is not None}


# ----------------------------------------------------------------------------- tables
def _published(reference: Path) -> dict[tuple[str, int], float]:
    out = {}
    if reference.exists():
        with reference.open() as fh:
            for r in csv.DictReader(fh):
                if r.get("metric") == "test_error_pct" and r["dataset"].startswith("ALL"):
                    out[(r["method"], int(r["n_base"]))] = float(r["mean"])
    return out


def average_table(results_dir: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Each method's mean test error (%) averaged over the datasets where it finished, beside the
    published average of the spec's reference CSV (matched on the filter's method and n_base)."""
    exp = load_experiment(results_dir)
    ref = exp.table_spec.get("reference")
    published = _published(Path(str(ref))) if ref else {}
    return average_rows(exp, published)


def average_rows(exp: Experiment, published: dict[tuple[str, int], float]) -> list[dict[str, Any]]:
    """The rows of :func:`average_table` for a loaded experiment and published averages keyed by
    (method, n_base)."""
    filters = exp.table_spec.get("reference_methods") or {}
    rows = []
    for m in exp.methods:
        per = [field_mean(exp, d, m, "test_error") for d in exp.datasets]
        per = [100 * v for v in per if np.isfinite(v)]
        f = filters.get(m) or {}
        pub = published.get((str(f.get("method")), int(f.get("n_base", -1))))
        rows.append(
            {
                "method": m,
                "datasets": len(per),
                "ours": round(_mean(per), 2),
                "published": pub,
                "difference": None if pub is None or not per else round(_mean(per) - pub, 2),
                "fit_time_s": _mean(
                    [
                        field_mean(exp, d, m, "fit_time_s")
                        for d in exp.datasets
                        if (d, m) in exp.rows
                    ]
                ),
            }
        )
    return rows


def equivalence_table(results_dir: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """ExRM_C(λ) beside PSVM(λ/C) per dataset, p and C (store of ``exrm_equivalence.yaml``).

    Columns: mean test error (%) of ExRM_C and PSVM(λ/C) with the paper's schedule and at the
    optimum ("-opt" labels), the largest per-realisation |difference| between the two optima,
    the relative objective gap of ExRM_C at the paper's stopping rule and of PSVM(λ/C) at the same
    rule (against the optimum found by the "-opt" runs: C²·obj(PSVM(λ/C)*) for ExRM_C), and the
    baseline PSVM(λ).
    """
    return equivalence_rows(load_experiment(results_dir))


def equivalence_rows(exp: Experiment) -> list[dict[str, Any]]:
    """The rows of :func:`equivalence_table` for a loaded experiment."""
    params = _method_params(exp)
    rows = []
    for d in exp.datasets:
        for p in (1, 2):
            for C in sorted(
                {int(q.get("n_components")) for e, q in params.values() if e == "exrm"}
            ):
                lab = _equivalence_labels(p, C)
                if not all(x in params for x in lab.values()):
                    continue
                r_ex, r_ps, r_exo, r_pso = (
                    _done(exp, d, lab[k]) for k in ("ex", "ps", "exo", "pso")
                )
                diffs = [
                    abs(a["test_error"] - b["test_error"]) * 100
                    for a, b in zip(r_exo, r_pso, strict=False)
                    if a["realisation"] == b["realisation"]
                ]
                gaps_ex, gaps_ps, gaps_opt = [], [], []
                for a, b, c, e in zip(r_ex, r_ps, r_pso, r_exo, strict=False):
                    opt = final_objective(c)
                    if None in (opt, final_objective(a), final_objective(b), final_objective(e)):
                        continue
                    gaps_ex.append(final_objective(a) / (C**2 * opt) - 1)
                    gaps_ps.append(final_objective(b) / opt - 1)
                    gaps_opt.append(abs(final_objective(e) / (C**2 * opt) - 1))
                rows.append(
                    {
                        "dataset": d,
                        "p": p,
                        "C": C,
                        "ExRM_C": round(100 * field_mean(exp, d, lab["ex"], "test_error"), 2),
                        "PSVM(λ/C)": round(100 * field_mean(exp, d, lab["ps"], "test_error"), 2),
                        "ExRM_C opt": round(100 * field_mean(exp, d, lab["exo"], "test_error"), 2),
                        "PSVM(λ/C) opt": round(
                            100 * field_mean(exp, d, lab["pso"], "test_error"), 2
                        ),
                        "max |Δ| opt (points)": round(max(diffs), 4) if diffs else None,
                        "max obj gap opt": float(max(gaps_opt)) if gaps_opt else None,
                        "ExRM_C obj gap": float(np.mean(gaps_ex)) if gaps_ex else None,
                        "PSVM(λ/C) obj gap": float(np.mean(gaps_ps)) if gaps_ps else None,
                        "PSVM(λ)": round(
                            100 * field_mean(exp, d, f"L{p}-PSVM-l2", "test_error"), 2
                        ),
                        "PSVM(λ) opt": round(
                            100 * field_mean(exp, d, f"L{p}-PSVM-l2-opt", "test_error"), 2
                        ),
                    }
                )
    return rows


def _equivalence_labels(p: int, C: int) -> dict[str, str]:
    lam = f"{2.0 / C:.3g}"  # the spec labels: 0.2, 0.0667
    return {
        "ex": f"L{p}-ExRM{C}",
        "ps": f"L{p}-PSVM-l{lam}",
        "exo": f"L{p}-ExRM{C}-opt",
        "pso": f"L{p}-PSVM-l{lam}-opt",
    }
