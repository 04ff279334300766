"""What a worker keeps between its cells: prepared realisations, and methods already warmed.

The cells of one realisation (one per method) need the same scaled train and test arrays. A
worker builds them once (:func:`prepared_realisation`: the realisation drawn or read, the
scaling fitted on its training part and applied) and keeps them in a cache bounded in bytes
(:data:`MAX_CACHE_BYTES`, least recently used out first). Each cell gets its own copies, in the
same memory layout, so a method that writes into its inputs cannot change another cell's data,
and the numbers are those of a fresh build.

A method's first fit in a process loads its compiled kernels from numba's on-disk cache and
fills lazy imports; in a worker that is a fixed cost of the worker, not of the cell that happens
to come first. :func:`warm_method` fits the cell's estimator once per process on a few rows of
the cell's own training data (so the kernels are the ones the cell's dtypes and layouts call)
and returns the time it took, which the cell leaves out of its own.
"""

from __future__ import annotations

import time
import warnings
from collections import OrderedDict
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from kernbench.cells.identity import dumps
from kernbench.runner.cell.preprocess import fit_scaler
from kernbench.runner.plan.cells import Cell

__all__ = ["MAX_CACHE_BYTES", "Prepared", "clear", "prepared_realisation", "warm_method"]

#: bytes of prepared realisations one worker keeps (the least recently used go first)
MAX_CACHE_BYTES = 256 << 20
#: rows of each class the warm-up fit uses
WARM_ROWS_PER_CLASS = 8


@dataclass(frozen=True)
class Prepared:
    """A realisation scaled as the cell's protocol says (fitted on the training part)."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    info: dict[str, Any]

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.X_train, self.y_train, self.X_test, self.y_test))

    def copy(self) -> Prepared:
        """Copies of the arrays (memory layout kept) and of ``info``."""
        import copy

        return Prepared(
            *(a.copy(order="K") for a in (self.X_train, self.y_train, self.X_test, self.y_test)),
            info=copy.deepcopy(self.info),
        )


_CACHE: OrderedDict[str, Prepared] = OrderedDict()
_WARMED: set[str] = set()


def clear() -> None:
    """Forget the cached realisations and the warmed methods of this process."""
    _CACHE.clear()
    _WARMED.clear()


def realisation_key(cell: Cell) -> str:
    """What the prepared arrays of ``cell`` depend on: the data (name, options, catalogue entry,
    content fingerprint), the protocol and the realisation index."""
    ds = cell.dataset
    return dumps(
        [ds.name, ds.options, ds.entry, cell.fingerprint, asdict(cell.protocol), cell.realisation]
    )


def prepared_realisation(cell: Cell) -> Prepared:
    """The scaled realisation of ``cell``: built once per worker, a fresh copy per call.

    Raises whatever :func:`kernbench.datasets.make_realisation` raises (nothing is cached then).
    """
    key = realisation_key(cell)
    hit = _CACHE.get(key)
    if hit is None:
        hit = _build(cell)
        if hit.nbytes <= MAX_CACHE_BYTES:  # one larger than the whole cache is never kept
            _CACHE[key] = hit
            while sum(p.nbytes for p in _CACHE.values()) > MAX_CACHE_BYTES:
                _CACHE.popitem(last=False)
    else:
        _CACHE.move_to_end(key)
    return hit.copy()


def _build(cell: Cell) -> Prepared:
    from kernbench.datasets import make_realisation, register_entry

    if cell.dataset.entry is not None:  # a user's dataset: make it known in this worker
        register_entry(cell.dataset.entry, origin="cell")
    real = make_realisation(
        cell.dataset.name,
        dict(cell.dataset.options),
        cell.protocol,
        cell.realisation,
        seed=cell.protocol.seed,
    )
    scale = fit_scaler(real.X_train, cell.protocol.preprocess, cell.protocol.minmax_range)
    return Prepared(scale(real.X_train), real.y_train, scale(real.X_test), real.y_test, real.info)


def warm_method(cell: Cell, estimator: Any, X: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Fit a clone of ``estimator`` once per process and method setting on a few rows of ``X``
    (:data:`WARM_ROWS_PER_CLASS` of each class); return ``(wall, cpu)`` seconds spent (0, 0 when
    warmed before). Whatever the warm-up fit raises or warns is ignored: the cell itself meets
    it again and records it."""
    key = dumps([cell.method.estimator, cell.method.params, _source(cell)])
    if key in _WARMED:
        return 0.0, 0.0
    _WARMED.add(key)
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        from sklearn.base import clone

        rows = _warm_rows(y)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clone(estimator).fit(X[rows], y[rows])
    except Exception:  # noqa: BLE001 - a warm-up only: the cell's own fit reports problems
        pass
    return time.perf_counter() - wall, time.process_time() - cpu


def _source(cell: Cell) -> Any:
    source = cell.method.source
    return None if source is None else source.record()


def _warm_rows(y: np.ndarray) -> np.ndarray:
    """The first rows of each class (regression targets: the first rows), in their order."""
    if y.dtype.kind == "f":
        return np.arange(min(len(y), 2 * WARM_ROWS_PER_CLASS))
    picks = [np.flatnonzero(y == c)[:WARM_ROWS_PER_CLASS] for c in np.unique(y)]
    return np.sort(np.concatenate(picks))
