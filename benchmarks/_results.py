"""Writing a benchmark's result rows: one CSV under ``benchmarks/results/`` (or where asked)."""

from __future__ import annotations

import csv
import os
import platform
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any


def write_csv(
    path: str | Path, rows: Sequence[Mapping[str, Any]], fields: Iterable[str] | None = None
) -> Path:
    """Write ``rows`` to ``path`` with a header, creating its folder, and say so on stdout.

    The columns are ``fields`` if given, else every key of the rows in first-seen order.
    """
    path = Path(path)
    if fields is None:
        fields = dict.fromkeys(k for row in rows for k in row)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(fields))
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {path}")
    return path


def write_csv_with_machine(
    path: str | Path, rows: Sequence[dict[str, Any]], **machine: Any
) -> Path:
    """:func:`write_csv` with the machine's facts in every row: ``machine`` (e.g. its cores),
    the Python version and the 1-minute load average when the run ended."""
    env = {
        **machine,
        "python": platform.python_version(),
        "load_avg_1min_end": f"{os.getloadavg()[0]:.2f}",
    }
    for row in rows:
        row.update(env)
    return write_csv(path, rows)
