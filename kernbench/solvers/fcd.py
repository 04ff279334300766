"""FCD: fast coordinate descent for the restricted problem (7) of MultiBoost_cw (Alg. 2).

Problem (7): min_{w ≥ 0} Σ_v w_v + (C/p) Σ_i Σ_{y≠y_i} exp(−wᵀδh_i(y)),  p = m(K − 1),
with ±1 learner columns. Variable v weights column h = H[:, col(v)] in class c = class(v); its entry
of δh_i(y) is +h_i on every pair (i, y) with y_i = c, −h_i on the pair (i, c) with y_i ≠ c, and 0
elsewhere, so it takes values in {−1, 0, +1}.

The solver keeps μ_(i,y) = exp(−wᵀδh_i(y)) (15) as an m × K matrix (0 on the true class) and the row
sums r_i = Σ_{y≠y_i} μ_iy. For one variable, with A₊ / A₋ the μ-mass of its pairs with δh = +1 / −1,

* V₊ = A₊ e^{w_v}, V₋ = A₋ e^{−w_v} (21) remove the variable's own contribution;
* the exact 1-D minimiser of w + (C/p)(V₋e^{w} + V₊e^{−w}) over w ≥ 0 is (12); written as
  w* = max{0, log(V₊ / (√(V₊V₋ + a²) + a))} with a = p/(2C), it needs no case split for V₋ = 0 and
  does not cancel when V₊V₋ ≪ a² (rationalised form of (12));
* the large-C form (13) is w* = max{0, ½ log(V₊/V₋)} (falls back to (12) when V₋ = 0);
* after the step, μ is multiplied by exp(δh (w_old − w_new)) on the variable's pairs (20): the
  whole row i when y_i = c, only μ_ic otherwise; r_i follows;
* the gradient is 1 − (C/p)(A₊ − A₋), so the KKT violation θ (16) is |grad| for w > 0 and
  max(0, −grad) for w = 0.

Alg. 2: the working set S starts as the newly added variables; pass τ = 1 visits S in order, later
passes draw |S| variables uniformly with replacement; after each pass θ gives S = {θ > ε} (17) and
the stop rule max θ ≤ ε (18); at most τ_max passes (τ_max = 1: the stage-wise update of CW-1, which
never computes θ). The sequential loop is compiled with numba.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from kernbench.solvers.multiclass_exp_loss import classwise_scores, exp_loss_dual

#: closed forms of the coordinate step: (12) exact, (13) the large-C approximation
RULES = ("exact", "large_c")


@dataclass(frozen=True)
class FCDResult:
    """Result of one FCD call.

    Attributes
    ----------
    w : ndarray of shape (n_vars,)
    objective : float
        (7) at w, from the maintained μ.
    mu : ndarray of shape (m, K)
        μ of (15) as maintained by the updates (20) (0 on the true class); λ = (C/p)·μ (5).
    max_violation : float
        max_v θ_v (16) after the last pass; NaN when the τ_max cap ended the loop before θ was
        computed.
    n_passes : int
        τ, the working-set iterations run.
    n_updates : int
        Coordinate updates.
    stop : str
        "tol" (18 held), "tau_max" or "empty" (no variable to update).
    """

    w: np.ndarray
    objective: float
    mu: np.ndarray
    max_violation: float
    n_passes: int
    n_updates: int
    stop: str


@numba.njit(cache=True)
def _masses(H, y, mu, rowsum, col, c):  # pragma: no cover - numba
    """A₊, A₋: the μ-mass of the variable's pairs with δh = +1 and δh = −1."""
    ap = 0.0
    am = 0.0
    for i in range(H.shape[0]):
        h = H[i, col]
        if y[i] == c:  # δh = +h_i on every pair (i, y ≠ y_i)
            if h > 0:
                ap += rowsum[i]
            else:
                am += rowsum[i]
        else:  # δh = −h_i on the pair (i, c)
            if h < 0:
                ap += mu[i, c]
            else:
                am += mu[i, c]
    return ap, am


@numba.njit(cache=True)
def _step(ap, am, w_old, a, large_c):  # pragma: no cover - numba
    """The coordinate minimiser from (21) and (12) (or (13))."""
    vp = ap * np.exp(w_old)  # (21)
    vm = am * np.exp(-w_old)
    if vp <= 0.0:
        return 0.0
    if large_c and vm > 0.0:
        return max(0.0, 0.5 * np.log(vp / vm))  # (13)
    return max(0.0, np.log(vp / (np.sqrt(vp * vm + a * a) + a)))  # (12), rationalised


@numba.njit(cache=True)
def _update_mu(H, y, mu, rowsum, col, c, delta):  # pragma: no cover - numba
    """(20): μ ← μ·exp(δh·(w_old − w_new)) on the variable's pairs, with the row sums."""
    K = mu.shape[1]
    for i in range(H.shape[0]):
        h = H[i, col]
        if y[i] == c:
            f = np.exp(h * delta)
            s = 0.0
            for k in range(K):
                mu[i, k] *= f
                s += mu[i, k]
            rowsum[i] = s  # μ is 0 on the true class
        else:
            old = mu[i, c]
            mu[i, c] = old * np.exp(-h * delta)
            rowsum[i] += mu[i, c] - old


@numba.njit(cache=True)
def _violations(H, y, mu, rowsum, w, var_col, var_class, Cp, theta):  # pragma: no cover - numba
    """θ (16) of every variable; returns max θ."""
    worst = 0.0
    for v in range(w.size):
        ap, am = _masses(H, y, mu, rowsum, var_col[v], var_class[v])
        grad = 1.0 - Cp * (ap - am)  # (14): 1 − (C/p) Σ μ δh
        t = abs(grad) if w[v] > 0.0 else max(0.0, -grad)
        theta[v] = t
        if t > worst:
            worst = t
    return worst


@numba.njit(cache=True)
def _fcd_kernel(
    H, y, var_col, var_class, w, mu, rowsum, S0, Cp, a, eps, tau_max, large_c, seed, theta
):  # pragma: no cover - numba
    """Alg. 2 lines 3-13; returns (τ, updates, stop code 0 tol / 1 τ_max / 2 empty, max θ)."""
    np.random.seed(seed)  # noqa: NPY002 (numba supports only the legacy global generator)
    S = np.empty(w.size, dtype=np.int64)  # (17) can hold every variable
    n_s = S0.size
    S[:n_s] = S0
    tau = 0
    updates = 0
    worst = np.nan
    while True:
        if n_s == 0:
            return tau, updates, 2, worst
        tau += 1
        for q in range(n_s):
            v = S[q] if tau == 1 else S[np.random.randint(n_s)]  # noqa: NPY002 (line 6)
            col = var_col[v]
            c = var_class[v]
            ap, am = _masses(H, y, mu, rowsum, col, c)  # line 7, (21)
            w_old = w[v]
            w_new = _step(ap, am, w_old, a, large_c)  # line 8, (12)
            updates += 1
            if w_new != w_old:
                w[v] = w_new
                _update_mu(H, y, mu, rowsum, col, c, w_old - w_new)  # line 9, (20)
        if tau >= tau_max:  # line 13 (the cap): θ is not needed any more
            return tau, updates, 1, worst
        worst = _violations(H, y, mu, rowsum, w, var_col, var_class, Cp, theta)  # line 11
        if worst <= eps:  # (18)
            return tau, updates, 0, worst
        n_s = 0
        for v in range(w.size):  # line 12, (17)
            if theta[v] > eps:
                S[n_s] = v
                n_s += 1


def initial_mu(
    w: np.ndarray, H: np.ndarray, y_index: np.ndarray, var_col, var_class, K: int
) -> np.ndarray:
    """μ of (15) recomputed from w: μ_iy = exp(F_iy − F_{i,y_i}), 0 on the true class."""
    m = H.shape[0]
    _, mu = exp_loss_dual(classwise_scores(w, H, var_col, var_class, K), y_index, m * (K - 1))
    return mu


def fcd_solve(
    H: np.ndarray,
    y_index: np.ndarray,
    C: float,
    w0: np.ndarray,
    var_col: np.ndarray,
    var_class: np.ndarray,
    K: int,
    new: np.ndarray | None = None,
    *,
    eps: float = 0.1,
    tau_max: int | None = 2,
    rule: str = "exact",
    seed: int = 0,
) -> FCDResult:
    """Run FCD (Alg. 2) on the restricted problem (7), warm-started at w0.

    Parameters
    ----------
    H : ndarray of shape (m, J)
        ±1 learner columns on the training set.
    y_index : ndarray of int, shape (m,)
        True class indices 0..K−1.
    C : float
        Regularisation parameter.
    w0 : ndarray of shape (n_vars,)
        Non-negative warm start.
    var_col, var_class : ndarray of int, shape (n_vars,)
        Column of H and class of every variable (MultiBoost_cw: variable j = learner j of its
        class; MultiBoost's shared learners: K variables per column).
    K : int
        Number of classes.
    new : ndarray of int, optional
        The initial working set (the newly added variables, line 2); default all variables.
    eps : float
        ε of (17)-(18) (the paper: 0.1).
    tau_max : int or None
        Maximum working-set iterations (None: until (18)); 1 is the stage-wise setting.
    rule : {"exact", "large_c"}
        Coordinate step (12) or its large-C form (13).
    seed : int
        Seed of the random picks of passes τ ≥ 2.

    Returns
    -------
    FCDResult
    """
    if rule not in RULES:
        raise ValueError(f"unknown FCD rule {rule!r}; expected one of {RULES}")
    H = np.ascontiguousarray(H, dtype=np.float64)
    y = np.ascontiguousarray(y_index, dtype=np.int64)
    var_col = np.ascontiguousarray(var_col, dtype=np.int64)
    var_class = np.ascontiguousarray(var_class, dtype=np.int64)
    w = np.array(np.maximum(w0, 0.0), dtype=np.float64)
    m = H.shape[0]
    p = m * (K - 1)
    mu = initial_mu(w, H, y, var_col, var_class, K)  # line 2, (15)
    rowsum = mu.sum(axis=1)
    S0 = np.arange(w.size, dtype=np.int64) if new is None else np.asarray(new, dtype=np.int64)
    theta = np.zeros(w.size)
    cap = np.iinfo(np.int64).max if tau_max is None else int(tau_max)
    tau, updates, code, worst = _fcd_kernel(
        H, y, var_col, var_class, w, mu, rowsum, S0, C / p, p / (2.0 * C), float(eps), cap,
        rule == "large_c", int(seed), theta,
    )  # fmt: skip
    objective = float(w.sum() + C / p * mu.sum())
    stop = ("tol", "tau_max", "empty")[code]
    return FCDResult(w, objective, mu, float(worst), int(tau), int(updates), stop)
