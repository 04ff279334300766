"""ExRM report helpers on synthetic experiments: λ curves, convergence, time slopes, equivalence."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kernbench.report import PLOT_KINDS
from kernbench.report import figures_exrm as fx
from kernbench.report.collect import Experiment
from kernbench.report.render import rows_markdown


def _exp(rows, methods, datasets=("sonar",), spec_datasets=None) -> Experiment:
    spec = {
        "methods": [{"label": m, "estimator": e, "params": p} for m, (e, p) in methods.items()],
        "datasets": spec_datasets or [{"label": d, "options": {}} for d in datasets],
    }
    return Experiment(
        directory=Path("."),
        name="t",
        title="T",
        datasets=list(datasets),
        methods=list(methods),
        rows=rows,
        expected={d: 2 for d in datasets},
        spec=spec,
    )


def _row(r, test, train=0.0, fit=0.01, objective=None, status="done"):
    result = {"fit_time_s": fit}
    if objective is not None:
        result["trace"] = {"iteration": list(range(1, len(objective) + 1)), "objective": objective}
    return {
        "realisation": r,
        "status": status,
        "test_error": test,
        "train_error": train,
        "result": result,
    }


def test_lambda_curves_group_by_components_and_p():
    methods, rows = {}, {}
    for lam in (0.5, 2.0, 1.0):
        for C in (5, 10):
            lab = f"L2-ExRM{C}-lam{lam}"
            methods[lab] = ("exrm", {"n_components": C, "lam": lam, "p": 2})
            rows[("sonar", lab)] = {0: _row(0, 0.2 + lam / 100), 1: _row(1, 0.3 + lam / 100)}
        lab = f"L1-PSVM-lam{lam}"
        methods[lab] = ("psvm", {"lam": lam, "p": 1})
        rows[("sonar", lab)] = {0: _row(0, 0.1, train=0.05), 1: _row(1, 0.2, status="failed")}
    curves = fx.lambda_curves(_exp(rows, methods))
    assert set(curves) == {1, 2}
    assert set(curves[2]) == {"ExRM_5", "ExRM_10"}
    c = curves[2]["ExRM_5"]
    np.testing.assert_allclose(c["lam"], [0.5, 1.0, 2.0])  # sorted by λ
    np.testing.assert_allclose(c["test"], [25.5, 26.0, 27.0])
    np.testing.assert_allclose(curves[1]["PSVM"]["test"], [10.0, 10.0, 10.0])  # failed run ignored
    assert fx.lambda_figure(_exp(rows, methods)) is not None


def test_convergence_curves_are_normalised_per_run():
    methods = {"L2-ExRM5": ("exrm", {"n_components": 5})}
    rows = {("spam", "L2-ExRM5"): {0: _row(0, 0.1, objective=[10.0, 6.0, 5.0, 5.0])}}
    curves = fx.convergence_curves(_exp(rows, methods, datasets=("spam",)))
    it, norm = curves["spam"]["L2-ExRM5"]
    np.testing.assert_array_equal(it, [1, 2, 3, 4])
    np.testing.assert_allclose(norm, [1.0, 0.2, 0.0, 0.0])


def test_time_curves_and_loglog_slope():
    methods = {"PSVM": ("psvm", {})}
    sizes = (1000, 10000, 100000)
    spec_datasets = [{"label": f"tn-{n}", "options": {"n_train": n}} for n in sizes]
    rows = {
        (f"tn-{n}", "PSVM"): {0: _row(0, 0.1, fit=2e-6 * n), 1: _row(1, 0.1, fit=4e-6 * n)}
        for n in sizes
    }
    exp = _exp(rows, methods, datasets=[f"tn-{n}" for n in sizes], spec_datasets=spec_datasets)
    n, sec = fx.time_curves(exp)["PSVM"]
    np.testing.assert_allclose(sec, 3e-6 * n)
    assert fx.loglog_slope(n, sec) == pytest.approx(1.0)
    assert fx.loglog_slope(n, sec * n**0.5) == pytest.approx(1.5)


def test_equivalence_rows_measure_agreement_and_gaps():
    methods = {
        "L2-ExRM10": ("exrm", {"n_components": 10, "lam": 2.0, "p": 2}),
        "L2-PSVM-l0.2": ("psvm", {"lam": 0.2, "p": 2}),
        "L2-ExRM10-opt": ("exrm", {"n_components": 10, "lam": 2.0, "p": 2}),
        "L2-PSVM-l0.2-opt": ("psvm", {"lam": 0.2, "p": 2}),
        "L2-PSVM-l2": ("psvm", {"lam": 2.0, "p": 2}),
        "L2-PSVM-l2-opt": ("psvm", {"lam": 2.0, "p": 2}),
    }
    obj = {
        "L2-ExRM10": 101.0,
        "L2-PSVM-l0.2": 1.2,
        "L2-ExRM10-opt": 100.0,
        "L2-PSVM-l0.2-opt": 1.0,
        "L2-PSVM-l2": 3.0,
        "L2-PSVM-l2-opt": 2.9,
    }
    test = {
        "L2-ExRM10": 0.25,
        "L2-PSVM-l0.2": 0.27,
        "L2-ExRM10-opt": 0.24,
        "L2-PSVM-l0.2-opt": 0.24,
        "L2-PSVM-l2": 0.3,
        "L2-PSVM-l2-opt": 0.31,
    }
    rows = {
        ("sonar", m): {r: _row(r, test[m], objective=[obj[m] + 5, obj[m]]) for r in (0, 1)}
        for m in methods
    }
    (row,) = fx.equivalence_rows(_exp(rows, methods))
    assert (row["p"], row["C"]) == (2, 10)
    assert row["max |Δ| opt (points)"] == 0.0
    assert row["ExRM_C obj gap"] == pytest.approx(0.01)  # 101 / (10² · 1) − 1
    assert row["PSVM(λ/C) obj gap"] == pytest.approx(0.2)
    assert row["max obj gap opt"] == pytest.approx(0.0)
    assert row["PSVM(λ)"] == 30.0


def test_average_rows_and_plot_kind():
    methods = {"L2-ExRM5": ("exrm", {}), "DRM5": ("drm", {})}
    rows = {
        (d, m): {0: _row(0, e), 1: _row(1, e + 0.02)}
        for d, e0 in (("a", 0.1), ("b", 0.3))
        for m, e in (("L2-ExRM5", e0), ("DRM5", e0 + 0.1))
    }
    exp = _exp(rows, methods, datasets=("a", "b"))
    exp.spec["table"] = {"reference_methods": {"L2-ExRM5": {"method": "L2-ExRM", "n_base": 5}}}
    out = {r["method"]: r for r in fx.average_rows(exp, {("L2-ExRM", 5): 24.8})}
    assert out["L2-ExRM5"]["ours"] == pytest.approx(21.0)
    assert out["L2-ExRM5"]["difference"] == pytest.approx(21.0 - 24.8)
    assert out["DRM5"]["published"] is None
    assert "exrm_fig1" in PLOT_KINDS
    assert "| method |" in rows_markdown(list(out.values()))
