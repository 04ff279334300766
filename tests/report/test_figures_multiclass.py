"""Fig. 3 series from stored traces: carry-forward sampling, one run vs the mean, the figure."""

from pathlib import Path

import numpy as np
import pytest

from kernbench.report import figures_multiclass as fm
from kernbench.report.collect import Experiment


def _trace(n, err0, slope, sec):
    it = list(range(1, n + 1))
    return {
        "iteration": it,
        "test_error": [max(0.0, err0 - slope * t) for t in it],
        "train_error": [0.0] * n,
        "time_s": [sec * t for t in it],
    }


def _row(trace, status="done"):
    return {"status": status, "result": {"trace": trace}}


@pytest.fixture
def exp():
    rows = {
        ("iris", "MH"): {
            0: _row(_trace(500, 0.5, 0.001, 0.01)),
            1: _row(_trace(500, 0.3, 0.0, 0.03)),
        },
        ("iris", "SLS"): {0: _row(_trace(40, 0.2, 0.0, 0.1))},  # converged at J = 40
        ("wine", "MH"): {0: _row(_trace(500, 0.1, 0.0, 0.02), status="failed")},
    }
    return Experiment(
        directory=Path("."),
        name="t",
        title="T",
        datasets=["iris", "wine"],
        methods=["MH", "SLS"],
        rows=rows,
        expected={"iris": 2, "wine": 2},
    )


def test_values_at_carries_the_last_value_forward():
    tr = _trace(40, 0.2, 0.001, 0.5)
    v = fm.values_at(tr, "time_s", [10, 25, 50, 500])
    np.testing.assert_allclose(v, [5.0, 12.5, 20.0, 20.0])
    assert np.isnan(fm.values_at(tr, "missing", [10])).all()
    late = {"iteration": [5, 6], "x": [1.0, 2.0]}
    np.testing.assert_array_equal(
        np.isnan(fm.values_at(late, "x", [1, 5, 9])), [True, False, False]
    )


def test_series_one_run_and_mean(exp):
    its = [10, 100, 500]
    one = fm.fig3_series(exp, "iris", "MH", "test_error", its, realisation=0)
    np.testing.assert_allclose(one, [0.49, 0.4, 0.0])
    mean = fm.fig3_series(exp, "iris", "MH", "test_error", its, realisation=None)
    np.testing.assert_allclose(mean, [(0.49 + 0.3) / 2, (0.4 + 0.3) / 2, 0.15])
    sls = fm.fig3_series(exp, "iris", "SLS", "time_s", its)
    np.testing.assert_allclose(sls, [1.0, 4.0, 4.0])  # stopped at 40: last value kept
    assert np.isnan(fm.fig3_series(exp, "wine", "MH", "test_error", its)).all()  # failed cell


def test_table_and_figure(exp):
    rows = fm.fig3_table(exp)
    assert {(r["dataset"], r["method"]) for r in rows} == {("iris", "MH"), ("iris", "SLS")}
    first = next(r for r in rows if r["method"] == "SLS" and r["iteration"] == 500)
    assert first["test_error_pct"] == pytest.approx(20.0) and first["time_s"] == pytest.approx(4.0)
    fig = fm.fig3_figure(exp)
    axes = fig.get_axes()
    assert len(axes) == 2  # wine has no finished trace: one dataset column, two rows
    top = axes[0]
    assert top.get_title() == "iris" and len(top.get_lines()) == 2
    np.testing.assert_allclose(top.get_lines()[1].get_ydata(), 20.0)  # SLS, percent
    assert set(fm.multiclass_figures(exp)) == {"fig3"}
