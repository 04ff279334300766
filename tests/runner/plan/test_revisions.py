"""The result-revision table: every method listed, its reference fit unchanged unless declared."""

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from kernbench.methods import get_method, registry
from kernbench.runner.plan.revisions import (
    REVISIONS,
    reference_mismatch,
    reference_values,
    result_revision,
)

RECORDED = json.loads(Path(__file__).with_name("reference_values.json").read_text())["methods"]


def test_every_registered_method_has_an_entry():
    # the package's own methods: a plug-in a test registered in this process has no entry
    shipped = {n for n, cls in registry().items() if cls.__module__.startswith("kernbench.")}
    assert set(REVISIONS) == shipped
    assert set(RECORDED) == shipped


@pytest.mark.parametrize("name", sorted(REVISIONS))
def test_reference_fit_matches_the_recorded_values(name):
    """Fails when a method's numerics change beyond its tolerance (revisions.py says why each
    tolerance): undo the change, or declare it in kernbench/runner/plan/revisions.py (a new Revision
    when stored results change) and record the values again."""
    mismatch = reference_mismatch(name, np.array(RECORDED[name]))
    assert mismatch <= 1.0, (
        f"{name}'s reference fit moved {mismatch:.3g}× its tolerance: give it a new Revision in "
        f"REVISIONS if stored results change, then run "
        f"`python tests/runner/plan/record_reference_values.py {name}`"
    )


def test_the_comparison_sees_a_change_of_numerics(monkeypatch):
    """A fit with other numerics (here: a smaller C) is far outside the tolerance."""
    entry = REVISIONS["cgens"]
    changed = replace(entry, reference_params={**entry.reference_params, "C": 0.01})
    monkeypatch.setitem(REVISIONS, "cgens", changed)
    assert reference_mismatch("cgens", np.array(RECORDED["cgens"])) > 1e3


def test_the_comparison_allows_rounding_and_refuses_a_last_digit_change():
    """A relative move of 1e-12 (another BLAS kernel) passes; one in the fourth digit fails."""
    values = reference_values("psvm")
    scale = max(1.0, float(np.abs(values).max()))
    assert reference_mismatch("psvm", values * (1 + 1e-12)) <= 1.0
    nudged = values.copy()
    nudged[0] += 1e-4 * scale
    assert reference_mismatch("psvm", nudged) > 1.0
    assert reference_mismatch("psvm", values[:-1]) == float("inf")


@pytest.mark.parametrize(
    ("estimator", "params", "grid", "expected"),
    [
        ("cgens", {}, {}, 3),  # exact bias: the shrinking SMO
        ("cgens", {"bias_mode": "liblinear"}, {}, 1),
        ("cgens", {}, {"bias_mode": ["liblinear", "exact"]}, 3),
        ("cgens", {}, {"C": [0.1, 1.0]}, 5),  # the warm path along C, capped between stages
        ("cgens", {"bias_mode": "liblinear"}, {"C": [0.1, 1.0]}, 5),
        ("cgens", {"path_inner_epochs": None}, {"C": [0.1, 1.0]}, 4),  # full solves on the path
        ("cgens", {"path_inner_epochs": None, "solver_inner_epochs": 1}, {"C": [0.1, 1.0]}, 5),
        ("cgens", {}, {"C": [0.1, 1.0], "path_inner_epochs": [None, 1]}, 5),
        ("cgens", {"warm_path": False}, {"C": [0.1, 1.0]}, 3),
        ("cgens", {}, {"C": [1.0]}, 3),
        ("lpboost", {}, {"nu": [0.1]}, 6),  # the ν floor
        ("lpboost", {"C": 1.0}, {}, 4),
        ("lpboost", {}, {"C": [0.5, 2.0]}, 4),
        ("drm", {}, {}, 1),
        ("cgboost", {}, {}, 1),
        ("cgboost", {"norm": "l1"}, {}, 0),
        ("cgboost", {"tol": 1e-4}, {}, 0),
        ("cgboost", {}, {"norm": ["l1", "l2"]}, 1),
        ("cgboost_regressor", {}, {}, 2),  # the default norm became l1
        ("cgboost_regressor", {"norm": "l2"}, {}, 1),
        ("cgboost_regressor", {"norm": "l1"}, {}, 0),
        ("adaboost", {}, {}, 2),  # max_bins="auto": binned on large training sets
        ("adaboost", {"max_bins": None}, {}, 1),  # the paper specs' exact search
        ("adaboost", {"max_bins": None, "weak_learner": "perceptron"}, {}, 1),
        ("adaboost", {"weak_learner": "perceptron"}, {}, 1),
        ("adaboost", {}, {"max_bins": [None, 64]}, 2),
        ("cgens", {"max_bins": 256}, {}, 6),
        ("lpboost", {"max_bins": 256}, {}, 6),
        ("lpboost", {"max_bins": 256, "C": 1.0}, {}, 5),
        ("lpboost", {}, {"max_bins": [None]}, 6),
        ("lpboost", {}, {"C": [None, 1.0]}, 6),
        ("svm_stump", {}, {}, 0),
    ],
)
def test_result_revision_is_the_largest_that_applies(estimator, params, grid, expected):
    get_method(estimator)  # registered
    assert result_revision(estimator, params, grid) == expected
