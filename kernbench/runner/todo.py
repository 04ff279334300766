"""What a run has left to compute: the source cells its ``take`` methods need, dependency waves,
parameters taken from finished sources, and finished cells copied from other stores
(``--reuse``)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from kernbench.cells.records import FINAL_STATUSES, CellRecord
from kernbench.runner.cell.compute import cell_record
from kernbench.runner.plan.cells import Cell
from kernbench.specs.types import MethodSpec
from kernbench.store import Store

__all__ = ["reuse_finished", "take_parameters", "waves", "with_sources"]


def with_sources(todo: list[Cell], full: Sequence[Cell], known: Mapping[str, str]) -> list[Cell]:
    """``todo`` plus the unfinished source cells its ``take`` methods need (``--only`` may have
    left them out), sources first."""
    by_id = {c.cell_id: c for c in full}
    have = {c.cell_id for c in todo}
    extra: list[Cell] = []
    stack = [c.source_id for c in todo if c.source_id]
    while stack:
        cid = stack.pop()
        if cid in have or known.get(cid) in FINAL_STATUSES or cid not in by_id:
            continue
        have.add(cid)
        extra.append(by_id[cid])
        if by_id[cid].source_id:
            stack.append(by_id[cid].source_id)
    return extra + todo


def waves(todo: Sequence[Cell]) -> list[list[Cell]]:
    """Cells in dependency waves: a cell runs in a wave after the source it takes from.

    Every wave ends when its slowest cell does, and a core idles meanwhile. So only the cells
    that others take from (usually quick SVM selections) run in the early waves, each as early
    as its own source allows; every cell nothing takes from runs in the last wave, where the
    long cells of a table keep both cores busy to the end.
    """
    in_todo = {c.cell_id: c for c in todo}
    depth: dict[str, int] = {}

    def level(c: Cell) -> int:
        if c.cell_id not in depth:
            src = in_todo.get(c.source_id) if c.source_id else None
            depth[c.cell_id] = 0 if src is None else level(src) + 1
        return depth[c.cell_id]

    sources = {c.source_id for c in todo if c.source_id in in_todo}
    last = 1 + max((level(in_todo[s]) for s in sources), default=-1)
    by_level: dict[int, list[Cell]] = {}
    for c in todo:
        by_level.setdefault(level(c) if c.cell_id in sources else last, []).append(c)
    return [by_level[k] for k in sorted(by_level)]


def take_parameters(
    store: Store, cell: Cell, methods: Mapping[str, MethodSpec]
) -> Cell | CellRecord:
    """``cell`` with the parameters it takes from its finished source cell filled in, or a
    ``failed`` record saying which source did not finish."""
    take = cell.method.take
    if take is None:
        return cell
    from kernbench.specs.param_transforms import TRANSFORMS

    row = store.row(cell.source_id) if cell.source_id else None
    if row is None or row["status"] != "done":
        why = "was not run" if row is None else f"is {row['status']}: {row.get('error') or ''}"
        return cell_record(
            cell,
            "failed",
            error=f"takes {', '.join(take.params)} from {take.source!r} (realisation "
            f"{cell.realisation}), whose cell {why}".rstrip(": "),
        )
    chosen = {**methods[take.source].params, **(row.get("params") or {})}
    values = {
        target: TRANSFORMS[transform](chosen[param])
        for target, (param, transform) in take.params.items()
    }
    return replace(cell, taken=tuple(sorted(values.items())))


def reuse_finished(
    store: Store, todo: Sequence[Cell], sources: Sequence[str | os.PathLike[str]], out: Path
) -> set[str]:
    """Copy the ``done`` rows of ``todo``'s identities from other stores; return the ids taken."""
    wanted = {c.cell_id for c in todo}
    taken: set[str] = set()
    for source in sources:
        if Path(source).resolve() == out.resolve() or not wanted - taken:
            continue
        with Store(source) as src:
            rows = src.finished_rows(wanted - taken)
        for row in rows:
            row["result"] = {**row["result"], "reused_from": str(source)}
        store.put_rows(rows)
        taken.update(row["cell_id"] for row in rows)
    return taken
