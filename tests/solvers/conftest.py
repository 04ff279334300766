"""Shared problems and references for the exponential-loss solvers (FCD, projected Newton)."""

import cvxpy as cp
import numpy as np
import pytest


def _exp_loss_problem(seed=0, m=50, K=3, J=12):
    """A small class-wise problem: ±1 columns correlated with the classes (so the optimum has
    w > 0 and w = 0 entries), one variable per column, column j in class j mod K."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, 3))
    y = np.argmax(X @ rng.normal(size=(3, K)) + 0.8 * rng.normal(size=(m, K)), axis=1)
    H = np.sign(X @ rng.normal(size=(3, J)) + 0.3 * rng.normal(size=(m, J)))
    H[H == 0] = 1.0
    return H, y, np.arange(J), np.arange(J) % K, K


def _exp_loss_cvxpy(H, y, C, vc, vk, K):
    """The restricted optimum by cvxpy's exponential cone (Clarabel, tight tolerances)."""
    m = H.shape[0]
    p = m * (K - 1)
    w = cp.Variable(vc.size, nonneg=True)
    F = [sum(w[v] * H[:, vc[v]] for v in range(vc.size) if vk[v] == c) for c in range(K)]
    terms = [F[c][i] - F[y[i]][i] for i in range(m) for c in range(K) if c != y[i]]
    prob = cp.Problem(cp.Minimize(cp.sum(w) + (C / p) * cp.sum(cp.exp(cp.hstack(terms)))))
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    return prob.value


@pytest.fixture
def exp_loss_problem():
    """Factory ``(seed, m, K, J) -> (H, y, var_col, var_class, K)``."""
    return _exp_loss_problem


@pytest.fixture
def exp_loss_cvxpy():
    """``(H, y, C, var_col, var_class, K) -> optimal value`` by cvxpy."""
    return _exp_loss_cvxpy


# -- the linear SVM problems shared by the SMO, dual CD, face-step and restricted-SVM tests ------
def _svm_problem(seed: int = 0, m: int = 70, J: int = 6):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, J))
    y = np.where(X[:, 0] + 0.8 * rng.normal(size=m) > 0.3, 1.0, -1.0)
    return X, y


def _sign_problem(seed: int = 11, m: int = 80, J: int = 12):
    """Stump-like ±1 columns (and a few zeros, as a perceptron on its hyperplane gives)."""
    X, y = _svm_problem(seed=seed, m=m, J=J)
    H = np.sign(X - 0.2)
    H[:3, 0] = 0.0
    return H, y


def _cvxpy_svm(X, y, C, bias_regularised):
    w, b = cp.Variable(X.shape[1]), cp.Variable()
    reg = 0.5 * cp.sum_squares(w) + (0.5 * cp.square(b) if bias_regularised else 0)
    hinge = cp.sum(cp.pos(1 - cp.multiply(y, X @ w + b)))
    prob = cp.Problem(cp.Minimize(reg + C * hinge))
    prob.solve(solver="CLARABEL")
    return prob.value, w.value, b.value


@pytest.fixture
def svm_problem():
    """``(seed=0, m=70, J=6) -> (X, y)``: Gaussian columns, labels from the first one."""
    return _svm_problem


@pytest.fixture
def sign_problem():
    """``(seed=11, m=80, J=12) -> (H, y)``: ±1 columns with a few zeros."""
    return _sign_problem


@pytest.fixture
def cvxpy_svm():
    """``(X, y, C, bias_regularised) -> (objective, w, b)``: the SVM primal by cvxpy."""
    return _cvxpy_svm
