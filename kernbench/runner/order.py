"""The order in which cells are handed to the workers: the longest first.

A run ends when its last cell does. Handed out in spec order, a table's long cells (AdaBoost
with 1000 rounds on the largest set) can start last and leave every other worker idle while
they finish. Handed out longest first, the short cells fill the gaps at the end (the LPT rule:
the makespan is within 4/3 of the best possible).

A cell's length is what ``kernbench status`` would estimate for it from the store's ``done``
cells (:func:`kernbench.store.progress.cell_time_estimator`). A cell with no timed peer is
given a static cost, ``n_train × d × fits × rounds`` (:func:`static_cost`), put in seconds by
the median seconds per unit cost of the cells that have an estimate (or left in its own units
when none has). The order changes no number: every cell's seeds come from its identity.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any

from kernbench.runner.plan import Cell
from kernbench.store.progress import cell_time_estimator, done_times

__all__ = ["longest_first", "static_cost"]

#: parameters that count a method's rounds (boosting iterations, solver passes), first found wins
ROUND_PARAMS = ("n_estimators", "max_iter", "n_iter", "T")
#: rows assumed for a dataset whose size the catalogue does not give
UNKNOWN_ROWS = 1000


def static_cost(cell: Cell) -> float:
    """A cell's cost in arbitrary units: training rows × features × fits × rounds.

    Fits are the grid's points times the CV folds, plus the refit; rounds the first of
    :data:`ROUND_PARAMS` the method's parameters set (1 when none).
    """
    rows, features = _size(cell)
    points = math.prod(len(values) for values in cell.method.grid.values())
    fits = points * max(cell.protocol.cv_folds, 1) + 1 if cell.method.grid else 1
    rounds = next(
        (
            float(v)
            for k in ROUND_PARAMS
            if isinstance(v := cell.method.params.get(k), int | float) and v > 0
        ),
        1.0,
    )
    return float(rows * features * fits * rounds)


def longest_first(cells: Sequence[Cell], rows: list[dict[str, Any]] = ()) -> list[Cell]:
    """``cells`` sorted by estimated time, longest first (ties: dataset, realisation, method).

    Parameters
    ----------
    cells : sequence of Cell
    rows : list of dict
        The store's cell rows (:meth:`kernbench.store.Store.summaries`): the ``done`` ones time
        the estimate.
    """
    estimate = cell_time_estimator(done_times(list(rows))) if rows else None
    timed = {
        c.cell_id: t
        for c in cells
        if estimate is not None and (t := estimate(c.method.label, c.dataset.label)[0])
    }
    costs = {c.cell_id: static_cost(c) for c in cells}
    ratios = [timed[i] / costs[i] for i in timed if costs[i] > 0]
    per_unit = statistics.median(ratios) if ratios else 1.0
    seconds = {c.cell_id: timed.get(c.cell_id, costs[c.cell_id] * per_unit) for c in cells}
    return sorted(
        cells,
        key=lambda c: (-seconds[c.cell_id], c.dataset.label, c.realisation, c.method.label),
    )


def _size(cell: Cell) -> tuple[float, float]:
    """Training rows and features of ``cell``'s dataset, from its options and the catalogue."""
    options = cell.dataset.options
    n, d = options.get("n_train"), options.get("d")
    if n is None or d is None:
        try:
            from kernbench.datasets import get_dataset

            entry = get_dataset(cell.dataset.name)
            total, d = entry.n, d if d is not None else entry.d
        except Exception:  # noqa: BLE001 - an unknown size only weakens the order
            total = None
        if n is None:
            n = _train_rows(total, cell.protocol.train_size)
    return float(n or UNKNOWN_ROWS), float(d or 1)


def _train_rows(total: int | None, train_size: Any) -> float:
    if isinstance(train_size, int) and not isinstance(train_size, bool) and train_size > 1:
        return float(train_size)
    if total is None:
        return float(UNKNOWN_ROWS)
    if isinstance(train_size, float) and 0 < train_size < 1:
        return total * train_size
    return float(total)
