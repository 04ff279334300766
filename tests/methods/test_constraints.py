"""Constraints between parameters: declared on the class, enforced by fit and by the spec."""

from __future__ import annotations

import numpy as np
import pytest

from kernbench.errors import SpecError
from kernbench.methods.cgboost import CGBoost
from kernbench.methods.cgboost_regressor import CGBoostRegressor
from kernbench.methods.cgens import CGENS
from kernbench.methods.constraints import check_cross_constraints, cross_violation
from kernbench.methods.lpboost import LPBoost
from kernbench.specs.load import parse_spec

X = np.random.default_rng(0).standard_normal((30, 2))
Y = np.where(X[:, 0] > 0, 1, 0)

REFUSED = [
    (CGBoost, {"norm": "l1", "solver": "osqp"}, "solver='osqp' solves the 2-norm QP"),
    (CGBoost, {"norm": "l2", "solver": "highs"}, "solver='highs' solves the 1-norm LP"),
    (CGBoost, {"solver": "smo", "alpha_sign": "nonneg"}, "solves the QPs (11) and (13) only"),
    (CGBoost, {"solver": "svm", "bias": "none"}, "classification QP (11)"),
    (CGBoost, {"termination": "TR3"}, "validation_fraction > 0"),
    (CGBoostRegressor, {"solver": "svm"}, "classification QP (11)"),  # LIBSVM: no form for (13)
    (CGENS, {"weak_learner": "fourier", "max_bins": 16}, "weak_learner='stump' only"),
    (LPBoost, {"weak_learner": "perceptron", "max_bins": 16}, "weak_learner='stump' only"),
]
ALLOWED = [
    (CGBoost, {"norm": "l1", "solver": "highs"}),
    (CGBoost, {"norm": "l1", "solver": "cvxpy"}),
    (CGBoost, {"solver": "smo"}),
    (CGBoost, {"termination": "TR3", "validation_fraction": 0.3}),
    (CGBoostRegressor, {"solver": "osqp", "norm": "l2"}),
    (CGBoostRegressor, {"solver": "smo", "norm": "l2"}),  # SMO solves the ε-regression QP (13) too
    (CGBoostRegressor, {"solver": "highs"}),  # the default 1-norm LP
    (CGENS, {"max_bins": 16}),
    (LPBoost, {"weak_learner": "fourier"}),
]


@pytest.mark.parametrize(("cls", "params", "text"), REFUSED)
def test_a_refused_combination_fails_fit_before_any_work(cls, params, text):
    assert text in cross_violation(cls, params)[1]
    est = cls(**params)
    with pytest.raises(ValueError, match="incompatible parameters") as info:
        check_cross_constraints(est)
    assert text in str(info.value)
    with pytest.raises(ValueError, match="incompatible parameters"):
        est.fit(X, Y.astype(float) if cls is CGBoostRegressor else Y)


@pytest.mark.parametrize(("cls", "params"), ALLOWED)
def test_an_allowed_combination_passes(cls, params):
    assert cross_violation(cls, params) is None
    check_cross_constraints(cls(**params))


def _spec(params, grid):
    return {
        "name": "c",
        "datasets": ["breast_cancer"],
        "protocol": {"n_realisations": 1, "cv_folds": 2},
        "methods": {"M": {"estimator": "cgboost", "params": params, "grid": grid}},
    }


def test_the_spec_checks_every_grid_point_and_names_the_refused_one():
    grid = {"norm": ["l2", "l1"], "solver": ["cvxpy", "osqp"], "termination": ["TR2", "TR3"]}
    with pytest.raises(SpecError) as info:
        parse_spec(_spec({"validation_fraction": 0.2}, grid), file="c.yaml", check_datasets=False)
    text = str(info.value)
    assert "methods.M.grid" in text
    assert "solver: osqp, norm: l1, termination: TR2" in text  # the first refused point
    # a fixed parameter refused with a grid value
    with pytest.raises(SpecError, match="termination: TR3, validation_fraction: 0.0"):
        parse_spec(_spec({}, {"termination": ["TR2", "TR3"]}), file="c.yaml", check_datasets=False)
    # a refused pair of fixed parameters is reported under params
    with pytest.raises(SpecError, match=r"methods\.M\.params: incompatible"):
        parse_spec(_spec({"norm": "l1", "solver": "osqp"}, {}), file="c.yaml", check_datasets=False)
    parse_spec(_spec({"norm": "l1"}, {"solver": ["highs", "cvxpy"]}), file="c.yaml")
