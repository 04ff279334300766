"""Fixtures shared by test folders: a loopback Dask cluster and DRM's relaxed problem in cvxpy."""

from __future__ import annotations

import logging
from collections.abc import Callable

import cvxpy as cp
import numpy as np
import pytest


@pytest.fixture(scope="module")
def cluster():
    """Two single-thread worker processes on 127.0.0.1 (skipped without the dask extra)."""
    pytest.importorskip("distributed")
    from dask.distributed import LocalCluster

    with LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        silence_logs=logging.ERROR,
    ) as c:
        yield c


def _drm_relaxed_value(X: np.ndarray, y: np.ndarray, T: int, nu: float, mu: float) -> float:
    """The optimal value of DRM's relaxed problem with T learners (y in {±1}), by cvxpy."""
    N, M = X.shape
    W, b, rho = cp.Variable((T, M)), cp.Variable(T), cp.Variable(T)
    margins = cp.multiply(np.tile(y[:, None], (1, T)), X @ W.T + np.ones((N, 1)) @ b[None, :])
    loss = cp.sum(cp.pos(np.ones((N, 1)) @ rho[None, :] - margins)) / (nu * N)
    pairs = sum(0.5 * cp.sum_squares(W[t] + W[u]) for t in range(T) for u in range(t + 1, T))
    prob = cp.Problem(
        cp.Minimize(-cp.sum(rho) + loss + mu * pairs), [cp.norm(W[t]) <= 1 for t in range(T)]
    )
    prob.solve(solver="CLARABEL")
    return prob.value


@pytest.fixture
def drm_relaxed_value() -> Callable[[np.ndarray, np.ndarray, int, float, float], float]:
    """``(X, y, T, nu, mu) -> optimal value`` of DRM's relaxed problem (the independent check)."""
    return _drm_relaxed_value
