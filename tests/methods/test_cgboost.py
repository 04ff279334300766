"""CG-Boost invariants: at TR2 the column-generation optimum equals the full problem solved
directly; Proposition 4.1's duality gap; stratified and regular CG reach the same optimum;
regression CG equals the full ε-insensitive QP; termination rules TR1/TR3/TR4; baselines."""

from __future__ import annotations

import numpy as np
import pytest

from kernbench.methods import CGBoost, CGBoostRegressor
from kernbench.solvers.masters import RowForm, solve_kernel_master_cvxpy
from kernbench.weak.kernel_columns import make_kernel

KERNELS = ("linear", "rbf")


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    X = rng.standard_normal((32, 3))
    y = np.where(X[:, 0] * X[:, 1] + 0.4 * X[:, 2] + 0.3 * rng.standard_normal(32) > 0, 1, 0)
    return X, y


def _full_matrix(X: np.ndarray, kernels=KERNELS) -> np.ndarray:
    return np.hstack([make_kernel(k, X)(X, X) for k in kernels])  # K = [K¹ … K^P]


def _pm(y: np.ndarray) -> np.ndarray:
    return np.where(y == 1, 1.0, -1.0)


@pytest.mark.parametrize(
    ("norm", "alpha_sign", "solver"),
    [
        ("l2", "free", "osqp"),
        ("l2", "nonneg", "osqp"),
        ("l2", "free", "svm"),
        ("l2", "free", "smo"),
        ("l1", "free", "highs"),
        ("l1", "nonneg", "highs"),
    ],
)
def test_tr2_equals_the_full_problem(data, norm, alpha_sign, solver) -> None:
    X, y = data
    est = CGBoost(
        C=1.0, kernels=KERNELS, norm=norm, alpha_sign=alpha_sign, solver=solver, solver_tol=1e-9
    ).fit(X, y)
    assert est.termination_rule_ == "TR2"
    full = solve_kernel_master_cvxpy(
        _full_matrix(X),
        RowForm.classification(_pm(y)),
        1.0,
        norm=norm,
        alpha_sign=alpha_sign,
        solver="CLARABEL" if norm == "l2" else "HIGHS",
    )
    assert est.final_objective_ == pytest.approx(full.primal, rel=1e-6)
    # the model predicts with the master's coefficients
    dec = est.decision_function(X)
    stages = list(est.staged_decision_function(X))
    np.testing.assert_allclose(dec, stages[-1], rtol=1e-9, atol=1e-9)


def test_auto_solver_picks_smo_for_the_free_alpha_free_bias_qps(data) -> None:
    X, y = data
    assert CGBoost(kernels=KERNELS, max_iter=3).fit(X, y).solver_ == "smo"
    assert CGBoost(kernels=KERNELS, max_iter=3, alpha_sign="nonneg").fit(X, y).solver_ == "osqp"
    assert CGBoost(kernels=KERNELS, max_iter=3, bias="regularized").fit(X, y).solver_ == "osqp"
    assert CGBoost(kernels=KERNELS, max_iter=3, norm="l1").fit(X, y).solver_ == "highs"
    reg = CGBoostRegressor(kernels=KERNELS, max_iter=3, norm="l2").fit(X, y.astype(float))
    assert reg.solver_ == "smo"
    assert CGBoostRegressor(kernels=KERNELS, max_iter=3).fit(X, y.astype(float)).solver_ == "highs"
    assert (
        CGBoostRegressor(kernels=KERNELS, max_iter=3, norm="l2", alpha_sign="nonneg")
        .fit(X, y.astype(float))
        .solver_
        == "osqp"
    )
    with pytest.raises(ValueError, match="QPs"):
        CGBoost(kernels=KERNELS, solver="smo", alpha_sign="nonneg").fit(X, y)
    with pytest.raises(ValueError, match="classification QP"):
        CGBoostRegressor(kernels=KERNELS, solver="svm").fit(X, y.astype(float))
    # the SMO and OSQP masters follow the same column path to the same restricted optima
    a = CGBoost(kernels=KERNELS, max_iter=12, solver="smo", solver_tol=1e-9).fit(X, y)
    b = CGBoost(kernels=KERNELS, max_iter=12, solver="osqp", solver_tol=1e-9).fit(X, y)
    assert [(lrn.group, lrn.index) for lrn in a.learners_] == [
        (lrn.group, lrn.index) for lrn in b.learners_
    ]
    np.testing.assert_allclose(a.trace_["objective"], b.trace_["objective"], rtol=1e-6)


def test_proposition_41_duality_gap(data) -> None:
    X, y = data
    est = CGBoost(C=1.0, kernels=KERNELS, max_iter=6, solver="cvxpy").fit(X, y)
    assert est.termination_rule_ == "TR4"
    K = _full_matrix(X)
    rows = RowForm.classification(_pm(y))
    u = est.dual_coef_
    s = K.T @ rows.weights(u)  # s_j = Σ_i u_i y_i K_ij over ALL columns
    in_W = np.zeros(K.shape[1], dtype=bool)
    for lrn in est.learners_:
        in_W[lrn.group * X.shape[0] + lrn.index] = True
    full_dual = u.sum() - 0.5 * s @ s  # dual of (11) at û (yᵀû = 0 holds: free b)
    gap = est.final_objective_ - full_dual
    assert gap == pytest.approx(0.5 * s[~in_W] @ s[~in_W], rel=1e-6)
    selected = [lrn.group * X.shape[0] + lrn.index for lrn in est.learners_]
    np.testing.assert_allclose(est.coef_, s[selected], atol=1e-6)  # KKT: α_j = s_j on 𝒲
    assert np.all(np.diff(est.trace_["objective"]) <= 1e-8)  # the restricted objective decreases


@pytest.mark.parametrize("norm", ["l2", "l1"])
def test_stratified_and_regular_cg_reach_the_same_optimum(data, norm) -> None:
    X, y = data
    kw = dict(C=1.0, kernels=("linear", "quadratic", "rbf"), norm=norm, solver_tol=1e-9)
    strat = CGBoost(stratified=True, **kw).fit(X, y)
    reg = CGBoost(stratified=False, **kw).fit(X, y)
    assert strat.termination_rule_ == reg.termination_rule_ == "TR2"
    assert strat.final_objective_ == pytest.approx(reg.final_objective_, rel=1e-6)
    # regular CG scans every column outside 𝒲 at every iteration
    m, P = X.shape[0], 3
    evals = np.asarray(reg.trace_["kernel_evals"])
    np.testing.assert_array_equal(evals, m * P - np.arange(evals.size))
    assert strat.kernel_evaluations_ < reg.kernel_evaluations_


def test_tr1_stops_when_no_error_point_column_is_violated(data) -> None:
    X, y = data
    est = CGBoost(C=10.0, kernels=KERNELS, termination="TR1").fit(X, y)
    assert est.termination_rule_ == "TR1"
    full = CGBoost(C=10.0, kernels=KERNELS).fit(X, y)
    assert est.n_iter_ < full.n_iter_
    assert est.final_objective_ >= full.final_objective_ - 1e-9


def test_tr3_keeps_the_best_validation_model(data) -> None:
    X, y = data
    est = CGBoost(
        C=10.0,
        kernels=KERNELS,
        termination="TR3",
        validation_fraction=0.3,
        patience=3,
        random_state=0,
    ).fit(X, y)
    val = np.asarray(est.trace_["validation_error"])
    assert np.isfinite(val).all()
    best = int(np.argmin(val))
    assert est.best_iteration_ == best + 1
    assert est.coef_.shape[0] == best + 1
    assert est.termination_rule_ in ("TR3", "TR2")
    with pytest.raises(ValueError, match="validation_fraction"):
        CGBoost(termination="TR3").fit(X, y)


def test_baselines_are_parameters(data) -> None:
    X, y = data
    comp = CGBoost(C=1.0, kernels=KERNELS, composite=True).fit(X, y)
    counts = comp.n_columns_per_kernel_
    assert counts["linear"] == counts["rbf"] == comp.coef_.shape[0]
    rbf = CGBoost(C=1.0, kernels=("rbf",)).fit(X, y)
    assert set(rbf.n_columns_per_kernel_) == {"rbf"}
    K = make_kernel("rbf", X)(X, X)
    full = solve_kernel_master_cvxpy(K, RowForm.classification(_pm(y)), 1.0)
    assert rbf.final_objective_ == pytest.approx(full.primal, rel=1e-6)
    reg_b = CGBoost(C=1.0, kernels=KERNELS, bias="regularized", max_iter=5).fit(X, y)
    assert reg_b.predict(X).shape == y.shape


def test_regression_cg_equals_the_full_epsilon_insensitive_qp() -> None:
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, (30, 2))
    centres = np.array([[0.5, 0.5], [-0.5, 0.5], [0.5, -0.5], [-0.5, -0.5]])
    f = X[:, 0] + 2 * X[:, 1] + np.exp(-((X[:, None] - centres) ** 2).sum(-1) / 0.1).sum(1)
    yv = f + 0.05 * rng.standard_normal(30)
    est = CGBoostRegressor(C=10.0, epsilon=0.05, kernels=KERNELS, norm="l2", solver_tol=1e-9).fit(
        X, yv
    )
    assert est.termination_rule_ == "TR2"
    full = solve_kernel_master_cvxpy(_full_matrix(X), RowForm.regression(yv, 0.05), 10.0)
    assert est.final_objective_ == pytest.approx(full.primal, rel=1e-6)
    pred = est.predict(X)
    assert np.sqrt(np.mean((pred - yv) ** 2)) == pytest.approx(est.trace_["train_error"][-1])
    assert not hasattr(est, "decision_function")


def test_default_regression_is_the_sparse_one_norm_lp_at_its_optimum() -> None:
    """The regressor's default penalty ‖α‖₁: CG to TR2 reaches the full LP's optimum (cvxpy)
    with a fraction of the columns."""
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, (30, 2))
    yv = X[:, 0] + 2 * X[:, 1] + np.sin(3 * X[:, 0]) + 0.05 * rng.standard_normal(30)
    est = CGBoostRegressor(C=10.0, epsilon=0.05, kernels=KERNELS).fit(X, yv)
    assert est.norm == "l1" and est.solver_ == "highs"
    assert est.termination_rule_ == "TR2"
    A = _full_matrix(X)
    full = solve_kernel_master_cvxpy(A, RowForm.regression(yv, 0.05), 10.0, norm="l1")
    assert est.final_objective_ == pytest.approx(full.primal, rel=1e-6)
    assert est.model_size_ < A.shape[1] // 2


def test_an_integer_validation_fraction_is_a_count_of_points():
    rng = np.random.default_rng(11)
    X = rng.standard_normal((100, 3))
    y = np.where(X[:, 0] + 0.5 * rng.standard_normal(100) > 0, 1, -1)
    kw = dict(kernels=["linear", "rbf"], norm="l1", max_iter=15, random_state=0)
    a = CGBoost(validation_fraction=30, **kw).fit(X, y)
    b = CGBoost(validation_fraction=0.3, **kw).fit(X, y)  # 30 of 100: the same split
    val = np.asarray(a.trace_["validation_error"])
    np.testing.assert_allclose(val * 30, np.round(val * 30), atol=1e-9)  # errors out of 30 points
    np.testing.assert_array_equal(val, b.trace_["validation_error"])
    with pytest.raises(ValueError):
        CGBoost(validation_fraction=1.5).fit(X, y)


def test_tr2_equals_the_full_problem_with_the_interior_point_master(data, monkeypatch) -> None:
    """The SMO master moved to the interior point in the columns' range from the first column
    (``ipm_face_steps=0``; in a fit it moves after a face-step-heavy solve): TR2 still equals
    the full problem, and the interior point did solve (rank ≤ 200 throughout at m = 32)."""
    from kernbench.solvers.masters import smo_qp

    created = []
    original = smo_qp.SMOKernelMaster.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **{**kwargs, "ipm_face_steps": 0})
        created.append(self)

    monkeypatch.setattr(smo_qp.SMOKernelMaster, "__init__", init)
    X, y = data
    est = CGBoost(C=1.0, kernels=KERNELS, solver="smo", solver_tol=1e-9).fit(X, y)
    assert est.termination_rule_ == "TR2"
    full = solve_kernel_master_cvxpy(_full_matrix(X), RowForm.classification(_pm(y)), 1.0)
    assert est.final_objective_ == pytest.approx(full.primal, rel=1e-6)
    assert created and created[0].n_ipm_solves == len(est.learners_)


def test_a_cap_on_the_last_column_is_the_full_problem(data) -> None:
    """max_iter equal to the number of candidates: the last column exhausts the space, so the
    fit is the full problem (stop "exhausted", TR2), not a capped one (TR4)."""
    X, y = data
    est = CGBoost(C=1.0, kernels=("linear",), max_iter=X.shape[0], solver_tol=1e-9).fit(X, y)
    assert len(est.learners_) == X.shape[0]
    assert est.stop_reason_ == "exhausted" and est.termination_rule_ == "TR2"
    capped = CGBoost(C=1.0, kernels=("linear",), max_iter=X.shape[0] - 1).fit(X, y)
    assert capped.stop_reason_ == "max_iter" and capped.termination_rule_ == "TR4"


@pytest.mark.parametrize("stratified", [True, False])
def test_tr2_bounds_the_full_duality_gap_relative_to_the_objective(stratified) -> None:
    """2-norm TR2 with ``tol=None``: when it stops, Prop. 4.1's gap ½·Σ_{j∉𝒲} s_j² over ALL
    columns is ≤ gap_tol·P, on kernels of norm ~10⁵ whose optimum is ~3e-5. An absolute
    threshold (the former default, 1e-6·max(1, C)) stops there with 3-8e-4·P left."""
    rng = np.random.default_rng(7)
    X = 10.0 * rng.standard_normal((40, 3))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] > 0, 1, 0)
    kernels = ("linear", "quadratic")
    K = _full_matrix(X, kernels)
    rows = RowForm.classification(_pm(y))
    full = solve_kernel_master_cvxpy(K, rows, 100.0)

    def gap(est: CGBoost) -> float:
        s = K.T @ rows.weights(est.dual_coef_)
        out = np.ones(K.shape[1], dtype=bool)
        out[[lrn.group * X.shape[0] + lrn.index for lrn in est.learners_]] = False
        return 0.5 * float(s[out] @ s[out])

    kw = dict(C=100.0, kernels=kernels, stratified=stratified, solver_tol=1e-9)
    est = CGBoost(**kw).fit(X, y)
    assert est.termination_rule_ == "TR2"
    assert gap(est) <= 1e-6 * est.final_objective_
    # to margin round-off: C·Σξ with ξ ~ 1e-12 per row is ~1e-8 of the objective's 3e-5
    assert est.final_objective_ == pytest.approx(full.primal, rel=1e-3)
    absolute = CGBoost(tol=1e-4, **kw).fit(X, y)
    assert absolute.termination_rule_ == "TR2" and gap(absolute) > 1e-4 * absolute.final_objective_


def test_default_cgboost_on_raw_features_of_magnitude_100_stops_at_the_precision_floor() -> None:
    """scikit-learn's check data (features ~ N(100, 1), random labels) under the default kernels:
    the quadratic columns' norm (~4e9) puts the master beyond double precision. The fit does not
    raise: it stops with termination_rule_ "precision_floor", counts the solve, keeps the last
    certified model, and two fits predict the same."""
    rng = np.random.RandomState(42)
    X = rng.normal(loc=100, size=(100, 2))
    y = rng.randint(0, 2, 100)
    est = CGBoost().fit(X, y)
    assert est.termination_rule_ == "precision_floor"
    assert est.master_fallbacks_.get("precision_floor") == 1
    assert est.trace_["solver_stop_reason"][-1].endswith("@floor")
    k = est.n_iter_ - 2  # the model is the one before the floor solve
    if k >= 0:
        np.testing.assert_array_equal(est.coef_, est.coef_path_[k])
    else:
        assert est.coef_.size == 0
    again = CGBoost().fit(X, y)
    np.testing.assert_array_equal(est.decision_function(X), again.decision_function(X))
    scaled = CGBoost(max_iter=20).fit((X - X.mean(0)) / X.std(0), y)  # scaled: certified
    assert scaled.master_fallbacks_ == {} and scaled.termination_rule_ != "precision_floor"
