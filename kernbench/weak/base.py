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

Every oracle space (stumps, sampled perceptrons and Fourier features, the RCD perceptron)
satisfies :class:`WeakLearnerSpace`. CG-Boost's kernel library is a different kind of space: a
finite set of columns in indexed groups that its own pricer scores group by group
(:class:`GroupedColumnSpace`). :data:`HypothesisSpace` is either; it is what column generation
holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias, runtime_checkable

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


@runtime_checkable
class WeakLearnerSpace(Protocol):
    """A hypothesis class prepared on a training set ``X`` (shape (m, D)), behind its oracle."""

    def best(
        self,
        g: np.ndarray,
        *,
        absolute: bool = False,
        exclude: ColumnSet | None = None,
        rng: np.random.Generator | None = None,
    ) -> Pick:
        """Return the learner maximising Σ g_i h(x_i) (``absolute``: its modulus).

        ``exclude`` is a :class:`ColumnSet` of columns already selected (compared up to sign);
        sampled spaces draw candidates with ``rng``.
        """
        ...

    def best_many(
        self,
        G: np.ndarray,
        *,
        absolute: bool = False,
        exclude: ColumnSet | Sequence[ColumnSet | None] | None = None,
        rng: np.random.Generator | None = None,
    ) -> list[Pick]:
        """:meth:`best` for every column of ``G`` (shape (m, K)), in column order.

        ``exclude``: one :class:`ColumnSet` for every column, or a sequence of K (or None).
        Exhaustive spaces share their work between the columns; the others call :meth:`best`
        once per column (:func:`best_each`).
        """
        ...


@runtime_checkable
class GroupedColumnSpace(Protocol):
    """Candidate columns in indexed groups, scored by a method's own pricer (CG-Boost's kernel
    library: one group per kernel, one column per training point).

    Attributes
    ----------
    groups : list
        One entry per group (its kernels; empty for the constant column).
    n_evaluated, n_computed : int
        Columns scored so far, and columns computed so far.
    """

    groups: list
    n_evaluated: int
    n_computed: int

    def n_candidates(self, p: int) -> int:
        """Columns of group p."""
        ...

    def scores(self, p: int, g: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """gᵀa for the columns ``idx`` of group p."""
        ...

    def column(self, p: int, k: int) -> np.ndarray:
        """Column k of group p on the training points."""
        ...

    def learner(self, p: int, k: int) -> Any:
        """The learner whose training column is :meth:`column` ``(p, k)``."""
        ...


#: what column generation holds: an oracle space or indexed groups of columns
HypothesisSpace: TypeAlias = WeakLearnerSpace | GroupedColumnSpace


def exclusions(
    exclude: ColumnSet | Sequence[ColumnSet | None] | None, K: int
) -> list[ColumnSet | None]:
    """``best_many``'s ``exclude`` as one entry per column of its K columns."""
    if exclude is None or isinstance(exclude, ColumnSet):
        return [exclude] * K
    excl = list(exclude)
    if len(excl) != K:
        raise ValueError(f"exclude has {len(excl)} entries for {K} columns of G")
    return excl


def best_each(
    space: WeakLearnerSpace,
    G: np.ndarray,
    *,
    absolute: bool = False,
    exclude: ColumnSet | Sequence[ColumnSet | None] | None = None,
    rng: np.random.Generator | None = None,
) -> list[Pick]:
    """``space.best`` once per column of ``G`` (shape (m, K)), in column order: ``best_many`` of
    a space that shares no work between the columns."""
    excl = exclusions(exclude, G.shape[1])
    return [
        space.best(G[:, k], rng=rng, exclude=excl[k], absolute=absolute) for k in range(G.shape[1])
    ]


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
