"""CGENS invariants (docs/methods/column_generation.md) against independent computations."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

from kernbench.methods.cgens import CGENS
from kernbench.weak.stumps import StumpSpace


def _toy(seed=1, m=60, D=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, D))
    y = np.where((X**2).sum(axis=1) + 0.5 * rng.normal(size=m) > 2.4, 1, -1)
    return X, y


class RecordingCGENS(CGENS):
    """CGENS whose master records α, w, b, H_W and the objective after every restricted solve
    (for per-iteration checks)."""

    def _make_master(self, *args, **kwargs):
        master = super()._make_master(*args, **kwargs)
        self.rec_ = rec = []
        solve = master.solve

        def recording(ws):
            step = solve(ws)
            svm = master.svm
            rec.append((svm.alpha.copy(), svm.w, svm.b, ws.H.copy(), step.objective))
            return step

        master.solve = recording
        return master


def _full_svm(H, y, C):
    """Linear SVM with unregularised bias on the explicit matrix H, by cvxpy (independent)."""
    w, b = cp.Variable(H.shape[1]), cp.Variable()
    obj = 0.5 * cp.sum_squares(w) + C * cp.sum(cp.pos(1 - cp.multiply(y, H @ w + b)))
    prob = cp.Problem(cp.Minimize(obj))
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    return prob.value, H @ w.value + b.value


TIGHT = dict(tol=1e-10, solver_tol=1e-11, solver_max_epochs=10**6, max_iter=2000)


@pytest.mark.parametrize("C", [0.1, 1.0, 10.0])
def test_converged_cgens_equals_linear_svm_on_the_full_stump_matrix(C):
    X, y = _toy()
    est = CGENS(C=C, **TIGHT).fit(X, y)
    assert est.stop_reason_ == "converged"
    H_full, _ = StumpSpace(X, include_constant=False).full_matrix()
    ys = np.where(y == est.classes_[1], 1.0, -1.0)
    ref, dec_ref = _full_svm(H_full, ys, C)
    assert est.trace_["objective"][-1] == pytest.approx(ref, rel=1e-6)
    np.testing.assert_allclose(est.decision_function(X), dec_ref, atol=1e-5)
    assert est.n_iter_ < H_full.shape[1]  # a subset of the columns suffices


def test_restricted_primal_non_increasing_and_kkt_every_iteration():
    X, y = _toy(seed=4)
    C = 2.0
    est = RecordingCGENS(C=C, **TIGHT).fit(X, y)
    obj = np.array(est.trace_["objective"])
    assert np.all(np.diff(obj) <= 1e-9 * obj[:-1])
    ys = np.where(y == est.classes_[1], 1.0, -1.0)
    for alpha, w, _b, H_W, _ in est.rec_:
        np.testing.assert_allclose(w, H_W.T @ (ys * alpha), atol=1e-12)  # KKT (7)
        assert alpha.min() >= 0.0 and alpha.max() <= C
        assert abs(ys @ alpha) < 1e-9
    assert len(est.rec_) == est.n_iter_ == len(est.coef_path_)


def test_claim_4_1_gap_identity_and_greedy_choice_by_enumeration():
    X, y = _toy(seed=2, m=30, D=2)
    C = 1.0
    est = RecordingCGENS(C=C, **TIGHT).fit(X, y)
    H_full, _ = StumpSpace(X, include_constant=False).full_matrix()
    ys = np.where(y == est.classes_[1], 1.0, -1.0)
    for t, (alpha, w, b, H_W, _) in enumerate(est.rec_):
        s = H_full.T @ (ys * alpha)
        selected = np.array([np.any(np.abs(H_W.T @ c) == len(c)) for c in H_full.T])
        primal = 0.5 * w @ w + C * np.maximum(0, 1 - ys * (H_W @ w + b)).sum()
        full_dual = alpha.sum() - 0.5 * s @ s  # (2)/(9) on all canonical columns
        gap = 0.5 * (s[~selected] ** 2).sum()  # Claim 4.1 (absolute value)
        assert primal - full_dual == pytest.approx(gap, abs=1e-8)
        assert est.trace_["gap"][t] == pytest.approx(gap, abs=1e-8)
        if t + 1 < len(est.rec_):  # the next pick maximises |s_j| over the unselected columns
            next_col = est.rec_[t + 1][3][:, -1]
            assert abs(next_col @ (ys * alpha)) == pytest.approx(np.abs(s[~selected]).max())


def test_perceptron_runs_are_bit_reproducible():
    X, y = _toy(seed=5, m=80)
    kw = dict(C=1.0, weak_learner="perceptron", n_candidates=500, max_iter=25)
    a = CGENS(random_state=3, **kw).fit(X, y)
    b = CGENS(random_state=3, **kw).fit(X, y)
    c = CGENS(random_state=4, **kw).fit(X, y)
    for wa, wb in zip(a.coef_path_, b.coef_path_):
        np.testing.assert_array_equal(wa, wb)
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
    assert not np.array_equal(a.decision_function(X), c.decision_function(X))


@pytest.mark.parametrize("weak_learner", ["perceptron", "fourier"])
def test_sampled_weak_learners_fit_a_nonlinear_problem(weak_learner):
    X, y = _toy(seed=6, m=150)
    est = CGENS(C=10.0, weak_learner=weak_learner, n_candidates=300, max_iter=40, random_state=0)
    est.fit(X, y)
    assert est.n_iter_ == 40 and est.stop_reason_ == "max_iter"
    assert est.score(X, y) > 0.85
    assert len({lrn.theta.tobytes() for lrn in est.learners_}) == 40  # working set excluded
    assert np.all(np.isnan(est.trace_["gap"]))  # Claim 4.1 gap only with the exhaustive oracle


def test_default_tolerance_and_liblinear_mode():
    X, y = _toy(seed=7)
    C = 0.5
    est = CGENS(C=C, max_iter=500, solver_tol=1e-9).fit(X, y)
    eps = 1e-6 * C * X.shape[0]  # ε default = 1e-6·C·m
    assert est.stop_reason_ == "converged"
    assert est.final_score_ <= eps < est.trace_["score"][-1]
    same = CGENS(C=C, max_iter=500, solver_tol=1e-9, tol=eps).fit(X, y)
    assert same.n_iter_ == est.n_iter_
    lib = CGENS(C=C, bias_mode="liblinear", solver_tol=1e-10, solver_max_epochs=10**5, max_iter=30)
    lib.fit(X, y)
    assert set(lib.trace_["solver_stop_reason"]) == {"tol"}
    # bias as a regularised constant feature: the restricted optimum of ½(||w||²+b²) + C·Σξ
    H_W = lib._learner_matrix(X)
    ys = np.where(y == lib.classes_[1], 1.0, -1.0)
    w, b = cp.Variable(H_W.shape[1]), cp.Variable()
    obj = 0.5 * cp.sum_squares(w) + 0.5 * cp.square(b)
    obj = obj + C * cp.sum(cp.pos(1 - cp.multiply(ys, H_W @ w + b)))
    ref = cp.Problem(cp.Minimize(obj)).solve(solver="CLARABEL")
    assert lib.trace_["objective"][-1] == pytest.approx(ref, rel=1e-6)
    np.testing.assert_allclose(lib.coef_, lib.dual_coef_ @ (ys[:, None] * H_W), atol=1e-12)


def test_labels_and_staged_path():
    X, y = _toy(seed=9)
    labels = np.where(y > 0, "ring", "core")
    est = CGENS(C=1.0, max_iter=15).fit(X, labels)
    assert list(est.classes_) == ["core", "ring"]
    staged = list(est.staged_decision_function(X))
    assert len(staged) == est.n_iter_ == 15
    np.testing.assert_allclose(staged[-1], est.decision_function(X))
    errs = [np.mean(est.classes_[(d >= 0).astype(int)] != labels) for d in staged]
    np.testing.assert_allclose(errs, est.trace_["train_error"])
    with pytest.raises(ValueError, match="Only binary"):
        CGENS().fit(X, np.arange(X.shape[0]) % 3)


@pytest.mark.parametrize("bias_mode", ["exact", "liblinear"])
def test_inexact_inner_solves_end_at_the_full_solution(bias_mode):
    """Capped intermediate solves (inexact CG): the final model is still the full optimum."""
    X, y = _toy(seed=5)
    C = 1.0
    ys = np.where(y > 0, 1.0, -1.0)
    if bias_mode == "exact":  # converged: equals the SVM on the full stump matrix (cvxpy)
        est = CGENS(C=C, solver_inner_epochs=1, **TIGHT).fit(X, y)
        assert est.stop_reason_ == "converged"
        assert "max_epochs" in est.trace_["solver_stop_reason"]  # some solves really were inexact
        H_full, _ = StumpSpace(X, include_constant=False).full_matrix()
        ref, dec_ref = _full_svm(H_full, ys, C)
        assert est.final_objective_ == pytest.approx(ref, rel=1e-6)
        np.testing.assert_allclose(est.decision_function(X), dec_ref, atol=1e-5)
    else:  # stopped by max_iter: the final restricted problem is solved to the tolerance
        est = CGENS(
            C=C,
            bias_mode="liblinear",
            max_iter=25,
            solver_inner_epochs=2,
            solver_tol=1e-10,
            solver_max_epochs=10**5,
        ).fit(X, y)
        assert est.trace_["solver_stop_reason"].count("max_epochs") > 0
        H_W = est._learner_matrix(X)
        w, b = cp.Variable(H_W.shape[1]), cp.Variable()
        obj = 0.5 * cp.sum_squares(w) + 0.5 * cp.square(b)
        obj = obj + C * cp.sum(cp.pos(1 - cp.multiply(ys, H_W @ w + b)))
        ref = cp.Problem(cp.Minimize(obj)).solve(solver="CLARABEL")
        assert est.final_objective_ == pytest.approx(ref, rel=1e-6)
    np.testing.assert_array_equal(est.coef_, est.coef_path_[-1])
    staged = list(est.staged_decision_function(X))
    np.testing.assert_allclose(staged[-1], est.decision_function(X))


def test_feature_usage_counts_the_selected_stumps():
    X, y = _toy(seed=3, m=80, D=4)
    est = CGENS(C=1.0, max_iter=15).fit(X, y)
    expected = np.bincount([h.feature for h in est.learners_], minlength=4) / len(est.learners_)
    np.testing.assert_allclose(est.feature_usage_, expected)  # CGENS has no constant stump
    fourier = CGENS(C=1.0, max_iter=3, weak_learner="fourier", n_candidates=20, random_state=0)
    assert fourier.fit(X, y).feature_usage_ is None


def test_binned_stump_search_equals_the_exact_one_when_every_cut_fits():
    """max_bins ≥ the distinct values of every feature: the binned search has every cut, so the
    path (learners and coefficients) is the exact search's."""
    rng = np.random.default_rng(5)
    X = rng.integers(0, 6, size=(120, 4)).astype(float)  # 6 distinct values per feature
    y = np.where(X[:, 0] + X[:, 1] - 0.5 * X[:, 2] + rng.normal(0, 1.0, 120) > 4.5, 1, -1)
    kw = dict(C=1.0, max_iter=15, bias_mode="liblinear", random_state=0)
    exact, binned = CGENS(**kw).fit(X, y), CGENS(max_bins=8, **kw).fit(X, y)
    assert binned.learners_ == exact.learners_
    np.testing.assert_allclose(binned.coef_, exact.coef_, rtol=1e-12, atol=1e-12)


def test_binned_stump_search_picks_only_binned_thresholds():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(400, 3))
    y = np.where(np.sin(2 * X[:, 0]) + X[:, 1] > 0, 1, -1)
    est = CGENS(C=10.0, max_iter=30, max_bins=8, bias_mode="liblinear", random_state=0).fit(X, y)
    space = StumpSpace(X, include_constant=False, max_bins=8)
    allowed = set(zip(space.candidate_features.tolist(), space.candidate_thresholds.tolist()))
    assert est.n_iter_ > 5
    assert all((h.feature, h.threshold) in allowed for h in est.learners_)
    assert np.mean(est.predict(X) == y) > 0.85
    with pytest.raises(ValueError, match="stump"):
        CGENS(weak_learner="perceptron", max_bins=8).fit(X, y)


def _restricted_svm(H, y, C):
    """The SVM (1) at C over the columns H, by cvxpy (independent): its optimal value."""
    if H.shape[1] == 0:
        H = np.zeros((H.shape[0], 1))
    return _full_svm(H, y, C)[0]


def test_warm_path_first_value_is_the_cold_fit_cut_at_each_stage():
    """With full solves along the path (``path_inner_epochs=None``) the first value's fit is
    the cold fit, cut at each stage."""
    X, y = _toy(seed=4, m=80)
    stages = [3, 8, 20]
    fits = CGENS(path_inner_epochs=None, random_state=0).fit_warm_path(X, y, [0.5, 2.0], stages)
    for t in stages:
        cold = CGENS(C=0.5, max_iter=t, random_state=0).fit(X, y)
        snap = fits[0][t]
        assert snap.get_params()["C"] == 0.5 and snap.max_iter == t
        assert snap.model_size_ == cold.model_size_
        np.testing.assert_array_equal(snap.decision_function(X), cold.decision_function(X))
        np.testing.assert_array_equal(snap.predict(X), cold.predict(X))


def test_warm_path_inexact_intermediate_solves_give_restricted_optima_at_every_stage():
    """With the default capped intermediate solves (``path_inner_epochs=1``) every model the
    path returns, at every C and stage, is the optimum of (1) at its C over its own columns
    (cvxpy), and the first stage of the first C is the cold fit with the same cap."""
    X, y = _toy(seed=3, m=90)
    stages = [4, 12, 30]
    Cs = [0.1, 1.0, 10.0]
    est = CGENS(solver_tol=1e-9, solver_max_epochs=10**5, random_state=0)
    assert est.path_inner_epochs == 1
    fits = est.fit_warm_path(X, y, Cs, stages)
    capped = 0
    for C, by_stage in zip(Cs, fits):
        for t, snap in by_stage.items():
            capped += snap.trace_["solver_stop_reason"].count("max_epochs")
            ys = np.where(y == snap.classes_[1], 1.0, -1.0)
            H = snap._learner_matrix(X)
            assert H.shape[1] <= t
            ref = _restricted_svm(H, ys, C)
            assert snap.trace_["objective"][-1] == pytest.approx(ref, rel=1e-6, abs=1e-8)
            # the model's own objective, recomputed from its coefficients
            dec = H @ snap.coef_ + snap.intercept_
            obj = 0.5 * snap.coef_ @ snap.coef_ + C * np.maximum(0.0, 1.0 - ys * dec).sum()
            assert obj == pytest.approx(ref, rel=1e-6, abs=1e-8)
    assert capped > 0  # the intermediate solves were capped: the path is not the full one
    cold = CGENS(
        C=0.1, max_iter=stages[0], solver_inner_epochs=1, solver_tol=1e-9,
        solver_max_epochs=10**5, random_state=0,
    ).fit(X, y)  # fmt: skip
    np.testing.assert_array_equal(
        fits[0][stages[0]].decision_function(X), cold.decision_function(X)
    )


def test_warm_path_solves_are_the_restricted_optima_at_each_c():
    """Every model of the path at C > first is the optimum of (1) at C over its columns."""
    X, y = _toy(seed=5, m=70)
    fits = CGENS(solver_tol=1e-9, solver_max_epochs=10**5, random_state=0).fit_warm_path(
        X, y, [0.1, 1.0, 10.0], [4, 10, 25]
    )
    for C, by_stage in zip([1.0, 10.0], fits[1:]):
        for t, snap in by_stage.items():
            ys = np.where(y == snap.classes_[1], 1.0, -1.0)
            H = snap._learner_matrix(X)
            assert H.shape[1] <= t
            ref = _restricted_svm(H, ys, C)
            assert snap.trace_["objective"][-1] == pytest.approx(ref, rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("bias_mode", ["exact", "liblinear"])
def test_warm_path_converged_fits_equal_cold_fits(bias_mode):
    """Where column generation converges, the path's model at each C is the cold fit's (the
    optimum of (1) over the whole stump space, checked against cvxpy for the exact bias): the
    same decision values up to solver tolerance, the same labels."""
    X, y = _toy(seed=1, m=60)
    tight = dict(tol=1e-10, solver_tol=1e-11, solver_max_epochs=10**6, bias_mode=bias_mode)
    Cs = [0.1, 1.0, 10.0]
    fits = CGENS(**tight).fit_warm_path(X, y, Cs, [2000])
    Xt = np.random.default_rng(9).normal(size=(200, 3))
    for C, by_stage in zip(Cs, fits):
        warm = by_stage[2000]
        cold = CGENS(C=C, max_iter=2000, **tight).fit(X, y)
        full = {"converged", "exhausted"}  # no column violated, or every column in
        assert warm.stop_reason_ in full and cold.stop_reason_ in full
        assert warm.trace_["objective"][-1] == pytest.approx(cold.trace_["objective"][-1], rel=1e-7)
        np.testing.assert_allclose(warm.decision_function(X), cold.decision_function(X), atol=1e-5)
        if bias_mode == "exact":
            H_full, _ = StumpSpace(X, include_constant=False).full_matrix()
            ys = np.where(y == cold.classes_[1], 1.0, -1.0)
            ref, _ = _full_svm(H_full, ys, C)
            assert warm.trace_["objective"][-1] == pytest.approx(ref, rel=1e-6)
        # the test points' labels: equal where the decision is not within tolerance of 0
        dw, dc = warm.decision_function(Xt), cold.decision_function(Xt)
        clear = np.abs(dc) > 1e-4
        np.testing.assert_array_equal(np.sign(dw[clear]), np.sign(dc[clear]))


def test_warm_path_reuses_the_previous_columns_in_order():
    X, y = _toy(seed=2, m=80)
    fits = CGENS(random_state=0).fit_warm_path(X, y, [0.1, 1.0], [5, 15])
    first, second = fits[0][15], fits[1][15]
    assert second.learners_[: first.model_size_] == first.learners_
    assert fits[1][5].learners_ == first.learners_[:5]
    assert second.trace_["n_columns"][:2] == [5, 15]
    assert len(second.coef_path_) == second.n_iter_ == len(second.trace_["objective"])
    assert not hasattr(fits[1][5], "dual_coef_")  # α belongs to the whole fit
