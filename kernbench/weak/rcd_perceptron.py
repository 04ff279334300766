"""Perceptron learning by random coordinate descent (RCD): the AdaBoost-Perc base learner.

METHODS.md §4.3 (after Ling Li's LEMGA ``perceptron.cpp``, training method ``RCD_BIAS``): the
perceptron h(x) = sign(w̃ᵀx̃) on augmented inputs x̃ = (x, 1) minimises the *weighted* 0/1 loss
Σ_n |y'_n| [h(x_n) ≠ sign(y'_n)] for signed sample weights y'_n = d_n y_n. Starting from
w̃ ~ U[−0.05, 0.05]^{D+1}, each of ``max_run`` updates moves w̃ along one direction u,

    w̃ ← w̃ + α* u,   α* = argmin_α Σ_n |y'_n| [sign((w̃ + αu)ᵀx̃_n) ≠ sign(y'_n)],

solved exactly: with a_n = uᵀx̃_n and z_n = w̃ᵀx̃_n / a_n the problem is a weighted decision stump
on the projected values z (:func:`exact_step`). Directions come in cycles of D+1: the bias direction
first, then D fresh random directions with i.i.d. U[−1, 1] input entries and a zero bias entry.

The sequential loop runs compiled (numba); each step is a sort plus prefix sums, O(m log m + mD).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit

from kernbench.weak.base import Pick

#: w̃ is rescaled to unit norm when its squared norm exceeds this (LEMGA ``normalize(wgt, 1e10)``)
RESCALE_SQNORM = 1e10
#: merged groups with |Σ g| at most this fraction of Σ|g| count as empty (cancelled duplicates)
ZERO_GROUP_RTOL = 1e-12


@dataclass(frozen=True)
class Perceptron:
    """A fitted perceptron h(x) = sign(wᵀx + b), with sign(0) = +1.

    Attributes
    ----------
    w : ndarray of shape (n_features,)
        Input weights.
    b : float
        Bias (the weight of the constant input 1 in x̃ = (x, 1)).
    """

    w: np.ndarray
    b: float

    def decision_function(self, X: np.ndarray) -> np.ndarray:
        """The margin wᵀx + b of each row of ``X``."""
        return np.asarray(X, dtype=np.float64) @ self.w + self.b

    def predict(self, X: np.ndarray) -> np.ndarray:
        """±1 predictions (sign(0) = +1)."""
        return np.where(self.decision_function(X) >= 0.0, 1.0, -1.0)

    def negated(self) -> Perceptron:
        """The perceptron −h, i.e. sign(−wᵀx − b) (equal to −h except where wᵀx + b = 0)."""
        return Perceptron(w=-self.w, b=-self.b)


@njit(cache=True)
def weighted_error(margin: np.ndarray, yw: np.ndarray) -> float:
    """Σ_n |yw_n| [sign(margin_n) ≠ sign(yw_n)], with sign(0) = +1 for the margin."""
    wrong = (margin >= 0.0) != (yw > 0.0)
    return float(np.sum(np.abs(yw) * (wrong & (yw != 0.0))))


@njit(cache=True)
def exact_step(z: np.ndarray, g: np.ndarray) -> tuple[float, float]:
    """Exact weighted 1-D step: the threshold t minimising Σ_n |g_n| [sign(z_n − t) ≠ sign(g_n)].

    Points with equal z have their g merged; merged groups whose weight cancels are dropped (as
    LEMGA's ``Stump::train_1d`` does). The candidates are the midpoints between consecutive
    remaining z values plus one sentinel below the smallest and one above the largest (at
    distance 1); the first minimiser in increasing order of t is returned.

    Parameters
    ----------
    z : ndarray of shape (n,)
        Projected values z_n = w̃ᵀx̃_n / uᵀx̃_n.
    g : ndarray of shape (n,)
        Signed weights sign(uᵀx̃_n) · y'_n.

    Returns
    -------
    t : float
        The chosen threshold; the step is α* = −t.
    err : float
        The minimal weighted error over the given points.
    """
    n = z.size
    neg_total = float(np.sum(np.abs(g) * (g < 0.0)))  # error of t below all z: every g < 0 wrong
    if n == 0:
        return 0.0, neg_total
    order = np.argsort(z)  # ties are merged below, so stability is irrelevant
    zs = z[order]
    csum = np.cumsum(g[order])
    # merge equal z: the last index of each run of equal values
    is_last = np.ones(n, dtype=np.bool_)
    is_last[:-1] = zs[1:] != zs[:-1]
    ends = np.flatnonzero(is_last)
    z_grp = zs[ends]
    c_end = csum[ends]
    g_grp = c_end.copy()
    g_grp[1:] -= c_end[:-1]
    keep = np.abs(g_grp) > ZERO_GROUP_RTOL * np.sum(np.abs(g))
    z_grp = z_grp[keep]
    g_grp = g_grp[keep]
    k = z_grp.size
    if k == 0:
        return 0.0, neg_total
    # err(t_j) = Σ_{g<0}|g| + Σ_{groups below t_j} G: passing a group with G > 0 makes it wrong
    prefix = np.empty(k + 1)
    prefix[0] = 0.0
    prefix[1:] = np.cumsum(g_grp)
    j = int(np.argmin(prefix))  # first minimiser
    if j == 0:
        t = z_grp[0] - 1.0
        if t == z_grp[0]:  # |z| beyond 2**53: keep the sentinel strictly below
            t = z_grp[0] - abs(z_grp[0]) * 1e-12
    elif j == k:
        t = z_grp[k - 1] + 1.0
        if t == z_grp[k - 1]:
            t = z_grp[k - 1] + abs(z_grp[k - 1]) * 1e-12
    else:
        t = 0.5 * (z_grp[j - 1] + z_grp[j])
    return t, neg_total + prefix[j]


@njit(cache=True)
def _project(Xa: np.ndarray, u: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(Xa u, Xa w) in one pass over Xa (faster than two BLAS gemv calls at m ~ 10^2-10^3)."""
    m, p = Xa.shape
    a = np.empty(m)
    o = np.empty(m)
    for n in range(m):
        sa = 0.0
        so = 0.0
        for k in range(p):
            sa += Xa[n, k] * u[k]
            so += Xa[n, k] * w[k]
        a[n] = sa
        o[n] = so
    return a, o


@njit(cache=True)
def update_wgt(
    w: np.ndarray, u: np.ndarray, Xa: np.ndarray, yw: np.ndarray
) -> tuple[np.ndarray, float]:
    """One RCD update of w̃ along u (METHODS §4.3 step 2.4-2.5).

    Parameters
    ----------
    w : ndarray of shape (D+1,)
        Current augmented weights (not modified).
    u : ndarray of shape (D+1,)
        Direction.
    Xa : ndarray of shape (m, D+1)
        Augmented inputs x̃_n = (x_n, 1).
    yw : ndarray of shape (m,)
        Signed sample weights y'_n = d_n y_n.

    Returns
    -------
    w_new : ndarray of shape (D+1,)
        w̃ + α*u, rescaled to unit norm when its squared norm exceeds 1e10. The step is kept only
        if it does not increase the weighted error; it can only fail to when some w̃ᵀx̃_n = 0
        exactly, where sign(0) = +1 places the current w̃ on a candidate threshold.
    err_before : float
        The weighted error of ``w`` (before the update).
    """
    a, o = _project(Xa, u, w)  # a_n = uᵀx̃_n, o_n = w̃ᵀx̃_n
    err_before = weighted_error(o, yw)
    moving = a != 0.0  # points with a_n = 0 are unaffected by the step
    z = o[moving] / a[moving]
    g = np.sign(a[moving]) * yw[moving]
    t, err_moving = exact_step(z, g)
    fixed = ~moving
    err_after = err_moving + weighted_error(o[fixed], yw[fixed])
    if err_after > err_before + 1e-12 * np.sum(np.abs(yw)):
        return w.copy(), err_before
    w_new = w - t * u  # α* = −t*
    sq = float(np.dot(w_new, w_new))
    if sq > RESCALE_SQNORM:
        w_new = w_new / np.sqrt(sq)
    return w_new, err_before


@njit(cache=True)
def rcd_loop(
    Xa: np.ndarray, yw: np.ndarray, w0: np.ndarray, directions: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Run the RCD updates along ``directions`` (one row per update) from ``w0``.

    Returns the final w̃ and the weighted-error trace (length ``len(directions) + 1``: before the
    first update, after every update).
    """
    n_run = directions.shape[0]
    trace = np.empty(n_run + 1)
    w = w0.copy()
    for r in range(n_run):
        w, trace[r] = update_wgt(w, directions[r], Xa, yw)
    trace[n_run] = weighted_error(Xa @ w, yw)
    return w, trace


def rcd_directions(n_features: int, max_run: int, rng: np.random.Generator) -> np.ndarray:
    """The ``max_run`` RCD directions (LEMGA ``RCD_BIAS``), one per row, shape (max_run, D+1).

    Update r uses row c = (r + D) mod (D+1) of the cycle's direction set, so every cycle of D+1
    updates starts with the bias direction e_bias and continues with D fresh directions whose input
    entries are i.i.d. U[−1, 1] (neither normalised nor orthogonalised) and whose bias entry is 0.
    """
    d = n_features
    n_cycles = -(-max_run // (d + 1))
    cycles = np.zeros((n_cycles, d + 1, d + 1))
    cycles[:, 0, d] = 1.0  # c = D: the bias direction opens the cycle
    cycles[:, 1:, :d] = rng.uniform(-1.0, 1.0, size=(n_cycles, d, d))  # c = 0..D-1
    return cycles.reshape(n_cycles * (d + 1), d + 1)[:max_run]


def augment(X: np.ndarray) -> np.ndarray:
    """x̃ = (x, 1) for every row of ``X``, C-contiguous float64."""
    X = np.asarray(X, dtype=np.float64)
    return np.ascontiguousarray(np.hstack([X, np.ones((X.shape[0], 1))]))


def train_rcd_perceptron(
    X: np.ndarray,
    yw: np.ndarray,
    *,
    max_run: int = 1000,
    rng: np.random.Generator | None = None,
) -> tuple[Perceptron, np.ndarray]:
    """Train a perceptron on signed sample weights by random coordinate descent.

    Parameters
    ----------
    X : ndarray of shape (m, D)
        Training inputs.
    yw : ndarray of shape (m,)
        Signed sample weights y'_n = d_n y_n (AdaBoost: d ≥ 0 summing to 1, y ∈ {−1, +1}).
    max_run : int, default=1000
        Number of direction updates (LEMGA's default; METHODS §17 #7).
    rng : numpy Generator, optional
        Source of the initial weights and the directions (``default_rng()`` if None).

    Returns
    -------
    perceptron : Perceptron
    trace : ndarray of shape (max_run + 1,)
        Weighted training error Σ|y'_n|[h(x_n) ≠ sign(y'_n)] before the first update and after each.
    """
    return _train_augmented(augment(X), yw, max_run, rng)


def _train_augmented(
    Xa: np.ndarray, yw: np.ndarray, max_run: int, rng: np.random.Generator | None
) -> tuple[Perceptron, np.ndarray]:
    if rng is None:
        rng = np.random.default_rng()
    d = Xa.shape[1] - 1
    yw = np.ascontiguousarray(yw, dtype=np.float64)
    if yw.shape != (Xa.shape[0],):
        raise ValueError(f"yw has shape {yw.shape}, expected ({Xa.shape[0]},)")
    w0 = rng.uniform(-0.05, 0.05, size=d + 1)  # LEMGA Perceptron::initialize
    directions = rcd_directions(d, int(max_run), rng)
    w, trace = rcd_loop(Xa, yw, w0, directions)
    return Perceptron(w=w[:d].copy(), b=float(w[d])), trace


class RCDPerceptronSpace:
    """Perceptrons trained by RCD, behind the weak-learner oracle protocol (``weak/base.py``).

    Unlike the sampled spaces, the "oracle" here is a local search: ``best(g)`` trains a perceptron
    on the signed weights g, minimising Σ|g_i|[h(x_i) ≠ sign(g_i)], which maximises the score
    Σ g_i h(x_i) = Σ|g_i| − 2·error over what RCD reaches.

    Parameters
    ----------
    X : ndarray of shape (m, D)
        Training inputs.
    max_run : int, default=1000
        RCD updates per call.
    random_state : int or None
        Seed of the generator used when ``best`` is called without ``rng``.
    """

    def __init__(self, X: np.ndarray, max_run: int = 1000, random_state: int | None = None) -> None:
        self.Xa = augment(X)
        self.max_run = int(max_run)
        self._rng = np.random.default_rng(random_state)

    def best(
        self,
        g: np.ndarray,
        *,
        absolute: bool = False,
        exclude: Any = None,
        rng: np.random.Generator | None = None,
    ) -> Pick:
        """Train an RCD perceptron on the signed weights ``g``.

        With ``absolute=True`` the perceptron is negated when its score is negative. ``exclude`` is
        not supported (RCD cannot steer away from given columns); a non-empty one raises.
        """
        if exclude is not None and len(exclude) > 0:
            raise NotImplementedError("RCDPerceptronSpace cannot exclude columns")
        g = np.asarray(g, dtype=np.float64)
        learner, _ = _train_augmented(self.Xa, g, self.max_run, self._rng if rng is None else rng)
        column = learner.predict(self.Xa[:, :-1])
        score = float(g @ column)
        if absolute and score < 0.0:
            learner = learner.negated()
            column = learner.predict(self.Xa[:, :-1])
            score = float(g @ column)
        return Pick(learner=learner, column=column, score=score)
