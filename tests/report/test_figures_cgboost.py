"""CG-Boost Figs 2-3 from stored traces: the termination-rule marks and the figures."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kernbench.report import PLOT_KINDS
from kernbench.report import figures_cgboost as fc
from kernbench.report.collect import Experiment


def _trace(n: int = 60) -> dict:
    it = list(range(1, n + 1))
    val = [0.3 - 0.01 * min(t, 20) + 0.001 * max(0, t - 20) for t in it]  # best at t = 20
    return {
        "iteration": it,
        "n_columns": it,
        "train_error": [0.3 / t for t in it],
        "test_error": [v + 0.02 for v in val],
        "validation_error": val,
        "error_scan": [1.0] * 7 + [0.0] + [1.0] * (n - 8),  # first full scan at iteration 8
        "kernel_evals": [100.0 - t for t in it],
        "objective": [10.0 / t for t in it],
    }


def test_stopping_points():
    pts = fc.stopping_points(_trace())
    assert pts == {"TR1": 6, "TR3": 19, "TR2": 59}
    short = _trace(30)  # stopped before the patience ran out: the best so far
    assert fc.stopping_points(short)["TR3"] == 19
    no_val = {"iteration": [1, 2], "train_error": [0.1, 0.0]}
    assert fc.stopping_points(no_val) == {"TR1": None, "TR3": None, "TR2": 1}


def test_figures_from_an_experiment():
    rows = {
        ("digits", "mix"): {0: {"status": "done", "result": {"trace": _trace()}}},
        ("digits", "reg"): {0: {"status": "done", "result": {"trace": _trace(40)}}},
        ("wine", "mix"): {0: {"status": "failed", "result": {}}},
    }
    exp = Experiment(
        directory=Path("."),
        name="t",
        title="T",
        datasets=["digits", "wine"],
        methods=["mix", "reg"],
        rows=rows,
        expected={"digits": 1, "wine": 1},
    )
    fig2 = PLOT_KINDS["cgboost_fig2"](exp)
    assert sorted(fig2) == ["digits_mix", "digits_reg"]
    labels = [line.get_label() for line in fig2["digits_mix"].axes[0].get_lines()]
    assert labels == ["training", "validation", "test", "TR1", "TR3", "TR2"]
    tr3 = fig2["digits_mix"].axes[0].get_lines()[4]
    np.testing.assert_allclose(tr3.get_xdata(), [20.0])
    fig3 = PLOT_KINDS["cgboost_fig3"](exp)
    assert list(fig3) == ["digits"]
    assert len(fig3["digits"].axes[0].get_lines()) == 2
