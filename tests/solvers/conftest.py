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
