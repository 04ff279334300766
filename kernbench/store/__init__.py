"""The results store: written by the runner, read by the report.

``sqlite.py`` holds the store itself (one sqlite file per results directory), ``lock.py`` the
one-run-per-directory lock, ``merge.py`` the merge of stores from several machines
(how far a run has got is :mod:`kernbench.progress.status`, which reads the store).
"""

from kernbench.cells.identity import dumps, to_jsonable
from kernbench.cells.records import FINAL_STATUSES, STATUSES, CellRecord
from kernbench.store.sqlite import (
    CSV_FILE,
    STORE_FILE,
    Store,
    cells_frame,
    find_stores,
    read_cells,
)

__all__ = [
    "CSV_FILE",
    "FINAL_STATUSES",
    "STATUSES",
    "STORE_FILE",
    "CellRecord",
    "Store",
    "cells_frame",
    "dumps",
    "find_stores",
    "read_cells",
    "to_jsonable",
]
