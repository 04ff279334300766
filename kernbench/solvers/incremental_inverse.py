"""S⁻¹ = (HᵀH + C⁻¹I_m)⁻¹, kept up to date as columns h are appended to Hᵀ (CGENS paper App. A).

Two interchangeable representations (docs/methods/column_generation.md):

``ShermanMorrisonInverse``
    the dense m × m matrix, updated by the rank-one formula (20): O(m²) memory and work per column.
``WoodburyInverse``
    S⁻¹ = C·I − C²·Hᵀ(I_J + C·HHᵀ)⁻¹H, storing H (J × m) and the Cholesky factor of the J × J
    matrix M = I_J + C·HHᵀ, bordered by one row per column: O(mJ) memory, O(mJ + J²) work per
    column or per product. Cheaper whenever J < m, and the only option when m² floats do not fit.

Both expose ``apply(V)`` (S⁻¹V), ``add_column(h)`` (returns s = S⁻¹h before the update and the
denominator 1 + hᵀs of (20), so callers can update products such as S⁻¹L by the same rank-one
formula) and ``dense()`` (S⁻¹ as a matrix, for tests).
"""

from __future__ import annotations

from typing import Literal, Protocol

import numpy as np
from scipy.linalg import blas, solve_triangular

InverseKind = Literal["sherman_morrison", "woodbury", "auto"]


class IncrementalInverse(Protocol):
    """S⁻¹ = (HᵀH + C⁻¹I)⁻¹ under column appends."""

    n_columns: int

    def apply(self, V: np.ndarray) -> np.ndarray: ...

    def add_column(self, h: np.ndarray) -> tuple[np.ndarray, float]: ...

    def dense(self) -> np.ndarray: ...


class ShermanMorrisonInverse:
    """Dense S⁻¹ updated by Sherman–Morrison (20).

    Parameters
    ----------
    n_samples : int
        m, the size of S.
    C : float
        Regularisation parameter; S starts at C⁻¹I so S⁻¹ starts at C·I.
    """

    def __init__(self, n_samples: int, C: float) -> None:
        self.C = float(C)
        self.n_columns = 0
        self._S_inv = np.asfortranarray(self.C * np.eye(n_samples))

    def apply(self, V: np.ndarray) -> np.ndarray:
        """S⁻¹V for V of shape (m,) or (m, k)."""
        return self._S_inv @ V

    def add_column(self, h: np.ndarray) -> tuple[np.ndarray, float]:
        """Append h to Hᵀ; return (s, 1 + hᵀs) with s = S⁻¹h taken before the update."""
        h = np.asarray(h, dtype=np.float64)
        s = self._S_inv @ h  # s_{J+1} = S_(J)⁻¹ h_{J+1}
        denom = 1.0 + float(h @ s)
        # (20): S_(J+1)⁻¹ = S_(J)⁻¹ − s sᵀ / (1 + hᵀs), rank-one BLAS update in place
        self._S_inv = blas.dger(-1.0 / denom, s, s, a=self._S_inv, overwrite_a=True)
        self.n_columns += 1
        return s, denom

    def dense(self) -> np.ndarray:
        """S⁻¹ as an (m, m) array (a copy)."""
        return np.array(self._S_inv)


class WoodburyInverse:
    """S⁻¹ in the Woodbury form C·I − C²·Hᵀ(I_J + C·HHᵀ)⁻¹H, with a bordered Cholesky factor.

    Parameters
    ----------
    n_samples : int
        m.
    C : float
        Regularisation parameter.
    capacity : int
        Initial room for columns (grown by doubling when exceeded).
    """

    def __init__(self, n_samples: int, C: float, capacity: int = 64) -> None:
        self.C = float(C)
        self.n_columns = 0
        self._m = n_samples
        cap = max(int(capacity), 1)
        self._H = np.zeros((cap, n_samples))  # rows are the appended columns h_j
        self._chol = np.zeros((cap, cap))  # lower-triangular factor of M = I_J + C·H Hᵀ

    def _grow(self) -> None:
        cap = 2 * self._H.shape[0]
        H = np.zeros((cap, self._m))
        H[: self.n_columns] = self._H[: self.n_columns]
        chol = np.zeros((cap, cap))
        chol[: self.n_columns, : self.n_columns] = self._chol[: self.n_columns, : self.n_columns]
        self._H, self._chol = H, chol

    def apply(self, V: np.ndarray) -> np.ndarray:
        """S⁻¹V for V of shape (m,) or (m, k)."""
        J = self.n_columns
        if J == 0:
            return self.C * V
        H = self._H[:J]
        R = self._chol[:J, :J]
        Z = solve_triangular(R, H @ V, lower=True, check_finite=False)
        X = solve_triangular(R, Z, lower=True, trans="T", check_finite=False)  # M⁻¹HV
        return self.C * V - self.C**2 * (H.T @ X)  # Woodbury: S⁻¹ = C·I − C²Hᵀ M⁻¹ H

    def add_column(self, h: np.ndarray) -> tuple[np.ndarray, float]:
        """Append h to Hᵀ; return (s, 1 + hᵀs) with s = S⁻¹h taken before the update."""
        h = np.asarray(h, dtype=np.float64)
        s = self.apply(h)
        denom = 1.0 + float(h @ s)
        J = self.n_columns
        if J == self._H.shape[0]:
            self._grow()
        # border M with a = C·H h and d = 1 + C·hᵀh; the Schur complement d − ‖r‖² is ≥ 1
        d = 1.0 + self.C * float(h @ h)
        if J:
            a = self.C * (self._H[:J] @ h)
            r = solve_triangular(self._chol[:J, :J], a, lower=True, check_finite=False)
            self._chol[J, :J] = r
            d -= float(r @ r)
        self._chol[J, J] = np.sqrt(max(d, 1.0))
        self._H[J] = h
        self.n_columns = J + 1
        return s, denom

    def dense(self) -> np.ndarray:
        """S⁻¹ as an (m, m) array."""
        return self.apply(np.eye(self._m))


def make_inverse(
    kind: InverseKind, n_samples: int, C: float, max_columns: int
) -> ShermanMorrisonInverse | WoodburyInverse:
    """Build the representation named by ``kind``.

    ``"auto"`` picks Woodbury when at most ``max_columns`` < m columns will be appended (its work
    per column, O(mJ + J²), is then below Sherman–Morrison's O(m²), and it never stores m² floats),
    and Sherman–Morrison otherwise.
    """
    if kind == "auto":
        kind = "woodbury" if max_columns < n_samples else "sherman_morrison"
    if kind == "sherman_morrison":
        return ShermanMorrisonInverse(n_samples, C)
    if kind == "woodbury":
        return WoodburyInverse(n_samples, C, capacity=min(max_columns, 1024))
    raise ValueError(
        f"unknown inverse kind {kind!r}; expected 'sherman_morrison', 'woodbury' or 'auto'"
    )
