"""ExRM and PSVM estimators: reduction to PSVM, the symmetric optimum, staged path, bad input."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from sklearn.utils._param_validation import InvalidParameterError

from kernbench.methods import PSVM, ExRM


def _data(N: int = 80, M: int = 6, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, M))
    y = np.where(X @ rng.standard_normal(M) + 0.7 * rng.standard_normal(N) > 0, "pos", "neg")
    return X, y


def _cvxpy_psvm(X: np.ndarray, y_pm: np.ndarray, lam: float, p: int):
    w = cp.Variable(X.shape[1])
    b = cp.Variable()
    slack = cp.pos(1 - cp.multiply(y_pm, X @ w + b))
    loss = cp.sum(slack) if p == 1 else cp.sum_squares(slack)
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w) + lam * loss))
    prob.solve(solver="CLARABEL")
    return prob.value, w.value, b.value


CONVERGED = {"tol": 0.0, "rho": 1.0, "max_iter": 2000}


@pytest.mark.parametrize("p", [1, 2])
def test_psvm_matches_cvxpy(p: int) -> None:
    X, y = _data()
    y_pm = np.where(y == "pos", 1.0, -1.0)
    ref, w, b = _cvxpy_psvm(X, y_pm, 0.5, p)
    est = PSVM(lam=0.5, p=p, **CONVERGED).fit(X, y)
    assert est.objective_ == pytest.approx(ref, rel=1e-6)
    np.testing.assert_allclose(est.coef_, w, atol=1e-4)
    assert est.intercept_ == pytest.approx(b, abs=1e-4)


@pytest.mark.parametrize("p", [1, 2])
def test_one_component_is_psvm(p: int) -> None:
    X, y = _data(seed=1)
    exrm = ExRM(n_components=1, lam=2.0, p=p).fit(X, y)
    psvm = PSVM(lam=2.0, p=p).fit(X, y)
    np.testing.assert_array_equal(exrm.coef_, psvm.coef_)
    assert exrm.intercept_ == psvm.intercept_
    np.testing.assert_array_equal(exrm.predict(X), psvm.predict(X))


@pytest.mark.parametrize("p", [1, 2])
def test_symmetric_optimum_mean_is_psvm_with_lambda_over_C(p: int) -> None:
    X, y = _data(seed=2)
    C, lam = 4, 2.0
    exrm = ExRM(n_components=C, lam=lam, p=p, **CONVERGED).fit(X, y)
    psvm = PSVM(lam=lam / C, p=p, **CONVERGED).fit(X, y)
    np.testing.assert_allclose(exrm.coef_, psvm.coef_, atol=1e-6)
    assert exrm.intercept_ == pytest.approx(psvm.intercept_, abs=1e-6)
    assert exrm.objective_ == pytest.approx(C**2 * psvm.objective_, rel=1e-8)
    # every component equals the mean (the iterates never leave the symmetric subspace)
    np.testing.assert_array_equal(exrm.components_, np.tile(exrm.components_[:1], (C, 1)))
    # an independent solver of (5), free to return asymmetric columns, agrees on the mean
    y_pm = np.where(y == "pos", 1.0, -1.0)
    W = cp.Variable((X.shape[1], C))
    bb = cp.Variable(C)
    slack = cp.pos(
        1 - cp.multiply(np.tile(y_pm[:, None], (1, C)), X @ W + np.ones((len(y), 1)) @ bb[None, :])
    )
    loss = cp.sum(slack) if p == 1 else cp.sum_squares(slack)
    cp.Problem(cp.Minimize(0.5 * cp.sum_squares(cp.sum(cp.abs(W), axis=1)) + lam * loss)).solve(
        solver="CLARABEL"
    )
    np.testing.assert_allclose(W.value.mean(axis=1), psvm.coef_, atol=1e-4)


def test_jensen_ensemble_loss_at_most_mean_component_loss() -> None:
    X, y = _data(seed=3)
    est = ExRM(n_components=5, p=2).fit(X, y)
    y_pm = np.where(y == est.classes_[1], 1.0, -1.0)
    comp = np.maximum(1 - y_pm[:, None] * (X @ est.components_.T + est.component_intercepts_), 0)
    ens = np.maximum(1 - y_pm * (X @ est.coef_ + est.intercept_), 0)
    assert np.sum(ens**2) <= np.mean(np.sum(comp**2, axis=0)) + 1e-9


def test_staged_path_and_trace() -> None:
    X, y = _data(seed=4)
    est = ExRM(n_components=3, p=1, max_iter=40).fit(X, y)
    stages = list(est.staged_decision_function(X))
    assert len(stages) == est.n_iter_
    np.testing.assert_allclose(stages[-1], est.decision_function(X))
    for key in ("objective", "residual_pw", "residual_e", "mu"):
        assert len(est.trace_[key]) == est.n_iter_
    capped = ExRM(n_components=3, p=1, max_iter=5).fit(X, y)
    np.testing.assert_allclose(stages[4], capped.decision_function(X))
    assert est.path_param == "max_iter"


def test_labels_map_to_classes() -> None:
    X, y = _data(seed=5)
    est = ExRM(n_components=2).fit(X, y)
    assert list(est.classes_) == ["neg", "pos"]
    dec = est.decision_function(X)
    np.testing.assert_array_equal(est.predict(X), np.where(dec >= 0, "pos", "neg"))
    assert est.score(X, y) > 0.8


@pytest.mark.parametrize(
    ("params", "error"),
    [
        ({"p": 3}, InvalidParameterError),
        ({"p": 1.5}, InvalidParameterError),
        ({"n_components": 0}, InvalidParameterError),
        ({"lam": 0.0}, InvalidParameterError),
    ],
)
def test_bad_parameters(params: dict, error: type) -> None:
    X, y = _data()
    with pytest.raises(error):
        ExRM(**params).fit(X, y)


def test_bad_data() -> None:
    X, y = _data()
    with pytest.raises(ValueError, match="class"):
        ExRM().fit(X, np.full(len(y), "pos"))
    X_nan = X.copy()
    X_nan[3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        ExRM().fit(X_nan, y)
    with pytest.raises(ValueError, match="binary"):
        PSVM().fit(X, np.arange(len(y)) % 3)
