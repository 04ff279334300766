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


def _exp(rows: dict, datasets: list[str], methods: list[str], protocol=None) -> Experiment:
    return Experiment(
        directory=Path("."),
        name="t",
        title="T",
        datasets=datasets,
        methods=methods,
        rows=rows,
        expected=dict.fromkeys(datasets, 1),
        spec={"protocol": protocol or {}},
    )


def test_fig1_draws_the_target_beside_each_prediction_grid():
    from kernbench.datasets.generators import cgboost_toy_target

    axis = np.linspace(-1, 1, 7)
    xx, yy = np.meshgrid(axis, axis)
    plane = (xx + 2 * yy).tolist()

    def row(rmse: float) -> dict:
        grid = {"axis_x": axis.tolist(), "axis_y": axis.tolist(), "values": plane,
                "train_X": [[0.0, 0.0], [0.5, 0.5]], "train_y": [0.1, 2.5]}  # fmt: skip
        info = {"generator": {"function": "cgboost_toy", "params": {"sigma2": 0.1}}}
        trace = {"iteration": [1, 2], "columns_linear": [1, 1], "columns_rbf": [0, 1]}
        result = {"decision_grid": grid, "split_info": info, "test_rmse": rmse, "trace": trace}
        return {"status": "done", "result": {**result, "model_size": 2}}

    rows = {("toy", "lin"): {0: row(0.3)}, ("toy", "mix"): {0: row(0.1)}}
    figs = PLOT_KINDS["cgboost_fig1"](_exp(rows, ["toy"], ["lin", "mix"], {"preprocess": None}))
    axes = [ax for ax in figs["toy"].axes if ax.get_title()]
    assert [ax.get_title().split("\n")[0] for ax in axes] == ["target", "lin", "mix"]
    assert axes[2].get_title() == "mix\nRMSE 0.100, L 1 / R 1 (2 α≠0)"
    # the target panel's levels span the true function on the grid
    f = cgboost_toy_target(np.column_stack([xx.ravel(), yy.ravel()]))
    levels = axes[0].collections[0].levels
    assert levels[0] <= f.min() + 1e-9 and levels[-1] >= f.max() - 1e-9
    assert f.max() > (xx + 2 * yy).max()  # the bumps raise the target above the plane
    # with preprocessing the grid is in scaled units: no target panel
    scaled = PLOT_KINDS["cgboost_fig1"](_exp(rows, ["toy"], ["lin", "mix"], {"preprocess": "x"}))
    assert [ax.get_title().split("\n")[0] for ax in scaled["toy"].axes if ax.get_title()] == [
        "lin",
        "mix",
    ]


def test_fig4_one_validation_line_per_method_with_its_best_marked():
    rows = {
        ("digits", "C1"): {0: {"status": "done", "result": {"trace": _trace()}}},
        ("digits", "C1000"): {0: {"status": "done", "result": {"trace": _trace(40)}}},
        ("digits", "none"): {0: {"status": "done", "result": {"trace": {"iteration": [1]}}}},
    }
    figs = PLOT_KINDS["cgboost_fig4"](_exp(rows, ["digits"], ["C1", "C1000", "none"]))
    lines = figs["digits"].axes[0].get_lines()
    assert [line.get_label() for line in lines if not line.get_label().startswith("_")] == [
        "C1 (validation)",
        "C1000 (validation)",
    ]
    assert len(lines) == 6  # validation, test (dashed), best mark for each method
    np.testing.assert_allclose(lines[2].get_xdata(), [20.0])  # best validation at column 20
