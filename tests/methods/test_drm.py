"""DRM estimator: one learner is ν-SVM, the averaged predictor, the unit-norm flag, the ν floor,
bad input."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.svm import NuSVC
from sklearn.utils._param_validation import InvalidParameterError

from kernbench.methods import DRM
from kernbench.solvers.nu_floor import raised_nu


def _data(N: int = 120, M: int = 5, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, M))
    y = np.where(X @ rng.standard_normal(M) + 1.0 * rng.standard_normal(N) > 0, 1, 0)
    return X, y


def test_one_learner_is_a_positive_multiple_of_nu_svm() -> None:
    X, y = _data()
    X_test, _ = _data(seed=9)
    ours = DRM(n_components=1, nu=0.5, tol=0.0, max_iter=2, random_state=0).fit(X, y)
    ref = NuSVC(kernel="linear", nu=0.5, tol=1e-10).fit(X, y)
    d_ours = ours.decision_function(X_test)
    d_ref = ref.decision_function(X_test)
    assert np.corrcoef(d_ours, d_ref)[0, 1] > 0.9999
    np.testing.assert_array_equal(np.sign(d_ours), np.sign(d_ref))
    assert ours.unit_norm_attained_


def test_mean_predictor_and_flags() -> None:
    X, y = _data(seed=1)
    est = DRM(n_components=4, random_state=0).fit(X, y)
    np.testing.assert_allclose(
        est.decision_function(X),
        np.mean(X @ est.components_.T + est.component_intercepts_, axis=1),
    )
    assert est.pairwise_cosines_.shape == (4, 4)
    assert est.unit_norm_attained_ == bool(np.all(est.norm_multipliers_ > 0))
    stages = list(est.staged_decision_function(X))
    assert len(stages) == est.n_iter_ == len(est.trace_["objective"])
    np.testing.assert_allclose(stages[-1], est.decision_function(X))
    assert est.score(X, y) > 0.8


def test_same_seed_same_model() -> None:
    X, y = _data(seed=2)
    a = DRM(n_components=3, random_state=5).fit(X, y)
    b = DRM(n_components=3, random_state=5).fit(X, y)
    np.testing.assert_array_equal(a.components_, b.components_)


def test_bad_input() -> None:
    X, y = _data()
    with pytest.raises(InvalidParameterError):
        DRM(n_components=0).fit(X, y)
    with pytest.raises(InvalidParameterError):
        DRM(nu=1.5).fit(X, y)
    with pytest.raises(ValueError, match="class"):
        DRM().fit(X, np.ones(len(y)))
    X_nan = X.copy()
    X_nan[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        DRM().fit(X_nan, y)


def test_infeasible_nu_is_lowered_to_the_class_bound() -> None:
    X, _ = _data()
    y = (np.arange(len(X)) < 30).astype(int)  # 30 of 120 positive: ν ≤ 0.5
    est = DRM(n_components=2, nu=0.8, random_state=0).fit(X, y)
    assert est.nu_ == pytest.approx(0.5)


def _noisy(N: int = 120, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """A weak linear signal under heavy label noise: at ν = 0.5 the reduced class hulls overlap."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, 4))
    y = np.where(X[:, 0] + 2.0 * rng.standard_normal(N) > 0, 1, 0)
    return X, y


def test_nu_below_the_floor_is_raised_to_a_non_trivial_model(drm_relaxed_value) -> None:
    X, y = _noisy()
    y_pm = np.where(y == 1, 1.0, -1.0)
    # at the default ν = 0.5 the relaxed problem's optimum is W = 0 (cvxpy: value 0), whose
    # prediction is the sign of rounding noise
    assert drm_relaxed_value(X, y_pm, 3, 0.5, 1.0) == pytest.approx(0.0, abs=1e-7)
    est = DRM(n_components=3, tol=0.0, max_iter=60, random_state=0).fit(X, y)
    majority_error = min(np.mean(y), 1 - np.mean(y))
    assert 1 - est.score(X, y) < majority_error - 0.05
    assert np.linalg.norm(est.coef_) > 1e-4
    assert 0.5 < est.nu_min_ < est.nu_
    assert est.nu_ == pytest.approx(raised_nu(0.5, est.nu_min_, 2 * min(np.bincount(y)) / len(y)))
    assert est.objective_ == pytest.approx(drm_relaxed_value(X, y_pm, 3, est.nu_, 1.0), abs=1e-6)


def test_no_linear_signal_gives_the_larger_class(drm_relaxed_value) -> None:
    # two centred rings: the smaller class's mean lies inside the larger class's hull at every ν
    angles = np.linspace(0, 2 * np.pi, 40, endpoint=False)
    inner = np.c_[np.cos(angles[::2]), np.sin(angles[::2])]
    outer = 3 * np.c_[np.cos(angles), np.sin(angles)]
    X = np.vstack([inner, outer])
    y = np.r_[np.zeros(len(inner)), np.ones(len(outer))].astype(int)
    est = DRM(n_components=3, random_state=0).fit(X, y)
    np.testing.assert_array_equal(est.predict(X), np.ones(len(y), dtype=int))
    nu_max = 2 * len(inner) / len(y)
    assert est.nu_min_ == pytest.approx(nu_max)
    assert est.nu_ == pytest.approx(nu_max)
    y_pm = np.where(y == 1, 1.0, -1.0)
    assert est.objective_ == pytest.approx(drm_relaxed_value(X, y_pm, 3, nu_max, 1.0), abs=1e-7)
    assert len(list(est.staged_decision_function(X))) == est.n_iter_ == 1
