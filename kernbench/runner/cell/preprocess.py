"""Feature scaling fitted on the training part only (docs/choices.md)."""

from __future__ import annotations

import numpy as np


def fit_scaler(
    X_train: np.ndarray, kind: str | None, minmax_range: tuple[float, float] = (-1.0, 1.0)
):
    """Return ``transform(X)`` fitted on ``X_train``.

    Parameters
    ----------
    X_train : ndarray of shape (m, D)
    kind : None | "standardize" | "minmax"
        ``standardize``: zero mean, unit (population) standard deviation per feature;
        ``minmax``: per-feature linear map of the training range onto ``minmax_range``
        (LIBSVM ``svm-scale`` semantics). Constant features map to 0 (standardize) or to the
        centre of the range (minmax).
    """
    if kind is None:
        return lambda X: np.asarray(X, dtype=np.float64)
    X_train = np.asarray(X_train, dtype=np.float64)
    if kind == "standardize":
        mean = X_train.mean(axis=0)
        scale = X_train.std(axis=0)
        scale[scale == 0.0] = 1.0
        return lambda X: (np.asarray(X, dtype=np.float64) - mean) / scale
    if kind == "minmax":
        lo, hi = minmax_range
        xmin = X_train.min(axis=0)
        span = X_train.max(axis=0) - xmin
        const = span == 0.0
        span[const] = 1.0
        centre = 0.5 * (lo + hi)

        def transform(X: np.ndarray) -> np.ndarray:
            Z = lo + (hi - lo) * (np.asarray(X, dtype=np.float64) - xmin) / span
            Z[:, const] = centre
            return Z

        return transform
    raise ValueError(f"unknown preprocessing {kind!r} (expected 'standardize' or 'minmax')")
