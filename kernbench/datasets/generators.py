"""Synthetic datasets: Breiman's twonorm, threenorm, ringnorm, the CGENS 2-D circle toy and the
CG-Boost toy regression.

Definitions follow Breiman (1996; mlbench; DELVE) and Shen & Liu Fig. 1 (docs/datasets.md). Labels
are drawn from a fair coin (equiprobable classes), +1 for the first-named class. Each generator also
has its Bayes-optimal decision (``*_bayes_decision``), used by the figure code (Lin & Li Fig. 2
draws the threenorm boundary) and by the tests, which check the Bayes error rates.

Every function takes a ``numpy.random.Generator`` and returns ``(X, y)`` with ``X`` float64 of shape
``(n, d)`` and ``y`` int64 in {-1, +1} (the regression toy: ``y`` float64).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.special import logsumexp

__all__ = [
    "GENERATOR_VERSION",
    "twonorm",
    "threenorm",
    "ringnorm",
    "circle",
    "cgboost_toy",
    "cgboost_toy_target",
    "twonorm_bayes_decision",
    "threenorm_bayes_decision",
    "ringnorm_bayes_decision",
    "circle_bayes_decision",
    "bayes_decision",
    "default_offset",
]

#: Bumped whenever a generator's output for a given seed changes (part of dataset fingerprints).
GENERATOR_VERSION = 1


def default_offset(d: int) -> float:
    """Breiman's mean offset a = 2 / sqrt(d) (= 2/sqrt(20) for d = 20)."""
    return 2.0 / math.sqrt(d)


def _coin(n: int, rng: np.random.Generator) -> np.ndarray:
    return np.where(rng.random(n) < 0.5, 1, -1).astype(np.int64)


def _alternating(d: int, a: float) -> np.ndarray:
    return a * np.where(np.arange(d) % 2 == 0, 1.0, -1.0)  # (a, -a, a, -a, ...)


def twonorm(
    n: int, rng: np.random.Generator, d: int = 20, a: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Twonorm: class +1 ~ N(a·1, I), class -1 ~ N(-a·1, I); Bayes error Φ(-a√d) (2.3%, a=2/√d)."""
    a = default_offset(d) if a is None else a
    y = _coin(n, rng)
    X = rng.standard_normal((n, d)) + a * y[:, None]
    return X, y


def threenorm(
    n: int, rng: np.random.Generator, d: int = 20, a: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Threenorm: class +1 is ½N(a·1, I) + ½N(-a·1, I); class -1 ~ N((a,-a,a,...), I).

    Bayes error ≈ 10.5% at d = 20, a = 2/√20. Lin & Li Fig. 2 use d = 2.
    """
    a = default_offset(d) if a is None else a
    y = _coin(n, rng)
    sign = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    means = np.where(y[:, None] == 1, sign[:, None] * a, _alternating(d, a)[None, :])
    X = rng.standard_normal((n, d)) + means
    return X, y


def ringnorm(
    n: int, rng: np.random.Generator, d: int = 20, a: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Ringnorm: class +1 ~ N(0, 4I); class -1 ~ N(a·1, I).

    ``a`` defaults to 2/√d (DELVE/Breiman, Bayes error ≈ 1.3% at d = 20); Lin & Li's experiments
    match a = 1/√20 (docs/papers/lin_li.md), which a spec sets with the dataset option ``a``.
    """
    a = default_offset(d) if a is None else a
    y = _coin(n, rng)
    Z = rng.standard_normal((n, d))
    X = np.where(y[:, None] == 1, 2.0 * Z, Z + a)
    return X, y


def circle(
    n: int, rng: np.random.Generator, radius: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """CGENS 2-D toy: x ~ N(0, I₂); +1 inside the circle of radius √(2 ln 2) (balanced), else -1."""
    radius = math.sqrt(2.0 * math.log(2.0)) if radius is None else radius
    X = rng.standard_normal((n, 2))
    y = np.where(np.einsum("ij,ij->i", X, X) <= radius**2, 1, -1).astype(np.int64)
    return X, y


#: the four RBF centres of the CG-Boost toy target (Bi, Zhang & Bennett Sec. 2, Fig. 1)
CGBOOST_TOY_CENTRES = np.array([[0.5, 0.5], [-0.5, 0.5], [0.5, -0.5], [-0.5, -0.5]])


def cgboost_toy_target(X: np.ndarray, sigma2: float = 0.1) -> np.ndarray:
    """The CG-Boost Fig. 1 target f(x) = x₁ + 2x₂ + Σᵢ exp(−‖x − cᵢ‖²/σ²), cᵢ = (±½, ±½)."""
    X = np.asarray(X, dtype=float)
    d2 = ((X[:, None, :] - CGBOOST_TOY_CENTRES[None, :, :]) ** 2).sum(axis=2)
    return X[:, 0] + 2.0 * X[:, 1] + np.exp(-d2 / sigma2).sum(axis=1)


def cgboost_toy(
    n: int, rng: np.random.Generator, sigma2: float = 0.1, noise: float = 0.05
) -> tuple[np.ndarray, np.ndarray]:
    """CG-Boost toy regression (Fig. 1): x ~ U[−1, 1]², y = f(x) + N(0, noise²) (float64 y)."""
    X = rng.uniform(-1.0, 1.0, size=(n, 2))
    y = cgboost_toy_target(X, sigma2)
    if noise > 0:
        y = y + noise * rng.standard_normal(n)
    return X, y


def _decision(log_pos: np.ndarray, log_neg: np.ndarray) -> np.ndarray:
    return np.where(log_pos >= log_neg, 1, -1).astype(np.int64)  # sign(0) = +1


def twonorm_bayes_decision(X: np.ndarray, a: float | None = None) -> np.ndarray:
    """Bayes-optimal labels for twonorm (equal priors): sign(1ᵀx)."""
    X = np.asarray(X, dtype=float)
    a = default_offset(X.shape[1]) if a is None else a
    return _decision(X.sum(axis=1) * a, -X.sum(axis=1) * a)


def threenorm_bayes_decision(X: np.ndarray, a: float | None = None) -> np.ndarray:
    """Bayes-optimal labels for threenorm: compare ½N(a1)+½N(-a1) with N((a,-a,...)).

    With identity covariances the common terms cancel; log densities up to the same constant:
    log p₊(x) = logsumexp(-½‖x-a1‖², -½‖x+a1‖²) - log 2,  log p₋(x) = -½‖x-μ₂‖².
    """
    X = np.asarray(X, dtype=float)
    d = X.shape[1]
    a = default_offset(d) if a is None else a
    ones = np.full(d, a)
    plus = -0.5 * ((X - ones) ** 2).sum(axis=1)
    minus = -0.5 * ((X + ones) ** 2).sum(axis=1)
    log_pos = logsumexp(np.stack([plus, minus]), axis=0) - math.log(2.0)
    log_neg = -0.5 * ((X - _alternating(d, a)) ** 2).sum(axis=1)
    return _decision(log_pos, log_neg)


def ringnorm_bayes_decision(X: np.ndarray, a: float | None = None) -> np.ndarray:
    """Bayes-optimal labels for ringnorm: log N(x; 0, 4I) vs log N(x; a1, I)."""
    X = np.asarray(X, dtype=float)
    d = X.shape[1]
    a = default_offset(d) if a is None else a
    log_pos = -(X**2).sum(axis=1) / 8.0 - d * math.log(2.0)  # det(4I)^(-1/2) = 2^(-d)
    log_neg = -0.5 * ((X - a) ** 2).sum(axis=1)
    return _decision(log_pos, log_neg)


def circle_bayes_decision(X: np.ndarray, radius: float | None = None) -> np.ndarray:
    """The circle toy is noise-free: its Bayes decision is the labelling rule itself."""
    X = np.asarray(X, dtype=float)
    radius = math.sqrt(2.0 * math.log(2.0)) if radius is None else radius
    return np.where((X**2).sum(axis=1) <= radius**2, 1, -1).astype(np.int64)


def bayes_decision(
    function: str, params: dict[str, Any]
) -> Callable[[np.ndarray], np.ndarray] | None:
    """The Bayes-optimal labelling ``X -> ±1`` of generator ``function`` with its ``params``
    (``d``, ``a``, ``radius`` as the generator takes them), or None when it has none."""
    rule = globals().get(f"{function}_bayes_decision")
    if rule is None:
        return None
    kw = {k: v for k, v in params.items() if k in ("a", "radius")}
    return lambda X: rule(X, **kw)
