"""Option types shared by several verbs."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Any

import typer

from kernbench.runner.plan.cells import DEFAULT_MAX_CELLS


class Backend(StrEnum):
    """Where ``kernbench run`` computes its cells."""

    local = "local"  # loky workers on this machine (joblib)
    dask = "dask"  # a Dask cluster: --scheduler, or a LocalCluster


def path_value(value: str | Path) -> Path:
    """A path option's value; an empty one (``--out ""``) is refused, not read as ``.``."""
    if not str(value).strip():
        raise typer.BadParameter("an empty path; give a directory or file name")
    return Path(value)


MAX_CELLS_OPTION = typer.Option(
    "--max-cells", min=1, help="Refuse a spec that plans more cells than this."
)
MAX_CELLS_DEFAULT = DEFAULT_MAX_CELLS


def flags_without_a_type() -> None:
    """Typer's rich help prints a ``<bool>`` type beside every flag (``--fresh <bool>``), as if
    the flag took a value; a flag takes none, so its type column is left empty."""
    from typer.core import TyperOption

    shown = TyperOption.display_type_rich
    if getattr(shown, "flags_without_a_type", False):
        return

    def display_type_rich(self: TyperOption, ctx: Any) -> str | None:
        return None if self.is_flag else shown(self, ctx)

    display_type_rich.flags_without_a_type = True  # type: ignore[attr-defined]
    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]
