"""A C-contiguous (m, J) array that grows by appended columns, with amortised O(m) appends.

Column-generation loops append one column per iteration and read all columns every iteration
(a matrix-vector product with the current coefficients). Re-stacking a Python list each time
copies m·J numbers per iteration, O(m·J²) over a fit (a quarter of a 500-column CG-Boost fit with
2000 validation rows; benchmarks/logs/performance.md, "CG-Boost's SMO master"). The buffer
doubles its capacity instead.
"""

from __future__ import annotations

import numpy as np


class ColumnBuffer:
    """Columns of length ``m`` appended one at a time; ``view()`` is the (m, J) array so far.

    Parameters
    ----------
    m : int
        Column length.
    capacity : int
        Initial room for columns (doubled whenever exceeded).
    """

    def __init__(self, m: int, capacity: int = 16) -> None:
        self._data = np.zeros((m, max(int(capacity), 1)))
        self._J = 0

    def __len__(self) -> int:
        return self._J

    def append(self, column: np.ndarray) -> None:
        """Store ``column`` (shape (m,)) as the next column."""
        if self._J == self._data.shape[1]:
            grown = np.zeros((self._data.shape[0], 2 * self._J))
            grown[:, : self._J] = self._data
            self._data = grown
        self._data[:, self._J] = column
        self._J += 1

    @property
    def storage(self) -> np.ndarray:
        """The whole C-contiguous buffer (m, capacity); its first ``len(self)`` columns are set."""
        return self._data

    def view(self) -> np.ndarray:
        """The stored columns, shape (m, J): a view, valid until the next append."""
        return self._data[:, : self._J]


def is_sign_valued(H: np.ndarray) -> bool:
    """All entries in {−1, 0, +1}: columns that int8 stores exactly (stumps, perceptrons)."""
    return bool(np.all((H == 1.0) | (H == -1.0) | (H == 0.0)))
