"""Where a reproduction's hours go: cell CPU and cell time by spec × method (× dataset), top first.

Reads finished stores (read-only, without the run lock; safe beside a running ``kernbench run``)
through the code ``kernbench status`` counts with (:func:`kernbench.progress.status.read_store` and
:func:`~kernbench.progress.status.progress_of`), so its totals are those of ``kernbench status``.
Each row is one spec's method (or method on one dataset with ``--datasets``): finished cells,
their summed CPU time (what the cells' own processes used), their summed cell time (start to
finish, waits for a core included), CPU per cell, and the row's share of all the CPU listed with
the running share.
Below the table, per spec: CPU, cell time, the run's span, and the floor at ``--jobs`` cores (CPU ÷
jobs: the wall time if the cores were never idle and the cells cost what they cost here).

Usage::

    python benchmarks/reproduce_profile.py results/            # every store below results/
    python benchmarks/reproduce_profile.py results/lin_li_table1 results/lin_li_table2 \\
        --datasets --top 20 --markdown

A store is named by its spec (``lin_li_table2``). Cells a run copied from another store
(``--reuse``: their result names ``reused_from``) cost that run nothing and are left out (counted
in the spec's line as reused); ``--with-reused`` counts them with their original CPU.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from dataclasses import dataclass
from pathlib import Path

from kernbench.cells.records import FINAL_STATUSES
from kernbench.progress.status import format_seconds, progress_of, read_store
from kernbench.store import STORE_FILE, find_stores


@dataclass
class Row:
    spec: str
    method: str
    dataset: str  # "" when not split by dataset
    cells: int
    cpu: float  # summed CPU seconds of finished cells recording it (0 when none does)
    cell: float  # summed cell (wall) seconds of finished cells
    cpu_cells: int  # finished cells that record a CPU time


@dataclass
class SpecTotal:
    spec: str
    directory: Path
    planned: int
    finished: int
    cpu: float
    cell: float
    span: float | None
    reused: int = 0


def reused_cells(directory: Path) -> set[str]:
    """Ids of the cells whose result names ``reused_from`` (copied by ``run --reuse``)."""
    uri = f"file:{directory / STORE_FILE}?mode=ro"
    con = sqlite3.connect(uri, uri=True)
    try:
        rows = con.execute("SELECT cell_id, result FROM cells").fetchall()
    finally:
        con.close()
    out = set()
    for cell_id, result in rows:
        try:
            if json.loads(result or "{}").get("reused_from"):
                out.add(cell_id)
        except (ValueError, AttributeError):
            continue
    return out


def profile(
    directory: Path, *, by_dataset: bool, with_reused: bool = False
) -> tuple[list[Row], SpecTotal]:
    """The rows and totals of the store in ``directory``."""
    spec, plan, rows, _ = read_store(directory)
    reused = set() if with_reused else reused_cells(directory)
    rows = [r for r in rows if r["cell_id"] not in reused]
    whole = progress_of(spec, plan, rows, directory=directory)
    name = whole.name
    parts = (
        [(d.label, [r for r in rows if r["dataset"] == d.label]) for d in whole.by_dataset]
        if by_dataset
        else [("", rows)]
    )
    out: list[Row] = []
    for label, subset in parts:
        p = whole if not by_dataset else progress_of(spec, plan, subset, directory=directory)
        for g in p.by_method:
            if not g.finished:
                continue
            cpu_cells = sum(1 for r in subset if r["method"] == g.label and _has_cpu(r))
            out.append(
                Row(
                    spec=name,
                    method=g.label,
                    dataset=label,
                    cells=g.finished,
                    cpu=g.cpu_seconds or 0.0,
                    cell=g.cell_seconds,
                    cpu_cells=min(cpu_cells, g.finished),
                )
            )
    total = SpecTotal(
        spec=name,
        directory=directory,
        planned=whole.plan_size,
        finished=whole.finished,
        cpu=whole.cpu_seconds or 0.0,
        cell=whole.cell_seconds,
        span=whole.wall_seconds,
        reused=len(reused),
    )
    return out, total


def _has_cpu(row: dict) -> bool:
    return row.get("status") in FINAL_STATUSES and row.get("cpu_seconds") is not None


def _minutes(seconds: float) -> str:
    return format_seconds(seconds)


def render(rows: list[Row], totals: list[SpecTotal], *, top: int, jobs: int, markdown: bool) -> str:
    rows = sorted(rows, key=lambda r: (r.cpu, r.cell), reverse=True)
    all_cpu = sum(r.cpu for r in rows) or 1.0
    split = any(r.dataset for r in rows)
    head = ["spec", "method", *(["dataset"] if split else []), "cells", "CPU", "cell time"]
    head += ["CPU/cell", "share", "cum."]
    body = []
    running = 0.0
    for r in rows[: top or None]:
        running += r.cpu
        body.append(
            [
                r.spec,
                r.method,
                *([r.dataset] if split else []),
                str(r.cells),
                _minutes(r.cpu) + ("" if r.cpu_cells == r.cells else f" ({r.cpu_cells})"),
                _minutes(r.cell),
                f"{r.cpu / max(r.cpu_cells, 1):.2f} s",
                f"{100 * r.cpu / all_cpu:.1f} %",
                f"{100 * running / all_cpu:.1f} %",
            ]
        )
    lines = _table(head, body, markdown)
    shown = len(body)
    if shown < len(rows):
        rest = rows[shown:]
        lines.append(
            f"... {len(rest)} more rows: {_minutes(sum(r.cpu for r in rest))} of CPU "
            f"({100 * sum(r.cpu for r in rest) / all_cpu:.1f} %)"
        )
    lines.append("")
    head = ["spec", "cells", "CPU", "cell time", "run span", f"CPU ÷ {jobs}"]
    body = [
        [
            t.spec,
            f"{t.finished}/{t.planned}" + (f" (+{t.reused} reused)" if t.reused else ""),
            _minutes(t.cpu),
            _minutes(t.cell),
            _minutes(t.span) if t.span is not None else "-",
            _minutes(t.cpu / jobs),
        ]
        for t in sorted(totals, key=lambda t: t.cpu, reverse=True)
    ]
    cpu = sum(t.cpu for t in totals)
    body.append(["all", "", _minutes(cpu), _minutes(sum(t.cell for t in totals)), "", ""])
    body[-1][-1] = _minutes(cpu / jobs)
    lines += _table(head, body, markdown)
    return "\n".join(lines)


def _table(head: list[str], body: list[list[str]], markdown: bool) -> list[str]:
    if markdown:
        out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        return out + ["| " + " | ".join(row) + " |" for row in body]
    widths = [max(len(x) for x in col) for col in zip(head, *body, strict=True)]

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.ljust(w) if i < 3 else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        )

    return [line(head), line(["-" * w for w in widths])] + [line(r) for r in body]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path, help="stores, or parents of stores")
    parser.add_argument("--datasets", action="store_true", help="split rows by dataset")
    parser.add_argument("--top", type=int, default=25, help="rows shown (0: all)")
    parser.add_argument("--jobs", type=int, default=2, help="cores for the floor column")
    parser.add_argument("--markdown", action="store_true", help="a Markdown table")
    parser.add_argument("--with-reused", action="store_true", help="count --reuse'd cells too")
    args = parser.parse_args(argv)
    stores = [d for p in args.paths for d in find_stores(p)]
    if not stores:
        print("no results store found under " + ", ".join(map(str, args.paths)), file=sys.stderr)
        return 2
    rows: list[Row] = []
    totals: list[SpecTotal] = []
    for d in stores:
        r, t = profile(d, by_dataset=args.datasets, with_reused=args.with_reused)
        rows += r
        totals.append(t)
    print(render(rows, totals, top=args.top, jobs=args.jobs, markdown=args.markdown))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
