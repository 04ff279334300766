"""Lin et al. Figs 1-2 and 6 from the store / the benchmark CSV, and iterations-to-train-error."""

import csv
from pathlib import Path

import numpy as np
import pytest

from kernbench.report import PLOT_KINDS
from kernbench.report import figures_multiboost_cw as fmc
from kernbench.report.collect import Experiment


def _row(n, err0, slope, sec, test_error, status="done"):
    it = list(range(1, n + 1))
    trace = {
        "iteration": it,
        "test_error": [max(0.0, err0 - slope * t) for t in it],
        "train_error": [max(0.0, 0.5 - 0.005 * t) for t in it],
        "time_s": [sec * t for t in it],
    }
    return {"status": status, "test_error": test_error, "result": {"trace": trace}}


@pytest.fixture
def exp():
    rows = {
        ("vowel", "CW"): {0: _row(60, 0.4, 0.002, 0.1, 0.30), 1: _row(60, 0.4, 0.0, 0.1, 0.34)},
        ("vowel", "MultiBoost"): {0: _row(500, 0.6, 0.001, 0.2, 0.40)},
        ("vehicle", "CW"): {0: _row(500, 0.3, 0.0, 0.1, 0.3, status="failed")},
    }
    return Experiment(
        directory=Path("."),
        name="t",
        title="T",
        datasets=["vowel", "vehicle"],
        methods=["CW", "MultiBoost"],
        rows=rows,
        expected={"vowel": 2, "vehicle": 2},
    )


def test_iterations_to_train_error_and_final_errors(exp):
    # train error 0.5 − 0.005 t: ≤ 0.3 first at t = 40, ≤ 0.1 at t = 80 (CW stopped at 60)
    assert fmc.iterations_to_train_error(exp, "vowel", "CW", 0.3) == 40
    assert fmc.iterations_to_train_error(exp, "vowel", "CW", 0.1) is None
    assert fmc.iterations_to_train_error(exp, "vowel", "MultiBoost", 0.1) == 80
    assert fmc.iterations_to_train_error(exp, "vehicle", "MultiBoost", 0.1) is None
    np.testing.assert_allclose(fmc.final_test_errors(exp, "vowel", "CW"), [0.30, 0.34])
    rows = fmc.convergence_table(exp, thresholds=(0.3,), methods=("CW", "MultiBoost"))
    assert rows[0] == {"dataset": "vowel", "train_error_le": 0.3, "CW": 40, "MultiBoost": 40}
    for r in exp.rows[("vowel", "CW")].values():
        r["result"]["fit_time_s"] = 2.0
    summary = {(r["dataset"], r["method"]): r for r in fmc.summary_rows(exp)}
    assert set(summary) == {("vowel", "CW"), ("vowel", "MultiBoost")}  # vehicle failed
    assert summary[("vowel", "CW")]["test_error_pct"] == pytest.approx(32.0)
    # sample std (ddof = 1), as `kernbench table` reports: [30, 34] %
    assert summary[("vowel", "CW")]["test_error_std"] == pytest.approx(2.83, abs=1e-9)
    assert summary[("vowel", "CW")]["fit_time_s"] == pytest.approx(2.0)


def test_figs12_layout_legend_and_registration(exp):
    fig = fmc.figs12_figure(exp)
    axes = fig.get_axes()
    assert len(axes) == 2  # vehicle has no finished trace: one column, test error and time
    top = axes[0]
    assert top.get_title() == "vowel"
    labels = [t.get_text() for t in top.get_legend().get_texts()]
    assert labels == ["CW 32.0 ± 2.0", "MultiBoost 40.0 ± 0.0"]
    cw = top.get_lines()[0].get_ydata()
    its = np.asarray(fmc.ITERATIONS)
    expected = 100 * np.where(its <= 60, (0.4 - 0.002 * np.minimum(its, 60) + 0.4) / 2, 0.34)
    np.testing.assert_allclose(cw, expected)
    assert PLOT_KINDS["multiboost_cw"] is fmc.multiboost_cw_figures
    assert set(fmc.multiboost_cw_figures(exp)) == {"figs1_2"}


def test_fig6_from_the_benchmark_csv(tmp_path):
    path = tmp_path / "fig6.csv"
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=["dataset", "solver", "iteration", "objective", "time_s"])
        w.writeheader()
        for s, f in (("FCD-2", 1.0), ("L-BFGS-B", 2.0)):
            for t in (1, 2, 3):
                w.writerow(
                    dict(dataset="vowel", solver=s, iteration=t, objective=10 / t, time_s=f * t)
                )
    data = fmc.read_fig6_csv(path)
    np.testing.assert_allclose(data["vowel"]["L-BFGS-B"]["time_s"], [2.0, 4.0, 6.0])
    fig = fmc.fig6_figure(path)
    axes = fig.get_axes()
    assert len(axes) == 2 and len(axes[1].get_lines()) == 2
    np.testing.assert_allclose(axes[1].get_lines()[0].get_xdata(), [1.0, 2.0, 3.0])
