"""LPBoost invariants (METHODS.md §3.3) against scipy.optimize.linprog and across back ends."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linprog

from kernbench.methods.lpboost import LPBoost
from kernbench.solvers.lp import solve_lpboost_cvxpy
from kernbench.weak.stumps import StumpSpace


def _toy(seed=1, m=60, D=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, D))
    y = np.where((X**2).sum(axis=1) + 0.5 * rng.normal(size=m) > 2.4, 1, -1)
    return X, y


def _linprog_full(X, y, C):
    """The LP (4) on the full negation-complete canonical stump matrix [H, −H] plus ±1 columns."""
    H, _ = StumpSpace(X, include_constant=False).full_matrix(with_constant=True)
    Hn = np.c_[H, -H]
    m, n = Hn.shape
    c = np.r_[np.ones(n), C * np.ones(m)]
    res = linprog(c, A_ub=-np.c_[y[:, None] * Hn, np.eye(m)], b_ub=-np.ones(m), method="highs")
    assert res.status == 0
    return res.fun


@pytest.mark.parametrize("solver", ["highs", "cvxpy"])
@pytest.mark.parametrize("C", [0.01, 0.05, 0.2, 2.0])
def test_converged_lpboost_equals_linprog_on_the_full_stump_matrix(solver, C):
    X, y = _toy()
    est = LPBoost(C=C, solver=solver, max_iter=1000).fit(X, y)
    assert est.stop_reason_ == "converged"
    ys = np.where(y == est.classes_[1], 1.0, -1.0)
    # small C: α = C already satisfies every dual constraint, the empty master is optimal (w = 0)
    obj = est.trace_["objective"][-1] if est.n_iter_ else C * X.shape[0]
    assert (est.n_iter_ == 0) == (C == 0.01)
    assert obj == pytest.approx(_linprog_full(X, ys, C), rel=1e-7)


def test_strong_duality_monotonicity_and_complementary_slackness():
    X, y = _toy(seed=3, m=80)
    C = 0.5
    est = LPBoost(C=C, max_iter=1000).fit(X, y)
    obj = np.array(est.trace_["objective"])
    np.testing.assert_allclose(est.trace_["gap"], 0.0, atol=1e-8 * obj.max())  # ||w||₁+CΣξ = 1ᵀα
    np.testing.assert_allclose(est.trace_["dual_objective"], obj, rtol=1e-9)
    assert np.all(np.diff(obj) <= 1e-9 * obj[:-1])
    ys = np.where(y == est.classes_[1], 1.0, -1.0)
    H_W = est._learner_matrix(X)
    edges = H_W.T @ (ys * est.dual_coef_)
    assert np.all(edges <= 1 + 1e-8)  # dual slack ≥ 0 for every selected column
    assert np.all(np.abs(edges[est.coef_ > 1e-9] - 1) < 1e-8)  # w_j > 0 ⇒ edge = 1
    assert np.all(est.coef_ >= 0)
    assert est.final_score_ <= 1 + est.tol


def test_back_ends_agree_on_the_same_column_sequence():
    """Two LP back ends may pick different optimal α, so compare them on one column sequence."""
    X, y = _toy(seed=5, m=70)
    C = 1.0
    est = LPBoost(C=C, solver="highs", max_iter=40).fit(X, y)
    H_W = est._learner_matrix(X)
    ys = np.where(y == est.classes_[1], 1.0, -1.0)
    for t, obj in enumerate(est.trace_["objective"]):
        ref = solve_lpboost_cvxpy(H_W[:, : t + 1], ys, C, solver="HIGHS")
        assert obj == pytest.approx(ref.primal, rel=1e-8)


def test_nu_parametrisation_and_constant_column():
    X, y = _toy(seed=6)
    est = LPBoost(nu=0.2, max_iter=50).fit(X, y)
    assert est.C_ == pytest.approx(1.0 / (0.2 * X.shape[0]))
    assert LPBoost(C=3.0, nu=0.2, max_iter=2).fit(X, y).C_ == 3.0  # C takes precedence
    # one feature, one negative point in the middle: the constant stump (the bias) has the best edge
    x = np.arange(21.0)[:, None]
    y2 = np.ones(21, dtype=int)
    y2[10] = 0
    first = LPBoost(C=1.0, max_iter=1).fit(x, y2).learners_[0]
    assert first.threshold == -np.inf and first.sign == 1


def test_staged_decisions_follow_the_coefficient_path():
    X, y = _toy(seed=7)
    est = LPBoost(C=0.5, max_iter=20).fit(X, y)
    staged = list(est.staged_decision_function(X))
    assert len(staged) == est.n_iter_
    H = est._learner_matrix(X)
    for dec, w in zip(staged, est.coef_path_):
        np.testing.assert_allclose(dec, H[:, : w.size] @ w)
