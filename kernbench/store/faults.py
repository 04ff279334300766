"""Fault injection for the crash-safety tests (``tests/reliability``, ``make faults``).

Environment variables (unset, each does nothing):

``KERNBENCH_FAULT_COMMIT_DELAY=<seconds>``
    every store commit sleeps inside its open transaction, so that a SIGKILL or SIGTERM lands
    mid-commit;
``KERNBENCH_FAULT_CELL_DELAY=<seconds>``
    every cell sleeps that long before computing (on the worker), so that a scheduler or worker
    can be killed while cells are in flight;
``KERNBENCH_FAULT_MAX_PAGES=<n>``
    the store may grow to ``n`` pages only (``PRAGMA max_page_count``): sqlite then fails with
    its genuine "database or disk is full", as on a full disk;
``KERNBENCH_FAULT_ENOSPC=1``
    writing ``cells.csv`` fails with ``ENOSPC`` (no space left on device).
"""

from __future__ import annotations

import errno
import os
import time


def inside_commit() -> None:
    """Called by the store inside each cell's transaction, just before it commits."""
    delay = os.environ.get("KERNBENCH_FAULT_COMMIT_DELAY")
    if delay:
        time.sleep(float(delay))


def inside_cell() -> None:
    """Called by a worker at the start of each cell."""
    delay = os.environ.get("KERNBENCH_FAULT_CELL_DELAY")
    if delay:
        time.sleep(float(delay))


def fault_max_pages() -> int | None:
    """The injected page limit of the store, if any."""
    value = os.environ.get("KERNBENCH_FAULT_MAX_PAGES")
    return int(value) if value else None


def write_fault(path: os.PathLike[str] | str) -> None:
    """Raise ``ENOSPC`` for ``path`` when a full disk is injected."""
    if os.environ.get("KERNBENCH_FAULT_ENOSPC"):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
