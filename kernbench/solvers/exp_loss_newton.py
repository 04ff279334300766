"""Projected Newton for the exponential-loss restricted problem of MultiBoost and MultiBoost_cw.

The problem (docs/methods/multiboost.md), with variable v weighting learner column ``col(v)`` in
class ``class(v)`` (MultiBoost_cw: one variable per learner; MultiBoost: K per shared column):

    min_{w ≥ 0}  f(w) = Σ_v w_v + L(w),   L(w) = (C/p) Σ_i Σ_{y≠y_i} exp(F_iy − F_{i,y_i}),

F_ic = Σ_{v: class c} w_v h_col(v)(x_i), p = m(K − 1). Coordinate descent (FCD) and L-BFGS-B
need hundreds to thousands of passes to reach a tight optimum because stump columns are strongly
correlated; a Newton method with the exact Hessian needs a handful of iterations.

**Hessian.** Per training point, L's Hessian with respect to the scores F_i is the K × K matrix
G_i with G_i[c, c] = |u^c_i| (the pricing weight: Σ_{y≠y_i} λ_iy on the true class, λ_ic
elsewhere), G_i[y_i, c] = G_i[c, y_i] = −λ_ic for c ≠ y_i, and 0 between two wrong classes. So the
Hessian block of the variables of classes c and c′ is

    ∇²L[c, c]  = X_cᵀ diag(|u^c|) X_c,
    ∇²L[c, c′] = −(X_cᵀ diag(λ_{·c′}) X_c′ over the rows of class c
                  + X_cᵀ diag(λ_{·c}) X_c′ over the rows of class c′),

with X_c the columns of the class-c variables: about 3·m·n²/K operations for n variables once
rows are sorted by class (only rows of classes c and c′ enter an off-diagonal block).

**Iteration.** Variables at zero with a non-negative gradient are held at zero for the iteration
(they are where the optimum wants them; the next iteration's gradient lets them back in). On the
others the quadratic model g·d + ½ dᵀ∇²L d is minimised subject to w + d ≥ 0, exactly: a few
coordinate-descent passes guess the bound set, then a primal active-set loop (Cholesky solve on
the free variables; a ratio test stops at the first bound crossed, which joins the bound set;
bound variables whose model gradient is negative are freed). The step w + a·d (a = 1, ½, …, with
Armijo's condition) stays feasible because w and w + d are. Stop when the KKT residual (the
projected gradient's ∞-norm) is ≤ ``tol``.

**Shared learners (MultiBoost).** Adding δ to all K coefficients of one learner leaves every score
difference, hence L, unchanged, and raises Σ w by Kδ: along that direction the Hessian is singular
and f is linear. Subtracting each learner's smallest coefficient from its K coefficients is an
exact descent step, taken before every Newton iteration; afterwards each learner has a zero
coefficient, which the bound set holds, and the Hessian on the free variables is regular (a tiny
ridge, 1e-10 of its mean diagonal, covers exactly collinear columns).
"""

from __future__ import annotations

import numba
import numpy as np
import scipy.linalg as sla

from kernbench.solvers.multiclass_exp_loss import (
    ClasswiseEvaluator,
    RestrictedSolve,
    kkt_residual,
    pricing_weights,
)

#: Armijo's sufficient-decrease constant and the smallest step tried before giving up
_ARMIJO = 1e-4
_MIN_STEP = 1e-10
#: ridge added to the Hessian's diagonal, relative to its mean
_RIDGE = 1e-10
#: changes of f below this (relative) are round-off: there the residual decides a step
_FLAT = 1e-13
#: consecutive such steps that do not halve the residual before giving up ("precision")
_SLOW_STEPS = 5


def classwise_hessian(
    X: np.ndarray, var_class: np.ndarray, lam: np.ndarray, y: np.ndarray, K: int
) -> np.ndarray:
    """The Hessian of the loss term L with respect to the variables whose columns are X.

    Parameters
    ----------
    X : ndarray of shape (m, n)
        Column of each variable on the training set.
    var_class : ndarray of int, shape (n,)
        Class of each variable.
    lam : ndarray of shape (m, K)
        λ of (5) at the current point (0 on the true class).
    y : ndarray of int, shape (m,)
        True class indices.
    K : int

    Returns
    -------
    ndarray of shape (n, n)
    """
    if np.all(np.diff(y) >= 0) and np.all(np.diff(var_class) >= 0):
        return _hessian_sorted(X, var_class, lam, y, K)
    order = np.argsort(y, kind="stable")
    perm = np.argsort(var_class, kind="stable")
    Qp = _hessian_sorted(np.take(X[order], perm, axis=1), var_class[perm], lam[order], y[order], K)
    inv = np.empty_like(perm)
    inv[perm] = np.arange(perm.size)
    return np.take(Qp[inv], inv, axis=1)


def _hessian_sorted(
    X: np.ndarray, var_class: np.ndarray, lam: np.ndarray, y: np.ndarray, K: int
) -> np.ndarray:
    """:func:`classwise_hessian` with rows sorted by class and variables grouped by class: every
    block is a product of slices (a fancy-indexed gather and scatter per block, K(K+1)/2 of them,
    cost as much as the products at Table III's sizes)."""
    rb = np.searchsorted(y, np.arange(K + 1))
    vb = np.searchsorted(var_class, np.arange(K + 1))
    absU = np.abs(pricing_weights(lam, y))
    n = X.shape[1]
    out = np.empty((n, n))
    for c in range(K):
        vc = slice(vb[c], vb[c + 1])
        A = X[:, vc]
        out[vc, vc] = A.T @ (absU[:, c, None] * A)  # diag(|u^c|)
        rc = slice(rb[c], rb[c + 1])
        for d in range(c + 1, K):
            vd = slice(vb[d], vb[d + 1])
            B = X[:, vd]
            rd = slice(rb[d], rb[d + 1])
            blk = -(A[rc].T @ (lam[rc, d, None] * B[rc]) + A[rd].T @ (lam[rd, c, None] * B[rd]))
            out[vc, vd] = blk
            out[vd, vc] = blk.T
    return out


@numba.njit(cache=True)
def _qp_cd(Q, g, w, d, passes, tol):  # pragma: no cover - numba
    """Coordinate descent on g·d + ½ dᵀQd s.t. w + d ≥ 0 (d updated in place); returns the
    largest KKT violation seen in the last pass."""
    n = g.size
    Qd = Q @ d
    worst = 0.0
    for _ in range(passes):
        worst = 0.0
        for j in range(n):
            gj = g[j] + Qd[j]
            v = abs(gj) if w[j] + d[j] > 0.0 else max(0.0, -gj)
            worst = max(worst, v)
            if Q[j, j] <= 0.0:
                continue
            dn = max(-w[j], d[j] - gj / Q[j, j])
            delta = dn - d[j]
            if delta != 0.0:
                d[j] = dn
                for k in range(n):
                    Qd[k] += delta * Q[j, k]
        if worst <= tol:
            break
    return worst


def _model(Q: np.ndarray, g: np.ndarray, d: np.ndarray) -> float:
    """The quadratic model g·d + ½ dᵀQd."""
    return float(g @ d + 0.5 * d @ (Q @ d))


def _qp_active_set(
    Q: np.ndarray, g: np.ndarray, w: np.ndarray, tol: float, max_rounds: int = 500
) -> np.ndarray:
    """min_d g·d + ½ dᵀQd s.t. w + d ≥ 0 (Q positive definite), to a KKT residual ≤ tol.

    Every round does not increase the model (a Cholesky step to the free-subspace minimiser, cut
    at the first bound it crosses), so stopping at ``max_rounds`` still returns a descent
    direction.
    """
    d = np.zeros_like(g)
    _qp_cd(Q, g, w, d, 30, tol)  # a first guess of the bound set
    qg = g + Q @ d
    free = (w + d > 0) | (qg < 0)
    for _ in range(max_rounds):
        bound = ~free
        d[bound] = -w[bound]
        fi = np.flatnonzero(free)
        if fi.size:
            Qf = Q[fi]  # the free rows; 1-D gathers (np.ix_'s 2-D one is several times slower)
            rhs = -(g[fi] + Qf[:, bound] @ d[bound])
            target = sla.cho_solve(
                sla.cho_factor(np.take(Qf, fi, axis=1), check_finite=False), rhs, check_finite=False
            )
            step = target - d[fi]
            x = w[fi] + d[fi]
            stuck = (x <= 0) & (step < 0)  # at the bound and pushed further out: hold it
            if stuck.any():
                free[fi[stuck]] = False
                continue
            clipped = target < -w[fi]
            if clipped.any():  # projecting the target often fixes many bounds at once
                trial = d.copy()
                trial[fi] = np.maximum(target, -w[fi])
                if _model(Q, g, trial) < _model(Q, g, d):
                    d = trial
                    free[fi[clipped]] = False
                    continue
            neg = step < 0
            ratio = np.full(fi.size, np.inf)
            ratio[neg] = x[neg] / -step[neg]
            k = int(np.argmin(ratio))
            beta = min(1.0, float(ratio[k]))
            d[fi] += beta * step
            if beta < 1.0:  # a bound was crossed: that variable joins the bound set
                d[fi[k]] = -w[fi[k]]
                free[fi[k]] = False
                continue
        qg = g + Q @ d
        enter = (w + d <= 0) & (qg < -tol)  # bound variables the model wants to raise
        if not enter.any():
            break
        free |= enter
    return d


def _valley_shift(E: ClasswiseEvaluator, w: np.ndarray) -> np.ndarray:
    """MultiBoost: subtract each learner's smallest coefficient from its K coefficients (L is
    unchanged, Σ w falls by K times that minimum)."""
    lowest = np.full(E.H.shape[1], np.inf)
    np.minimum.at(lowest, E.var_col, w)
    return np.maximum(w - lowest[E.var_col], 0.0)


def solve_classwise_newton(
    H: np.ndarray,
    y_index: np.ndarray,
    C: float,
    w0: np.ndarray,
    var_col: np.ndarray,
    var_class: np.ndarray,
    K: int,
    *,
    tol: float = 1e-6,
    maxiter: int = 100,
) -> RestrictedSolve:
    """Solve the restricted problem by projected Newton, warm-started at w0.

    Parameters
    ----------
    H : ndarray of shape (m, J)
        Learner columns on the training set.
    y_index : ndarray of int, shape (m,)
        True class indices 0..K−1.
    C : float
        Regularisation parameter.
    w0 : ndarray of shape (n_vars,)
        Warm start (negative entries are set to 0).
    var_col, var_class : ndarray of int, shape (n_vars,)
        Column of H and class of every variable.
    K : int
        Number of classes.
    tol : float
        Stop when the KKT residual (projected gradient, ∞-norm) is ≤ tol.
    maxiter : int
        Newton iterations at most.

    Returns
    -------
    RestrictedSolve
        ``W`` holds w (n_vars,); ``stop_reason`` is "converged", "maxiter" or "precision" (no
        step lowers f, nor, where f is flat to round-off (1e-13 relative), the KKT residual: the
        residual is at its floating-point floor, which grows with C).
    """
    # f is blind to the order of the rows and of the variables: solve with both sorted by class,
    # so that classwise_hessian takes its sorted path (every block a slice), and undo at the end
    y_index = np.asarray(y_index, dtype=np.int64)
    var_class = np.asarray(var_class, dtype=np.int64)
    rows = np.argsort(y_index, kind="stable")
    perm = np.argsort(var_class, kind="stable")
    H = np.asarray(H, dtype=np.float64)[rows]
    E = ClasswiseEvaluator(H, y_index[rows], C, np.asarray(var_col)[perm], var_class[perm], K)
    w = np.maximum(np.asarray(w0, dtype=np.float64)[perm], 0.0)
    if E.shared:
        w = _valley_shift(E, w)
    f, g, lam = E(w)
    stop, it, slow = "maxiter", 0, 0
    while it < maxiter:
        residual = kkt_residual(w, g)
        if residual <= tol:
            stop = "converged"
            break
        it += 1
        work = np.flatnonzero((w > 0) | (g < 0))  # the rest stay at 0 this iteration
        Q = classwise_hessian(H[:, E.var_col[work]], E.var_class[work], lam, E.y, K)
        Q[np.diag_indices_from(Q)] += _RIDGE * max(float(Q.diagonal().mean()), 1e-300)
        d = np.zeros_like(w)
        d[work] = _qp_active_set(Q, g[work], w[work], 0.1 * residual)
        slope = float(g @ d)
        a = 1.0
        while a >= _MIN_STEP:
            trial = np.maximum(w + a * d, 0.0)  # feasible already; max() removes round-off
            if E.shared:
                trial = _valley_shift(E, trial)
            f_new, g_new, lam_new = E(trial)
            if f_new <= f + _ARMIJO * a * slope:
                break
            if abs(f_new - f) <= _FLAT * abs(f) and kkt_residual(trial, g_new) < residual:
                break  # f is flat to round-off here: accept a step that lowers the residual
            a *= 0.5
        else:
            stop = "precision"
            break
        flat = abs(f_new - f) <= _FLAT * abs(f) and kkt_residual(trial, g_new) > 0.5 * residual
        slow = slow + 1 if flat else 0
        w, f, g, lam = trial, f_new, g_new, lam_new
        if slow >= _SLOW_STEPS:  # f flat and the residual no longer halving: round-off rules
            stop = "precision"
            break
    w_out = np.empty_like(w)
    w_out[perm] = w
    lam_out = np.empty_like(lam)
    lam_out[rows] = lam
    return RestrictedSolve(w_out, f, lam_out, kkt_residual(w, g), it, stop)


def solve_shared_newton(
    H: np.ndarray,
    y_index: np.ndarray,
    C: float,
    W0: np.ndarray,
    *,
    tol: float = 1e-6,
    maxiter: int = 100,
) -> RestrictedSolve:
    """MultiBoost's restricted problem (shared learners, W of shape (J, K)) by projected Newton.

    The same solver as :func:`solve_classwise_newton` with K variables per column;
    ``RestrictedSolve.W`` has shape (J, K).
    """
    J, K = W0.shape
    res = solve_classwise_newton(
        H, y_index, C, W0.ravel(), np.repeat(np.arange(J), K), np.tile(np.arange(K), J), K,
        tol=tol, maxiter=maxiter,
    )  # fmt: skip
    return RestrictedSolve(
        res.W.reshape(J, K), res.objective, res.lam, res.kkt, res.n_iter, res.stop_reason
    )
