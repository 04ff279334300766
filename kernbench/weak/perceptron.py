"""Sampled perceptrons h(x) = s·sign(θᵀx − κ) and the "P fresh candidates" pick rule.

θ uniform on the unit sphere (θ = g/||g||, g ~ N(0, I_D)), κ ~ U[−R, R] with
R = max_i ||x_i||₂ on the training set. Each oracle call draws P (default 2000) fresh
candidates, scores them all with one matrix product, and returns the best under the method's
criterion (|Σ g_i h(x_i)| for CGENS (8), the signed edge Σ g_i h(x_i) for AdaBoost/LPBoost (6)),
negated if its signed score is negative, skipping candidates whose training column (up to sign)
is already selected.

The polarity s ∈ {±1} is stored explicitly: mathematically −h is the perceptron (−θ, −κ), which
has the same density, but with sign(0) = +1 the explicit polarity keeps −h exactly the negated
column.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kernbench.solvers.candidate_scores import candidate_scores
from kernbench.weak.base import ColumnSet, Pick, best_each
from kernbench.weak.draws import draw

#: candidates are scored in blocks so that one block's m × P matrix stays below this many entries
_BLOCK_ENTRIES = 4_000_000


def sign_pm1(z: np.ndarray) -> np.ndarray:
    """Elementwise sign with sign(0) = +1, as float64 ±1."""
    return np.where(z >= 0, 1.0, -1.0)


@dataclass(frozen=True)
class Perceptron:
    """h(x) = polarity · sign(θᵀx − κ)."""

    theta: np.ndarray
    kappa: float
    polarity: float = 1.0

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.polarity * sign_pm1(np.asarray(X, dtype=np.float64) @ self.theta - self.kappa)

    def negated(self) -> Perceptron:
        return Perceptron(self.theta, self.kappa, -self.polarity)

    @staticmethod
    def predict_many(learners: Sequence[Perceptron], X: np.ndarray) -> np.ndarray:
        """Outputs of many perceptrons on X in one matrix product: shape (n, J)."""
        Theta, kappa, pol = _stack(learners)
        return pol * sign_pm1(np.asarray(X, dtype=np.float64) @ Theta - kappa)


def _stack(learners: Sequence) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    Theta = np.column_stack([lrn.theta for lrn in learners])
    kappa = np.array([lrn.kappa for lrn in learners], dtype=np.float64)
    pol = np.array([lrn.polarity for lrn in learners], dtype=np.float64)
    return Theta, kappa, pol


def best_first(neg: np.ndarray) -> Iterator[int]:
    """The indices of ``neg`` in the order ``np.argsort(neg, kind="stable")`` gives, the first
    found without sorting: the smallest value, ties to the first index, as ``np.argmin`` finds it
    when no value is NaN (a sort puts NaN last, argmin first). The pick rule almost always takes
    the first candidate, so a column-generation step no longer sorts its P scores."""
    if not np.isnan(neg).any():
        first = int(np.argmin(neg))
        yield first
        yield from (int(q) for q in np.argsort(neg, kind="stable")[1:])  # [0] is first
    else:
        yield from (int(q) for q in np.argsort(neg, kind="stable"))


def pick_from_candidates(
    X: np.ndarray,
    g: np.ndarray,
    Theta: np.ndarray,
    kappa: np.ndarray,
    transform: Callable[[np.ndarray], np.ndarray],
    make: Callable[[np.ndarray, float, float], object],
    *,
    absolute: bool,
    exclude: ColumnSet | None,
    activation: str | None = None,
) -> Pick | None:
    """The pick rule over candidates h_p(x) = transform(θ_pᵀx − κ_p), p = 1..P.

    Scores s = transform(XΘ − κ)ᵀg are computed blockwise (one matrix product per block); with
    ``activation`` ("cos" or "sign", the name of ``transform``) by the fused compiled pass of
    :func:`kernbench.solvers.candidate_scores.candidate_scores` (the same scores to rounding).
    The criterion is |s| (``absolute``) or s; ties go to the first candidate. Candidates whose
    column is in ``exclude`` (up to sign) are skipped. The returned learner is negated when its
    signed score is negative, so ``Pick.score`` ≥ 0 whenever the best criterion value is (always
    with ``absolute``). Returns None when every candidate is excluded.
    """
    if activation is not None:
        scores = candidate_scores(X, g, Theta, kappa, activation)
    else:
        m = X.shape[0]
        P = Theta.shape[1]
        block = max(1, _BLOCK_ENTRIES // max(m, 1))
        scores = np.empty(P)
        for start in range(0, P, block):
            stop = min(P, start + block)
            scores[start:stop] = transform(X @ Theta[:, start:stop] - kappa[start:stop]).T @ g
    crit = np.abs(scores) if absolute else scores
    for p in best_first(-crit):
        column = transform(X @ Theta[:, p] - kappa[p])
        if exclude is not None and column in exclude:
            continue
        s = float(scores[p])
        polarity = -1.0 if s < 0 else 1.0
        return Pick(
            learner=make(Theta[:, p].copy(), float(kappa[p]), polarity),
            column=polarity * column,
            score=abs(s) if s < 0 else s,
        )
    return None


class SampledSpace:
    """The oracle of the sampled spaces: the best of P fresh candidates
    (docs/methods/column_generation.md).

    Subclasses implement ``sample(rng, P) -> (Θ, κ)`` and set ``_transform`` (the activation of
    θᵀx − κ), ``_activation`` (its name for the compiled scoring pass: "cos" or "sign") and
    ``_learner`` (the learner class built from (θ, κ, polarity)).
    """

    X: np.ndarray
    _rng: np.random.Generator
    _transform: Any
    _activation: str | None = None
    _learner: Any

    def sample(
        self, rng: np.random.Generator, P: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def best(
        self,
        g: np.ndarray,
        *,
        absolute: bool = False,
        exclude: ColumnSet | None = None,
        rng: np.random.Generator | None = None,
    ) -> Pick:
        """Best of P fresh candidates under Σ g_i h(x_i) (``absolute``: its modulus)."""
        rng = self._rng if rng is None else rng
        g = np.asarray(g, dtype=np.float64)
        cls = type(self)
        while True:  # redraw in the (practically impossible) case that every candidate is excluded
            Theta, kappa = self.sample(rng)
            pick = pick_from_candidates(
                self.X,
                g,
                Theta,
                kappa,
                cls._transform,
                cls._learner,
                absolute=absolute,
                exclude=exclude,
                activation=cls._activation,
            )
            if pick is not None:
                return pick

    def best_many(
        self,
        G: np.ndarray,
        *,
        absolute: bool = False,
        exclude: ColumnSet | Sequence[ColumnSet | None] | None = None,
        rng: np.random.Generator | None = None,
    ) -> list[Pick]:
        """:meth:`best` once per column of ``G`` (fresh candidates for each, in column order)."""
        return best_each(self, G, absolute=absolute, exclude=exclude, rng=rng)


class PerceptronSpace(SampledSpace):
    """Random perceptrons on a training set (docs/methods/column_generation.md).

    Parameters
    ----------
    X : ndarray of shape (m, D)
        Training inputs (R = max_i ||x_i||₂ is computed here).
    n_candidates : int
        P, the number of fresh candidates drawn per oracle call.
    random_state : int, Generator or None
        Default generator when :meth:`best` gets no ``rng``.
    """

    _transform = staticmethod(sign_pm1)
    _activation = "sign"
    _learner = Perceptron

    def __init__(self, X: np.ndarray, n_candidates: int = 2000, random_state=None) -> None:
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        self.n_candidates = int(n_candidates)
        self.R = float(np.sqrt((self.X**2).sum(axis=1)).max()) if self.X.size else 0.0
        self._rng = np.random.default_rng(random_state)

    def sample(
        self, rng: np.random.Generator, P: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Draw P candidates: Θ (D × P) uniform on the sphere, κ ~ U[−R, R] (Θ read-only when it
        comes from the per-process cache of :mod:`kernbench.weak.draws`)."""
        P = self.n_candidates if P is None else P
        return draw(rng, "perceptron", self.X.shape[1], P, _unit_columns, -self.R, self.R)


def _unit_columns(G: np.ndarray) -> np.ndarray:
    """G's columns scaled to unit length, in place."""
    G /= np.linalg.norm(G, axis=0, keepdims=True)
    return G
