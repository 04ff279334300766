"""Fixtures shared by test folders: a loopback Dask cluster and DRM's relaxed problem in cvxpy;
a guard that fails a test which leaves one of kernbench's threads running."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

import cvxpy as cp
import numpy as np
import pytest

#: seconds a kernbench thread left running by a test is given to end before the next test
THREAD_GRACE_S = 5.0


@pytest.fixture(autouse=True)
def no_kernbench_thread_left():
    """Fail a test that returns with a ``kernbench-*`` thread it started still running (the
    thread is then joined, a few seconds at most, so that it does not run into the next test).

    Each verb ends its own threads (early workers, progress lines, the death watch) before it
    returns. One left running goes on running library code beside the next tests of this
    pytest-xdist worker, among them hypothesis's, which parses module sources with ``ast``
    (collecting constants) as it generates examples. On CPython 3.11.0-3.11.7 two threads
    converting ASTs at once (``ast.parse``, ``ast.literal_eval``; joblib parses its
    ``pre_dispatch``) share a recursion-depth counter, and either may fail with "SystemError:
    AST constructor recursion depth mismatch" (gh-106905, fixed in 3.11.8 and 3.12). Refused
    specs' early-worker threads ran so beside the hypothesis tests of test_hostile_input.py,
    where that error was once seen. kernbench's persistent solver pool (threads
    ``kernbench_0``, ...) is not such a thread.
    """
    before = set(threading.enumerate())
    yield
    left = [t for t in threading.enumerate() if t not in before and t.name.startswith("kernbench-")]
    running = sorted(t.name for t in left if t.is_alive())
    deadline = time.monotonic() + THREAD_GRACE_S
    for thread in left:
        thread.join(max(0.0, deadline - time.monotonic()))
    if running:
        pytest.fail(f"the test returned with kernbench thread(s) running: {running}", pytrace=False)


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
