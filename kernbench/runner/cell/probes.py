"""What the runner records besides errors: the decision values of a 2-D model on a plotting grid.

With ``protocol.decision_grid: N`` a cell on two-feature data stores, in its result,
``decision_grid = {"axis_x", "axis_y", "values", "train_X", "train_y"}``: the final (refitted)
model's decision values on an N × N grid (rows along ``axis_y``), in the preprocessed feature space,
and the training points. ``kernbench plot --kind boundary`` draws them; the report never fits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from kernbench.errors import KernbenchError
from kernbench.specs.types import Protocol

#: significant digits kept of each stored decision value (the boundary is their zero level)
DIGITS = 6


@dataclass(frozen=True)
class DecisionGrid:
    """A rectangular grid of points where the final model is evaluated."""

    axis_x: np.ndarray
    axis_y: np.ndarray

    @property
    def points(self) -> np.ndarray:
        """The grid points, row-major: shape (len(axis_y) * len(axis_x), 2)."""
        xx, yy = np.meshgrid(self.axis_x, self.axis_y)
        return np.column_stack([xx.ravel(), yy.ravel()])

    def record(self, decision: np.ndarray, X_train: np.ndarray, y_train: Any) -> dict[str, Any]:
        """The JSON-ready record of ``decision`` (one value per point) and the training data."""
        values = np.asarray(decision, dtype=np.float64)
        if values.ndim != 1:
            raise KernbenchError("decision_grid needs a binary model (one decision value)")
        values = values.reshape(self.axis_y.size, self.axis_x.size)
        return {
            "axis_x": self.axis_x.tolist(),
            "axis_y": self.axis_y.tolist(),
            "values": [[float(f"{v:.{DIGITS}g}") for v in row] for row in values],
            "train_X": np.asarray(X_train, dtype=np.float64).tolist(),
            "train_y": np.asarray(y_train).tolist(),
        }


def decision_grid(X_train: np.ndarray, protocol: Protocol) -> DecisionGrid | None:
    """The plotting grid the protocol asks for on this training part (None: none asked).

    Raises
    ------
    KernbenchError
        The data do not have exactly two features (the cell is recorded as failed).
    """
    n = protocol.decision_grid
    if n is None:
        return None
    if X_train.shape[1] != 2:
        raise KernbenchError(
            f"protocol.decision_grid needs two-feature data; this dataset has {X_train.shape[1]}"
        )
    if protocol.grid_extent is not None:
        lo = np.full(2, -protocol.grid_extent)
        hi = np.full(2, protocol.grid_extent)
    else:
        lo, hi = X_train.min(axis=0), X_train.max(axis=0)
        margin = 0.1 * np.maximum(hi - lo, 1e-12)
        lo, hi = lo - margin, hi + margin
    return DecisionGrid(np.linspace(lo[0], hi[0], n), np.linspace(lo[1], hi[1], n))
