"""Lin & Li Fig. 2 (decision boundaries on 2-D threenorm) and the Bayes boundary it draws."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import multivariate_normal

from kernbench.datasets.generators import threenorm, threenorm_bayes_decision
from kernbench.report.figures_boundary import (
    C_GRID,
    PANEL_ORDER,
    boundary_panels,
    main,
    threenorm_2d,
)


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
    assert err == pytest.approx(0.105, abs=0.003)  # PROTOCOLS §2(b): 10.47% by Monte Carlo


def test_bayes_rule_beats_a_shifted_rule_on_2d():
    # In 2-D with a = √2 the Bayes rule has the lowest error of all rules; a shifted one is worse.
    X, y = threenorm(200_000, np.random.default_rng(1), d=2)
    bayes = np.mean(threenorm_bayes_decision(X) != y)
    shifted = np.mean(threenorm_bayes_decision(X + 0.3) != y)
    assert bayes < shifted
    assert 0.05 < bayes < 0.2


def test_training_sample_is_300_points_of_2d_threenorm():
    X, y, Xt, yt = threenorm_2d(seed=3)
    assert X.shape == (300, 2) and Xt.shape == (3000, 2)
    assert set(np.unique(y)) == {-1, 1}
    X2, y2, _, _ = threenorm_2d(seed=3)
    assert np.array_equal(X, X2) and np.array_equal(y, y2)
    assert not np.array_equal(X, threenorm_2d(seed=4)[0])


def test_c_grid_is_lin_and_li_s_eleven_values():
    assert len(C_GRID) == 11
    assert C_GRID[0] == 2.0**-17 and C_GRID[-1] == 2.0**3
    assert np.allclose(np.diff(np.log2(C_GRID)), 2.0)


def test_panels_fit_the_four_learners_and_svms_track_the_bayes_boundary():
    X, y, Xt, yt = threenorm_2d(n_train=200, n_test=2000, seed=0)
    axis = np.linspace(-3, 3, 41)
    xx, yy = np.meshgrid(axis, axis)
    grid = np.column_stack([xx.ravel(), yy.ravel()])
    panels = boundary_panels(X, y, Xt, yt, grid, seed=0, n_estimators=20, max_run=100)
    assert [p.label for p in panels] == list(PANEL_ORDER)
    bayes_grid = threenorm_bayes_decision(grid)
    bayes_err = np.mean(threenorm_bayes_decision(Xt) != yt)
    for p in panels:
        assert p.decision.shape == (grid.shape[0],)
        assert 0.0 <= p.test_error < 0.5
    for p in panels[:2]:  # the SVMs: C from the grid, boundary close to the optimal one
        assert p.params["C"] in C_GRID
        agree = np.mean(np.where(p.decision >= 0, 1, -1) == bayes_grid)
        assert agree > 0.85
        assert p.test_error < bayes_err + 0.05
    assert panels[2].params == {"n_estimators": 20}


def test_command_line_entry_point(tmp_path, capsys):
    out = tmp_path / "f.png"
    main(["--out", str(out), "--n-train", "60", "--n-estimators", "3", "--max-run", "20",
          "--grid-size", "30"])  # fmt: skip
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = capsys.readouterr().out
    assert "SVM-Perc" in text and "wrote" in text
