"""scikit-learn's estimator checks over EVERY estimator in ``kernbench.methods.registry()``.

The registry is read at import time, so a newly registered estimator is checked automatically. To
keep the suite fast, give it small parameters in :data:`FAST_PARAMS`; declare each known, justified
failure in :data:`EXPECTED_FAILED_CHECKS` with its reason — the one place where exceptions live.
The slow test runs the same checks again at every estimator's defaults.
"""

from __future__ import annotations

from typing import Any

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from kernbench.methods import registry

#: registry name -> constructor parameters that make the checks fast (defaults otherwise)
FAST_PARAMS: dict[str, dict[str, Any]] = {
    "adaboost": {"n_estimators": 10},
    "adaboost_ecc": {"n_estimators": 10},
    "adaboost_mh": {"n_estimators": 10},
    "ada_svm": {"n_estimators": 3},
    "ada_tree": {"n_estimators": 3},
    "bag_svm": {"n_estimators": 3},
    "bag_tree": {"n_estimators": 3},
    "cgboost": {"max_iter": 10, "kernels": ("linear", "rbf")},
    "cgboost_regressor": {"max_iter": 10, "kernels": ("linear", "rbf")},
    "adaboost_mo": {"n_estimators": 10},
    "cgens": {"max_iter": 10},
    "cgens_sls": {"max_iter": 10},
    "drm": {"n_components": 3},
    "exrm": {"n_components": 3},
    "lpboost": {"max_iter": 10},
    "multiboost": {"max_iter": 10},
    "psvm": {},
    "multiboost_cw": {"max_iter": 10},
    "rff_svm": {"n_components": 50},
    "svm_gauss": {"gamma": 0.1},
    "svm_perc": {},
    "svm_stump": {},
}

#: registry name -> {check name: reason}; every entry must say why the check cannot pass
EXPECTED_FAILED_CHECKS: dict[str, dict[str, str]] = {}


def _instances() -> list[Any]:
    return [cls(**FAST_PARAMS.get(name, {})) for name, cls in registry().items()]


def _expected_failed_checks(estimator: Any) -> dict[str, str]:
    return EXPECTED_FAILED_CHECKS.get(type(estimator).registry_name, {})


@parametrize_with_checks(_instances(), expected_failed_checks=_expected_failed_checks)
def test_sklearn_estimator_checks(estimator: Any, check: Any) -> None:
    check(estimator)


@pytest.mark.slow
@parametrize_with_checks(
    [cls() for cls in registry().values()], expected_failed_checks=_expected_failed_checks
)
def test_sklearn_estimator_checks_at_defaults(estimator: Any, check: Any) -> None:
    """The same checks at every estimator's defaults: what a plug-in user and a spec that names
    no parameters get (slow: ``make test-slow``)."""
    check(estimator)
