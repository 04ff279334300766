"""Perceptron learning by random coordinate descent (RCD): the AdaBoost-Perc base learner.

docs/methods/adaboost.md (after Ling Li's LEMGA ``perceptron.cpp``, training method ``RCD_BIAS``):
the perceptron h(x) = sign(w̃ᵀx̃) on augmented inputs x̃ = (x, 1) minimises the *weighted* 0/1 loss
Σ_n |y'_n| [h(x_n) ≠ sign(y'_n)] for signed sample weights y'_n = d_n y_n. Starting from
w̃ ~ U[−0.05, 0.05]^{D+1}, each of ``max_run`` updates moves w̃ along one direction u,

    w̃ ← w̃ + α* u,   α* = argmin_α Σ_n |y'_n| [sign((w̃ + αu)ᵀx̃_n) ≠ sign(y'_n)],

solved exactly: with a_n = uᵀx̃_n and z_n = w̃ᵀx̃_n / a_n the problem is a weighted decision stump
on the projected values z (:func:`kernbench.solvers.rcd.exact_step`). Directions come in cycles
of D+1: the bias direction first, then D fresh random directions with i.i.d. U[−1, 1] input
entries and a zero bias entry.

The sequential loop runs compiled (numba; :mod:`kernbench.solvers.rcd`); each step is a sort
plus prefix sums, O(m log m + mD). This module holds the learner, its directions and its oracle
space.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kernbench.solvers.rcd import rcd_loop
from kernbench.weak.base import ColumnSet, Pick, best_each


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
        Number of direction updates (LEMGA's default).
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
        exclude: ColumnSet | None = None,
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

    def best_many(
        self,
        G: np.ndarray,
        *,
        absolute: bool = False,
        exclude: ColumnSet | Sequence[ColumnSet | None] | None = None,
        rng: np.random.Generator | None = None,
    ) -> list[Pick]:
        """:meth:`best` once per column of ``G``, in column order."""
        return best_each(self, G, absolute=absolute, exclude=exclude, rng=rng)
