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

The columns are given explicitly (:func:`nu_floor_linear`: a linear model's features and bias),
as groups of points whose signed weights must each cancel (:func:`nu_floor_groups`: decision
stumps, one labelling per feature; :func:`nu_floor_duplicates`: a space that tells any two
distinct points apart), or only through a pricing oracle (:func:`nu_floor_by_cuts`).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import numpy as np
from scipy import sparse
from scipy.optimize import OptimizeResult, linprog

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
    res = _solved(
        cost,
        A_ub=A_ub,
        b_ub=np.zeros(N),
        A_eq=A_eq,
        b_eq=b_eq,
        bounds=[(0.0, None)] * (N + 1),
    )
    if res.status == 2:  # infeasible
        return float("inf"), None
    return float(res.x[N]), np.asarray(res.x[:N])


def largest_cancelling_mass(E: np.ndarray | sparse.sparray) -> float:
    """max 1ᵀv over 0 ≤ v ≤ 1 with E v = 0, for edge rows E (K, N), dense or sparse: the LP of
    the module docstring in the variables v = u/c, whose optimum is 1/c* (0 when only v = 0
    cancels every row, c* = ∞). Bounds and K equality rows only, which HiGHS solves several times
    faster than the form with the cap c when K is large."""
    K, N = E.shape
    res = _solved(-np.ones(N), A_eq=E, b_eq=np.zeros(K), bounds=(0.0, 1.0))
    mass = -float(res.fun)
    return mass if mass > 0.0 else 0.0  # no −0.0


def _solved(cost: np.ndarray, **problem) -> OptimizeResult:
    """``linprog`` by HiGHS, optimal or infeasible: HiGHS's default can stop with an unknown
    status on badly scaled rows, and its other algorithms then usually finish."""
    messages = []
    for method in _LP_METHODS:
        res = linprog(cost, method=method, **problem)
        if res.status in (0, 2):  # optimal, infeasible
            return res
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


def nu_floor_groups(groups: Sequence[np.ndarray], y: np.ndarray) -> float:
    """ν_min over a column space whose edges all vanish exactly when, for every labelling in
    ``groups``, the signed weights Σ_i u_i y_i of each group of equally labelled points vanish.

    Decision stumps with the constant column: one labelling per feature, the points between two
    consecutive cuts of that feature (:meth:`kernbench.weak.stumps.StumpSpace.feature_groups`).
    The edge of the cut after the k-th group is the constant's edge minus twice the first k
    groups' sum, so every stump's edge vanishes exactly when every group's sum does (one LP over
    the group rows, no cutting planes). Spaces that tell any two distinct points apart:
    :func:`nu_floor_duplicates`.

    A group holding one label only forces its points' weights to 0 (non-negative weights of one
    sign that sum to 0), and so may make other groups single-labelled in turn: those points are
    dropped before the LP, which keeps it small (every point of a feature with distinct values is
    dropped; with no point left, ν_min = 0).

    Parameters
    ----------
    groups : sequence of ndarray of shape (N,), integer labels ≥ 0
    y : ndarray of shape (N,), labels ±1

    Returns
    -------
    float
        ν_min ∈ [0, 1].
    """
    N = y.size
    pos, neg = y > 0, y < 0
    free = np.ones(N, dtype=bool)
    changed = True
    while changed:  # drop the points of single-labelled groups until none is left
        changed = False
        for g in groups:
            n = int(g.max()) + 1
            mixed = (np.bincount(g, weights=free & pos, minlength=n) > 0) & (
                np.bincount(g, weights=free & neg, minlength=n) > 0
            )
            keep = free & mixed[g]
            if not np.array_equal(keep, free):
                free, changed = keep, True
    if not free.any():
        return 0.0
    idx = np.flatnonzero(free)
    columns = []  # each free point's group in each labelling, numbered 0.. across all of them
    for g in groups:
        _, code = np.unique(g[idx], return_inverse=True)
        columns.append(code.ravel() + (columns[-1].max() + 1 if columns else 0))
    codes = np.stack(columns, axis=1)  # (n_free, n_labellings)
    n_free, L = codes.shape
    # the one-hot group matrix of the free points: row i has a 1 in each of its groups' columns
    onehot = sparse.csr_matrix(
        (np.ones(codes.size), codes.ravel().astype(np.int32), np.arange(0, codes.size + 1, L)),
        shape=(n_free, int(codes.max()) + 1),
    )
    if _additively_separable(onehot, y[idx]):
        return 0.0
    E = sparse.csr_array(onehot.T.multiply(y[idx][None, :]))  # Σ_{i in the group} v_i y_i = 0
    return float(min(1.0, largest_cancelling_mass(E) / N))  # ν_min = 1/(c*·N); dropped: v = 0


def _additively_separable(onehot: sparse.csr_matrix, y: np.ndarray) -> bool:
    """Whether a linear SVM on the one-hot groups (a function F = Σ of one value per group)
    separates every point strictly, y_i F(x_i) > 0: then (Gordan's alternative) only v = 0
    cancels every group row and ν_min = 0, without the LP. A quick test, not a decision: when it
    fails the LP decides. Separable data with many groups (fine bins, many features) pass it in
    milliseconds where the LP takes seconds."""
    from sklearn.svm import LinearSVC

    with warnings.catch_warnings():  # not converging only means no certificate
        warnings.simplefilter("ignore")
        svm = LinearSVC(C=1e3, loss="hinge", max_iter=1000, random_state=0).fit(onehot, y)
    return bool(np.min(y * svm.decision_function(onehot)) > 0.0)


def nu_floor_duplicates(X: np.ndarray, y: np.ndarray) -> float:
    """ν_min over a weak-learner space that tells any two distinct training points apart and holds
    (near-)constant columns: random perceptrons sign(θᵀx − κ) (all directions, |κ| up to the
    largest norm) and random Fourier functions cos(θᵀx − κ).

    For such a space a u cancels every edge exactly when it cancels the edge of each group of
    identical points (perceptrons: along a direction that projects the distinct points apart,
    the thresholds between consecutive projections peel them off one by one; Fourier: the
    functions θ ↦ exp(iθᵀx) of distinct x are linearly independent): :func:`nu_floor_groups`
    with the one labelling by identical rows. Without two identical points that disagree,
    ν_min = 0.
    """
    _, same = np.unique(np.asarray(X, dtype=np.float64), axis=0, return_inverse=True)
    return nu_floor_groups([same.ravel()], y)


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
