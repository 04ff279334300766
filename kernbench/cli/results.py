"""The verbs that read results stores: ``table``, ``significance``, ``plot``, ``report``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from kernbench.cli.options import path_value
from kernbench.cli.state import state_of
from kernbench.errors import UsageError, printable

PATH_ARGUMENT = typer.Argument(help="A results directory or a parent of several.")


def selection(spec_path: Path | None) -> Any:
    """The cells of the spec at ``spec_path`` (None: each store's own recorded spec)."""
    if spec_path is None:
        return None
    from kernbench.report import Selection
    from kernbench.runner.plan.cells import plan_cells
    from kernbench.specs.load import load_spec, spec_to_dict

    s = load_spec(spec_path)
    ids = frozenset(c.cell_id for c in plan_cells(s))
    return Selection(spec=spec_to_dict(s), cell_ids=ids)


def check_value(value: str | None) -> None:
    """UsageError unless ``--value`` names a value a cell records."""
    from kernbench.cells.records import VALUES

    if value is not None and value not in VALUES:
        raise UsageError("--value", f"expected one of {', '.join(VALUES)}, got {value!r}")


def table(
    ctx: typer.Context,
    path: Annotated[Path, PATH_ARGUMENT],
    fmt: Annotated[
        str | None, typer.Option("--format", help="md | latex | csv.", show_default="the spec's")
    ] = None,
    value: Annotated[
        str | None,
        typer.Option("--value", help="What to tabulate.", show_default="the spec's table.value"),
    ] = None,
    reference: Annotated[
        bool, typer.Option("--reference/--no-reference", help="Published numbers beside ours.")
    ] = True,
    out_file: Annotated[
        Path | None, typer.Option("--out", parser=path_value, help="Write to FILE too.")
    ] = None,
    spec: Annotated[
        Path | None,
        typer.Option(
            "--spec", help="Show this spec's cells.", show_default="the spec last run there"
        ),
    ] = None,
) -> None:
    """Print paper-style tables (mean ± spread, best in bold, average ranks, published values).

    A table shows exactly the cells of one spec: the one last run into the results directory, or
    the one given with --spec; cells of other specs stored there are counted in a note.

    Example: kernbench table results/quickstart --format latex
    """
    from kernbench.store.locate import stores_at

    if fmt is not None and fmt not in ("md", "latex", "csv"):
        raise UsageError("--format", f"expected md, latex or csv, got {fmt!r}")
    check_value(value)
    chosen = selection(spec)
    err = state_of(ctx).err
    texts = [table_text(err, d, fmt, value, reference, chosen) for d in stores_at(path)]
    joined = "\n\n".join(texts)
    typer.echo(joined)
    if out_file is not None:
        from kernbench.files.writing import write_text_file

        write_text_file(out_file, joined + "\n")


def table_text(
    err: Console, directory: Path, fmt: str | None, value: str | None, reference: bool, chosen: Any
) -> str:
    """One store's table as text; the spec's own markdown table is kept as its table.md."""
    from kernbench.report import build_table, render_table, write_table_md

    tab = build_table(directory, reference=reference, value=value, selection=chosen)
    if tab.environment_warning:
        err.print(printable(f"warning: {tab.environment_warning}"), highlight=False, markup=False)
    text = render_table(tab, fmt=fmt or tab.format)
    if (fmt or tab.format) == "md" and value is None:
        try:
            write_table_md(directory, text)
        except OSError as exc:  # a read-only store is still tabulated, to stdout
            from kernbench.store.boundary import describe_os_error

            note = printable(f"note: table.md not written ({describe_os_error(exc)})")
            err.print(note, highlight=False, markup=False)
    return text


def significance(
    path: Annotated[Path, PATH_ARGUMENT],
    control: Annotated[
        str | None,
        typer.Option(
            "--control", help="Compare every method with this one.", show_default="all pairs"
        ),
    ] = None,
    alpha: Annotated[
        float, typer.Option("--alpha", help="Significance level.", min=1e-6, max=0.5)
    ] = 0.05,
    value: Annotated[
        str | None,
        typer.Option("--value", help="What to compare.", show_default="the spec's table.value"),
    ] = None,
    timeouts: Annotated[
        str,
        typer.Option("--timeouts", help="exclude: leave such data sets out; loss: rank it last."),
    ] = "exclude",
    spec: Annotated[
        Path | None,
        typer.Option(
            "--spec", help="Use this spec's cells.", show_default="the spec last run there"
        ),
    ] = None,
    bayes: Annotated[
        bool,
        typer.Option(
            "--bayes",
            help="Also the Bayesian signed-rank test over data sets and the Bayesian correlated "
            "t-test per data set (posterior probabilities of better / equivalent / worse).",
        ),
    ] = False,
    rope: Annotated[
        float | None,
        typer.Option(
            "--rope",
            min=0.0,
            help="With --bayes: the region of practical equivalence, ± this many units of the "
            "value (points of error).",
            show_default="1",
        ),
    ] = None,
    leave_out: Annotated[
        str | None,
        typer.Option(
            "--leave-out",
            help="Comma-separated data sets to leave out (a sensitivity check); named in the "
            "output.",
        ),
    ] = None,
) -> None:
    """Statistics over data sets: average ranks, Friedman / Iman–Davenport, Nemenyi CD,
    Holm-corrected Wilcoxon (exact), win/tie/loss, per-dataset corrected resampled t-tests;
    with --bayes the Bayesian tests; with --control one verdict per method.

    Example: kernbench significance results/grand --bayes --control SVM-Perc
    """
    from kernbench.store.locate import stores_at

    check_value(value)
    if timeouts not in ("exclude", "loss"):
        raise UsageError("--timeouts", f"expected exclude or loss, got {timeouts!r}")
    if rope is not None and not bayes:
        raise UsageError("--rope", "only with --bayes")
    options = dict(alpha=alpha, control=control, timeouts=timeouts, bayes=bayes, rope=rope)
    dropped = [d.strip() for d in (leave_out or "").split(",") if d.strip()]
    chosen = selection(spec)
    for directory in stores_at(path):
        typer.echo(comparison_text(directory, chosen, value, dropped, options))


def comparison_text(
    directory: Path, chosen: Any, value: str | None, dropped: list[str], options: dict[str, Any]
) -> str:
    """One store's statistics as markdown, under the experiment's title."""
    from kernbench.report.collect import load_experiment
    from kernbench.report.significance import build_comparison
    from kernbench.report.significance_text import render_comparison

    exp = load_experiment(directory, chosen)
    unknown = [d for d in dropped if d not in exp.datasets]
    if unknown:
        raise UsageError(
            "--leave-out",
            f"no data set {', '.join(unknown)} in {directory} "
            f"(data sets: {', '.join(exp.datasets)})",
        )
    chosen_value = value or str(exp.table_spec.get("value", "test_error"))
    try:
        comp = build_comparison(exp, value=chosen_value, leave_out=dropped, **options)
    except ValueError as exc:
        raise UsageError("--control", str(exc)) from None
    return f"# {exp.title}\n\n{render_comparison(comp)}"


def plot(
    ctx: typer.Context,
    path: Annotated[
        Path | None,
        typer.Argument(help="A results directory or a parent of several (not with --kind list)."),
    ] = None,
    kind: Annotated[
        str, typer.Option("--kind", help="A plot kind (`--kind list` shows them all).")
    ] = "trace",
    out_dir: Annotated[
        Path | None, typer.Option("--out", parser=path_value, help="Directory for the PNGs.")
    ] = None,
    spec: Annotated[
        Path | None,
        typer.Option(
            "--spec", help="Draw this spec's cells.", show_default="the spec last run there"
        ),
    ] = None,
) -> None:
    """Draw figures from a results store (PNG); `kernbench plot --kind list` lists the kinds.

    Example: kernbench plot results/quickstart --kind trace --out figures/
    """
    from kernbench.report import PLOT_KINDS, plot_traces
    from kernbench.store.locate import stores_at

    if kind == "list":
        for name, builder in sorted(PLOT_KINDS.items()):
            typer.echo(f"{name:<16} {getattr(builder, 'plot_help', '')}")
        return
    if kind not in PLOT_KINDS:
        from kernbench.files.checking import _suggest

        raise UsageError(
            "--kind",
            f"unknown kind {kind!r}{_suggest(kind, PLOT_KINDS)} (`--kind list` describes them: "
            f"{', '.join(sorted(PLOT_KINDS))})",
        )
    if path is None:
        raise UsageError("PATH", "missing: give a results directory (`kernbench plot DIR`)")
    chosen = selection(spec)
    out = state_of(ctx).out
    for directory in stores_at(path):
        target = out_dir if out_dir is not None else directory / "figures"
        for png in plot_traces(directory, target, kind=kind, selection=chosen):
            out.print(str(png), highlight=False)


def report(
    ctx: typer.Context,
    path: Annotated[Path, PATH_ARGUMENT],
    html: Annotated[
        bool,
        typer.Option(
            "--html",
            help="Write a self-contained report.html per directory (the one format: the default).",
        ),
    ] = True,
    reference: Annotated[
        bool, typer.Option("--reference/--no-reference", help="Published numbers beside ours.")
    ] = True,
    control: Annotated[
        str | None,
        typer.Option(
            "--control",
            help="Statistics against this method: Bayesian posteriors and a verdict per method.",
            show_default="the best-ranked method's posteriors, no verdicts",
        ),
    ] = None,
    rope: Annotated[
        float | None,
        typer.Option(
            "--rope",
            min=0.0,
            help="The Bayesian region of practical equivalence, ± this many units of the value.",
            show_default="1 point for errors",
        ),
    ] = None,
) -> None:
    """Write a report per results directory: table, statistics, figures, provenance, failed cells.

    Example: kernbench report results/   (index.html links the pages of a tree)
    Example: kernbench report results/grand --control SVM-Perc
    """
    from kernbench.report.html import write_html_reports
    from kernbench.store.locate import no_store

    try:
        pages = write_html_reports(path, reference=reference, control=control, rope=rope)
    except ValueError as exc:
        if control is None or "--control" not in str(exc):
            raise
        raise UsageError("--control", str(exc)) from None
    if not pages:
        raise no_store(path)
    out = state_of(ctx).out
    for page in pages:
        out.print(str(page), highlight=False)
