"""The smallest ν at which a ν-machine has a non-trivial solution.

The ν-SVM (and DRM, whose learners are ν-SVMs) and the ν-form of LPBoost share one dual feasible
set: sample weights u with Σ_i u_i = 1 and 0 ≤ u_i ≤ 1/(νN). When some admissible u gives every
column (every feature of the linear model, every weak learner) a zero edge
Σ_i u_i y_i h(x_i) = 0, the optimal value is 0 and the zero function (w = 0, or an ensemble
summing to 0 everywhere) is an optimum: the machine predicts sign(0) for every point. The caps that
allow such a u are those c ≥ c*, the optimum of the LP

    min c  s.t.  Σ_i u_i y_i h_j(x_i) = 0 for every column j,  Σ_i u_i = 1,  0 ≤ u_i ≤ c,

so a ν gives a non-trivial machine exactly when ν > ν_min = 1/(c*·N) (ν_min = 0 when no u
cancels every edge, e.g. on separable data). :func:`raised_nu` moves a ν at or below ν_min into
(ν_min, ν_max]; :func:`usable_nu` is the ν a machine is fitted with, and :func:`only_trivial` says
when no ν up to ν_max gives a non-trivial machine (then the fit is the exact optimum that predicts
the larger class).

The columns are given explicitly (:func:`nu_floor_linear`: a linear model's features and bias;
:func:`nu_floor_duplicates`: a space that tells any two distinct points apart) or reached through
a pricing oracle (:func:`nu_floor_by_cuts`: stumps).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import sparse
from scipy.optimize import linprog

#: HiGHS algorithms tried in turn for the ν-floor LP
_LP_METHODS = ("highs", "highs-ds", "highs-ipm")
#: where a ν at or below ν_min is moved: this fraction of the way from ν_min to ν_max
RAISE_FRACTION = 0.1


def smallest_cancelling_cap(E: np.ndarray) -> tuple[float, np.ndarray | None]:
    """c* of the module docstring for the explicit edge rows E (K, N): row k holds y_i h_k(x_i).

    Returns
    -------
    c : float
        c* ∈ [1/N, 1], or ``inf`` when no weights cancel every row (the LP is infeasible).
    u : ndarray of shape (N,) or None
        Weights attaining it (None when infeasible).
    """
    K, N = E.shape
    A_eq = np.zeros((K + 1, N + 1))
    A_eq[:K, :N] = E
    A_eq[K, :N] = 1.0
    b_eq = np.zeros(K + 1)
    b_eq[K] = 1.0
    # u_i ≤ c, sparse: a dense N × N identity would not fit in memory on large training sets
    A_ub = sparse.hstack([sparse.eye(N, format="csr"), -np.ones((N, 1))], format="csr")
    cost = np.zeros(N + 1)
    cost[N] = 1.0
    messages = []
    for method in _LP_METHODS:  # HiGHS's default can stop with an unknown status on badly
        res = linprog(  # scaled rows; its other algorithms then usually finish
            cost,
            A_ub=A_ub,
            b_ub=np.zeros(N),
            A_eq=A_eq,
            b_eq=b_eq,
            bounds=[(0.0, None)] * (N + 1),
            method=method,
        )
        if res.status == 2:  # infeasible
            return float("inf"), None
        if res.status == 0:
            return float(res.x[N]), np.asarray(res.x[:N])
        messages.append(f"{method}: {res.message}")
    raise RuntimeError("the ν-floor LP failed: " + "; ".join(messages))


def nu_floor_linear(X: np.ndarray, y: np.ndarray) -> float:
    """ν_min of a linear ν-SVM with a bias on (X, y ∈ {±1}): the columns are the features and the
    bias's constant column (which splits u into ½ per class)."""
    E = np.vstack([(y[:, None] * X).T, y[None, :]])
    return _nu_from_cap(smallest_cancelling_cap(E)[0], X.shape[0])


def nu_floor_by_cuts(
    best_column: Callable[[np.ndarray], np.ndarray],
    y: np.ndarray,
    *,
    tol: float = 1e-9,
    max_cuts: int = 10000,
) -> float:
    """ν_min over a column space reached only through its pricing oracle (weak learners).

    Cutting planes: solve the LP over the columns met so far (starting with the constant column),
    ask the oracle for the column of largest edge under the LP's weights, add it, until no edge
    exceeds ``tol``. Every cut only raises c*, so the result is exact for an exhaustive oracle
    (stumps) once it stops.

    Parameters
    ----------
    best_column : callable
        g ↦ the training column h of the learner maximising Σ_i g_i h(x_i) over a negation-complete
        space.
    y : ndarray of shape (N,), labels ±1
    tol : float
        Largest edge (relative to Σ|u| = 1) counted as zero.
    max_cuts : int

    Returns
    -------
    float
        ν_min ∈ [0, 1].
    """
    N = y.size
    rows = [y.astype(np.float64)]
    for _ in range(max_cuts):
        c, u = smallest_cancelling_cap(np.vstack(rows))
        if u is None:
            return 0.0
        h = np.asarray(best_column(y * u), dtype=np.float64)
        if float((y * u) @ h) <= tol:
            return _nu_from_cap(c, N)
        rows.append(y * h)
    raise RuntimeError(f"the ν-floor cutting planes did not close in {max_cuts} cuts")


def nu_floor_duplicates(X: np.ndarray, y: np.ndarray) -> float:
    """ν_min over a weak-learner space that tells any two distinct training points apart and holds
    (near-)constant columns: random perceptrons sign(θᵀx − κ) (all directions, |κ| up to the
    largest norm) and random Fourier functions cos(θᵀx − κ).

    For such a space a u cancels every edge exactly when it cancels the edge of each group of
    identical points (perceptrons: along a direction that projects the distinct points apart,
    the thresholds between consecutive projections peel them off one by one; Fourier: the
    functions θ ↦ exp(iθᵀx) of distinct x are linearly independent), so the columns are the
    groups' indicators. Only a group holding both labels can carry weight: without one (no two
    identical points disagree) ν_min = 0.
    """
    _, group = np.unique(np.asarray(X, dtype=np.float64), axis=0, return_inverse=True)
    group = group.ravel()
    G = int(group.max()) + 1
    mixed = (np.bincount(group, weights=(y > 0), minlength=G) > 0) & (
        np.bincount(group, weights=(y < 0), minlength=G) > 0
    )
    if not mixed.any():
        return 0.0
    E = np.zeros((G, y.size))
    E[group, np.arange(y.size)] = y
    return _nu_from_cap(smallest_cancelling_cap(E)[0], y.size)


def raised_nu(nu: float, nu_min: float, nu_max: float) -> float:
    """ν itself when ν > ν_min; else ν_min + :data:`RAISE_FRACTION`·(ν_max − ν_min)."""
    if nu > nu_min * (1.0 + 1e-9):
        return float(nu)
    return float(nu_min + RAISE_FRACTION * (nu_max - nu_min))


def usable_nu(nu: float, nu_min: float, nu_max: float) -> float:
    """The ν a ν-machine is fitted with: ν lowered to ν_max, then :func:`raised_nu` (ν_max when
    ν_min reaches it, see :func:`only_trivial`)."""
    if only_trivial(nu_min, nu_max):
        return float(nu_max)
    return raised_nu(min(float(nu), nu_max), nu_min, nu_max)


def only_trivial(nu_min: float, nu_max: float) -> bool:
    """Whether no ν in (0, ν_max] gives a non-trivial machine (ν_min = ν_max up to rounding)."""
    return nu_min >= nu_max * (1.0 - 1e-9)


def _nu_from_cap(c: float, N: int) -> float:
    return 0.0 if not np.isfinite(c) else float(min(1.0, 1.0 / (c * N)))
