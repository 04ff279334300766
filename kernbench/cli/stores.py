"""The verbs that look after results stores: ``status``, ``merge``, ``restore``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kernbench.cli.options import path_value
from kernbench.cli.render import failed_table, print_lines, progress_table
from kernbench.cli.state import EXIT_CELLS_FAILED, state_of
from kernbench.errors import UsageError, printable

CONFLICTS_SHOWN = 20


def status(
    ctx: typer.Context,
    path: Annotated[Path, typer.Argument(help="A results directory (its run going on or done).")],
    by: Annotated[
        str, typer.Option("--by", help="Rows of the table: method | dataset.")
    ] = "method",
    jobs: Annotated[
        int, typer.Option("--jobs", "-j", min=1, help="Cells run at once, for the estimate.")
    ] = 1,
    failed: Annotated[
        bool, typer.Option("--failed", help="List failed and timed-out cells with their error.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the numbers as JSON.")] = False,
) -> None:
    """Show how far a run has got: cells by status, cell time, an estimate of what remains.

    Cell time is each finished cell's wall time (start to finish, waits included); CPU time is
    what the cells' own processes used (no waits; cells stored before it was recorded lack it).
    Reads the store only (read-only, without the run lock), so it is safe beside a running
    `kernbench run`. Pending cells are planned cells without a row yet (queued or running); the
    estimate of the remaining time is the mean time of done cells of the same method and
    dataset, else the method's times scaled to the dataset by the other methods' done cells on
    it, else the method's mean; divided by --jobs.

    Example: kernbench status results/multiboost_cw --jobs 2 --failed
    """
    if by not in ("method", "dataset"):
        raise UsageError("--by", f"expected method or dataset, got {by!r}")
    from kernbench.progress.lines import status_lines
    from kernbench.progress.status import read_progress
    from kernbench.store.locate import store_dir

    progress = read_progress(store_dir(path), jobs=jobs)
    if as_json:
        import json

        typer.echo(json.dumps(progress.to_dict(), indent=2))
        return
    out = state_of(ctx).out
    progress_table(out, progress, by)
    print_lines(out, status_lines(progress))
    if progress.failed and not failed:
        out.print(f"{len(progress.failed)} failed or timed-out cell(s): --failed lists them")
    if failed:
        failed_table(out, progress)


def merge(
    ctx: typer.Context,
    dirs: Annotated[list[Path], typer.Argument(help="Results directories of one experiment.")],
    out_dir: Annotated[
        Path, typer.Option("--out", parser=path_value, help="Merged results directory.")
    ],
    wait: Annotated[bool, typer.Option("--wait", help="Wait for a run holding --out.")] = False,
) -> None:
    """Combine results stores from several machines (deduplicated by cell identity).

    Finished copies of a cell that disagree are reported as conflicts (exit 1).

    Example: kernbench merge hostA/results/uci hostB/results/uci --out results/uci
    """
    from kernbench.store.merge import merge_stores

    err = state_of(ctx).err
    report = merge_stores(list(dirs), out_dir, wait=wait)
    for warning in report.warnings:
        err.print(f"warning: {warning}", highlight=False, markup=False)
    err.print(
        f"merged {len(report.sources)} store(s): {report.rows_read} rows read, "
        f"{report.duplicates} duplicates, {report.cells} cells ({report.finished} finished) "
        f"-> {report.out_dir}",
        highlight=False,
    )
    if report.conflicts:
        n = len(report.conflicts)
        err.print(f"[bold red]{n} conflict(s)[/] (same cell, different numbers):")
        for conflict in report.conflicts[:CONFLICTS_SHOWN]:
            err.print(f"  {conflict.describe()}", highlight=False, markup=False)
        if n > CONFLICTS_SHOWN:
            err.print(f"  ... and {n - CONFLICTS_SHOWN} more")
        raise typer.Exit(EXIT_CELLS_FAILED)


def restore(
    ctx: typer.Context,
    path: Annotated[Path, typer.Argument(help="The results directory whose store to restore.")],
) -> None:
    """Rebuild a damaged results store from its backup (results.backup.sqlite).

    Rows the damaged store still holds are kept too; its files are renamed, never deleted.

    Example: kernbench restore results/quickstart
    """
    from kernbench.store.backup import restore_store

    report = restore_store(path)
    aside = ", ".join(str(p) for p in report.damaged_kept_as) or "none"
    state_of(ctx).err.print(
        printable(
            f"restored {path}: {report.from_backup} cell(s) from the backup, "
            f"{report.kept_from_store} more from the damaged store; old files kept as: {aside}"
        ),
        highlight=False,
        markup=False,
    )
