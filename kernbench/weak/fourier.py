"""Sampled Fourier weak learners h(x) = s·cos(θᵀx − κ) (docs/methods/column_generation.md).

θ ~ N(0, σ⁻² I_D), κ ~ U[0, 2π]; E[h(x)h(x')] = ½·exp(−||x − x'||²/(2σ²)). The negation −h is
cos(θᵀx − κ − π) mathematically; the polarity s is stored explicitly so that the negated
training column is exact. Candidates are picked by the shared rule of
:func:`kernbench.weak.perceptron.pick_from_candidates`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kernbench.weak.draws import draw
from kernbench.weak.perceptron import SampledSpace, _stack


@dataclass(frozen=True)
class FourierFeature:
    """h(x) = polarity · cos(θᵀx − κ)."""

    theta: np.ndarray
    kappa: float
    polarity: float = 1.0

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.polarity * np.cos(np.asarray(X, dtype=np.float64) @ self.theta - self.kappa)

    def negated(self) -> FourierFeature:
        return FourierFeature(self.theta, self.kappa, -self.polarity)

    @staticmethod
    def predict_many(learners: Sequence[FourierFeature], X: np.ndarray) -> np.ndarray:
        """Outputs of many Fourier features on X in one matrix product: shape (n, J)."""
        Theta, kappa, pol = _stack(learners)
        return pol * np.cos(np.asarray(X, dtype=np.float64) @ Theta - kappa)


class FourierSpace(SampledSpace):
    """Random Fourier features on a training set.

    Parameters
    ----------
    X : ndarray of shape (m, D)
    sigma : float
        Bandwidth σ of the Gaussian kernel exp(−||x − x'||²/(2σ²)) the features approximate.
    n_candidates : int
        P, fresh candidates per oracle call (default 2000).
    random_state : int, Generator or None
        Default generator when :meth:`best` gets no ``rng``.
    """

    _transform = np.cos
    _activation = "cos"
    _learner = FourierFeature

    def __init__(
        self, X: np.ndarray, sigma: float = 1.0, n_candidates: int = 2000, random_state=None
    ) -> None:
        if not sigma > 0:
            raise ValueError(f"sigma must be positive, got {sigma!r}")
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        self.sigma = float(sigma)
        self.n_candidates = int(n_candidates)
        self._rng = np.random.default_rng(random_state)

    def sample(
        self, rng: np.random.Generator, P: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Draw P candidates: Θ (D × P) with N(0, σ⁻²) entries, κ ~ U[0, 2π] (the normals and
        κ's uniforms from the per-process cache of :mod:`kernbench.weak.draws` when seen)."""
        P = self.n_candidates if P is None else P
        normals, kappa = draw(rng, "fourier", self.X.shape[1], P, _as_drawn, 0.0, 2.0 * np.pi)
        return normals / self.sigma, kappa


def _as_drawn(G: np.ndarray) -> np.ndarray:
    return G
