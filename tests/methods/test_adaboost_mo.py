"""AdaBoost.MO (one-vs-all code): K independent binary AdaBoost-Stump runs, loss-based decoding,
the exponential-loss trace, the wall-clock cap, staged decisions."""

import numpy as np
import pytest
from sklearn.datasets import load_iris

from kernbench.methods.adaboost import AdaBoost
from kernbench.methods.adaboost_mo import AdaBoostMO


def _data(seed=0, m=60, K=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, 3))
    y = np.argmax(X @ rng.normal(size=(3, K)) + 0.5 * rng.normal(size=(m, K)), axis=1)
    return X, y


@pytest.mark.parametrize("seed", [0, 1])
def test_one_vs_all_mo_equals_independent_binary_adaboost_runs(seed):
    X, y = _data(seed)
    T = 25
    mo = AdaBoostMO(n_estimators=T).fit(X, y)
    F = mo.decision_function(X)
    for ell in range(4):
        ada = AdaBoost(n_estimators=T).fit(X, y == ell)  # positive ↔ True ↔ class ℓ
        np.testing.assert_allclose(F[:, ell], ada.decision_function(X), rtol=1e-12, atol=1e-12)
        assert np.sum(mo.learner_class_ == ell) == ada.n_iter_


def test_loss_based_decoding_objective_and_weights():
    X, y = _data(seed=2)
    mo = AdaBoostMO(n_estimators=15).fit(X, y)
    F = mo.decision_function(X)
    M = 2.0 * np.eye(4) - 1.0  # the one-vs-all code matrix
    loss = np.exp(-F[:, None, :] * M[None, :, :]).sum(axis=2)  # (n, y): Σ_ℓ exp(−M(y,ℓ) f_ℓ)
    np.testing.assert_array_equal(mo.predict(X), np.argmin(loss, axis=1))
    Y = M[y]
    assert mo.trace_["objective"][-1] == pytest.approx(np.exp(-Y * F).sum(), rel=1e-12)
    np.testing.assert_allclose(mo.sample_weight_.sum(axis=0), 1.0)
    # the discrete-AdaBoost weights of each column are the normalised exp(−Y f)
    W = np.exp(-Y * F)
    np.testing.assert_allclose(mo.sample_weight_, W / W.sum(axis=0), rtol=1e-9)


def test_time_cap_and_staged_path():
    X, y = load_iris(return_X_y=True)
    capped = AdaBoostMO(n_estimators=50, max_time=1e-9).fit(X, y)
    assert capped.n_iter_ == 1 and capped.stop_reason_ == "max_time"
    mo = AdaBoostMO(n_estimators=30).fit(X, y)
    staged = list(mo.staged_decision_function(X))
    assert len(staged) == mo.n_iter_ == len(mo.trace_["time_s"])
    np.testing.assert_allclose(staged[-1], mo.decision_function(X))
    errs = [np.mean(d.argmax(1) != y) for d in staged]
    np.testing.assert_allclose(errs, mo.trace_["train_error"])
    assert mo.model_size_ == mo.round_end_[-1] <= 3 * mo.n_iter_
    assert errs[-1] < 0.05
