"""Decision boundaries from a store (Lin & Li Fig. 2, CGENS Fig. 1) and the Bayes boundary drawn.

The figures are experiments: a spec with ``protocol.decision_grid`` makes the runner record the
final models' decision values on a grid; the plot kinds only read the store.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy.stats import multivariate_normal

from kernbench.datasets.generators import threenorm, threenorm_bayes_decision
from kernbench.report.collect import load_experiment
from kernbench.report.figures_boundary import boundary_figures, boundary_trace_figures
from kernbench.runner.options import RunOptions
from kernbench.runner.run import run_experiment
from kernbench.specs.load import load_spec


def scipy_threenorm_bayes(X: np.ndarray, a: float) -> np.ndarray:
    """The Bayes rule from the densities themselves (scipy), equal priors, sign(0) = +1."""
    d = X.shape[1]
    ones = np.full(d, a)
    alt = a * np.where(np.arange(d) % 2 == 0, 1.0, -1.0)
    p_pos = 0.5 * multivariate_normal(ones).pdf(X) + 0.5 * multivariate_normal(-ones).pdf(X)
    p_neg = multivariate_normal(alt).pdf(X)
    return np.where(p_pos >= p_neg, 1, -1)


@pytest.mark.parametrize("d", [2, 5, 20])
def test_bayes_decision_equals_the_density_comparison(d):
    rng = np.random.default_rng(d)
    a = 2 / math.sqrt(d)
    X, _ = threenorm(4000, rng, d=d)
    assert np.array_equal(threenorm_bayes_decision(X), scipy_threenorm_bayes(X, a))


def test_bayes_error_of_20d_threenorm_is_breimans_10_5_percent():
    X, y = threenorm(200_000, np.random.default_rng(0), d=20)
    err = np.mean(threenorm_bayes_decision(X) != y)
    assert err == pytest.approx(0.105, abs=0.003)  # 2-D threenorm Bayes: 10.47% (MC)


def test_bayes_rule_beats_a_shifted_rule_on_2d():
    # In 2-D with a = √2 the Bayes rule has the lowest error of all rules; a shifted one is worse.
    X, y = threenorm(200_000, np.random.default_rng(1), d=2)
    bayes = np.mean(threenorm_bayes_decision(X) != y)
    shifted = np.mean(threenorm_bayes_decision(X + 0.3) != y)
    assert bayes < shifted
    assert 0.05 < bayes < 0.2


ROOT = Path(__file__).resolve().parents[2]
C_GRID = [2.0**-7, 2.0**-1, 2.0**3]


@pytest.fixture(scope="module")
def fig2_store(tmp_path_factory):
    """lin_li_fig2.yaml at a small scale: 200 training points, a 41 x 41 grid, 3 C values."""
    spec = yaml.safe_load((ROOT / "experiments" / "lin_li_fig2.yaml").read_text())
    spec["datasets"][0]["options"].update(n_train=200, n_test=2000)
    spec["protocol"].update(decision_grid=41, grid_extent=3.0)
    for label in ("SVM-Stump", "SVM-Perc"):
        spec["methods"][label]["grid"]["C"] = C_GRID
    for label in ("AdaBoost-Stump", "AdaBoost-Perc"):
        spec["methods"][label]["params"]["n_estimators"] = 20
    spec["methods"]["AdaBoost-Perc"]["params"]["max_run"] = 100
    root = tmp_path_factory.mktemp("fig2")
    path = root / "fig2.yaml"
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    summary = run_experiment(load_spec(path), RunOptions(out_dir=root / "res", jobs=1))
    assert summary.ok, summary.failed
    return root / "res"


def test_store_holds_each_methods_grid_and_the_svms_track_the_bayes_boundary(fig2_store):
    exp = load_experiment(fig2_store)
    bayes_err = None
    for m in exp.methods:
        row = exp.rows[("threenorm-2d", m)][0]
        grid = row["result"]["decision_grid"]
        dec = np.asarray(grid["values"])
        assert dec.shape == (41, 41) and len(grid["train_y"]) == 200
        xx, yy = np.meshgrid(grid["axis_x"], grid["axis_y"])
        assert xx.min() == -3.0 and yy.max() == 3.0
        bayes_grid = threenorm_bayes_decision(np.column_stack([xx.ravel(), yy.ravel()]))
        bayes_err = row["result"]["split_info"]["bayes_test_error"]
        assert 0.0 <= row["test_error"] < 0.5
        if m.startswith("SVM"):  # C from the grid, boundary close to the optimal one
            assert row["params"]["C"] in C_GRID
            agree = np.mean(np.where(dec.ravel() >= 0, 1, -1) == bayes_grid)
            assert agree > 0.85
            assert row["test_error"] < bayes_err + 0.05
    assert 0.05 < bayes_err < 0.25  # the Bayes rule on the same test sample


def test_boundary_kind_draws_a_panel_per_method_with_the_bayes_boundary(fig2_store):
    (fig,) = boundary_figures(fig2_store).values()
    axes = [ax for ax in fig.get_axes() if ax.get_visible()]
    assert len(axes) == 4
    titles = [ax.get_title().split("\n")[0].split(" (")[0] for ax in axes]
    assert titles == load_experiment(fig2_store).methods  # spec order
    assert all("Bayes" in ax.get_title() for ax in axes)
    for ax in axes:  # training points (2 scatters) and two contour sets (Bayes, learned)
        assert len(ax.collections) >= 4


def test_boundary_trace_kind_puts_the_error_curves_beside(fig2_store):
    (fig,) = boundary_trace_figures(fig2_store).values()
    _, curves = fig.get_axes()[:2]
    labels = [line.get_label() for line in curves.get_lines()]
    assert "AdaBoost-Stump train" in labels and "AdaBoost-Perc test" in labels


def test_decision_grid_needs_two_features(tmp_path):
    spec = {
        "name": "grid3d",
        "datasets": [{"name": "twonorm", "options": {"n_train": 40, "n_test": 40, "d": 3}}],
        "protocol": {"n_realisations": 1, "cv_folds": 1, "decision_grid": 10},
        "methods": {"A": {"estimator": "adaboost", "params": {"n_estimators": 3}}},
    }
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    summary = run_experiment(load_spec(path), RunOptions(out_dir=tmp_path / "r", jobs=1))
    ((_, _, _, message),) = summary.failed
    assert "decision_grid needs two-feature data" in message
