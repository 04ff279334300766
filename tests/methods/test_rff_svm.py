"""RFF + linear SVM: the kernel approximation, parameterisations, and the SVM."""

import numpy as np
import pytest
from sklearn.datasets import load_iris, make_circles
from sklearn.svm import LinearSVC

from kernbench.methods.rff_svm import RFFSVM, fourier_features, sample_fourier_map


def test_features_approximate_the_gaussian_kernel_on_50_pairs():
    rng = np.random.default_rng(0)
    D, sigma = 5, 1.5
    X = rng.normal(size=(50, D))
    Xp = X + rng.normal(scale=sigma, size=(50, D))  # pairs spanning near and far distances
    omega, beta = sample_fourier_map(D, 20000, sigma, rng)
    approx = np.sum(fourier_features(X, omega, beta) * fourier_features(Xp, omega, beta), axis=1)
    exact = np.exp(-np.sum((X - Xp) ** 2, axis=1) / (2 * sigma**2))
    assert np.max(np.abs(approx - exact)) < 0.05
    assert np.ptp(exact) > 0.5  # the pairs span near and far distances


def test_feature_map_moments():
    rng = np.random.default_rng(1)
    omega, beta = sample_fourier_map(3, 200000, 2.0, rng)
    assert np.std(omega) == pytest.approx(0.5, rel=0.01)  # Ω ~ N(0, σ⁻²)
    assert beta.min() >= 0 and beta.max() <= 2 * np.pi
    z = fourier_features(np.zeros((1, 3)), omega, beta)
    assert np.sum(z * z) == pytest.approx(1.0, abs=0.01)  # k(x, x) = 1


def test_gamma_overrides_sigma_with_the_same_features():
    X, y = load_iris(return_X_y=True)
    a = RFFSVM(n_components=50, sigma=0.5, random_state=0).fit(X, y)
    b = RFFSVM(n_components=50, sigma=99.0, gamma=2.0, random_state=0).fit(X, y)  # 1/(2σ²) = 2
    np.testing.assert_allclose(a.omega_, b.omega_)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X))


def test_model_is_a_liblinear_svm_on_the_features():
    X, y = load_iris(return_X_y=True)
    est = RFFSVM(n_components=100, sigma=1.0, C=10.0, random_state=2).fit(X, y)
    Z = fourier_features(X, est.omega_, est.phase_)
    ref = LinearSVC(C=10.0, loss="hinge", dual=True, tol=1e-4, max_iter=10000)
    ref.fit(Z, y)
    # one-vs-rest hinge-loss SVMs are strictly convex in w: any solver reaches the same w
    np.testing.assert_allclose(est.coef_, ref.coef_, atol=2e-2 * np.abs(ref.coef_).max())
    assert est.decision_function(X).shape == (150, 3)
    assert np.mean(est.predict(X) != y) < 0.05
    assert est.model_size_ == 100


def test_binary_nonlinear_problem():
    X, y = make_circles(n_samples=300, noise=0.05, factor=0.5, random_state=0)
    labels = np.array(["out", "in"])[y]
    est = RFFSVM(n_components=300, sigma=0.5, C=10.0, random_state=0).fit(X, labels)
    dec = est.decision_function(X)
    assert dec.shape == (300,)
    np.testing.assert_array_equal(est.predict(X), est.classes_[(dec >= 0).astype(int)])
    assert np.mean(est.predict(X) != labels) < 0.05
    linear = LinearSVC(C=10.0).fit(X, labels)  # the raw features are not linearly separable
    assert np.mean(linear.predict(X) != labels) > 0.3


def test_huge_finite_features_give_a_clear_error_that_does_not_blame_nan():
    """x = 1e308 makes Ωᵀx overflow and cos NaN; the error names the cause (issue 17)."""
    X = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 1.0], [3.0, 3.0], [1e308, 0.0]])
    y = np.array([0, 0, 1, 1, 1])
    with pytest.raises(ValueError, match="feature values too large") as info:
        RFFSVM(n_components=50, random_state=0).fit(X, y)
    assert "NaN" not in str(info.value) and "LinearSVC" not in str(info.value)
    model = RFFSVM(n_components=50, random_state=0).fit(X[:4], y[:4])
    with pytest.raises(ValueError, match="feature values too large"):
        model.decision_function(X)  # used to return NaN silently
