"""Fault injection for the crash-safety tests (``tests/reliability``, ``make faults``).

``KERNBENCH_FAULT_COMMIT_DELAY=<seconds>`` makes every store commit sleep inside its open
transaction, so that a SIGKILL or SIGTERM lands mid-commit. Unset, it does nothing.
"""

from __future__ import annotations

import os
import time


def inside_commit() -> None:
    """Called by the store inside each cell's transaction, just before it commits."""
    delay = os.environ.get("KERNBENCH_FAULT_COMMIT_DELAY")
    if delay:
        time.sleep(float(delay))
