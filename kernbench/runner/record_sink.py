"""Where a run's records go: held a moment, stored in shared transactions, backed up, summed up.

Only the driving process writes the store, committing each finished cell as it arrives. Records
that arrived together (the driver was busy) share one transaction (at most :data:`MAX_BATCH`),
and none is held while the next means waiting, so a killed run loses only the cells in flight
and those in the driver's hands. Every :func:`~kernbench.store.backup.backup_every` finished
cells the store is backed up. :class:`RecordSink` also keeps the :class:`RunSummary`.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kernbench.cells.records import FINAL_STATUSES, CellRecord
from kernbench.errors import KernbenchError
from kernbench.runner.cell.compute import cell_record
from kernbench.runner.plan.cells import Cell
from kernbench.store import Store
from kernbench.store.backup import backup_every, backup_store

__all__ = ["MAX_BATCH", "RecordSink", "RunSummary"]

#: at most this many finished records share one store transaction
MAX_BATCH = 64


@dataclass
class RunSummary:
    """What a run did: counts by status of the cells it planned, and where it wrote."""

    out_dir: Path
    planned: int = 0
    skipped_done: int = 0
    reused: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    failed: list[tuple[str, int, str, str]] = field(default_factory=list)
    seconds: float = 0.0
    #: CPU seconds of this run's cells (each worker's own, summed; not the driver's)
    cpu_seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    #: (category, message) -> number of this run's cells that raised that warning
    warned: Counter[tuple[str, str]] = field(default_factory=Counter)

    @property
    def ok(self) -> bool:
        return not self.failed

    def count(self, rec: CellRecord, replaced: bool) -> None:
        """Add one stored record (``replaced``: it took the place of the stored row)."""
        self.counts[rec.status] = self.counts.get(rec.status, 0) + 1
        self.cpu_seconds += float(rec.result.get("cpu_time_s") or 0.0)
        self.warned.update((w["category"], w["message"]) for w in rec.result.get("warnings") or ())
        if rec.status not in FINAL_STATUSES:
            why = "" if replaced else " (its earlier finished result is kept)"
            self.failed.append((rec.dataset, rec.realisation, rec.method, (rec.error or "") + why))


class RecordSink:
    """Stores a run's records as they arrive (module doc).

    Parameters
    ----------
    store : Store
        The run's store, open.
    summary : RunSummary
        Counted into as records are stored.
    provenance : dict
        Set on each record's result unless it has its own.
    on_cell : callable, optional
        Called with each record once it is stored.
    """

    def __init__(
        self,
        store: Store,
        summary: RunSummary,
        provenance: dict[str, Any],
        on_cell: Callable[[CellRecord], None] | None = None,
    ) -> None:
        self.store = store
        self.summary = summary
        self.provenance = provenance
        self.on_cell = on_cell
        self.max_batch = MAX_BATCH
        self._every = backup_every()
        self._since_backup = 0
        self._held: list[CellRecord] = []

    def add(self, rec: CellRecord, more: int = 0) -> None:
        """Hold ``rec`` while ``more`` records have already arrived behind it (up to
        :data:`MAX_BATCH`), so that records arriving together share one transaction; never
        hold one while the next record means waiting."""
        self._held.append(rec)
        if more <= 0 or len(self._held) >= self.max_batch:
            self.flush()

    def flush(self) -> None:
        """Store the held records in one transaction, then count and report them."""
        if not self._held:
            return
        batch = self._held
        for rec in batch:
            rec.result.setdefault("provenance", self.provenance)
        kept = self.store.record_many(batch)
        self._held = []  # stored: a failed transaction keeps them held
        for rec, replaced in zip(batch, kept, strict=True):
            self._since_backup += rec.status in FINAL_STATUSES
            self.summary.count(rec, replaced)
            if self.on_cell is not None:
                self.on_cell(rec)
        if self._since_backup >= self._every:
            backup_store(self.store)
            self._since_backup = 0

    def finish(self) -> None:
        """The run is over: the last records stored, a backup, ``cells.csv`` written."""
        self.flush()
        backup_store(self.store)
        self.store.export_csv()

    def stopped(self, in_flight: Iterable[Cell], why: str | None = None) -> None:
        """A stop (or a lost Dask scheduler, ``why``): the held records are stored as they are
        (finished ones as finished), the cells in flight as ``interrupted`` (a rerun retries
        them), then a backup if one can be made, and ``cells.csv``."""
        self.flush()
        for cell in list(in_flight):
            self.store.record(
                cell_record(
                    cell,
                    "interrupted",
                    error=f"the run was interrupted ({why or 'SIGINT/SIGTERM'}) while this cell "
                    "was in flight",
                    result={"provenance": self.provenance},
                )
            )
        with contextlib.suppress(KernbenchError):  # the interrupt is what to report
            backup_store(self.store)
        self.store.export_csv()

    def failed(self) -> None:
        """Something else went wrong (a full disk): store and back up what still can be."""
        with contextlib.suppress(Exception):
            self.flush()
        with contextlib.suppress(Exception):
            backup_store(self.store)
