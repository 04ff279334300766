"""MultiBoost_cw (Alg. 1 with FCD): K class-wise learners per iteration from (4) vs brute force,
restricted solves at the optimum (KKT, L-BFGS-B), KKT duals (5) feasible at convergence, CW-1 as FCD
with τ_max = 1 in the same column-generation loop, paths and prediction."""

import numpy as np
import pytest
from sklearn.datasets import load_iris

from kernbench.methods.multiboost_cw import MultiBoostCW
from kernbench.solvers.fcd import fcd_solve
from kernbench.solvers.multiclass_exp_loss import (
    classwise_objective,
    exp_loss_dual,
    pricing_weights,
    solve_classwise_lbfgsb,
)
from kernbench.weak.stumps import StumpSpace

TIGHT = dict(tau_max=None, eps=1e-9, rel_tol=None)


def _data(seed=0, m=40, D=2, K=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, D))
    y = np.argmax(X @ rng.normal(size=(D, K)) + 0.7 * rng.normal(size=(m, K)), axis=1)
    return X, y


def _signed_stumps(X):
    space = StumpSpace(X, include_constant=True)
    cols = np.array([space.column(i) for i in range(space.n_candidates)])
    return np.unique(np.vstack([cols, -cols]), axis=0)


@pytest.fixture(scope="module")
def tight_fit():
    X, y = _data()
    return X, y, MultiBoostCW(C=100.0, max_iter=8, **TIGHT).fit(X, y)


def test_each_iteration_adds_one_learner_per_class_from_4(tight_fit):
    X, y, est = tight_fit
    K, C, m = 3, 100.0, X.shape[0]
    Phi = est._learner_matrix(X)
    cols = _signed_stumps(X)
    np.testing.assert_array_equal(est.learner_class_, np.tile(np.arange(K), est.n_iter_))
    for t in range(est.n_iter_):
        J = K * t
        if t == 0:
            lam = np.ones((m, K))
            lam[np.arange(m), y] = 0.0  # Alg. 1 line 2
        else:
            F = np.zeros((m, K))
            for j in range(J):
                F[:, est.learner_class_[j]] += est.coef_path_[t - 1][j] * Phi[:, j]
            _, lam = exp_loss_dual(F, y, C)
        U = pricing_weights(lam, y)
        for c in range(K):
            in_class = Phi[:, [j for j in range(J) if est.learner_class_[j] == c]]
            free = ~np.any(np.all(cols[:, None, :] == in_class.T[None], axis=2), axis=1)
            best = (cols[free] @ U[:, c]).max()  # (4) over h ∉ 𝓗_c, both polarities
            assert Phi[:, J + c] @ U[:, c] == pytest.approx(best, rel=1e-9)


def test_restricted_solves_are_optimal_and_objective_decreases(tight_fit):
    X, y, est = tight_fit
    K, C = 3, 100.0
    Phi = est._learner_matrix(X)
    obj = np.array(est.trace_["objective"])
    assert np.all(np.diff(obj) <= 1e-9 * obj[0])
    for t, w in enumerate(est.coef_path_):
        J = w.size
        cls = est.learner_class_[:J]
        value, grad, _ = classwise_objective(w, Phi[:, :J], y, C, np.arange(J), cls, K)
        assert value == pytest.approx(obj[t], rel=1e-10)
        assert np.all(w >= 0) and np.all(grad >= -1e-8)
        np.testing.assert_allclose(grad[w > 0], 0.0, atol=1e-8)
    J = est.coef_.size
    ref = solve_classwise_lbfgsb(
        Phi, y, C, np.zeros(J), np.arange(J), est.learner_class_, K, ftol=1e-15, gtol=1e-12
    )
    assert obj[-1] == pytest.approx(ref.objective, rel=1e-6)


def test_lbfgsb_solver_gives_the_same_first_iterations():
    X, y = _data(seed=3)
    fcd = MultiBoostCW(C=100.0, max_iter=3, **TIGHT).fit(X, y)
    lbf = MultiBoostCW(
        C=100.0, max_iter=3, solver="lbfgsb", rel_tol=None, lbfgs_ftol=1e-15, lbfgs_gtol=1e-12
    ).fit(X, y)
    np.testing.assert_allclose(fcd.trace_["objective"], lbf.trace_["objective"], rtol=1e-6)
    assert [s.feature for s in fcd.learners_] == [s.feature for s in lbf.learners_]


@pytest.mark.parametrize("solver", ["newton", "fcd+newton"])
def test_newton_solvers_follow_the_tight_fcd_path(solver):
    X, y = _data(seed=3)
    fcd = MultiBoostCW(C=100.0, max_iter=6, **TIGHT).fit(X, y)
    est = MultiBoostCW(C=100.0, max_iter=6, solver=solver, rel_tol=None, newton_tol=1e-9)
    est.fit(X, y)
    np.testing.assert_allclose(est.trace_["objective"], fcd.trace_["objective"], rtol=1e-7)
    assert [s.feature for s in est.learners_] == [s.feature for s in fcd.learners_]
    assert max(est.trace_["max_violation"]) <= 1e-9
    # the μ kept for the next FCD call and the training decision match a recomputation
    K = est.classes_.size
    Phi = est._learner_matrix(X)
    value, _, lam = classwise_objective(
        est.coef_, Phi, y, 100.0, np.arange(est.coef_.size), est.learner_class_, K
    )
    assert value == pytest.approx(est.trace_["objective"][-1], rel=1e-12)
    np.testing.assert_allclose(est.dual_coef_, lam, rtol=1e-10)
    np.testing.assert_array_equal(est.predict(X), fcd.predict(X))


def test_newton_solvers_pass_check_estimator():
    from sklearn.utils.estimator_checks import check_estimator

    check_estimator(MultiBoostCW(max_iter=5, solver="fcd+newton"))


def test_kkt_duals_are_dual_feasible_when_converged():
    X, y = _data(seed=1, m=30)
    C, K = 10.0, 3
    est = MultiBoostCW(C=C, max_iter=300, **TIGHT).fit(X, y)
    assert est.stop_reason_ == "converged" and est.final_score_ <= 1.0 + 1e-6
    F = np.zeros((X.shape[0], K))
    Phi = est._learner_matrix(X)
    for j, c in enumerate(est.learner_class_):
        F[:, c] += est.coef_[j] * Phi[:, j]
    _, lam = exp_loss_dual(F, y, C)
    np.testing.assert_allclose(est.dual_coef_, lam, rtol=1e-8, atol=1e-300)  # (5)
    assert np.all(est.dual_coef_ >= 0)
    U = pricing_weights(est.dual_coef_, y)
    assert (_signed_stumps(X) @ U).max() <= 1.0 + 1e-5  # (3b) for every stump and class


def test_cw1_is_fcd_with_tau_max_1_in_the_column_generation_loop():
    X, y = _data(seed=2, m=45, K=4)
    C, K, T = 1e8, 4, 6
    est = MultiBoostCW(C=C, tau_max=1, max_iter=T, rel_tol=None).fit(X, y)
    assert est.n_iter_ == T
    # the loop by hand: brute-force (4) per class, then one stage-wise FCD pass over the new ones
    cols = _signed_stumps(X)
    m = X.shape[0]
    lam = np.ones((m, K))
    lam[np.arange(m), y] = 0.0
    H, cls, w = np.zeros((m, 0)), np.zeros(0, dtype=int), np.zeros(0)
    for t in range(T):
        U = pricing_weights(lam, y)
        new = []
        for c in range(K):
            used = H[:, cls == c]
            free = ~np.any(np.all(cols[:, None, :] == used.T[None], axis=2), axis=1)
            scores = np.where(free, cols @ U[:, c], -np.inf)
            new.append(cols[int(np.argmax(scores))])
        H = np.column_stack([H, *new])
        cls = np.concatenate([cls, np.arange(K)])
        w = np.concatenate([w, np.zeros(K)])
        res = fcd_solve(H, y, C, w, np.arange(w.size), cls, K, np.arange(w.size - K, w.size),
                        tau_max=1)  # fmt: skip
        w = res.w
        lam = C / (m * (K - 1)) * res.mu
        np.testing.assert_allclose(est.coef_path_[t], w, rtol=1e-9, atol=1e-12)
        assert est.trace_["objective"][t] == pytest.approx(res.objective, rel=1e-9)
    np.testing.assert_array_equal(est._learner_matrix(X), H)


def test_iris_path_prediction_and_binary_decision():
    X, y = load_iris(return_X_y=True)
    est = MultiBoostCW(C=1000.0, max_iter=20).fit(X, y)
    staged = list(est.staged_decision_function(X))
    assert len(staged) == est.n_iter_ and est.model_size_ == 3 * est.n_iter_
    np.testing.assert_allclose(staged[-1], est.decision_function(X))
    errs = [np.mean(est.classes_[d.argmax(1)] != y) for d in staged]
    np.testing.assert_allclose(errs, est.trace_["train_error"])
    assert errs[-1] < 0.05
    assert np.all(np.diff(est.trace_["solver_time_s"]) >= 0)
    Xb, yb = _data(seed=4, K=2)
    labels = np.array(["a", "b"])[yb]
    bin_est = MultiBoostCW(C=100.0, max_iter=5).fit(Xb, labels)
    dec = bin_est.decision_function(Xb)
    assert dec.shape == (Xb.shape[0],)
    np.testing.assert_array_equal(bin_est.predict(Xb), np.where(dec >= 0, "b", "a"))


def test_max_time_from_the_base_stops_early_and_the_model_predicts():
    X, y = load_iris(return_X_y=True)
    est = MultiBoostCW(C=1000.0, max_iter=50, max_time=1e-9, random_state=0).fit(X, y)
    assert est.stop_reason_ == "max_time" and est.n_iter_ == 1
    assert est.coef_.shape == (3,)  # the K learners of the one iteration done
    assert est.predict(X).shape == y.shape
    staged = list(est.staged_decision_function(X))
    np.testing.assert_allclose(staged[-1], est.decision_function(X))


def test_staged_values_read_a_column_major_learner_matrix_and_equal_the_row_major_ones():
    """The learner matrix is column-major, so every stage's Hxᵀ is read in place; the staged
    values are bitwise those of the row-major matrix (each stage copied its transpose)."""
    from kernbench.methods.column_generation import ColumnGeneration

    X, y = load_iris(return_X_y=True)
    est = MultiBoostCW(C=1e4, max_iter=15, tau_max=1).fit(X, y)
    Hx = est._learner_matrix(X)
    assert Hx.flags.f_contiguous
    row_major = ColumnGeneration._learner_matrix(est, X)
    assert row_major.flags.c_contiguous and np.array_equal(Hx, row_major)
    staged = list(est.staged_decision_function(X))
    assert len(staged) == est.n_iter_
    for W, F in zip(est.coef_path_, staged):
        J = W.shape[0]
        np.testing.assert_array_equal(F, est._decision_from_columns(row_major[:, :J], W, None))
