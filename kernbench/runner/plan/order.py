"""The order in which cells are handed to the workers: the longest first.

A run ends when its last cell does. Handed out in spec order, a table's long cells (AdaBoost
with 1000 rounds on the largest set) can start last and leave every other worker idle while
they finish. Handed out longest first, the short cells fill the gaps at the end (the LPT rule:
the makespan is within 4/3 of the best possible).

A cell's length is what ``kernbench status`` would estimate for it from the store's ``done``
cells (:func:`kernbench.progress.status.cell_time_estimator`). A cell with no timed peer is
given a static cost, ``n_train × d × fits × rounds`` (:func:`static_cost`, the size of
:mod:`kernbench.progress.cost`), put in seconds by
the median seconds per unit cost of the cells that have an estimate (or left in its own units
when none has). The order changes no number: every cell's seeds come from its identity.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from kernbench.progress.cost import cell_units
from kernbench.progress.status import cell_time_estimator, done_times
from kernbench.runner.plan.cells import Cell

__all__ = ["longest_first", "static_cost"]


def static_cost(cell: Cell) -> float:
    """A cell's cost in arbitrary units: training rows × features × fits × rounds
    (:func:`kernbench.progress.cost.cell_units`, the size the run-time estimates use too)."""
    return cell_units(cell.dataset, cell.method, cell.protocol)


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
