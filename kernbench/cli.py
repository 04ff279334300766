"""The ``kernbench`` command line: thin verbs that parse arguments and call the library.

Exit codes: 0 all good (a run: every planned cell done); 1 some cells failed; 2 usage, spec or
data error (message on stderr, no traceback unless ``--debug``); 3 internal error; 130 stopped
by SIGINT (Ctrl-C), 143 stopped by SIGTERM (128 + the signal's number, as a shell reports a
process the signal killed).
"""

from __future__ import annotations

import copy
import functools
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from kernbench.datasets.cli import data_app
from kernbench.errors import KernbenchError, UsageError, printable
from kernbench.runner.plan import DEFAULT_MAX_CELLS
from kernbench.spec.types import MAX_TIMEOUT_S

app = typer.Typer(
    name="kernbench",
    help="Reproducible comparisons of kernel machines and boosting ensembles.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _flags_without_a_type() -> None:
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


_flags_without_a_type()
# emoji off: a name such as ``:x:`` in a path or label is printed as written, never as an emoji
out = Console(soft_wrap=True, emoji=False)
err = Console(stderr=True, soft_wrap=True, emoji=False)
_STATE = {"debug": False, "runs_cells": False}

EXIT_OK, EXIT_CELLS_FAILED, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


def _guard(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Library errors -> a one-line message and exit code 2 (tracebacks only with --debug)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except typer.Exit:
            raise
        except (KernbenchError, OSError, sqlite3.Error) as exc:
            # store and file-system faults are the user's to fix, like spec errors: exit 2
            if _STATE["debug"]:
                raise
            if isinstance(exc, OSError):
                from kernbench.store.boundary import describe_os_error

                message = describe_os_error(exc)
            elif isinstance(exc, sqlite3.Error):
                message = f"results store: {exc}"
            else:
                message = str(exc)
            err.print(
                f"[bold red]error:[/] {escape(printable(message))}", highlight=False, markup=True
            )
            raise typer.Exit(EXIT_USAGE) from None
        except KeyboardInterrupt:
            from kernbench.runner.stop import exit_status

            if _STATE.get("runs_cells"):
                err.print("interrupted; finished cells are saved (rerun to resume)")
            else:  # a verb that runs no cells has none to save
                err.print("interrupted")
            raise typer.Exit(exit_status()) from None
        except SystemExit as exc:  # not typer's Exit: something in the work tried to end it
            if _STATE["debug"]:
                raise
            err.print(
                f"[bold red]internal error:[/] SystemExit({exc.code!r}) raised inside the "
                "command\nrerun with --debug for the traceback",
                highlight=False,
            )
            raise typer.Exit(EXIT_INTERNAL) from None
        except Exception as exc:
            if _STATE["debug"]:
                raise
            detail = escape(printable(str(exc)))
            err.print(
                f"[bold red]internal error:[/] {type(exc).__name__}: {detail}\n"
                "rerun with --debug for the traceback",
                highlight=False,
            )
            raise typer.Exit(EXIT_INTERNAL) from None

    return wrapper


def _no_store(path: Path) -> KernbenchError:
    """The error for a results path without a store, saying whether the path exists at all."""
    if not path.exists():
        from kernbench.spec.shipped import results_hint

        return KernbenchError(
            f"{path}: no such file or directory (a results directory expected){results_hint(path)}"
        )
    return KernbenchError(f"no results store at or below {path} (run `kernbench run SPEC`)")


def _print_version(value: bool) -> None:
    if value:
        import kernbench

        typer.echo(f"kernbench {kernbench.__version__}")
        raise typer.Exit(EXIT_OK)


@app.callback()
def _main(
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks on errors.")] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version", help="Print the version and exit.", is_eager=True, callback=_print_version
        ),
    ] = False,
) -> None:
    """kernbench: run experiment specs, tabulate and plot results."""
    _STATE["debug"] = debug
    _STATE["runs_cells"] = False


def _path_value(value: str) -> Path:
    """A path option's value; an empty one (``--out ""``) is refused, not read as ``.``."""
    if not value.strip():
        raise typer.BadParameter("an empty path; give a directory or file name")
    return Path(value)


_MAX_CELLS_OPTION = typer.Option(
    "--max-cells", min=1, help="Refuse a spec that plans more cells than this."
)


# -- run -----------------------------------------------------------------------------------------
@app.command()
@_guard
def run(
    spec: Annotated[Path, typer.Argument(help="Spec file (YAML) or shipped spec name.")],
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out",
            parser=_path_value,
            help="Results directory.",
            show_default="results/<name>",
        ),
    ] = None,
    jobs: Annotated[
        int,
        typer.Option(
            "--jobs",
            "-j",
            min=-1,
            help="Parallel cells (-1: all cores); never more workers than cores or cells to run.",
        ),
    ] = -1,
    fresh: Annotated[bool, typer.Option("--fresh", help="Recompute finished cells too.")] = False,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="Print the plan, cell statuses, the spec in brief and an estimate of the time "
            "(from the store's done cells, else a cost model); compute nothing.",
        ),
    ] = False,
    realisations: Annotated[
        int | None,
        typer.Option("--realisations", min=1, help="Cap the number of realisations per dataset."),
    ] = None,
    only: Annotated[
        list[str] | None,
        typer.Option("--only", help="Filter cells: dataset=NAME, method=LABEL, realisation=K."),
    ] = None,
    backend: Annotated[
        str, typer.Option("--backend", help="Where cells run: local (loky) | dask.")
    ] = "local",
    scheduler: Annotated[
        str | None,
        typer.Option(
            "--scheduler", help="Dask scheduler tcp://HOST:PORT (default: a LocalCluster)."
        ),
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout",
            min=0.001,
            max=MAX_TIMEOUT_S,
            help="Per-cell limit in seconds, at most 30 days (else the spec's).",
        ),
    ] = None,
    wait: Annotated[
        bool, typer.Option("--wait", help="Queue behind a run holding the results directory.")
    ] = False,
    reuse: Annotated[
        list[Path] | None,
        typer.Option(
            "--reuse",
            help="Copy finished cells of identical identity from this results directory.",
        ),
    ] = None,
    max_cells: Annotated[int, _MAX_CELLS_OPTION] = DEFAULT_MAX_CELLS,
    threads: Annotated[
        int | None,
        typer.Option(
            "--threads",
            help="Threads per cell (-1: all cores).",
            show_default="cores / cells at once",
        ),
    ] = None,
) -> None:
    """Run an experiment: every (dataset, realisation, method) cell not already finished.

    Example: kernbench run experiments/quickstart.yaml --jobs 2 --only dataset=twonorm

    Cluster: kernbench run SPEC --backend dask --scheduler tcp://127.0.0.1:8786
    """
    import contextlib

    from kernbench.runner.backends import worker_count
    from kernbench.runner.early_workers import start_early
    from kernbench.runner.plan import check_cell_count, parse_only, plan_cells

    try:
        only_map = parse_only(only or [])
    except ValueError as exc:
        raise UsageError("--only", str(exc)) from None
    if scheduler is not None and backend == "dask" and not dry_run:  # refused before any work
        from kernbench.runner.backends import check_scheduler_address, probe_scheduler

        check_scheduler_address(scheduler)
        probe_scheduler(scheduler)
    from kernbench.spec.shipped import resolve_spec

    path = resolve_spec(spec)
    computes = not dry_run and (fresh or _fresh_results_dir(path, out_dir))
    early = start_early(backend, worker_count(jobs), scheduler) if computes else None
    with early or contextlib.nullcontext():  # workers start, and import, as the spec is read
        from kernbench.runner.execute import cell_statuses, default_out_dir, run_experiment
        from kernbench.spec.load import load_spec

        s = load_spec(path)
        _check_selected_count(s, max_cells, realisations, only_map)
        target = out_dir if out_dir is not None else default_out_dir(s)
        if dry_run:
            total = check_cell_count(s, max_cells)  # the whole spec, before any cell is built
            cells = plan_cells(s, realisations=realisations, only=only_map, max_cells=None)
            statuses = cell_statuses(s, target, cells)
            _print_plan(s, cells, statuses, target, fresh)
            out.print(f"the spec (all {total} cells, before --realisations and --only):")
            _print_summary(s, path, total)
            _print_plan_estimate(cells, statuses, target, fresh, jobs)
            return
        from kernbench.store import STORE_FILE

        for source in reuse or []:
            if not (source / STORE_FILE).is_file():
                raise UsageError("--reuse", f"no results store in {source}")
        if threads == 0:
            raise UsageError("--threads", "must not be 0 (a count, or -1 for all cores)")
        options = dict(
            threads=threads,
            backend=backend,
            scheduler=scheduler,
            timeout_s=timeout,
            wait=wait,
            reuse=reuse or [],
            max_cells=max_cells,
        )
        _STATE["runs_cells"] = True  # from here a stop leaves finished cells saved
        summary = _run_with_progress(
            run_experiment, s, target, jobs, fresh, realisations, only_map, **options
        )
    _report_run(s.name, summary)


def _check_selected_count(s, max_cells: int, realisations: int | None, only_map) -> None:
    """TooManyCells for a spec over ``--max-cells``, saying how many cells this run selects
    (``--realisations``, ``--only``) beside the spec's count, which the limit applies to."""
    from kernbench.runner.plan import TooManyCells, count_cells

    n = count_cells(s)
    if n > max_cells:
        selected = count_cells(s, realisations=realisations, only=only_map)
        raise TooManyCells(s.name, n, max_cells, selected=selected)


def _report_run(name: str, summary: Any) -> None:
    """The run's summary lines, notes, warnings and unfinished cells (exit 1 when any)."""
    for note in summary.notes:
        err.print(f"note: {printable(note)}", highlight=False, markup=False)
    counts = ", ".join(f"{n} {k}" for k, n in sorted(summary.counts.items())) or "nothing to do"
    reused = f", {summary.reused} reused from --reuse" if summary.reused else ""
    err.print(
        f"{name}: {summary.planned} cells planned, {summary.skipped_done} already finished"
        f"{reused}; this run: {counts} in {summary.seconds:.1f} s"
        f"{f' (cells: {summary.cpu_seconds:.1f} s of CPU)' if summary.cpu_seconds else ''}"
        f" -> {summary.out_dir}",
        highlight=False,
    )
    for (category, message), n in summary.warned.most_common(3):
        line = f"note: {n} cell(s) warned {category}: {message}"
        err.print(printable(line), highlight=False, markup=False)
    if summary.warned:
        err.print(
            f"note: each cell's warnings are in {summary.out_dir}/cells.csv (column 'warnings')",
            highlight=False,
            markup=False,
        )
    if summary.failed:
        err.print(f"[bold red]{len(summary.failed)} cell(s) did not finish:[/]")
        for dataset, r, method, message in summary.failed[:20]:
            line = printable(f"  {dataset} / r={r} / {method}: {message}")
            err.print(line, highlight=False, markup=False)
        if len(summary.failed) > 20:
            more = len(summary.failed) - 20
            err.print(f"  ... and {more} more (see {summary.out_dir}/cells.csv)")
        err.print("rerun the same command to retry them")
        raise typer.Exit(EXIT_CELLS_FAILED)


def _fresh_results_dir(spec_file: Path, out_dir: Path | None) -> bool:
    """Whether the run's results directory holds no store yet: a fresh run computes cells, so
    its workers are started while the spec is read; a resumed one may have none to compute.

    Without ``--out`` the directory is ``results/<name>``, the name taken from the spec file's
    top-level ``name:`` line (a plain scan: the file is parsed, with its checks, only by the
    spec reader); a file that cannot be read or has no such line counts as not fresh.
    """
    import re

    from kernbench.files.reading import read_user_text
    from kernbench.store import STORE_FILE

    if out_dir is None:
        try:
            text = read_user_text(spec_file, 1 << 20, "spec")
        except Exception:  # noqa: BLE001 - the spec reader reports what is wrong
            return False
        found = re.search(r"^name:[ \t]*[\"']?([A-Za-z0-9_.-]+)[\"']?[ \t]*(#.*)?$", text, re.M)
        if found is None:
            return False
        out_dir = Path("results") / found.group(1)
    return not (out_dir / STORE_FILE).exists()


def _run_with_progress(run_experiment, s, target, jobs, fresh, realisations, only_map, **options):
    """Run with a bar on a terminal, timed progress lines without one (see run_progress)."""
    import contextlib

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from kernbench.progress.live import MovingEtaColumn, ProgressLines, RunClock, progress_mode

    mode, every = progress_mode(err.is_terminal)
    clock = RunClock()

    def say(line: str) -> None:
        err.print(escape(printable(line)), highlight=False)

    with contextlib.ExitStack() as stack:
        progress = stack.enter_context(
            Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("done {task.fields[done]} · failed {task.fields[failed]}"),
                TimeElapsedColumn(),
                MovingEtaColumn(),
                console=err,
                transient=False,
                disable=mode != "bar",
            )
        )
        task = progress.add_task(s.name, total=None, done=0, failed=0, clock=clock)
        if mode == "lines":
            stack.enter_context(ProgressLines(clock, s.name, say, every))

        def on_data(line: str) -> None:  # a dataset about to be downloaded
            progress.update(task, description=f"{s.name}: fetching data")
            say(line)

        def on_start(n: int) -> None:
            clock.begin(n)
            progress.update(task, total=n, description=s.name)
            if mode == "lines" and n:  # nothing to run: the summary line says so
                say(clock.line(s.name))

        def on_cell(rec) -> None:
            clock.finished(rec.status in ("done", "skipped"))
            progress.update(task, advance=1, done=clock.done, failed=clock.failed)

        return run_experiment(
            s,
            out_dir=target,
            jobs=jobs,
            fresh=fresh,
            realisations=realisations,
            only=only_map,
            on_cell=on_cell,
            on_start=on_start,
            on_data=on_data,
            **options,
        )


def _print_plan(s, cells, statuses, target: Path, fresh: bool) -> None:
    from rich.table import Table

    table = Table(title=f"{s.name}: {len(cells)} cells -> {target}", show_lines=False)
    for col in ("dataset", "realisation", "method", "estimator", "status", "action", "cell"):
        table.add_column(col)
    for c in cells:
        st = statuses[c.cell_id]
        action = "run" if fresh or st not in ("done", "skipped") else "skip"
        table.add_row(
            c.dataset.label,
            str(c.realisation),
            c.method.label,
            c.method.estimator,
            st,
            action,
            c.cell_id[:12],
        )
    out.print(table)
    counts: dict[str, int] = {}
    for st in statuses.values():
        counts[st] = counts.get(st, 0) + 1
    out.print(", ".join(f"{n} {k}" for k, n in sorted(counts.items())))


def _print_plan_estimate(cells, statuses, target: Path, fresh: bool, jobs: int) -> None:
    """The time the cells to run will take: from the store's done cells where it has timed
    peers (a pilot run's), else from the cost model (:mod:`kernbench.progress.cost`)."""
    from kernbench.store import STORE_FILE, Store

    to_run = [c for c in cells if fresh or statuses[c.cell_id] not in ("done", "skipped")]
    if not to_run:
        return
    rows: list = []
    if (target / STORE_FILE).exists():
        with Store(target) as store:
            rows = store.summaries()
    for line in _estimate_lines_of(to_run, rows, jobs):
        out.print(line, highlight=False)


def _estimate_lines_of(cells, rows, jobs: int) -> list[str]:
    """What ``cells`` will take, as an estimate: cell time, wall time at ``--jobs``, idle and
    under this machine's load, and where the numbers come from."""
    from kernbench.progress.cost import plan_cost
    from kernbench.progress.status import format_seconds

    cost = plan_cost(cells, rows, jobs=jobs)
    model = cost.cells - cost.from_store
    source = (
        f"{cost.from_store} from the store's done cells, {model} from the cost model"
        if cost.from_store
        else "from the cost model, calibrated on recorded cells"
    )
    lines = [
        f"estimate, not a measurement: the {cost.cells} cell(s) to run need ≈ "
        f"{format_seconds(cost.cpu_seconds)} of CPU ({source}); ≈ "
        f"{format_seconds(cost.wall_seconds)} at --jobs {jobs} on an idle machine "
        f"({cost.workers} at once, start-up included)"
    ]
    if cost.loaded_wall_seconds > 1.2 * cost.wall_seconds:  # the cores are busy with other work
        lines.append(
            f"  ≈ {format_seconds(cost.loaded_wall_seconds)} at this machine's load "
            f"({cost.load:.1f} on {cost.cores} cores)"
        )
    if cost.uncalibrated:
        lines.append(
            f"  no recorded cells of {', '.join(cost.uncalibrated)}: costed as a median "
            "method (a pilot run, e.g. --realisations 1, times them)"
        )
    return lines


# -- merge ---------------------------------------------------------------------------------------
@app.command()
@_guard
def merge(
    dirs: Annotated[list[Path], typer.Argument(help="Results directories of one experiment.")],
    out_dir: Annotated[
        Path, typer.Option("--out", parser=_path_value, help="Merged results directory.")
    ],
    wait: Annotated[bool, typer.Option("--wait", help="Wait for a run holding --out.")] = False,
) -> None:
    """Combine results stores from several machines (deduplicated by cell identity).

    Finished copies of a cell that disagree are reported as conflicts (exit 1).

    Example: kernbench merge hostA/results/uci hostB/results/uci --out results/uci
    """
    from kernbench.store.merge import merge_stores

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
        for conflict in report.conflicts[:20]:
            err.print(f"  {conflict.describe()}", highlight=False, markup=False)
        if len(report.conflicts) > 20:
            err.print(f"  ... and {len(report.conflicts) - 20} more")
        raise typer.Exit(EXIT_CELLS_FAILED)


# -- validate ------------------------------------------------------------------------------------
@app.command()
@_guard
def validate(
    specs: Annotated[list[Path], typer.Argument(help="Spec files (YAML) or shipped spec names.")],
    data: Annotated[
        bool,
        typer.Option(
            "--data/--no-data", help="Check that every dataset is in the cache or the mirror."
        ),
    ] = True,
    max_cells: Annotated[int, _MAX_CELLS_OPTION] = DEFAULT_MAX_CELLS,
    jobs: Annotated[
        int,
        typer.Option("--jobs", "-j", min=-1, help="Cells at once, for the time estimate."),
    ] = -1,
) -> None:
    """Check specs without running anything: keys, values, cells, and (offline) the data.

    A dataset missing from the cache and the mirror ($KERNBENCH_MIRROR) is an error naming the
    `kernbench data fetch ...` command (or the mirror setting) that makes it available. Each spec
    is summarised (data sets, methods, what it keeps of a spec it extends) with an estimate of
    its run time at --jobs, from a cost model calibrated on recorded cells.

    Example: kernbench validate experiments/*.yaml
    """
    from kernbench.runner.plan import plan_cells
    from kernbench.spec.load import load_spec
    from kernbench.spec.shipped import resolve_spec

    failed = 0
    for spec in specs:
        try:
            s = load_spec(resolve_spec(spec))
            cells = plan_cells(s, max_cells=max_cells)
            if data:
                _check_data_offline(spec, cells)
        except KernbenchError as exc:
            if _STATE["debug"]:
                raise
            failed += 1
            err.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, markup=True)
            continue
        out.print(
            f"{spec}: ok — {len(s.datasets)} datasets × {s.protocol.n_realisations} realisations "
            f"× {len(s.methods)} methods = {len(cells)} cells"
            + (", data available" if data else ""),
            highlight=False,
        )
        _print_summary(s, resolve_spec(spec), len(cells))
        for line in _estimate_lines_of(cells, [], jobs):
            out.print(line, highlight=False)
    if failed:
        raise typer.Exit(EXIT_USAGE)


def _print_summary(s, path: Path, cells: int) -> None:
    """The composed spec in a few lines: data sets, methods, protocol, what it keeps of a base."""
    from kernbench.spec.load import load_spec
    from kernbench.spec.summary import base_spec_path, summary_lines

    found = base_spec_path(path)
    base = load_spec(found[1], check_datasets=False) if found else None
    for line in summary_lines(s, cells, base, found[0] if found else ""):
        out.print(escape(printable(line)), highlight=False)


def _check_data_offline(spec: Path, cells) -> None:
    """DataError naming the fetch/mirror command when a dataset of ``cells`` is not local."""
    from kernbench.datasets.fetch import offline_hint, unavailable
    from kernbench.errors import DataError

    missing: set[str] = set()
    for predefined in (False, True):
        names = {
            c.dataset.name for c in cells if (c.protocol.realisations == "predefined") is predefined
        }
        if names:
            missing.update(unavailable(sorted(names), predefined=predefined))
    if missing:
        raise DataError(f"{spec}: {offline_hint(missing)}")


# -- verify --------------------------------------------------------------------------------------
@app.command()
@_guard
def verify(
    spec: Annotated[Path, typer.Argument(help="Spec file (YAML) or shipped spec name.")],
    values: Annotated[
        Path | None,
        typer.Option(
            "--values",
            help="The values file (default: the shipped experiments/values/<spec name>.csv).",
        ),
    ] = None,
    budget_s: Annotated[
        float,
        typer.Option(
            "--budget",
            min=0.0,
            help="Recorded CPU seconds of the sample (cells drawn until it is spent).",
        ),
    ] = 300.0,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the sample.")] = 0,
    jobs: Annotated[int, typer.Option("--jobs", "-j", help="Parallel workers.")] = 1,
    record: Annotated[
        Path | None,
        typer.Option(
            "--record",
            help="Write the values file from this results directory instead of verifying.",
        ),
    ] = None,
) -> None:
    """Rerun a seeded sample of a spec's recorded cells and compare each with its recorded value.

    Prints one verdict line (identical, within the method's tolerance, differing) and the cells
    that moved; exits 1 when any cell differs or the values file is stale. With --record, writes
    the values file from a finished run's store instead.

    Example: kernbench verify grand --budget 600 --jobs 2
    """
    from kernbench.runner.verify import (
        choose_sample,
        load_values,
        record_values,
        values_path,
    )
    from kernbench.runner.verify import verify as verify_cells
    from kernbench.spec.load import load_spec
    from kernbench.spec.shipped import resolve_spec

    s = load_spec(resolve_spec(spec))
    path = values if values is not None else values_path(s)
    if record is not None:
        n = record_values(s, record, path)
        out.print(f"{path}: {n} cells of {s.name!r} recorded from {record}", highlight=False)
        return
    if not path.is_file():
        raise KernbenchError(
            f"no values file for {s.name!r} at {path} (write one with `kernbench verify "
            f"{spec} --record RESULTS_DIR`)"
        )
    cells, recorded_env, recorded_numerics = load_values(path)
    sample = choose_sample(cells, budget_s=budget_s, seed=seed)
    cpu = sum(c.cost for c in sample)
    out.print(
        f"{s.name}: rerunning {len(sample)} of {len(cells)} recorded cells (seed {seed}, "
        f"{cpu:.0f} s of recorded CPU, --jobs {jobs})",
        highlight=False,
    )
    outcome = verify_cells(
        s,
        cells,
        sample,
        jobs=jobs,
        recorded_environment=recorded_env,
        recorded_numerics=recorded_numerics,
    )
    for check in outcome.checks:
        if check.verdict != "identical":
            out.print(f"  {check.verdict}: {printable(check.describe())}", highlight=False)
    if outcome.stale:
        out.print(
            f"  stale: {len(outcome.stale)} recorded cells are not in today's plan (the spec, "
            f"data, version or a method's revision changed): record the values again",
            highlight=False,
        )
    out.print(f"  recorded: {printable(recorded_env)}", highlight=False)
    out.print(f"  now:      {printable(outcome.environment)}", highlight=False)
    out.print(printable(outcome.verdict_line()), highlight=False)
    if not outcome.ok:
        raise typer.Exit(EXIT_CELLS_FAILED)


# -- specs ---------------------------------------------------------------------------------------
@app.command()
@_guard
def specs() -> None:
    """List the paper specs shipped with kernbench (run one by name from any directory).

    Examples: kernbench specs · kernbench run quickstart · kernbench run cgens-table1
    """
    from rich.table import Table

    from kernbench.spec.shipped import packaged_specs, specs_dir

    found = packaged_specs()
    if not found:
        raise KernbenchError("no shipped specs (this installation lacks kernbench/experiments)")
    table = Table(title=f"shipped specs ({specs_dir()})", box=None, pad_edge=False)
    for col in ("name", "also", "title"):
        table.add_column(col, overflow="fold")
    for s in found:
        table.add_row(s.path.stem, ", ".join(s.aliases) or "-", escape(s.title))
    Console(width=None if out.is_terminal else 200, emoji=False).print(table)


# -- table ---------------------------------------------------------------------------------------
@app.command()
@_guard
def table(
    path: Annotated[Path, typer.Argument(help="A results directory or a parent of several.")],
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
        Path | None, typer.Option("--out", parser=_path_value, help="Write to FILE too.")
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
    from kernbench.cells.records import VALUES
    from kernbench.report import build_table, render_table, write_table_md

    if fmt is not None and fmt not in ("md", "latex", "csv"):
        raise UsageError("--format", f"expected md, latex or csv, got {fmt!r}")
    if value is not None and value not in VALUES:
        raise UsageError("--value", f"expected one of {', '.join(VALUES)}, got {value!r}")
    stores = _stores_at(path)
    selection = _selection(spec)
    texts = []
    for directory in stores:
        tab = build_table(directory, reference=reference, value=value, selection=selection)
        if tab.environment_warning:
            warning = printable(f"warning: {tab.environment_warning}")
            err.print(warning, highlight=False, markup=False)
        text = render_table(tab, fmt=fmt or tab.format)
        if (fmt or tab.format) == "md" and value is None:
            try:
                write_table_md(directory, text)
            except OSError as exc:  # a read-only store is still tabulated, to stdout
                from kernbench.store.boundary import describe_os_error

                note = printable(f"note: table.md not written ({describe_os_error(exc)})")
                err.print(note, highlight=False, markup=False)
        texts.append(text)
    joined = "\n\n".join(texts)
    typer.echo(joined)
    if out_file is not None:
        from kernbench.files.writing import write_text_file

        write_text_file(out_file, joined + "\n")


# -- significance --------------------------------------------------------------------------------
@app.command()
@_guard
def significance(
    path: Annotated[Path, typer.Argument(help="A results directory or a parent of several.")],
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
    from kernbench.cells.records import VALUES
    from kernbench.report.collect import load_experiment
    from kernbench.report.significance import build_comparison
    from kernbench.report.significance_text import render_comparison

    if value is not None and value not in VALUES:
        raise UsageError("--value", f"expected one of {', '.join(VALUES)}, got {value!r}")
    if timeouts not in ("exclude", "loss"):
        raise UsageError("--timeouts", f"expected exclude or loss, got {timeouts!r}")
    if rope is not None and not bayes:
        raise UsageError("--rope", "only with --bayes")
    dropped = [d.strip() for d in (leave_out or "").split(",") if d.strip()]
    selection = _selection(spec)
    for directory in _stores_at(path):
        exp = load_experiment(directory, selection)
        chosen = value or str(exp.table_spec.get("value", "test_error"))
        unknown = [d for d in dropped if d not in exp.datasets]
        if unknown:
            raise UsageError(
                "--leave-out",
                f"no data set {', '.join(unknown)} in {directory} "
                f"(data sets: {', '.join(exp.datasets)})",
            )
        try:
            comp = build_comparison(
                exp,
                value=chosen,
                alpha=alpha,
                control=control,
                timeouts=timeouts,
                bayes=bayes,
                rope=rope,
                leave_out=dropped,
            )
        except ValueError as exc:
            raise UsageError("--control", str(exc)) from None
        typer.echo(f"# {exp.title}\n\n{render_comparison(comp)}")


# -- plot ----------------------------------------------------------------------------------------
@app.command()
@_guard
def plot(
    path: Annotated[
        Path | None,
        typer.Argument(help="A results directory or a parent of several (not with --kind list)."),
    ] = None,
    kind: Annotated[
        str, typer.Option("--kind", help="A plot kind (`--kind list` shows them all).")
    ] = "trace",
    out_dir: Annotated[
        Path | None, typer.Option("--out", parser=_path_value, help="Directory for the PNGs.")
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

    if kind == "list":
        for name, builder in sorted(PLOT_KINDS.items()):
            typer.echo(f"{name:<16} {getattr(builder, 'plot_help', '')}")
        return
    if kind not in PLOT_KINDS:
        from kernbench.spec.checking import _suggest

        raise UsageError(
            "--kind",
            f"unknown kind {kind!r}{_suggest(kind, PLOT_KINDS)} (`--kind list` describes them: "
            f"{', '.join(sorted(PLOT_KINDS))})",
        )
    if path is None:
        raise UsageError("PATH", "missing: give a results directory (`kernbench plot DIR`)")
    stores = _stores_at(path)
    selection = _selection(spec)
    for directory in stores:
        target = out_dir if out_dir is not None else directory / "figures"
        for png in plot_traces(directory, target, kind=kind, selection=selection):
            out.print(str(png), highlight=False)


def _stores_at(path: Path) -> list[Path]:
    """Results directories at or below ``path``; a clear error when there is none."""
    from kernbench.store import find_stores

    stores = find_stores(path) if path.exists() else []
    if not stores:
        raise _no_store(path)
    return stores


def _selection(spec_path: Path | None):
    """The cells of the spec at ``spec_path`` (None: each store's own recorded spec)."""
    if spec_path is None:
        return None
    from kernbench.report import Selection
    from kernbench.runner.plan import plan_cells
    from kernbench.spec.load import load_spec, spec_to_dict

    s = load_spec(spec_path)
    ids = frozenset(c.cell_id for c in plan_cells(s))
    return Selection(spec=spec_to_dict(s), cell_ids=ids)


# -- status --------------------------------------------------------------------------------------
@app.command()
@_guard
def status(
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
    from kernbench.progress.status import read_progress

    progress = read_progress(_store_dir(path), jobs=jobs)
    if as_json:
        import json

        typer.echo(json.dumps(progress.to_dict(), indent=2))
        return
    _print_progress(progress, by=by, show_failed=failed)


def _store_dir(path: Path) -> Path:
    """The one results directory ``path`` names (its ``results.sqlite`` is accepted too)."""
    from kernbench.store import STORE_FILE, find_stores

    if path.is_file() and path.name == STORE_FILE:
        return path.parent
    if path.exists() and not path.is_dir():
        raise KernbenchError(f"{path} is not a directory (a results directory expected)")
    if path.is_dir() and not (path / STORE_FILE).exists():
        below = find_stores(path)
        if below:
            names = ", ".join(str(d) for d in below[:5]) + (", ..." if len(below) > 5 else "")
            raise KernbenchError(f"no results store in {path}; give one of {names}")
    if not (path / STORE_FILE).exists():
        raise _no_store(path)
    return path


def _print_progress(p, *, by: str, show_failed: bool) -> None:
    import time

    from rich.table import Table

    from kernbench.progress.status import COLUMNS, format_seconds, format_time

    groups = p.by_method if by == "method" else p.by_dataset
    shown = [c for c in COLUMNS if c in ("done", "failed", "pending") or p.counts[c]]
    table = Table(title=escape(printable(f"{p.name}: {p.directory}")), show_lines=False)
    table.add_column(by)
    for col in (*shown, "total", "cell time", "CPU time", "mean/cell", "est. remaining"):
        table.add_column(col, justify="right")

    def remaining(seconds: float | None, unestimated: int) -> str:
        if seconds is None:
            return "no estimate" if unestimated else "-"
        return format_seconds(seconds) + (f" (+{unestimated} unknown)" if unestimated else "")

    for g in groups:
        table.add_row(
            escape(g.label),
            *(str(g.counts[c]) for c in shown),
            str(g.total),
            format_seconds(g.cell_seconds) if g.finished else "-",
            format_seconds(g.cpu_seconds) if g.cpu_seconds is not None else "-",
            format_seconds(g.mean_seconds),
            remaining(g.estimate_seconds, g.unestimated),
            end_section=g is groups[-1],
        )
    est = p.estimate
    table.add_row(
        "total",
        *(str(p.counts[c]) for c in shown),
        str(p.plan_size),
        format_seconds(p.cell_seconds) if p.finished else "-",
        format_seconds(p.cpu_seconds) if p.cpu_seconds is not None else "-",
        "",
        remaining(est.cell_seconds if est.cells > est.unestimated else None, est.unestimated),
    )
    Console(width=None if out.is_terminal else 200, emoji=False).print(
        table
    )  # piped: no folding at 80
    lines = [_totals_line(p)]
    if p.finished:
        ago = format_seconds(max(0.0, time.time() - p.last_finish))
        lines.append(
            f"cell time of finished cells: {format_seconds(p.cell_seconds)}; run span: "
            f"{format_seconds(p.wall_seconds)} ({format_time(p.first_start)} to "
            f"{format_time(p.last_finish)}; last cell finished {ago} ago)"
        )
        if p.cpu_seconds is not None:
            of = "" if p.cpu_cells == p.finished else f" (the {p.cpu_cells} cells that record it)"
            lines.append(f"CPU time of finished cells: {format_seconds(p.cpu_seconds)}{of}")
    lines += _estimate_lines(p)
    lines += [f"note: {n}" for n in p.notes]
    for line in lines:
        out.print(escape(printable(line)), highlight=False)
    if p.failed and not show_failed:
        out.print(f"{len(p.failed)} failed or timed-out cell(s): --failed lists them")
    if show_failed:
        _print_failed(p)


def _totals_line(p) -> str:
    parts = [f"{p.counts['failed']} failed"]
    parts += [
        f"{p.counts[s]} {w}"
        for s, w in (("timeout", "timed out"), ("interrupted", "interrupted"))
        if p.counts[s]
    ]
    parts.append(f"{p.counts['pending']} pending")
    return f"{p.finished} of {p.plan_size} cells finished ({p.percent:.1f} %), " + ", ".join(parts)


def _estimate_lines(p) -> list[str]:
    from kernbench.progress.status import format_seconds

    est = p.estimate
    run = p.running
    asked = _run_estimate_lines(p)  # what the run going on was asked to do, first
    if run and run["fresh"] and run["left"]:  # finished cells being computed again
        return [
            f"a --fresh run (pid {run['pid']}) is computing {run['cells']} cell(s) again: "
            f"{run['left']} of them not yet recorded",
            *asked,
        ]
    if asked:
        asked.append("the whole spec, this run's cells included:")
    if not est.cells:
        return [*asked, "nothing remains to run"]
    methods = ", ".join(est.unestimated_methods)
    why = f"no done cell yet of {methods}" if methods else "their methods are unknown, see the note"
    if est.cells == est.unestimated:
        return [*asked, f"estimate: none possible yet ({why})"]
    lines = [
        *asked,
        f"estimate, not a measurement: {est.cells - est.unestimated} of {est.cells} unfinished "
        f"cell(s) need ≈ {format_seconds(est.cell_seconds)} of cell time, "
        f"≈ {format_seconds(est.wall_seconds)} at --jobs {est.jobs}",
        f"  ({est.by_dataset_mean} from the mean time of the same method and dataset, "
        f"{est.by_scaled} from the method's times scaled to the dataset by other methods' "
        f"cells on it, {est.by_method_mean} from the method's mean over other datasets)",
    ]
    if est.unestimated:
        lines.append(f"  no estimate for {est.unestimated} cell(s): {why}")
    return lines


def _run_estimate_lines(p) -> list[str]:
    """The run going on: how many of the cells it was asked for (its --realisations, --only)
    are left, and what they need (an estimate), before the whole spec's figures."""
    from kernbench.progress.status import format_seconds

    run, est = p.running, p.run_estimate
    if run is None or est is None:
        return []
    head = (
        f"the run going on (pid {run['pid']}) was asked for {run['cells']} cell(s): "
        f"{est.cells} not yet recorded"
    )
    if not est.cells or est.cells == est.unestimated:
        return [head + ("" if not est.cells else "; no estimate yet (no done cell of them)")]
    some = "" if not est.unestimated else f" ({est.cells - est.unestimated} of them)"
    return [
        f"{head}; estimate, not a measurement{some}: ≈ {format_seconds(est.cell_seconds)} of "
        f"cell time, ≈ {format_seconds(est.wall_seconds)} at --jobs {est.jobs}"
    ]


def _print_failed(p) -> None:
    from rich.table import Table

    if not p.failed:
        out.print("no failed or timed-out cells", highlight=False)
        return
    table = Table(title="failed and timed-out cells", show_lines=False)
    for col in ("dataset", "r", "method", "status", "attempts"):
        table.add_column(col)
    table.add_column("error", no_wrap=True, overflow="ellipsis")
    for f in p.failed:
        table.add_row(
            escape(f.dataset),
            str(f.realisation),
            escape(f.method),
            f.status,
            str(f.attempts),
            escape(printable(f.error)),
        )
    Console(width=None if out.is_terminal else 200, emoji=False).print(table)


# -- report --------------------------------------------------------------------------------------
@app.command()
@_guard
def report(
    path: Annotated[Path, typer.Argument(help="A results directory or a parent of several.")],
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

    try:
        pages = write_html_reports(path, reference=reference, control=control, rope=rope)
    except ValueError as exc:
        if control is None or "--control" not in str(exc):
            raise
        raise UsageError("--control", str(exc)) from None
    if not pages:
        raise _no_store(path)
    for page in pages:
        out.print(str(page), highlight=False)


# -- methods -------------------------------------------------------------------------------------
@app.command()
@_guard
def methods(
    name: Annotated[
        str | None, typer.Argument(help="A method: its parameters in full (else list all).")
    ] = None,
) -> None:
    """List registered methods, or one method's parameters: default, allowed values, meaning.

    Examples: kernbench methods · kernbench methods cgens

    A plug-in file's class: kernbench methods my_method:MyClass (the file my_method.py)
    """
    from kernbench.methods import default_params, registry

    if name is None:
        for key, cls in registry().items():
            params = ", ".join(f"{k}={v!r}" for k, v in default_params(cls).items())
            typer.echo(f"{key:<14} {cls.__name__:<14} {params}")
        _list_entry_point_methods()
        typer.echo("\n`kernbench methods NAME` shows allowed values and meanings.")
        return
    _describe_method(name)


# -- restore -------------------------------------------------------------------------------------
@app.command()
@_guard
def restore(
    path: Annotated[Path, typer.Argument(help="The results directory whose store to restore.")],
) -> None:
    """Rebuild a damaged results store from its backup (results.backup.sqlite).

    Rows the damaged store still holds are kept too; its files are renamed, never deleted.

    Example: kernbench restore results/quickstart
    """
    from kernbench.store.backup import restore_store

    report = restore_store(path)
    aside = ", ".join(str(p) for p in report.damaged_kept_as) or "none"
    err.print(
        printable(
            f"restored {path}: {report.from_backup} cell(s) from the backup, "
            f"{report.kept_from_store} more from the damaged store; old files kept as: {aside}"
        ),
        highlight=False,
        markup=False,
    )


def _list_entry_point_methods() -> None:
    """The methods installed distributions register in the ``kernbench.methods`` group."""
    from kernbench.methods.plugins import ENTRY_POINT_GROUP, entry_point_methods

    eps = entry_point_methods()
    if not eps:
        return
    typer.echo(f"\nfrom installed packages (entry-point group {ENTRY_POINT_GROUP}):")
    for key, ep in sorted(eps.items()):
        dist = f"{ep.dist.name} {ep.dist.version}" if ep.dist is not None else "?"
        typer.echo(f"{key:<14} {ep.value}  [{dist}]")


def _describe_method(name: str) -> None:
    import inspect

    from rich.table import Table

    from kernbench.methods.describe import describe_method
    from kernbench.spec.types import PLUGIN_PREFIX

    try:
        cls, params = describe_method(name)
    except KeyError as exc:
        raise UsageError("NAME", f"{exc.args[0]} (`kernbench methods` lists them)") from None
    own = vars(cls).get("__doc__")  # its own: not a base's (scikit-learn's mixins have theirs)
    summary = inspect.cleandoc(own or "(no docstring)").split("\n\n", 1)[0].replace("\n", " ")
    where = f"{cls.__module__}.{cls.__qualname__}"
    if cls.__module__.startswith(PLUGIN_PREFIX):  # a plug-in file's class: the file, not a module
        import sys

        where = f"{sys.modules[cls.__module__].__file__}:{cls.__qualname__} (plug-in file)"
    out.print(f"[bold]{getattr(cls, 'registry_name', name)}[/] — {where}", highlight=False)
    out.print(escape(summary), highlight=False)
    path = getattr(cls, "path_param", None)
    if path:
        out.print(f"path parameter: {path} (every grid value scored from one fit)", highlight=False)
    table = Table(show_lines=False, box=None, pad_edge=False)
    for col in ("parameter", "default", "allowed", "meaning"):
        table.add_column(col, overflow="fold")
    for p in params:
        table.add_row(p.name, escape(repr(p.default)), escape(p.allowed), escape(p.meaning))
    Console(width=None if out.is_terminal else 200, emoji=False).print(
        table
    )  # piped: no folding at 80


def _guarded(sub: typer.Typer) -> typer.Typer:
    """A copy of a sub-app whose commands go through :func:`_guard` (exit 2, no traceback)."""
    guarded = copy.copy(sub)
    guarded.registered_commands = []
    for command in sub.registered_commands:
        command = copy.copy(command)
        command.callback = _guard(command.callback)
        guarded.registered_commands.append(command)
    return guarded


app.add_typer(_guarded(data_app), name="data", help="Datasets: list, info, fetch, verify.")


def main() -> None:
    """Console-script entry point (SIGINT and SIGTERM stop any verb cleanly: exit 130 or 143)."""
    from kernbench.runner.early_workers import ends_with_command
    from kernbench.runner.stop import install, leave, leave_now, stop_signal

    install()
    ends_with_command()  # a refused spec need not wait for the early workers' thread
    try:
        app()
    except SystemExit as exc:
        if stop_signal() is not None:  # stopped by a signal: exit now, not after seconds of GC
            leave_now()
        if exc.code is None or isinstance(exc.code, int):  # the work is done: skip the teardown
            leave(exc.code or 0)
        raise
