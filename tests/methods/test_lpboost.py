"""LPBoost invariants, C-form and ν-form, against scipy.optimize.linprog and
across back ends."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import linprog

from kernbench.methods.lpboost import LPBoost
from kernbench.solvers.lp import (
    IncrementalLPCutMaster,
    IncrementalNuLPCutMaster,
    solve_lpboost_cvxpy,
    solve_lpboost_nu_cvxpy,
)
from kernbench.weak.stumps import StumpSpace

# the primal masters grown by columns live with the benchmarks that measure them
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from lp_primal_masters import IncrementalLPMaster, IncrementalNuLPMaster  # noqa: E402


def _toy(seed=1, m=60, D=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, D))
    y = np.where((X**2).sum(axis=1) + 0.5 * rng.normal(size=m) > 2.4, 1, -1)
    return X, y


def _linprog_full(X, y, C):
    """The LP (4) on the full negation-complete canonical stump matrix [H, −H] plus ±1 columns."""
    Hn = _full_stump_matrix(X)
    m, n = Hn.shape
    c = np.r_[np.ones(n), C * np.ones(m)]
    res = linprog(c, A_ub=-np.c_[y[:, None] * Hn, np.eye(m)], b_ub=-np.ones(m), method="highs")
    assert res.status == 0
    return res.fun


def _full_stump_matrix(X, max_bins=None):
    """The negation-complete canonical stump matrix [H, −H] with the ±1 columns."""
    space = StumpSpace(X, include_constant=False, max_bins=max_bins)
    H, _ = space.full_matrix(with_constant=True)
    return np.c_[H, -H]


def _linprog_nu_full(X, y, nu, max_bins=None):
    """The ν-LP on [H, −H] over x = (a, ξ, ρ): min −ρ + D·1ᵀξ, ρ − y_i H_i a − ξ_i ≤ 0, 1ᵀa = 1."""
    Hn = _full_stump_matrix(X, max_bins)
    m, n = Hn.shape
    D = 1.0 / (nu * m)
    c = np.r_[np.zeros(n), D * np.ones(m), -1.0]
    A_ub = np.c_[-y[:, None] * Hn, -np.eye(m), np.ones(m)]
    A_eq = np.r_[np.ones(n), np.zeros(m + 1)][None, :]
    bounds = [(0, None)] * (n + m) + [(None, None)]
    res = linprog(
        c, A_ub=A_ub, b_ub=np.zeros(m), A_eq=A_eq, b_eq=[1.0], bounds=bounds, method="highs"
    )
    assert res.status == 0
    return -res.fun


def _pm1(est, y):
    return np.where(y == est.classes_[1], 1.0, -1.0)


class _PrimalLPBoost(LPBoost):
    """LPBoost with both masters held as the primal grown by columns (primal simplex)."""

    _nu_master_class = IncrementalNuLPMaster
    _c_master_class = IncrementalLPMaster


@pytest.mark.parametrize(
    ("cls", "solver"),
    [(LPBoost, "highs"), (_PrimalLPBoost, "highs"), (LPBoost, "cvxpy")],
    ids=["highs cut (default)", "highs primal", "cvxpy"],
)
@pytest.mark.parametrize("C", [0.01, 0.05, 0.2, 2.0])
def test_converged_lpboost_equals_linprog_on_the_full_stump_matrix(cls, solver, C):
    X, y = _toy()
    est = cls(C=C, solver=solver, max_iter=1000).fit(X, y)
    assert est.stop_reason_ == "converged"
    ys = np.where(y == est.classes_[1], 1.0, -1.0)
    # small C: α = C already satisfies every dual constraint, the empty master is optimal (w = 0)
    obj = est.trace_["objective"][-1] if est.n_iter_ else C * X.shape[0]
    assert (est.n_iter_ == 0) == (C == 0.01)
    assert obj == pytest.approx(_linprog_full(X, ys, C), rel=1e-7)


@pytest.mark.parametrize("cls", [LPBoost, _PrimalLPBoost], ids=["cut (default)", "primal"])
def test_strong_duality_monotonicity_and_complementary_slackness(cls):
    assert LPBoost._c_master_class is IncrementalLPCutMaster
    X, y = _toy(seed=3, m=80)
    C = 0.5
    est = cls(C=C, max_iter=1000).fit(X, y)
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


def test_C_selects_the_C_form_and_None_the_nu_form_and_the_constant_column():
    X, y = _toy(seed=6)
    nu_est = LPBoost(nu=0.2, max_iter=50).fit(X, y)  # C=None: the ν-LP, no C_
    assert not hasattr(nu_est, "C_") and nu_est.rho_ > 0
    assert np.isclose(nu_est.coef_.sum(), 1.0) and nu_est.dual_coef_.sum() == pytest.approx(1.0)
    c_est = LPBoost(C=3.0, nu=0.2, max_iter=2).fit(X, y)  # C takes precedence
    assert c_est.C_ == 3.0 and not hasattr(c_est, "rho_")
    assert not hasattr(c_est.set_params(C=None).fit(X, y), "C_")  # no stale attribute on refit
    # one feature, one negative point in the middle: the constant stump (the bias) has the best edge
    x = np.arange(21.0)[:, None]
    y2 = np.ones(21, dtype=int)
    y2[10] = 0
    for est in (LPBoost(C=1.0, max_iter=1), LPBoost(nu=0.1, max_iter=1)):
        first = est.fit(x, y2).learners_[0]
        assert first.threshold == -np.inf and first.sign == 1


@pytest.mark.parametrize("solver", ["highs", "cvxpy"])
@pytest.mark.parametrize("nu", [0.05, 0.1, 0.3, 1.0])
def test_converged_nu_lpboost_equals_linprog_on_the_full_stump_matrix(solver, nu):
    X, y = _toy()
    est = LPBoost(nu=nu, solver=solver, max_iter=1000).fit(X, y)
    assert est.stop_reason_ == "converged" and est.n_iter_ >= 1
    assert est.trace_["objective"][-1] == pytest.approx(
        _linprog_nu_full(X, _pm1(est, y), nu), rel=1e-7
    )


@pytest.mark.parametrize("cls", [LPBoost, _PrimalLPBoost], ids=["cut (default)", "primal"])
@pytest.mark.parametrize("nu", [0.05, 0.3, 1.0])
def test_both_nu_masters_converge_to_the_full_nu_lp(cls, nu):
    """With either master: the converged objective is the full ν-LP's (linprog), the path keeps
    strong duality, and the returned (a, u, ρ) satisfy the optimality conditions."""
    assert LPBoost._nu_master_class is IncrementalNuLPCutMaster
    X, y = _toy(seed=3, m=80)
    est = cls(nu=nu, max_iter=1000).fit(X, y)
    ys = _pm1(est, y)
    assert est.stop_reason_ == "converged"
    assert est.trace_["objective"][-1] == pytest.approx(_linprog_nu_full(X, ys, nu), rel=1e-7)
    np.testing.assert_allclose(est.trace_["gap"], 0.0, atol=1e-9)
    assert np.all(np.diff(est.trace_["objective"]) >= -1e-9)
    beta = est.trace_["dual_objective"][-1]
    edges = est._learner_matrix(X).T @ (ys * est.dual_coef_)
    assert edges.max() == pytest.approx(beta, abs=1e-9)
    assert np.all(np.abs(edges[est.coef_ > 1e-9] - beta) < 1e-8)  # a_j > 0 ⇒ edge_j = β
    assert est.coef_.sum() == pytest.approx(1.0) and est.coef_.min() >= 0
    m = X.shape[0]
    xi = np.maximum(est.rho_ - ys * est.decision_function(X), 0.0)
    assert est.rho_ - xi.sum() / (nu * m) == pytest.approx(beta, abs=1e-9)


def test_nu_strong_duality_and_monotonicity_along_the_path():
    X, y = _toy(seed=3, m=80)
    nu = 0.2
    est = LPBoost(nu=nu, max_iter=1000).fit(X, y)
    obj = np.array(est.trace_["objective"])
    beta = np.array(est.trace_["dual_objective"])
    np.testing.assert_allclose(beta, obj, rtol=0, atol=1e-9)  # ρ − DΣξ = β at every solve
    np.testing.assert_allclose(est.trace_["gap"], 0.0, atol=1e-9)
    assert np.all(np.diff(obj) >= -1e-9)  # a maximisation over a growing column set
    # β is the largest edge of the selected columns under u, the ν-LP dual objective
    ys = _pm1(est, y)
    edges = est._learner_matrix(X).T @ (ys * est.dual_coef_)
    assert edges.max() == pytest.approx(beta[-1], abs=1e-9)
    assert np.all(np.abs(edges[est.coef_ > 1e-9] - beta[-1]) < 1e-8)  # a_j > 0 ⇒ edge_j = β
    assert est.final_score_ <= beta[-1] + est.tol


@pytest.mark.parametrize("nu", [0.1, 0.2, 0.3, 0.5])
def test_nu_property_at_the_optimum(nu):
    """#{i: ξ_i > 0} ≤ ν·m ≤ #{i: u_i > 0} (Demiriz et al. 2002; one point of slack)."""
    X, y = _toy(seed=4, m=80)
    m = X.shape[0]
    est = LPBoost(nu=nu, max_iter=1000).fit(X, y)
    assert est.stop_reason_ == "converged"
    margins = _pm1(est, y) * est.decision_function(X)
    xi = np.maximum(est.rho_ - margins, 0.0)
    u = est.dual_coef_
    assert np.all(u <= 1.0 / (nu * m) + 1e-12) and u.sum() == pytest.approx(1.0)
    assert np.count_nonzero(xi > 1e-9) <= nu * m + 1
    assert np.count_nonzero(u > 1e-12) >= nu * m - 1


@pytest.mark.parametrize("nu", [0.2, 0.5])
def test_nu_optimum_scaled_solves_the_C_form_with_C_equal_D_over_beta(nu):
    """(a*, ξ*)/ρ*, u*/β* solve (4)/(5) with C = D/β*, β* = ρ* − DΣξ* (= D/ρ* only if Σξ* = 0).

    LP optima need not be unique, so the C-form's own path may end at another optimal ensemble:
    compare objective values and check that w = a*/ρ* (the ν-form's decision signs) attains them.
    """
    X, y = _toy(seed=1)
    m = X.shape[0]
    D = 1.0 / (nu * m)
    nu_est = LPBoost(nu=nu, max_iter=1000).fit(X, y)
    rho, beta = nu_est.rho_, nu_est.trace_["objective"][-1]
    ys = _pm1(nu_est, y)
    xi = np.maximum(rho - ys * nu_est.decision_function(X), 0.0)
    assert xi.sum() > 0.1  # margin errors: D/ρ* and D/β* differ, the test tells them apart
    assert beta == pytest.approx(rho - D * xi.sum(), abs=1e-9)
    C = D / beta
    c_est = LPBoost(C=C, max_iter=1000).fit(X, y)
    assert c_est.stop_reason_ == "converged"
    c_opt = c_est.trace_["objective"][-1]
    assert c_opt == pytest.approx(1.0 / beta, rel=1e-7)
    w = nu_est.coef_ / rho
    f = nu_est._learner_matrix(X) @ w
    assert w.sum() + C * np.maximum(1.0 - ys * f, 0.0).sum() == pytest.approx(c_opt, rel=1e-7)
    # the same signs, except at points whose decision value is zero up to rounding
    g = nu_est.decision_function(X)
    clear = np.abs(g) > 1e-12
    np.testing.assert_array_equal(np.sign(f[clear]), np.sign(g[clear]))
    assert np.all(np.abs(f[~clear]) <= 1e-12 / rho)
    # α = u*/β* certifies it: feasible for (5) on the full stump matrix with 1ᵀα = 1/β*
    alpha = nu_est.dual_coef_ / beta
    assert alpha.max() <= C * (1 + 1e-9) and alpha.sum() == pytest.approx(c_opt, rel=1e-7)
    assert np.all(_full_stump_matrix(X).T @ (ys * alpha) <= 1 + 1e-7)
    # the tempting C = D/ρ* is a different point of the C-path here
    wrong = LPBoost(C=D / rho, max_iter=1000).fit(X, y).trace_["objective"][-1]
    assert abs(wrong - c_opt) > 1e-3 * c_opt


def test_nu_back_ends_agree_along_the_path():
    """Fourier columns are generic: the restricted optima are unique, so independent highspy and
    cvxpy fits pick the same columns and reach the same objective and decision function."""
    X, y = _toy(seed=5)
    Xt, _ = _toy(seed=105, m=200)
    kw = dict(nu=0.2, max_iter=30, weak_learner="fourier", n_candidates=300, random_state=0)
    a = LPBoost(solver="highs", **kw).fit(X, y)
    b = LPBoost(solver="cvxpy", **kw).fit(X, y)
    assert a.n_iter_ == b.n_iter_ == 30
    np.testing.assert_array_equal(a._learner_matrix(X), b._learner_matrix(X))
    np.testing.assert_allclose(a.trace_["objective"], b.trace_["objective"], rtol=1e-7, atol=1e-9)
    for fa, fb in zip(a.staged_decision_function(Xt), b.staged_decision_function(Xt)):
        np.testing.assert_allclose(fa, fb, atol=1e-6)
        order = np.argsort(fa)  # same ranking: pairs apart by > 1e-5 in fa keep their order in fb
        gaps_a, gaps_b = np.diff(fa[order]), np.diff(fb[order])
        assert np.all(gaps_b[gaps_a > 1e-5] > 0)


def test_nu_back_ends_agree_on_the_same_stump_sequence():
    """Stump optima are often degenerate (several optimal u): compare on one column sequence."""
    X, y = _toy(seed=5, m=70)
    nu = 0.3
    est = LPBoost(nu=nu, solver="highs", max_iter=40).fit(X, y)
    H_W = est._learner_matrix(X)
    ys = _pm1(est, y)
    for t, obj in enumerate(est.trace_["objective"]):
        ref = solve_lpboost_nu_cvxpy(H_W[:, : t + 1], ys, 1.0 / (nu * X.shape[0]), solver="HIGHS")
        assert obj == pytest.approx(ref.primal, rel=1e-8, abs=1e-10)


def test_staged_decisions_follow_the_coefficient_path():
    X, y = _toy(seed=7)
    est = LPBoost(C=0.5, max_iter=20).fit(X, y)
    staged = list(est.staged_decision_function(X))
    assert len(staged) == est.n_iter_
    H = est._learner_matrix(X)
    for dec, w in zip(staged, est.coef_path_):
        np.testing.assert_allclose(dec, H[:, : w.size] @ w)


def test_binned_stumps_converge_to_the_nu_lp_over_the_binned_stump_matrix():
    """max_bins: column generation over the binned stump space reaches linprog's ν-LP optimum on
    that space's full matrix, which is not the exact space's optimum. ν = 0.1 is below the binned
    space's ν floor (6 bins: ν_min = 0.23, the exact space's is 0), where that optimum is 0: the fit
    raises ν, and the optimum at the raised ν is positive."""
    X, y = _toy()
    est = LPBoost(nu=0.1, max_bins=6, max_iter=1000).fit(X, y)
    assert est.stop_reason_ == "converged"
    assert est.nu_ > est.nu_min_ > 0.1
    assert _linprog_nu_full(X, _pm1(est, y), 0.1, max_bins=6) == pytest.approx(0.0, abs=1e-9)
    binned = _linprog_nu_full(X, _pm1(est, y), est.nu_, max_bins=6)
    assert binned > 1e-3
    assert est.trace_["objective"][-1] == pytest.approx(binned, rel=1e-7)
    assert abs(binned - _linprog_nu_full(X, _pm1(est, y), est.nu_)) > 1e-3 * abs(binned)


def _discrete_noisy(N=80, seed=2):
    """Three features rounded to integers (few distinct values, many ties, as in flare-solar)
    under heavy label noise: the ν floor of the stump space is 0.625."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.standard_normal((N, 3)))
    y = np.where(X[:, 0] + 1.5 * rng.standard_normal(N) > 0, 1, 0)
    return X, y


def test_nu_below_the_floor_is_raised_to_a_non_trivial_ensemble():
    X, y = _discrete_noisy()
    y_pm = np.where(y == 1, 1.0, -1.0)
    # at ν = 0.1 the ν-LP over every stump has optimal value 0: the zero ensemble is optimal, and
    # the fit predicted by rounding noise (before: training error 57.5 % against a 42.5 % majority)
    assert _linprog_nu_full(X, y_pm, 0.1) == pytest.approx(0.0, abs=1e-9)
    est = LPBoost(nu=0.1, max_iter=1000).fit(X, y)
    majority_error = min(np.mean(y), 1 - np.mean(y))
    assert 1 - est.score(X, y) < majority_error - 0.05
    assert est.stop_reason_ == "converged"
    # ν_min is where the full ν-LP's value leaves 0; ν is raised 10 % of the way to 1 above it
    assert 0.5 < est.nu_min_ < est.nu_ < 1.0
    assert _linprog_nu_full(X, y_pm, est.nu_min_) == pytest.approx(0.0, abs=1e-9)
    assert est.nu_ == pytest.approx(est.nu_min_ + 0.1 * (1.0 - est.nu_min_))
    at_nu = _linprog_nu_full(X, y_pm, est.nu_)
    assert at_nu > 1e-3
    assert est.trace_["objective"][-1] == pytest.approx(at_nu, rel=1e-7)
    # a ν above the floor is kept
    assert LPBoost(nu=0.9, max_iter=5).fit(X, y).nu_ == 0.9


def test_no_signal_at_any_nu_gives_the_tie_rule():
    """ν_min = ν_max = 1: every point appears once with each label, so the uniform weights cancel
    every stump's edge. The fit runs at ν = 1, where the ν-LP's optimum is 0, and its ensemble is
    the constant stump of polarity +1: neither class is larger, and sign(0) = +1 names classes_[1]
    (DRM's rule on a tie)."""
    x = np.repeat(np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 2.0], [3.0, 1.0]]), 2, axis=0)
    y = np.tile([0, 1], 4)
    est = LPBoost(nu=0.3, max_iter=50).fit(x, y)
    assert est.nu_min_ == pytest.approx(1.0) and est.nu_ == 1.0
    assert est.trace_["objective"][-1] == pytest.approx(0.0, abs=1e-12)
    assert _linprog_nu_full(x, np.where(y == 1, 1.0, -1.0), 1.0) == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_array_equal(est.predict(x), np.ones(len(y), dtype=int))
    np.testing.assert_array_equal(est.decision_function(x), np.ones(len(y)))


def test_perceptron_floor_comes_from_identical_points():
    """Perceptrons tell distinct points apart: ν_min comes from the groups of identical points
    with both labels (here 20 of 60 points in 10 pairs that disagree: ν_min = 20/60)."""
    rng = np.random.default_rng(4)
    X = rng.standard_normal((50, 2))
    y = np.where(X[:, 0] > 0, 1, 0)
    X = np.r_[X[:10], X]  # points 0..9 again, with the other label
    y = np.r_[1 - y[:10], y]
    est = LPBoost(nu=0.2, weak_learner="perceptron", max_iter=20, random_state=0).fit(X, y)
    assert est.nu_min_ == pytest.approx(20 / 60)
    assert est.nu_ == pytest.approx(20 / 60 + 0.1 * (1 - 20 / 60))
    kept = LPBoost(nu=0.2, weak_learner="perceptron", max_iter=5, random_state=0)
    kept.fit(X[10:], y[10:])
    assert kept.nu_min_ == 0.0 and kept.nu_ == 0.2
