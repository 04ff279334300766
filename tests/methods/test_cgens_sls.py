"""CGENS-SLS: closed form vs a direct ridge solve, KKT, pricing (13) vs brute
force over canonical stumps, Sherman–Morrison vs Woodbury, monotone objective, decoding (15)."""

import numpy as np
import pytest
from sklearn.datasets import load_iris

from kernbench.methods.cgens_sls import CGENSSLS
from kernbench.solvers.simplex import simplex_code, simplex_labels
from kernbench.weak.stumps import StumpSpace


def _ridge(Phi, L, C):
    """min ½‖W‖² + (C/2)‖L − ΦW − 1bᵀ‖² (bias unpenalised) by the normal equations; Phi: (m, J)."""
    m, J = Phi.shape
    A = np.hstack([Phi, np.ones((m, 1))])
    P = np.eye(J + 1) / C
    P[J, J] = 0.0
    sol = np.linalg.solve(A.T @ A + P, A.T @ L)
    W, b = sol[:J], sol[J]
    U = C * (L - Phi @ W - b)  # (18c): U = C·O
    return W, b, U


def _data(seed=0, m=45, D=3, K=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, D))
    y = np.argmax(X @ rng.normal(size=(D, K)) + 0.8 * rng.normal(size=(m, K)), axis=1)
    return X, y


@pytest.mark.parametrize("inverse", ["sherman_morrison", "woodbury"])
@pytest.mark.parametrize("C", [0.1, 10.0])
def test_model_equals_direct_ridge_on_selected_columns_with_kkt(inverse, C):
    X, y = _data()
    est = CGENSSLS(C=C, max_iter=15, inverse=inverse).fit(X, y)
    Phi = est._learner_matrix(X)
    L = simplex_labels(y, simplex_code(4))
    for J in (1, 7, est.n_iter_):
        W, b, _ = _ridge(Phi[:, :J], L, C)
        np.testing.assert_allclose(est.coef_path_[J - 1], W, rtol=1e-8, atol=1e-8)
        np.testing.assert_allclose(est.intercept_path_[J - 1], b, rtol=1e-8, atol=1e-8)
    W, b, U = _ridge(Phi, L, C)
    np.testing.assert_allclose(est.dual_coef_, U, rtol=1e-7, atol=1e-8 * C)
    U = est.dual_coef_
    np.testing.assert_allclose(U.sum(axis=0), 0.0, atol=1e-9 * C * len(y))  # (18b) 1ᵀU = 0
    np.testing.assert_allclose(est.coef_, Phi.T @ U, atol=1e-9)  # (18a) W = HU
    O = L - Phi @ est.coef_ - est.intercept_
    np.testing.assert_allclose(O, U / C, atol=1e-9)  # (18c)


def test_sherman_morrison_and_woodbury_fit_the_same_model():
    X, y = _data(seed=1)
    a = CGENSSLS(C=3.0, max_iter=25, inverse="sherman_morrison").fit(X, y)
    b = CGENSSLS(C=3.0, max_iter=25, inverse="woodbury").fit(X, y)
    assert [(s.feature, s.threshold, s.sign) for s in a.learners_] == [
        (s.feature, s.threshold, s.sign) for s in b.learners_
    ]
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(a.trace_["objective"], b.trace_["objective"], rtol=1e-10)


@pytest.mark.parametrize("init_dual", ["closed_form", "constant"])
def test_pricing_equals_brute_force_over_canonical_stumps(init_dual):
    X, y = _data(seed=2, m=30, D=2, K=3)
    C, T = 1.0, 8
    est = CGENSSLS(C=C, max_iter=T, init_dual=init_dual).fit(X, y)
    H_full, _ = StumpSpace(X, include_constant=False).full_matrix(canonical=True)
    Phi = est._learner_matrix(X)
    L = simplex_labels(y, simplex_code(3))
    for J in range(T):
        if J == 0:
            U = np.ones_like(L) if init_dual == "constant" else C * (L - L.mean(axis=0))
        else:
            U = _ridge(Phi[:, :J], L, C)[2]
        used = [
            np.all(H_full == Phi[:, [j]], axis=0) | np.all(H_full == -Phi[:, [j]], axis=0)
            for j in range(J)
        ]
        free = ~np.any(used, axis=0) if used else np.ones(H_full.shape[1], dtype=bool)
        scores = np.abs(H_full[:, free].T @ U)  # |Σ_i U_iτ h(x_i)| for every free h and τ
        best = scores.max()
        assert est.trace_["score"][J] == pytest.approx(best, rel=1e-10)
        assert np.abs(Phi[:, J] @ U).max() == pytest.approx(best, rel=1e-10)  # the pick attains it
        assert Phi[:, J] @ U[:, np.argmax(np.abs(Phi[:, J] @ U))] > 0  # sign flipped to positive


def test_objective_non_increasing_and_staged_path():
    X, y = load_iris(return_X_y=True)
    est = CGENSSLS(C=1.0, max_iter=40).fit(X, y)
    obj = np.array(est.trace_["objective"])
    assert np.all(np.diff(obj) <= 1e-10 * obj[0])
    staged = list(est.staged_decision_function(X))
    assert len(staged) == est.n_iter_ == len(obj) == est.model_size_
    np.testing.assert_allclose(staged[-1], est.decision_function(X))
    assert np.mean(est.predict(X) != y) == pytest.approx(est.trace_["train_error"][-1])
    assert est.trace_["train_error"][-1] < 0.05


def test_decoding_is_nearest_simplex_vertex_in_inner_product():
    X, y = _data(seed=3)
    est = CGENSSLS(C=1.0, max_iter=10).fit(X, y)
    F = est._learner_matrix(X) @ est.coef_ + est.intercept_  # (14)
    codes = simplex_code(4)
    expected = est.classes_[np.argmax(F @ codes, axis=1)]  # (15), y = 1..l + 1
    np.testing.assert_array_equal(est.predict(X), expected)
    # with unit codes, max ⟨F, c_y⟩ ⇔ min ‖F − c_y‖
    dist = ((F[:, :, None] - codes[None]) ** 2).sum(axis=1)
    np.testing.assert_array_equal(est.predict(X), est.classes_[np.argmin(dist, axis=1)])


def test_binary_problem_gives_one_dimensional_decision():
    X, y = _data(seed=4, K=2)
    labels = np.array(["no", "yes"])[y]
    est = CGENSSLS(C=1.0, max_iter=10).fit(X, labels)
    dec = est.decision_function(X)
    assert dec.shape == (X.shape[0],) and est.coef_.shape == (10, 1)
    np.testing.assert_array_equal(est.predict(X), np.where(dec >= 0, "yes", "no"))


def test_used_up_stump_space_converges_to_the_full_problem():
    X = np.array([[0.0], [1.0], [2.0], [3.0], [4.0], [5.0]])
    y = np.array([0, 1, 2, 0, 1, 2])
    est = CGENSSLS(C=2.0, max_iter=50).fit(X, y)
    assert est.stop_reason_ == "converged" and est.n_iter_ == 5  # 5 distinct stump columns
    H_full, _ = StumpSpace(X, include_constant=False).full_matrix(canonical=True)
    W, b, _ = _ridge(H_full, simplex_labels(y, simplex_code(3)), 2.0)
    F_full = H_full @ W + b
    F_ours = est._learner_matrix(X) @ est.coef_ + est.intercept_
    np.testing.assert_allclose(F_ours, F_full, atol=1e-9)
