"""``kernbench data``: list, inspect, fetch and verify datasets (a Typer sub-app, ``data_app``).

The main CLI mounts it with ``app.add_typer(data_app, name="data")``. Errors are raised as
:class:`~kernbench.errors.KernbenchError` (exit code 2, handled by the main app); ``verify`` exits 1
when a cached file is corrupt.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from kernbench.datasets.catalog import get_dataset, list_datasets
from kernbench.datasets.fetch import availability, data_home, fetch_datasets, verify_cache
from kernbench.errors import UsageError

__all__ = ["data_app"]

data_app = typer.Typer(
    name="data",
    help="Datasets: list the catalogue, show an entry, fetch raw files, verify the cache.",
    no_args_is_help=True,
)

_MIRROR_HELP = "Local mirror laid out like the cache (default: $KERNBENCH_MIRROR)."


def _realisations(entry) -> str:
    p = entry.predefined
    if entry.is_generated and p is None:
        return "generated"
    if p is None:
        return "random"
    if p["kind"] == "alias":
        src = get_dataset(p["dataset"]).predefined
        return f"{len(src['present'])} IDA ({p['dataset']})"
    if p["kind"] == "ida":
        return f"{len(p['present'])}/{p['total']} IDA"
    if p["kind"] == "fixed":
        return "fixed {}/{}".format(*p["sizes"])
    return "substitute {}/{}".format(*p["sizes"])


def _unsized(entry) -> str:
    return "generated" if entry.is_generated else "n not given"


@data_app.command("list")
def list_cmd(
    mirror: Annotated[Path | None, typer.Option(help=_MIRROR_HELP)] = None,
) -> None:
    """Table of every catalogued dataset.

    Example: ``KERNBENCH_MIRROR=/path/to/mirror kernbench data list``
    """
    table = Table(title=f"kernbench datasets (cache: {data_home()})")
    for col in ("name", "task", "n×d", "classes", "realisations", "source", "cached?"):
        table.add_column(col)
    for e in list_datasets():
        size = f"{e.n}×{e.d}" if e.n is not None else f"{'gen' if e.is_generated else '?'}×{e.d}"
        source = e.source + (" (substitute)" if e.substitution else "")
        table.add_row(
            e.name,
            e.task,
            size,
            str(e.classes),
            _realisations(e),
            source,
            availability(e, mirror),
        )
    Console(width=140, emoji=False).print(table)


@data_app.command("info")
def info_cmd(name: Annotated[str, typer.Argument(help="Dataset name or alias.")]) -> None:
    """The full catalogue entry of one dataset (citation, URL, labels, quirks, files).

    Example: ``kernbench data info diabetis``
    """
    e = get_dataset(name)
    console = Console(width=120, emoji=False)
    console.print(f"[bold]{e.name}[/bold] — {e.title}")
    if e.origin != "kernbench":
        console.print(f"  [cyan]{'from':>15}[/cyan]  {e.origin}")
    rows = [
        ("aliases", ", ".join(e.aliases) or "-"),
        ("task", f"{e.task}, {e.classes} classes"),
        ("size", f"{e.n} × {e.d}" if e.n is not None else f"{_unsized(e)}, d = {e.d}"),
        ("class counts", str(e.class_counts) if e.class_counts else "-"),
        ("source", e.source),
        ("url", e.url or "-"),
        ("citation", e.citation or "-"),
        ("description", e.description),
        ("labels", e.labels),
        ("encoding", e.encoding),
        ("missing values", e.missing),
        ("realisations", _realisations(e)),
        ("substitution", e.substitution or "-"),
        ("papers", ", ".join(e.papers) or "-"),
        ("availability", availability(e)),
    ]
    for key, spec in e.options.items():
        rows.append((f"option {key}", f"default {spec.get('default')!r}: {spec.get('doc', '')}"))
    for key, value in rows:
        console.print(f"  [cyan]{key:>15}[/cyan]  {value}")
    files = e.all_files()
    if files:
        console.print(f"  [cyan]{'files':>15}[/cyan]  {len(files)}")
        for f in files[:12]:
            digest = f"sha256 {f.sha256[:16]}…" if f.sha256 else "no published sha256 (unverified)"
            console.print(f"      {f.path}  {digest}")
        if len(files) > 12:
            console.print(f"      … and {len(files) - 12} more")


@data_app.command("fetch")
def fetch_cmd(
    names: Annotated[list[str] | None, typer.Argument(help="Dataset names or aliases.")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Fetch every catalogued dataset.")] = False,
    mirror: Annotated[Path | None, typer.Option(help=_MIRROR_HELP)] = None,
) -> None:
    """Download raw files into the cache (or copy them from a mirror), verifying sha256.

    Examples: ``kernbench data fetch sonar heart`` ·
    ``kernbench data fetch --all --mirror /path/to/mirror``
    """
    if all_:
        names = [e.name for e in list_datasets()]
    if not names:
        raise UsageError("NAMES", "give dataset names or --all")
    for name in names:
        get_dataset(name)  # unknown names fail before any download
    paths = fetch_datasets(names, mirror=mirror)
    typer.echo(f"{len(paths)} file(s) present and verified in {data_home()}")


@data_app.command("verify")
def verify_cmd() -> None:
    """Re-check the sha256 of every catalogued file in the cache; exit 1 if one is corrupt.

    Example: ``kernbench data verify``
    """
    rows = verify_cache()
    bad = [r for r in rows if r[1] != "ok"]
    for path, _status, detail in bad:
        typer.echo(f"CORRUPT {path}: {detail}", err=True)
    typer.echo(f"{len(rows) - len(bad)} ok, {len(bad)} corrupt (cache: {data_home()})")
    if bad:
        raise typer.Exit(1)
