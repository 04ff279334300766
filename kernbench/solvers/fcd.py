"""FCD: fast coordinate descent for the restricted problem (7) of MultiBoost_cw (Alg. 2).

Problem (7): min_{w ≥ 0} Σ_v w_v + (C/p) Σ_i Σ_{y≠y_i} exp(−wᵀδh_i(y)),  p = m(K − 1),
with ±1 learner columns. Variable v weights column h = H[:, col(v)] in class c = class(v); its entry
of δh_i(y) is +h_i on every pair (i, y) with y_i = c, −h_i on the pair (i, c) with y_i ≠ c, and 0
elsewhere, so it takes values in {−1, 0, +1}.

State. μ_(i,y) = exp(−wᵀδh_i(y)) (15) is kept as a signed K × m matrix Z: Z[c, i] = −μ_ic for
c ≠ y_i and Z[y_i, i] = r_i = Σ_{y≠y_i} μ_iy. For a variable of class c with column h, its pairs'
μ-masses are |Z[c, i]| with sign δh = h_i·sign(Z[c, i]), so with d = Σ_i h_i Z[c, i] and
T = Σ_i |Z[c, i]| the masses of δh = ±1 are A± = (T ± d)/2: one contiguous dot product per
variable, with no branch on the pair type. Then

* V₊ = A₊ e^{w_v}, V₋ = A₋ e^{−w_v} (21) remove the variable's own contribution;
* the exact 1-D minimiser of w + (C/p)(V₋e^{w} + V₊e^{−w}) over w ≥ 0 is (12); written as
  w* = max{0, log(V₊ / (√(V₊V₋ + a²) + a))} with a = p/(2C), it needs no case split for V₋ = 0 and
  does not cancel when V₊V₋ ≪ a² (rationalised form of (12));
* the large-C form (13) is w* = max{0, ½ log(V₊/V₋)} (falls back to (12) when V₋ = 0);
* after the step, μ is multiplied by exp(δh (w_old − w_new)) on the variable's pairs (20): the
  whole column i of Z when y_i = c, else Z[c, i] and r_i = Z[y_i, i];
* the gradient is 1 − (C/p)·d, so the KKT violation θ (16) is |grad| for w > 0 and
  max(0, −grad) for w = 0.

Rows are sorted by class once per call, so the pair-type test of the update is a block boundary.
The ±1 columns are stored as int8 (exact): the violation pass reads J·m column entries and is
bound by memory traffic, which int8 cuts by 8× against float64 (the iterates are the same).

Alg. 2: the working set S starts as the newly added variables; pass τ = 1 visits S in order, later
passes visit S in a fresh random order (each variable once); after each pass θ gives
S = {θ > ε} (17) and the stop rule max θ ≤ ε (18); at most τ_max passes (τ_max = 1: the
stage-wise update of CW-1, which never computes θ). The sequential loop is compiled with numba.
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
    stop_reason : str
        "tol" (18 held), "tau_max" or "empty" (no variable to update).
    """

    w: np.ndarray
    objective: float
    mu: np.ndarray
    max_violation: float
    n_passes: int
    n_updates: int
    stop_reason: str


@numba.njit(cache=True, fastmath={"reassoc", "contract"})
def _dot_mass(HT, Z, col, c):  # pragma: no cover - numba
    """d = Σ_i h_i Z[c, i] and T = Σ_i |Z[c, i]| for the variable (col, c)."""
    h = HT[col]
    z = Z[c]
    d = 0.0
    t = 0.0
    for i in range(z.size):
        d += h[i] * z[i]
        t += abs(z[i])
    return d, t


@numba.njit(cache=True, fastmath={"reassoc", "contract"})
def _dot(HT, Z, col, c):  # pragma: no cover - numba
    """d = Σ_i h_i Z[c, i] alone (the gradient needs no T)."""
    h = HT[col]
    z = Z[c]
    d = 0.0
    for i in range(z.size):
        d += h[i] * z[i]
    return d


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
def _update(HT, y, start, stop, Z, col, c, delta):  # pragma: no cover - numba
    """(20): μ ← μ·exp(δh·(w_old − w_new)) on the variable's pairs, kept in Z.

    Rows start..stop−1 are class c (y_i = c: every pair of the row scales by exp(h_i·delta));
    elsewhere only μ_ic scales, by exp(−h_i·delta), and r_i follows.
    """
    h = HT[col]
    up = np.exp(delta)  # h ∈ {±1}: the factors take two values
    down = np.exp(-delta)
    K = Z.shape[0]
    for i in range(start, stop):
        f = up if h[i] > 0 else down
        for k in range(K):
            Z[k, i] *= f
    zc = Z[c]
    for i in range(0, start):
        g = down if h[i] > 0 else up
        old = zc[i]  # −μ_ic
        zc[i] = old * g
        Z[y[i], i] += old - zc[i]  # r_i += μ_new − μ_old
    for i in range(stop, y.size):
        g = down if h[i] > 0 else up
        old = zc[i]
        zc[i] = old * g
        Z[y[i], i] += old - zc[i]


@numba.njit(cache=True)
def _violations(HT, Z, w, var_col, var_class, Cp, theta):  # pragma: no cover - numba
    """θ (16) of every variable; returns max θ."""
    worst = 0.0
    for v in range(w.size):
        grad = 1.0 - Cp * _dot(HT, Z, var_col[v], var_class[v])  # (14): 1 − (C/p) Σ μ δh
        t = abs(grad) if w[v] > 0.0 else max(0.0, -grad)
        theta[v] = t
        if t > worst:
            worst = t
    return worst


@numba.njit(cache=True)
def _fcd_kernel(
    HT, y, bounds, var_col, var_class, w, Z, S0, Cp, a, eps, tau_max, large_c, seed, theta
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
        if tau > 1:  # passes τ ≥ 2 in a random order: a Fisher-Yates shuffle of S
            for q in range(n_s - 1, 0, -1):
                r = np.random.randint(q + 1)  # noqa: NPY002
                S[q], S[r] = S[r], S[q]
        for q in range(n_s):
            v = S[q]  # line 6: τ = 1 in order; then the shuffled order
            col = var_col[v]
            c = var_class[v]
            d, t = _dot_mass(HT, Z, col, c)  # line 7: A± = (T ± d)/2, then (21)
            w_old = w[v]
            w_new = _step(0.5 * (t + d), 0.5 * (t - d), w_old, a, large_c)  # line 8, (12)
            updates += 1
            if w_new != w_old:
                w[v] = w_new
                _update(HT, y, bounds[c], bounds[c + 1], Z, col, c, w_old - w_new)  # (20)
        if tau >= tau_max:  # line 13 (the cap): θ is not needed any more
            return tau, updates, 1, worst
        worst = _violations(HT, Z, w, var_col, var_class, Cp, theta)  # line 11
        if worst <= eps:  # (18)
            return tau, updates, 0, worst
        n_s = 0
        for v in range(w.size):  # line 12, (17)
            if theta[v] > eps:
                S[n_s] = v
                n_s += 1


class SortedColumns:
    """Learner columns laid out for FCD, grown in place by a column-generation loop.

    Rows (training points) are sorted by class once, so class c is the block
    ``bounds[c]:bounds[c+1]``; columns are stored as contiguous rows of ``HT`` (J × m), with
    amortised growth, as int8 (the columns must be ±1). Passing it to :func:`fcd_solve` avoids
    an O(m·J) re-layout per call.
    """

    def __init__(self, y_index: np.ndarray, K: int) -> None:
        y = np.asarray(y_index, dtype=np.int64)
        self.order = np.argsort(y, kind="stable")
        self.y_sorted = np.ascontiguousarray(y[self.order])
        self.bounds = np.searchsorted(self.y_sorted, np.arange(K + 1)).astype(np.int64)
        self._HT = np.empty((32, y.size), dtype=np.int8)
        self.n = 0

    @property
    def HT(self) -> np.ndarray:
        """The columns so far, shape (J, m), rows in class-sorted order."""
        return self._HT[: self.n]

    def append(self, columns: np.ndarray) -> None:
        """Append columns given as an (m, k) array in the original row order."""
        columns = np.asarray(columns, dtype=np.float64).reshape(self._HT.shape[1], -1)
        if not np.all(np.abs(columns) == 1.0):
            raise ValueError("FCD needs ±1 learner columns (the closed form (12) assumes them)")
        k = columns.shape[1]
        if self.n + k > self._HT.shape[0]:
            shape = (max(2 * self._HT.shape[0], self.n + k), self._HT.shape[1])
            grown = np.empty(shape, dtype=np.int8)
            grown[: self.n] = self.HT
            self._HT = grown
        self._HT[self.n : self.n + k] = columns[self.order].T
        self.n += k


def initial_mu(
    w: np.ndarray, H: np.ndarray, y_index: np.ndarray, var_col, var_class, K: int
) -> np.ndarray:
    """μ of (15) recomputed from w: μ_iy = exp(F_iy − F_{i,y_i}), 0 on the true class."""
    m = H.shape[0]
    _, mu = exp_loss_dual(classwise_scores(w, H, var_col, var_class, K), y_index, m * (K - 1))
    return mu


def fcd_solve(
    H: np.ndarray | None,
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
    columns: SortedColumns | None = None,
    mu0: np.ndarray | None = None,
) -> FCDResult:
    """Run FCD (Alg. 2) on the restricted problem (7), warm-started at w0.

    Parameters
    ----------
    H : ndarray of shape (m, J) or None
        ±1 learner columns on the training set (anything else raises ValueError); None when
        ``columns`` is given.
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
        Seed of the random order of passes τ ≥ 2 (each visits S once, in a fresh order).
    columns : SortedColumns, optional
        The same columns as H, already laid out (H is then not read and may be None).
    mu0 : ndarray of shape (m, K), optional
        μ of (15) at w0 when the caller has it (a column-generation loop: the new variables are
        0, so the previous call's μ still holds); otherwise it is computed from w0.

    Returns
    -------
    FCDResult
    """
    if rule not in RULES:
        raise ValueError(f"unknown FCD rule {rule!r}; expected one of {RULES}")
    y = np.asarray(y_index, dtype=np.int64)
    if columns is None:
        if H is None:
            raise ValueError("fcd_solve needs the columns: H, or their layout as `columns`")
        columns = SortedColumns(y, K)
        columns.append(H)
    order, y_sorted, HT = columns.order, columns.y_sorted, columns.HT
    var_col = np.ascontiguousarray(var_col, dtype=np.int64)
    var_class = np.ascontiguousarray(var_class, dtype=np.int64)
    w = np.array(np.maximum(w0, 0.0), dtype=np.float64)
    m = y.size
    p = m * (K - 1)
    if mu0 is None:
        mu0 = initial_mu(w, HT.T, y_sorted, var_col, var_class, K)  # line 2, (15)
    else:
        mu0 = np.asarray(mu0, dtype=np.float64)[order]
    Z = np.ascontiguousarray(-mu0.T)  # sorted rows
    Z[y_sorted, np.arange(m)] = 0.0
    Z[y_sorted, np.arange(m)] = -Z.sum(axis=0)  # r_i on the true class
    S0 = np.arange(w.size, dtype=np.int64) if new is None else np.asarray(new, dtype=np.int64)
    theta = np.zeros(w.size)
    cap = np.iinfo(np.int64).max if tau_max is None else int(tau_max)
    tau, updates, code, worst = _fcd_kernel(
        HT, y_sorted, columns.bounds, var_col, var_class, w, Z, S0, C / p, p / (2.0 * C),
        float(eps), cap,
        rule == "large_c", int(seed), theta,
    )  # fmt: skip
    mu = np.empty((m, K))
    mu[order] = -Z.T
    mu[np.arange(m), y] = 0.0
    objective = float(w.sum() + C / p * mu.sum())
    stop = ("tol", "tau_max", "empty")[code]
    return FCDResult(w, objective, mu, float(worst), int(tau), int(updates), stop)
