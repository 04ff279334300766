"""The readable reference RCD loop, kept as the specification of the fused
:func:`kernbench.solvers.rcd.rcd_loop` (tests compare the two bit for bit; ``bench_rcd.py`` times
them)."""

from __future__ import annotations

import numpy as np
from numba import njit

from kernbench.solvers.rcd import update_wgt, weighted_error


@njit(cache=True)
def reference_rcd_loop(
    Xa: np.ndarray, yw: np.ndarray, w0: np.ndarray, directions: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The readable reference loop: :func:`update_wgt` once per row of ``directions``.

    Same contract and, bit for bit, the same results as :func:`rcd_loop`, which is faster.
    """
    n_run = directions.shape[0]
    trace = np.empty(n_run + 1)
    w = w0.copy()
    for r in range(n_run):
        w, trace[r] = update_wgt(w, directions[r], Xa, yw)
    trace[n_run] = weighted_error(Xa @ w, yw)
    return w, trace
