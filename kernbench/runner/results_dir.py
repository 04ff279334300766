"""A run's results directory: where it is by default, whether it can take a run's files, and
the status of each planned cell stored there."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from kernbench.errors import StoreError, UsageError
from kernbench.runner.plan.cells import Cell
from kernbench.specs.types import Spec
from kernbench.store import CSV_FILE, STORE_FILE, Store

__all__ = ["cell_statuses", "check_out_dir", "default_out_dir"]


def default_out_dir(spec: Spec) -> Path:
    """``results/<spec name>``."""
    return Path("results") / spec.name


def check_out_dir(out: Path) -> None:
    """Refuse, before any work, a results directory that cannot take a run's files."""
    if out.exists() and not out.is_dir():
        raise UsageError("--out", f"{out} is a file, not a results directory; choose another path")
    for name in (STORE_FILE, CSV_FILE):
        if (out / name).is_dir():
            raise StoreError(
                f"{out / name} is a directory where kernbench writes a file; move it away"
            )


def cell_statuses(spec: Spec, out_dir: Path, cells: Sequence[Cell]) -> dict[str, str]:
    """Status of each planned cell in the store (``pending`` when never recorded)."""
    check_out_dir(out_dir)
    if not (out_dir / STORE_FILE).exists():
        return {c.cell_id: "pending" for c in cells}
    with Store(out_dir) as store:
        known = store.statuses()
    return {c.cell_id: known.get(c.cell_id, "pending") for c in cells}
