"""MultiBoost: restricted-solve KKT, monotone objective, the optimum on the
selected columns vs cvxpy (exp cone), pricing (6) vs brute force, λ by the KKT conditions (5)."""

import cvxpy as cp
import numpy as np
import pytest
from sklearn.datasets import load_iris

from kernbench.methods.multiboost import MultiBoost
from kernbench.solvers.multiclass_exp_loss import (
    exp_loss_dual,
    pricing_weights,
    shared_objective,
    solve_shared_lbfgsb,
)
from kernbench.weak.stumps import StumpSpace

TIGHT = dict(rel_tol=None, lbfgs_ftol=1e-15, lbfgs_gtol=1e-10)


def _data(seed=0, m=40, D=2, K=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, D))
    y = np.argmax(X @ rng.normal(size=(D, K)) + 0.7 * rng.normal(size=(m, K)), axis=1)
    return X, y


@pytest.fixture(scope="module")
def tight_fit():
    X, y = _data()
    return X, y, MultiBoost(C=100.0, max_iter=12, **TIGHT).fit(X, y)


def test_each_restricted_solve_satisfies_kkt_and_objective_decreases(tight_fit):
    X, y, est = tight_fit
    C = 100.0
    Phi = est._learner_matrix(X)
    obj = np.array(est.trace_["objective"])
    assert np.all(np.diff(obj) <= 1e-9 * obj[0])
    for J, W in enumerate(est.coef_path_, start=1):
        value, grad, _ = shared_objective(W, Phi[:, :J], y, C)
        assert value == pytest.approx(obj[J - 1], rel=1e-12)
        assert np.all(W >= 0)
        assert np.all(grad[W == 0] >= -1e-6)  # gradient ≥ 0 where w = 0
        np.testing.assert_allclose(grad[W > 0], 0.0, atol=1e-6)  # = 0 where w > 0
    assert max(est.trace_["kkt"]) < 1e-6


def test_optimum_on_selected_columns_equals_cvxpy(tight_fit):
    X, y, est = tight_fit
    C, K = 100.0, 3
    Phi = est._learner_matrix(X)
    m, J = Phi.shape
    W = cp.Variable((J, K), nonneg=True)
    F = Phi @ W
    terms = [F[i, c] - F[i, y[i]] for i in range(m) for c in range(K) if c != y[i]]
    p = m * (K - 1)
    prob = cp.Problem(cp.Minimize(cp.sum(W) + (C / p) * cp.sum(cp.exp(cp.hstack(terms)))))
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    assert est.trace_["objective"][-1] == pytest.approx(prob.value, rel=1e-6)


def _all_signed_stump_columns(X):
    space = StumpSpace(X, include_constant=True)
    cols = np.array([space.column(i) for i in range(space.n_candidates)])
    return np.unique(np.vstack([cols, -cols]), axis=0)  # distinct signed columns, incl. ±1


def test_pricing_equals_brute_force_over_signed_stumps(tight_fit):
    X, y, est = tight_fit
    C = 100.0
    Phi = est._learner_matrix(X)
    cols = _all_signed_stump_columns(X)
    m, K = X.shape[0], 3
    for J in range(est.n_iter_):
        if J == 0:
            lam = np.ones((m, K))
            lam[np.arange(m), y] = 0.0  # the paper's λ = 1
        else:
            _, lam = exp_loss_dual(Phi[:, :J] @ est.coef_path_[J - 1], y, C)
        U = pricing_weights(lam, y)
        free = ~np.any(np.all(cols[:, None, :] == Phi[:, :J].T[None], axis=2), axis=1)
        best = (cols[free] @ U).max()  # max over h ∉ 𝒲 and c of Σ_i u^c_i h(x_i), (6)
        assert est.trace_["score"][J] == pytest.approx(best, rel=1e-9)
        assert (Phi[:, J] @ U).max() == pytest.approx(best, rel=1e-9)


def test_dual_is_the_kkt_lambda_and_converged_means_no_violated_constraint():
    X, y = _data(seed=1, m=30)
    C = 10.0
    est = MultiBoost(C=C, max_iter=200, **TIGHT).fit(X, y)
    assert est.stop_reason_ == "converged" and est.n_iter_ < 200
    assert est.final_score_ <= 1.0 + 1e-6
    F = est._learner_matrix(X) @ est.coef_
    p = X.shape[0] * 2
    rows = np.arange(X.shape[0])
    expected = C / p * np.exp(F - F[rows, y][:, None])  # (5)
    expected[rows, y] = 0.0
    np.testing.assert_allclose(est.dual_coef_, expected, rtol=1e-10)
    # at the optimum over ALL stumps, no dual constraint (3b) is violated
    U = pricing_weights(est.dual_coef_, y)
    assert (_all_signed_stump_columns(X) @ U).max() <= 1.0 + 1e-5


def test_iris_path_and_prediction():
    X, y = load_iris(return_X_y=True)
    est = MultiBoost(C=1000.0, max_iter=30).fit(X, y)
    staged = list(est.staged_decision_function(X))
    assert len(staged) == est.n_iter_ == est.model_size_
    np.testing.assert_allclose(staged[-1], est.decision_function(X))
    assert np.mean(est.predict(X) != y) < 0.05
    assert est.stop_reason_ in {"converged", "objective_stalled", "max_iter"}


def test_binary_problem_gives_one_dimensional_decision():
    X, y = _data(seed=2, K=2)
    labels = np.array(["a", "b"])[y]
    est = MultiBoost(C=100.0, max_iter=10).fit(X, labels)
    dec = est.decision_function(X)
    assert dec.shape == (X.shape[0],)
    np.testing.assert_array_equal(est.predict(X), np.where(dec >= 0, "b", "a"))


def test_fit_matches_the_previous_unfused_evaluation(monkeypatch):
    """The fused evaluation (the stumps' products + one in-place pass for λ/U) gives the same
    path as the plain shared_objective-based L-BFGS-B of before (dense BLAS products), up to
    solver tolerance."""
    from scipy.optimize import minimize

    import kernbench.methods.multiboost as mb
    from kernbench.solvers.multiclass_exp_loss import RestrictedSolve, kkt_residual

    def previous(H, y_index, C, W0, *, maxiter, ftol, gtol, products):
        assert products is not None and products.n_columns == H.shape[1]  # stumps: in use
        J, K = W0.shape

        def fun(w):
            value, grad, _ = shared_objective(w.reshape(J, K), H, y_index, C)
            return value, grad.ravel()

        res = minimize(
            fun,
            np.maximum(W0, 0.0).ravel(),
            jac=True,
            method="L-BFGS-B",
            bounds=[(0.0, None)] * (J * K),
            options={"maxiter": maxiter, "ftol": ftol, "gtol": gtol},
        )
        W = np.maximum(res.x.reshape(J, K), 0.0)
        value, grad, lam = shared_objective(W, H, y_index, C)
        stop = "converged" if res.success else str(res.message)
        return RestrictedSolve(W, value, lam, kkt_residual(W, grad), int(res.nit), stop)

    X, y = load_iris(return_X_y=True)
    new = MultiBoost(C=1e4, max_iter=30).fit(X, y)
    monkeypatch.setattr(mb, "solve_shared_lbfgsb", previous)
    old = MultiBoost(C=1e4, max_iter=30).fit(X, y)
    # scipy's default ftol stops each solve ~1e-4 short of the optimum; rounding moves where, and
    # so whether pricing finds a violated constraint in the last round: one path may stop as
    # converged one iteration before the other
    n_new, n_old = len(new.trace_["objective"]), len(old.trace_["objective"])
    assert abs(n_new - n_old) <= 1
    n = min(n_new, n_old)
    np.testing.assert_allclose(new.trace_["objective"][:n], old.trace_["objective"][:n], rtol=1e-3)
    assert new.trace_["objective"][-1] == pytest.approx(old.trace_["objective"][-1], rel=1e-5)
    np.testing.assert_array_equal(new.predict(X), old.predict(X))


def test_products_through_the_stumps_only_while_every_column_is_a_stump():
    """The master keeps the stump products while the working set holds stumps, and falls back
    to the dense products for good at the first column of another learner."""
    from types import SimpleNamespace

    from kernbench.methods.multiboost import SharedExpLossMaster
    from kernbench.solvers.multiclass_exp_loss import LBFGSBSettings
    from kernbench.weak.stumps import Stump

    X, y = _data()
    master = SharedExpLossMaster(
        X, y, 3, 100.0, tol=1e-6, rel_tol=None, solver="lbfgsb", lbfgs=LBFGSBSettings(),
        fcd_eps=1e-2, fcd_tau_max=None, newton_tol=1e-6,
    )  # fmt: skip
    stump, other = Stump(0, 0.1, -1), SimpleNamespace(feature=1, threshold=0.0, sign=1)
    H = np.column_stack([stump.predict(X), np.where(X[:, 1] >= 0.0, 1.0, -1.0)])
    products = master._stump_products(SimpleNamespace(H=H[:, :1], n_columns=1, learners=[stump]))
    assert products is not None and products.n_columns == 1
    ws = SimpleNamespace(H=H, n_columns=2, learners=[stump, other])  # a stump-like non-Stump
    assert master._stump_products(ws) is None
    assert master.products is None


# ---------------------------------------------------------------------------------------------
# solver="fcd": FCD (Alg. 2 of MultiBoost_cw) on the shared-learner problem, K variables a column
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fcd_pair():
    X, y = _data(seed=3, m=50)
    kw = dict(C=100.0, max_iter=15, rel_tol=None)
    fcd = MultiBoost(solver="fcd", fcd_eps=1e-9, **kw).fit(X, y)
    lbfgsb = MultiBoost(lbfgs_ftol=1e-15, lbfgs_gtol=1e-10, **kw).fit(X, y)
    return X, y, fcd, lbfgsb


def test_fcd_master_optimum_equals_lbfgsb_and_cvxpy(fcd_pair):
    X, y, fcd, lbfgsb = fcd_pair
    C, K = 100.0, 3
    Phi = fcd._learner_matrix(X)
    m, J = Phi.shape
    for t, W in enumerate(fcd.coef_path_):
        value, grad, _ = shared_objective(W, Phi[:, : t + 1], y, C)
        assert value == pytest.approx(fcd.trace_["objective"][t], rel=1e-10)  # maintained μ
        assert fcd.trace_["kkt"][t] <= 1e-9  # FCD's θ (16) is the KKT residual
        # the same restricted problem (FCD's columns, W = 0 start) by a tight L-BFGS-B
        ref = solve_shared_lbfgsb(
            Phi[:, : t + 1], y, C, np.zeros((t + 1, K)), ftol=1e-15, gtol=1e-10
        )
        assert value == pytest.approx(ref.objective, rel=1e-6)
    # and the final one by cvxpy's exponential cone
    Wv = cp.Variable((J, K), nonneg=True)
    F = Phi @ Wv
    terms = [F[i, c] - F[i, y[i]] for i in range(m) for c in range(K) if c != y[i]]
    prob = cp.Problem(
        cp.Minimize(cp.sum(Wv) + (C / (m * (K - 1))) * cp.sum(cp.exp(cp.hstack(terms))))
    )
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    assert fcd.trace_["objective"][-1] == pytest.approx(prob.value, rel=1e-6)


def test_fcd_fit_follows_the_lbfgsb_objective_path(fcd_pair):
    X, y, fcd, lbfgsb = fcd_pair
    # each restricted optimum is unique in F, so λ and hence the next learner are the same
    assert fcd.n_iter_ == lbfgsb.n_iter_
    assert [str(h) for h in fcd.learners_] == [str(h) for h in lbfgsb.learners_]
    np.testing.assert_allclose(fcd.trace_["objective"], lbfgsb.trace_["objective"], rtol=1e-6)
    np.testing.assert_allclose(fcd.dual_coef_, lbfgsb.dual_coef_, rtol=1e-4, atol=1e-9)
    np.testing.assert_array_equal(fcd.predict(X), lbfgsb.predict(X))


def test_fcd_default_tolerance_matches_lbfgsb_defaults_on_iris():
    # the defaults (FCD ε = 1e-2; L-BFGS-B with scipy's defaults): same learners, objectives to
    # the solvers' accuracy
    X, y = load_iris(return_X_y=True)
    fcd = MultiBoost(C=100.0, max_iter=25, solver="fcd").fit(X, y)
    lbfgsb = MultiBoost(C=100.0, max_iter=25).fit(X, y)
    assert fcd.stop_reason_ == lbfgsb.stop_reason_ and fcd.n_iter_ == lbfgsb.n_iter_
    np.testing.assert_allclose(fcd.trace_["objective"], lbfgsb.trace_["objective"], rtol=1e-4)
    assert max(fcd.trace_["kkt"]) <= 1e-2  # (18) with ε = 1e-2


def test_fcd_solver_passes_check_estimator():
    from sklearn.utils.estimator_checks import check_estimator

    check_estimator(MultiBoost(max_iter=10, solver="fcd"))


def test_newton_fit_follows_the_tight_path_with_a_tight_kkt_residual(fcd_pair):
    X, y, fcd, lbfgsb = fcd_pair
    newton = MultiBoost(C=100.0, max_iter=15, rel_tol=None, solver="newton", newton_tol=1e-9)
    newton.fit(X, y)
    assert [str(h) for h in newton.learners_] == [str(h) for h in lbfgsb.learners_]
    np.testing.assert_allclose(newton.trace_["objective"], lbfgsb.trace_["objective"], rtol=1e-7)
    assert max(newton.trace_["kkt"]) <= 1e-9
    # its objectives are the tight ones: never above FCD's at ε = 1e-9 by more than round-off
    assert np.all(
        np.asarray(newton.trace_["objective"]) <= np.asarray(fcd.trace_["objective"]) * (1 + 1e-9)
    )
    np.testing.assert_array_equal(newton.predict(X), lbfgsb.predict(X))


def test_newton_solver_passes_check_estimator():
    from sklearn.utils.estimator_checks import check_estimator

    check_estimator(MultiBoost(max_iter=10, solver="newton"))


def test_max_time_stops_early_and_the_model_predicts():
    X, y = load_iris(return_X_y=True)
    for solver in ("lbfgsb", "fcd", "newton"):
        est = MultiBoost(C=1000.0, max_iter=50, solver=solver, max_time=1e-9).fit(X, y)
        assert est.stop_reason_ == "max_time" and est.n_iter_ == 1  # after the first iteration
        assert len(est.trace_["objective"]) == 1 and est.coef_.shape == (1, 3)
        assert est.predict(X).shape == y.shape
        staged = list(est.staged_decision_function(X))
        np.testing.assert_allclose(staged[-1], est.decision_function(X))
    free = MultiBoost(C=1000.0, max_iter=5, max_time=1e6).fit(X, y)
    assert free.stop_reason_ != "max_time"
