"""SVM-Stump / SVM-Perc / SVM-Gauss : kernels, kernel reuse, invariants
(docs/methods/infinite_ensembles.md)."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from scipy.linalg import null_space
from scipy.special import gammaln
from scipy.stats import spearmanr
from sklearn.datasets import load_iris, make_classification
from sklearn.svm import SVC

from kernbench.methods import SVMGauss, SVMPerc, SVMStump, get_method
from kernbench.weak.stumps import predict_stumps

ESTIMATORS = [SVMStump, SVMPerc, SVMGauss]


def data(seed: int = 0, m: int = 60, D: int = 4):
    X, y = make_classification(
        n_samples=m, n_features=D, n_informative=2, n_redundant=0, flip_y=0.1, random_state=seed
    )
    return X, y


def definition(cls: type, x: np.ndarray, z: np.ndarray, gamma: float, delta: float) -> float:
    """The kernel for one pair, written out elementwise."""
    diff = [float(a - b) for a, b in zip(x, z)]
    if cls is SVMStump:
        return delta - sum(abs(t) for t in diff)
    if cls is SVMPerc:
        return delta - sum(t * t for t in diff) ** 0.5
    return float(np.exp(-gamma * sum(t * t for t in diff))) + delta


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_gram_equals_definition(cls: type) -> None:
    rng = np.random.default_rng(0)
    X, Z = rng.normal(size=(7, 3)), rng.normal(size=(5, 3))
    params = {"delta": 0.7} | ({"gamma": 0.3} if cls is SVMGauss else {})
    est = cls(**params)
    K = est.gram_from_base(est.base_matrix(X, Z))
    expected = [[definition(cls, x, z, 0.3, 0.7) for z in Z] for x in X]
    np.testing.assert_allclose(K, expected, rtol=1e-13, atol=1e-13)
    assert set(cls.kernel_params) <= set(params)


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_kernel_reuse_path_equals_fresh_fit(cls: type) -> None:
    """Base matrix once over train ∪ test, sliced per fold and per C, as the runner does."""
    X, y = data(1, m=90)
    tr, te = np.arange(60), np.arange(60, 90)
    est = cls()
    B = est.base_matrix(X, X)
    for C in (0.01, 1.0, 100.0):
        est.set_params(C=C)
        K = est.gram_from_base(B)
        est.fit_gram(K[np.ix_(tr, tr)], y[tr])
        dec_reuse = est.decision_function_gram(K[np.ix_(te, tr)])
        fresh = cls(C=C).fit(X[tr], y[tr])
        np.testing.assert_allclose(dec_reuse, fresh.decision_function(X[te]), rtol=0, atol=1e-12)
        np.testing.assert_array_equal(est.predict_gram(K[np.ix_(te, tr)]), fresh.predict(X[te]))
        assert est.model_size_ == fresh.model_size_ == fresh.svc_.n_support_.sum()
    with pytest.raises(ValueError, match="fit_gram"):
        est.decision_function(X[te])


@pytest.mark.parametrize("cls", ESTIMATORS)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_direct_libsvm_path_is_bitwise_svc(cls: type, n_classes: int) -> None:
    """fit_gram / decision_function_gram call libsvm without SVC's input checks (the SVM-Gauss
    grid's 550 fits per cell): the support, the coefficients, the intercepts, the decision values
    and numpy's global random stream are bitwise those of SVC(kernel="precomputed") on the same
    Gram slices, from small to large C (bounded and free support vectors)."""
    X, y = make_classification(
        n_samples=120, n_features=5, n_informative=3, n_redundant=0, n_classes=n_classes,
        n_clusters_per_class=1, flip_y=0.1, random_state=n_classes,
    )  # fmt: skip
    y = np.array(["a", "b", "c"])[y]  # labels that are not 0..K-1
    tr, te = np.arange(90), np.arange(90, 120)
    for kernel in ({"gamma": 0.5}, {"gamma": 0.01}) if cls is SVMGauss else ({},):
        est = cls(**kernel)
        K = est.gram_from_base(est.base_matrix(X, X))
        for C in (2.0**-5, 1.0, 2.0**7, 2.0**15):
            est.set_params(C=C)
            np.random.seed(3)  # noqa: NPY002 (SVC draws from the legacy global stream)
            est.fit_gram(K[np.ix_(tr, tr)], y[tr])
            ours = est.decision_function_gram(K[np.ix_(te, tr)])
            after_ours = np.random.random()  # noqa: NPY002
            np.random.seed(3)  # noqa: NPY002 (SVC draws from the legacy global stream)
            ref = SVC(kernel="precomputed", C=C, tol=est.tol, cache_size=est.cache_size)
            ref.fit(K[np.ix_(tr, tr)], y[tr])
            assert np.random.random() == after_ours  # noqa: NPY002
            np.testing.assert_array_equal(est.classes_, ref.classes_)
            np.testing.assert_array_equal(est.support_, ref.support_)
            np.testing.assert_array_equal(est.svc_.n_support_, ref.n_support_)
            np.testing.assert_array_equal(est.dual_coef_, ref.dual_coef_)
            np.testing.assert_array_equal(est.intercept_, ref.intercept_)
            np.testing.assert_array_equal(ours, ref.decision_function(K[np.ix_(te, tr)]))
            if n_classes == 2:  # (more classes: ours is the argmax, SVC's predict votes)
                np.testing.assert_array_equal(
                    est.predict_gram(K[np.ix_(te, tr)]), ref.predict(K[np.ix_(te, tr)])
                )


def test_gram_path_checks_its_input() -> None:
    """The lean input checks still reject what SVC's did: NaN, wrong shapes, one class."""
    est = SVMGauss()
    K = np.eye(4)
    with pytest.raises(ValueError, match="NaN"):
        est.fit_gram(np.full((4, 4), np.nan), [0, 1, 0, 1])
    with pytest.raises(ValueError, match="does not match"):
        est.fit_gram(K[:, :3], [0, 1, 0, 1])
    with pytest.raises(ValueError, match="2 classes"):
        est.fit_gram(K, [1, 1, 1, 1])
    est.fit_gram(K, [0, 1, 0, 1])
    with pytest.raises(ValueError, match="columns"):
        est.decision_function_gram(np.ones((2, 3)))
    with pytest.raises(ValueError, match="infinity"):
        est.decision_function_gram(np.full((2, 4), np.inf))


def test_svm_gauss_equals_sklearn_rbf() -> None:
    X, y = data(2)
    ours = SVMGauss(C=3.0, gamma=0.2).fit(X, y)
    ref = SVC(C=3.0, kernel="rbf", gamma=0.2).fit(X, y)
    np.testing.assert_allclose(ours.decision_function(X), ref.decision_function(X), atol=1e-10)


def test_dual_solution_equals_cvxpy_qp() -> None:
    """SVM-Stump's λ solves (P2) with the PSD stump kernel Δ_S − ‖·‖₁ (an independent QP solve)."""
    X, y = data(3, m=40, D=3)
    C = 2.0
    est = SVMStump(C=C, tol=1e-10).fit(X, y)
    delta_s = 0.5 * np.sum(X.max(axis=0) - X.min(axis=0))  # Δ_S with [L_d, R_d] = data range
    K = delta_s - est.base_matrix(X, X)
    y_pm = 2.0 * y - 1
    lam = cp.Variable(len(y))
    Q = cp.psd_wrap(K * np.outer(y_pm, y_pm))
    problem = cp.Problem(
        cp.Minimize(0.5 * cp.quad_form(lam, Q) - cp.sum(lam)),  # (P2)
        [lam >= 0, lam <= C, y_pm @ lam == 0],
    )
    problem.solve(solver=cp.CLARABEL)
    ylam = np.zeros(len(y))
    ylam[est.support_] = est.dual_coef_[0]
    ours = 0.5 * ylam @ K @ ylam - np.abs(ylam).sum()
    assert ours == pytest.approx(problem.value, rel=1e-6)
    assert np.abs(ylam).max() <= C + 1e-12 and abs(ylam.sum()) < 1e-10
    # w is unique: the kernel expansions agree (−‖·‖₁ and Δ_S − ‖·‖₁ differ by Δ_S·yᵀλ = 0)
    np.testing.assert_allclose(K @ ylam, K @ (y_pm * lam.value), atol=1e-4)


@pytest.mark.parametrize("cls", [SVMStump, SVMPerc])
def test_delta_shift_invariance(cls: type) -> None:
    """Δ − ‖·‖ and −‖·‖ give the same decision values (Theorems 2 and 5)."""
    X, y = data(4, m=80)
    Xt, _ = data(5, m=30)
    delta_s = 0.5 * np.sum(X.max(axis=0) - X.min(axis=0))
    base = cls(C=1.0, tol=1e-10).fit(X, y).decision_function(Xt)
    for delta in (1.0, 10.0, delta_s):
        shifted = cls(C=1.0, tol=1e-10, delta=delta).fit(X, y).decision_function(Xt)
        np.testing.assert_allclose(shifted, base, rtol=0, atol=1e-6)


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_scaling_kernel_equals_scaling_c(cls: type) -> None:
    """(s·K, C) and (K, s·C) give the same decision values.

    The dual is strictly convex on the feasible set, so both runs converge to the same λ; they
    differ only through libsvm's kernel cache, which holds Q in single precision (``Qfloat``).
    """
    X, y = data(6, m=70)
    tr, te = np.arange(50), np.arange(50, 70)
    est = cls(tol=1e-10)
    K = est.gram_from_base(est.base_matrix(X, X))
    Ktr, Kte = K[np.ix_(tr, tr)], K[np.ix_(te, tr)]
    for s in (0.1, 7.0):
        a = cls(C=0.5, tol=1e-10).fit_gram(s * Ktr, y[tr]).decision_function_gram(s * Kte)
        b = cls(C=0.5 * s, tol=1e-10).fit_gram(Ktr, y[tr]).decision_function_gram(Kte)
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-5)


def test_monte_carlo_perceptron_ensemble_matches_perceptron_kernel() -> None:
    """mean h(x)h(x′) over 20,000 random perceptrons = 1 − c_D‖x − x′‖₂/R."""
    rng = np.random.default_rng(12)
    D = 3
    X = rng.uniform(-1, 1, size=(6, D))
    R = np.linalg.norm(X, axis=1).max()
    theta = rng.normal(size=(20_000, D))
    theta /= np.linalg.norm(theta, axis=1, keepdims=True)  # uniform on the sphere
    kappa = rng.uniform(-R, R, size=20_000)
    Hp = np.where(X @ theta.T - kappa >= 0, 1.0, -1.0)
    empirical = Hp @ Hp.T / theta.shape[0]
    c_D = np.exp(gammaln(D / 2) - gammaln((D + 1) / 2)) / np.sqrt(np.pi)  # E|θ₁|
    est = SVMPerc()
    K = est.gram_from_base(est.base_matrix(X, X))  # −‖x − x′‖₂
    np.testing.assert_allclose(empirical, 1 + c_D * K / R, atol=0.02)


def test_monte_carlo_stump_ensemble_matches_stump_kernel() -> None:
    """Stump analogue: d uniform, t ~ U[L_d, R_d] gives 1 − (2/D)Σ_d |x_d − x′_d|/(R_d − L_d)."""
    rng = np.random.default_rng(13)
    D, L, R = 4, -1.0, 1.0
    X = rng.uniform(L, R, size=(6, D))
    features = rng.integers(0, D, size=20_000)
    thresholds = rng.uniform(L, R, size=20_000)
    Hs = predict_stumps(X, features, thresholds, np.ones(20_000))
    empirical = Hs @ Hs.T / 20_000
    est = SVMStump()
    K = est.gram_from_base(est.base_matrix(X, X))  # −‖x − x′‖₁
    np.testing.assert_allclose(empirical, 1 + 2 * K / (D * (R - L)), atol=0.02)


@pytest.mark.parametrize("cls", [SVMPerc, SVMStump])
def test_distance_kernels_are_conditionally_pd_but_not_psd(cls: type) -> None:
    """on distinct points PᵀKP ≻ 0 with P spanning 1^⊥, while K itself is indefinite."""
    X = np.random.default_rng(14).normal(size=(25, 3))
    est = cls()
    K = est.gram_from_base(est.base_matrix(X, X))
    P = null_space(np.ones((1, X.shape[0])))
    assert np.linalg.eigvalsh(P.T @ K @ P).min() > 1e-8
    assert np.linalg.eigvalsh(K).min() < -1e-3


def test_svm_stump_ranks_like_a_finite_stump_ensemble() -> None:
    """A linear SVM on a dense uniform stump grid over [L, R] approximates SVM-Stump (Lin & Li
    Sec. IV): with r² = (R − L)/(2N), ⟨Φ(x), Φ(x′)⟩ → (R − L)/2 − |x − x′| as N grows."""
    rng = np.random.default_rng(15)
    L, R, N = 0.0, 1.0, 4000
    x = rng.uniform(L, R, size=40)
    y = (np.sin(6 * x) + 0.3 * rng.normal(size=40) > 0).astype(int)
    xt = np.linspace(x.min(), x.max(), 101)  # outside the data both functions are constant
    t = L + (np.arange(N) + 0.5) * (R - L) / N
    r = np.sqrt((R - L) / (2 * N))

    def phi(v: np.ndarray) -> np.ndarray:
        return r * np.where(v[:, None] - t[None, :] >= 0, 1.0, -1.0)

    for C in (0.1, 1.0):
        finite = SVC(C=C, kernel="linear", tol=1e-8).fit(phi(x), y).decision_function(phi(xt))
        infinite = SVMStump(C=C, tol=1e-8).fit(x[:, None], y).decision_function(xt[:, None])
        np.testing.assert_array_equal(np.sign(finite), np.sign(infinite))
        np.testing.assert_allclose(finite, infinite, atol=5e-3)
        if C == 0.1:  # at larger C the function has flat ±1 stretches between margin SVs,
            # where ranks are decided by rounding noise
            assert spearmanr(finite, infinite).statistic > 0.99


def test_binary_sign_convention_and_labels() -> None:
    X, y = data(7)
    labels = np.array(["neg", "pos"])[y]
    est = SVMPerc(C=1.0).fit(X, labels)
    dec = est.decision_function(X)
    assert dec.shape == (len(y),)
    np.testing.assert_array_equal(est.predict(X), np.where(dec >= 0, "pos", "neg"))
    assert np.mean(est.predict(X) == labels) > 0.8


def test_multiclass_through_libsvm_one_vs_one() -> None:
    X, y = load_iris(return_X_y=True)
    est = SVMStump(C=1.0).fit(X, y)
    dec = est.decision_function(X)
    assert dec.shape == (150, 3)
    np.testing.assert_array_equal(est.predict(X), np.argmax(dec, axis=1))
    assert np.mean(est.predict(X) == y) > 0.9


def test_registered_and_validated() -> None:
    assert get_method("svm_stump") is SVMStump
    assert get_method("svm_perc") is SVMPerc
    assert get_method("svm_gauss") is SVMGauss
    X, y = data(0)
    with pytest.raises(ValueError, match="C"):
        SVMStump(C=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="gamma"):
        SVMGauss(gamma=0.0).fit(X, y)
    with pytest.raises(ValueError, match="does not match"):
        SVMStump().fit_gram(np.zeros((3, 4)), [0, 1, 0])


_HUGE = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 1.0], [3.0, 3.0], [1e308, 1e308], [-1e308, 0.0]])
_HUGE_Y = np.array([0, 0, 1, 1, 1, 0])


@pytest.mark.parametrize("cls", [SVMStump, SVMPerc, SVMGauss])
def test_huge_finite_features_give_a_clear_error_never_inf(cls):
    """Features near the largest double: distances overflow; the error says so (issue 17)."""
    with pytest.raises(ValueError, match="feature values too large.*rescale the features"):
        cls().fit(_HUGE, _HUGE_Y)
    model = cls().fit(_HUGE[:4], _HUGE_Y[:4])  # fitted on ordinary values
    with pytest.raises(ValueError, match="feature values too large"):
        model.decision_function(_HUGE)


def test_overflowing_decision_sums_are_an_error_not_inf():
    """Finite distances whose weighted sum overflows: Σ y_i λ_i K(x_i, x) is checked."""
    model = SVMStump(C=10.0).fit(_HUGE[:4], _HUGE_Y[:4])
    coef = model.dual_coef_.ravel()
    assert np.abs(coef).sum() > 1.0  # so that the weighted sum below exceeds the largest double
    K = np.zeros((1, model.n_train_))
    K[0, model.support_] = -1.7e308 * np.sign(coef)  # every term pushes the same way
    with pytest.raises(ValueError, match="decision values .* overflow float64"):
        model.decision_function_gram(K)


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_the_threaded_base_matrix_is_bitwise_scipys(cls: type) -> None:
    from scipy.spatial.distance import cdist

    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(700, 9)), rng.normal(size=(300, 9))
    ref = cdist(X, Y, cls._metric)
    for n_jobs in (1, 2, 3):
        np.testing.assert_array_equal(cls(n_jobs=n_jobs).base_matrix(X, Y), ref)
