"""The weak-learner oracle protocol shared by every boosting and column-generation method.

A *space* is a hypothesis class 𝓗 prepared on one training set (presorted features for stumps, the
radius R for perceptrons, σ for Fourier features). Its oracle answers one question:

    given signed sample weights g ∈ R^m, which h ∈ 𝓗 maximises  s(h) = Σ_i g_i h(x_i)
    (or |s(h)| with ``absolute=True``), excluding the columns already selected?

and returns a :class:`Pick`: the learner (a small picklable object with ``predict(X)``), its
training column h(x_1..x_m) ∈ R^m, and its signed score. Methods supply g from their own algorithm
box:
AdaBoost g = d∘y (edge), LPBoost g = α∘y (criterion (6)), CGENS g = α∘y with ``absolute=True``
(criterion (8)), CGENS-SLS g = U[:, τ] (13), MultiBoost g = u^c.

Every space is negation-complete: with ``absolute=True`` the returned learner is already negated so
that its score is non-negative (docs/methods/column_generation.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class WeakLearner(Protocol):
    """A fitted weak hypothesis h: R^D -> R (±1 for stumps and perceptrons)."""

    def predict(self, X: np.ndarray) -> np.ndarray: ...


@dataclass(frozen=True)
class Pick:
    """The oracle's answer.

    Attributes
    ----------
    learner : WeakLearner
        The selected hypothesis (already negated where the protocol says so).
    column : ndarray of shape (m,)
        ``learner.predict(X_train)``: the new column of the hypothesis matrix H.
    score : float
        Σ_i g_i column_i for the returned learner.
    candidate : int or None
        The learner's candidate index in an exhaustive space (stumps), when the oracle knows
        it: the working set then excludes it by that index without hashing its column.
    """

    learner: Any
    column: np.ndarray
    score: float
    candidate: int | None = None


class WeakLearnerSpace(Protocol):
    """A hypothesis class prepared on a training set ``X`` (shape (m, D))."""

    def best(
        self,
        g: np.ndarray,
        *,
        absolute: bool = False,
        exclude: Any = None,
        rng: np.random.Generator | None = None,
    ) -> Pick:
        """Return the learner maximising Σ g_i h(x_i) (``absolute``: its modulus).

        ``exclude`` is a :class:`ColumnSet` of columns already selected (compared up to sign);
        sampled spaces draw candidates with ``rng``.
        """
        ...


class ColumnSet:
    """Columns selected so far, for excluding a learner (or its negation) the oracle already chose.

    Columns are compared up to sign on the training set: two learners with equal or opposite
    training columns are the same coordinate of the SVM feature map.
    """

    def __init__(self) -> None:
        self._keys: set[bytes] = set()

    @staticmethod
    def _key(column: np.ndarray) -> bytes:
        col = np.asarray(column, dtype=np.float64)
        nz = np.flatnonzero(col)
        if nz.size and col[nz[0]] < 0:
            col = -col
        return np.round(col, 12).tobytes()

    def add(self, column: np.ndarray) -> None:
        self._keys.add(self._key(column))

    def __contains__(self, column: object) -> bool:
        return self._key(np.asarray(column)) in self._keys

    def __len__(self) -> int:
        return len(self._keys)
