"""Kernel columns: CG-Boost's hypothesis space, a library of kernels centred at training points.

A library S = {K_1, …, K_P} (priority order) on training points x_1..x_m gives the column matrix
K = [K¹ … K^P] of shape m × (m·P): column (p, k) is K_p(·, x_k) over the m training points. The
mixture model is f(x) = Σ_{(p,k)∈𝒲} α_pk K_p(x, x_k) (+ b). A *composite* library replaces the P
kernels by their sum Σ_p K_p (one group of m columns).

:class:`KernelColumnSpace` never forms K: the pricing scores s = Kᵀg of a set of candidate columns
are computed block by block, and computed columns are kept in a cache bounded by ``cache_bytes``
(a lazily filled m × m array per kernel when all of K fits, else a least-recently-used store of
single columns). It counts the columns it was asked to score (``n_evaluated``) and those it actually
computed (``n_computed``).

Built-in kernels: ``linear`` xᵀx′, ``quadratic`` (xᵀx′ + 1)², ``rbf`` exp(−‖x − x′‖²/σ) with σ by
default the mean of ‖x_i − x_j‖² over all ordered training pairs (i = j included). A user kernel
is any callable ``k(A, B) -> ndarray (len(A), len(B))``, optionally a ``(name, callable)`` pair.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "BUILTIN_KERNELS",
    "Kernel",
    "KernelColumn",
    "KernelColumnSpace",
    "make_kernel",
    "mean_squared_distance",
]

BUILTIN_KERNELS = ("linear", "quadratic", "rbf")


def mean_squared_distance(X: np.ndarray) -> float:
    """Mean of ‖x_i − x_j‖² over all ordered pairs (i, j) of rows of X, i = j included, in O(mD).

    Σ_ij ‖x_i − x_j‖² = 2m Σ_i ‖x_i‖² − 2‖Σ_i x_i‖², so the mean is 2·mean‖x‖² − 2‖x̄‖².
    """
    X = np.asarray(X, dtype=np.float64)
    mean = X.mean(axis=0)
    return max(0.0, 2.0 * float(np.einsum("ij,ij->", X, X)) / X.shape[0] - 2.0 * float(mean @ mean))


def _sq_dists(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    d = np.einsum("ij,ij->i", A, A)[:, None] + np.einsum("ij,ij->i", B, B)[None, :] - 2.0 * A @ B.T
    return np.maximum(d, 0.0, out=d)


@dataclass(frozen=True)
class Kernel:
    """One kernel of the library.

    Attributes
    ----------
    name : str
        ``linear``, ``quadratic``, ``rbf`` or the user kernel's name.
    sigma : float or None
        RBF width σ in exp(−‖x − x′‖²/σ) (None for other kernels).
    fn : callable or None
        A user kernel ``fn(A, B)``; None for the built-in ones.
    """

    name: str
    sigma: float | None = None
    fn: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None

    def __call__(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        """Gram block K(A, B) of shape (len(A), len(B))."""
        if self.fn is not None:
            out = np.asarray(self.fn(A, B), dtype=np.float64)
            if out.shape != (A.shape[0], B.shape[0]):
                raise ValueError(
                    f"kernel {self.name!r} returned shape {out.shape}, "
                    f"expected {(A.shape[0], B.shape[0])}"
                )
            return out
        if self.name == "linear":
            return A @ B.T
        if self.name == "quadratic":
            G = A @ B.T
            G += 1.0
            return np.square(G, out=G)
        if self.name == "rbf":
            D = _sq_dists(A, B)
            D *= -1.0 / self.sigma
            return np.exp(D, out=D)
        raise ValueError(f"unknown kernel {self.name!r}")

    def weighted_sum(self, X: np.ndarray, centres: np.ndarray, coef: np.ndarray) -> np.ndarray:
        """Σ_k coef_k K(X, c_k) over the centres with coef_k ≠ 0.

        The linear kernel collapses to X·(Σ_k coef_k c_k); the quadratic one, when it has more
        centres than the dimension, to xᵀMx + 2x·v + s with M = Σ_k coef_k c_k c_kᵀ,
        v = Σ_k coef_k c_k, s = Σ_k coef_k (the same sum, in O(d²) per point instead of O(K·d)).
        """
        nz = coef != 0
        if not nz.all():
            centres, coef = centres[nz], coef[nz]
        if coef.size == 0:
            return np.zeros(X.shape[0])
        if self.fn is None and self.name == "linear":
            return X @ (centres.T @ coef)
        if self.fn is None and self.name == "quadratic" and coef.size > X.shape[1]:
            M = (centres * coef[:, None]).T @ centres
            v = centres.T @ coef
            return np.einsum("ij,ij->i", X @ M, X) + 2.0 * (X @ v) + coef.sum()
        return self(X, centres) @ coef


def make_kernel(spec: Any, X: np.ndarray, sigma: float | None = None) -> Kernel:
    """A :class:`Kernel` from a name, a callable or a ``(name, callable)`` pair.

    Parameters
    ----------
    spec : str, callable or (str, callable)
    X : ndarray of shape (m, D)
        Training points (for the RBF width rule).
    sigma : float, optional
        RBF width; None = :func:`mean_squared_distance` of X (a zero spread falls back to 1).
    """
    if isinstance(spec, Kernel):
        return spec
    if isinstance(spec, str):
        if spec not in BUILTIN_KERNELS:
            raise ValueError(
                f"unknown kernel {spec!r}; expected one of {BUILTIN_KERNELS} or a callable"
            )
        if spec == "rbf":
            s = float(sigma) if sigma is not None else mean_squared_distance(X)
            return Kernel("rbf", sigma=s if s > 0 else 1.0)
        return Kernel(spec)
    if isinstance(spec, tuple) and len(spec) == 2 and callable(spec[1]):
        return Kernel(str(spec[0]), fn=spec[1])
    if callable(spec):
        return Kernel(getattr(spec, "__name__", "user"), fn=spec)
    raise ValueError(f"bad kernel {spec!r}: expected a name, a callable or a (name, callable) pair")


@dataclass(frozen=True)
class KernelColumn:
    """A selected column: kernel group ``group`` centred at training point ``index``.

    ``kernels`` holds the group's kernels (one for a mixture group, all of them for a composite
    group, none for the constant column); ``predict`` is Σ_q K_q(X, centre).
    """

    group: int
    index: int
    centre: np.ndarray
    kernels: tuple[Kernel, ...]

    def predict(self, X: np.ndarray) -> np.ndarray:
        if not self.kernels:
            return np.ones(X.shape[0])
        c = self.centre[None, :]
        return sum(k(X, c)[:, 0] for k in self.kernels)


class _ColumnCache:
    """Computed columns of one group: a dense m × m array when the budget allows, else an LRU."""

    def __init__(self, m: int, dense: bool, capacity: int) -> None:
        self.dense = dense
        self.capacity = max(capacity, 1)
        self._A: np.ndarray | None = None
        self._have = np.zeros(m, dtype=bool)
        self._lru: OrderedDict[int, np.ndarray] = OrderedDict()
        self._m = m

    def missing(self, idx: np.ndarray) -> np.ndarray:
        if self.dense:
            return idx[~self._have[idx]]
        return np.array([k for k in idx.tolist() if k not in self._lru], dtype=np.intp)

    def store(self, idx: np.ndarray, block: np.ndarray) -> None:
        if self.dense:
            if self._A is None:
                self._A = np.empty((self._m, self._m))
            self._A[:, idx] = block
            self._have[idx] = True
            return
        for j, k in enumerate(idx.tolist()):
            self._lru[k] = np.ascontiguousarray(block[:, j])
            self._lru.move_to_end(k)
        while len(self._lru) > self.capacity:
            self._lru.popitem(last=False)

    def fetch(self, idx: np.ndarray) -> np.ndarray | None:
        """The columns idx if all are cached (None otherwise)."""
        if self.dense:
            if self._A is None or not self._have[idx].all():
                return None
            return self._A[:, idx]
        if any(k not in self._lru for k in idx.tolist()):
            return None
        cols = [self._lru[k] for k in idx.tolist()]
        for k in idx.tolist():
            self._lru.move_to_end(k)
        return np.column_stack(cols) if cols else np.empty((self._m, 0))


class KernelColumnSpace:
    """The candidate columns K_p(·, x_k) of a kernel library on the training points.

    Parameters
    ----------
    X : ndarray of shape (m, D)
        Training points (the centres).
    kernels : sequence of Kernel
        The library in priority order.
    composite : bool, default=False
        One group with the summed kernel Σ_p K_p instead of one group per kernel.
    constant : bool, default=False
        Add a first group holding the single constant column 1 (a regularised bias, §4.1).
    cache_bytes : int, default=512 MiB
        Memory for computed columns.
    block : int, default=256
        Columns computed per block when scoring.

    Attributes
    ----------
    kernels : tuple of Kernel
        The library in priority order.
    groups : list of tuple of Kernel
        The kernels of each group (empty tuple: the constant column).
    group_names : list of str
        ``linear``, ``rbf``, ``linear+rbf`` (composite), ``constant``.
    n_evaluated, n_computed : int
        Columns scored so far, and columns computed (cache misses) so far.
    """

    def __init__(
        self,
        X: np.ndarray,
        kernels: Sequence[Kernel],
        *,
        composite: bool = False,
        constant: bool = False,
        cache_bytes: int = 512 * 2**20,
        block: int = 256,
    ) -> None:
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        self.m = self.X.shape[0]
        if not kernels:
            raise ValueError("the kernel library is empty")
        self.kernels: tuple[Kernel, ...] = tuple(kernels)
        kernel_groups = [tuple(kernels)] if composite else [(k,) for k in kernels]
        self.groups: list[tuple[Kernel, ...]] = ([()] if constant else []) + kernel_groups
        self.group_names = ["+".join(k.name for k in g) if g else "constant" for g in self.groups]
        self.block = max(int(block), 1)
        n_kernel_groups = len(kernel_groups)
        dense = n_kernel_groups * self.m * self.m * 8 <= cache_bytes
        capacity = int(cache_bytes // max(8 * self.m * n_kernel_groups, 1))
        self._caches = [_ColumnCache(self.m, dense, capacity) for _ in self.groups]
        self.n_evaluated = 0
        self.n_computed = 0

    def n_candidates(self, p: int) -> int:
        """Columns of group p (1 for the constant group, m otherwise)."""
        return 1 if not self.groups[p] else self.m

    def _compute(self, p: int, idx: np.ndarray) -> np.ndarray:
        C = self.X[idx]
        out = self.groups[p][0](self.X, C)
        for k in self.groups[p][1:]:
            out = out + k(self.X, C)
        return out

    def columns(self, p: int, idx: np.ndarray) -> np.ndarray:
        """Columns (p, k) for k in idx, shape (m, len(idx)), from the cache or computed."""
        idx = np.asarray(idx, dtype=np.intp)
        if not self.groups[p]:
            return np.ones((self.m, idx.size))
        cache = self._caches[p]
        got = cache.fetch(idx)
        if got is not None:
            return got
        miss = np.unique(cache.missing(idx))
        if miss.size:
            block = self._compute(p, miss)
            self.n_computed += int(miss.size)
            cache.store(miss, block)
            got = cache.fetch(idx)
            if got is not None:
                return got
        # the LRU could not hold them all at once: compute what is not cached
        return self._compute(p, idx)

    def column(self, p: int, k: int) -> np.ndarray:
        """The training column (p, k)."""
        return self.columns(p, np.array([k]))[:, 0].copy()

    def scores(self, p: int, g: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """s_k = Σ_i g_i K_p(x_i, x_k) for k in idx (Remarks 3.1/4.1/4.2), block by block."""
        idx = np.asarray(idx, dtype=np.intp)
        self.n_evaluated += int(idx.size)
        if not self.groups[p]:
            return np.full(idx.size, float(g.sum()))
        out = np.empty(idx.size)
        for start in range(0, idx.size, self.block):
            sl = idx[start : start + self.block]
            out[start : start + sl.size] = g @ self.columns(p, sl)
        return out

    def learner(self, p: int, k: int) -> KernelColumn:
        """The selected column (p, k) as a predictable object."""
        return KernelColumn(p, int(k), self.X[k].copy(), self.groups[p])
