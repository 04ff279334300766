"""Fig. 5 from stored cells: mean feature usage per method, and the bar figure."""

from pathlib import Path

import numpy as np

from kernbench.report import PLOT_KINDS
from kernbench.report import figures_features as ff
from kernbench.report.collect import Experiment


def _row(usage, status="done"):
    result = {} if usage is None else {"feature_usage": usage}
    return {"status": status, "result": result}


def _exp():
    rows = {
        ("spam", "AdaBoost"): {0: _row([0.5, 0.5, 0.0]), 1: _row([0.1, 0.3, 0.6])},
        ("spam", "CGENS"): {0: _row([1.0, 0.0, 0.0]), 1: _row([0.0, 0.0, 1.0], status="failed")},
        ("spam", "SVM"): {0: _row(None)},  # kernel machine: nothing recorded
        ("iris", "SVM"): {0: _row(None)},
    }
    return Experiment(
        directory=Path("."),
        name="t",
        title="T",
        datasets=["spam", "iris"],
        methods=["AdaBoost", "CGENS", "SVM"],
        rows=rows,
        expected={"spam": 2, "iris": 2},
    )


def test_usage_is_averaged_over_finished_runs_per_method():
    got = ff.usage_by_method(_exp(), "spam")
    assert list(got) == ["AdaBoost", "CGENS"]  # spec order; SVM has none
    np.testing.assert_allclose(got["AdaBoost"], [0.3, 0.4, 0.3])
    np.testing.assert_allclose(got["CGENS"], [1.0, 0.0, 0.0])  # the failed run is left out
    assert ff.usage_by_method(_exp(), "iris") == {}


def test_fig5_figures_one_per_dataset_with_usage():
    figs = ff.fig5_figures(_exp())
    assert list(figs) == ["spam"]
    (ax,) = figs["spam"].axes
    assert len(ax.patches) == 2 * 3  # two methods x three features
    assert PLOT_KINDS["fig5"] is ff.fig5_figures
