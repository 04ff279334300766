"""The verbs that compute cells or check a spec: ``run``, ``validate``, ``verify``.

Every call from the command line into the runner is in :func:`drive` (a run and its dry run)
and :func:`verify` (a seeded sample rerun); the rest parses options and prints.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from kernbench.cells.protocol import MAX_TIMEOUT_S
from kernbench.cli.options import MAX_CELLS_DEFAULT, MAX_CELLS_OPTION, Backend, path_value
from kernbench.cli.render import plan_table, print_lines
from kernbench.cli.state import EXIT_CELLS_FAILED, EXIT_USAGE, CliState, state_of
from kernbench.errors import KernbenchError, UsageError, printable


@dataclass(frozen=True)
class RunRequest:
    """What ``kernbench run`` was asked for, its options checked."""

    out_dir: Path | None
    jobs: int
    fresh: bool
    dry_run: bool
    realisations: int | None
    only: dict[str, Any]
    backend: str
    scheduler: str | None
    timeout_s: float | None
    wait: bool
    reuse: list[Path] = field(default_factory=list)
    max_cells: int = MAX_CELLS_DEFAULT
    threads: int | None = None


def run(
    ctx: typer.Context,
    spec: Annotated[Path, typer.Argument(help="Spec file (YAML) or shipped spec name.")],
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out", parser=path_value, help="Results directory.", show_default="results/<name>"
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
        Backend, typer.Option("--backend", help="Where cells run: local (loky) or dask.")
    ] = Backend.local,
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
    max_cells: Annotated[int, MAX_CELLS_OPTION] = MAX_CELLS_DEFAULT,
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
    from kernbench.runner.plan.cells import parse_only
    from kernbench.specs.shipped import resolve_spec

    try:
        only_map = parse_only(only or [])
    except ValueError as exc:
        raise UsageError("--only", str(exc)) from None
    if scheduler is not None and backend is Backend.dask and not dry_run:  # before any work
        from kernbench.runner.execution.dask_client import check_scheduler_address, probe_scheduler

        check_scheduler_address(scheduler)
        probe_scheduler(scheduler)
    request = RunRequest(
        out_dir, jobs, fresh, dry_run, realisations, only_map, backend.value, scheduler,
        timeout, wait, list(reuse or []), max_cells, threads,
    )  # fmt: skip
    state = state_of(ctx)
    name, summary = drive(resolve_spec(spec), request, state)
    if summary is not None:
        report_run(state, name, summary)


def drive(path: Path, req: RunRequest, state: CliState) -> tuple[str, Any]:
    """The command line's one call into the runner: workers started early for a run that will
    compute, the spec read meanwhile, then the dry run's plan or the run itself.

    Returns the spec's name and the run's summary (None for a dry run).
    """
    from kernbench.runner.execution.early_workers import start_early
    from kernbench.runner.execution.executor import worker_count
    from kernbench.store.locate import is_fresh

    computes = not req.dry_run and (req.fresh or is_fresh(path, req.out_dir))
    early = (
        start_early(
            req.backend,
            worker_count(req.jobs),
            req.scheduler,
            ends_with_command=state.ends_with_process,
        )  # fmt: skip
        if computes
        else None
    )
    with early or contextlib.nullcontext():  # workers start, and import, as the spec is read
        from kernbench.runner.options import RunOptions
        from kernbench.runner.results_dir import cell_statuses, default_out_dir
        from kernbench.runner.run import run_experiment
        from kernbench.specs.load import load_spec

        s = load_spec(path)
        check_selected_count(s, req)
        target = req.out_dir if req.out_dir is not None else default_out_dir(s)
        if req.dry_run:
            show_plan(state, s, path, target, req, cell_statuses)
            return s.name, None
        check_run_options(req)
        state.runs_cells = True  # from here a stop leaves finished cells saved
        from kernbench.cli.live import with_progress

        options = RunOptions(
            out_dir=target, jobs=req.jobs, fresh=req.fresh, realisations=req.realisations,
            only=req.only, threads=req.threads, backend=req.backend, scheduler=req.scheduler,
            timeout_s=req.timeout_s, wait=req.wait, reuse=req.reuse, max_cells=req.max_cells,
        )  # fmt: skip
        summary = with_progress(
            state.err, s.name, lambda hooks: run_experiment(s, options, hooks=hooks, early=early)
        )
    return s.name, summary


def check_selected_count(s: Any, req: RunRequest) -> None:
    """TooManyCells for a spec over ``--max-cells``, saying how many cells this run selects
    (``--realisations``, ``--only``) beside the spec's count, which the limit applies to."""
    from kernbench.runner.plan.cells import TooManyCells, count_cells

    n = count_cells(s)
    if n > req.max_cells:
        selected = count_cells(s, realisations=req.realisations, only=req.only)
        raise TooManyCells(s.name, n, req.max_cells, selected=selected)


def check_run_options(req: RunRequest) -> None:
    """The options a computing run checks once the spec is read: ``--reuse``, ``--threads``."""
    from kernbench.store import STORE_FILE

    for source in req.reuse:
        if not (source / STORE_FILE).is_file():
            raise UsageError("--reuse", f"no results store in {source}")
    if req.threads == 0:
        raise UsageError("--threads", "must not be 0 (a count, or -1 for all cores)")


def show_plan(
    state: CliState, s: Any, path: Path, target: Path, req: RunRequest, cell_statuses: Any
) -> None:
    """``--dry-run``: the plan with each cell's status, the spec in brief, a time estimate."""
    from kernbench.progress.lines import plan_counts_line, plan_estimate_lines
    from kernbench.runner.plan.cells import check_cell_count, plan_cells
    from kernbench.specs.summary import summary_with_base

    total = check_cell_count(s, req.max_cells)  # the whole spec, before any cell is built
    cells = plan_cells(s, realisations=req.realisations, only=req.only, max_cells=None)
    statuses = cell_statuses(s, target, cells)
    plan_table(state.out, s.name, cells, statuses, target, req.fresh)
    state.out.print(plan_counts_line(statuses))
    state.out.print(f"the spec (all {total} cells, before --realisations and --only):")
    print_lines(state.out, summary_with_base(s, path, total))
    print_lines(state.out, plan_estimate_lines(cells, statuses, target, req.fresh, req.jobs))


def report_run(state: CliState, name: str, summary: Any) -> None:
    """The run's summary lines, notes, warnings and unfinished cells (exit 1 when any)."""
    from kernbench.progress.lines import run_summary_lines

    lines, failed = run_summary_lines(name, summary)
    for line in lines:
        state.err.print(printable(line), highlight=False, markup=False)
    if failed:
        state.err.print(f"[bold red]{len(summary.failed)} cell(s) did not finish:[/]")
        for line in failed:
            state.err.print(printable(line), highlight=False, markup=False)
        state.err.print("rerun the same command to retry them")
        raise typer.Exit(EXIT_CELLS_FAILED)


def validate(
    ctx: typer.Context,
    specs: Annotated[list[Path], typer.Argument(help="Spec files (YAML) or shipped spec names.")],
    data: Annotated[
        bool,
        typer.Option(
            "--data/--no-data", help="Check that every dataset is in the cache or the mirror."
        ),
    ] = True,
    max_cells: Annotated[int, MAX_CELLS_OPTION] = MAX_CELLS_DEFAULT,
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
    state = state_of(ctx)
    failed = 0
    for spec in specs:
        try:
            validate_one(state, spec, data=data, max_cells=max_cells, jobs=jobs)
        except KernbenchError as exc:
            if state.debug:
                raise
            failed += 1
            state.err.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)
    if failed:
        raise typer.Exit(EXIT_USAGE)


def validate_one(state: CliState, spec: Path, *, data: bool, max_cells: int, jobs: int) -> None:
    """One spec checked (its data too, with ``data``), summarised and its run time estimated."""
    from kernbench.datasets.fetch import require_local
    from kernbench.progress.lines import estimate_lines
    from kernbench.runner.plan.cells import plan_cells
    from kernbench.specs.load import load_spec
    from kernbench.specs.shipped import resolve_spec
    from kernbench.specs.summary import summary_with_base

    path = resolve_spec(spec)
    s = load_spec(path)
    cells = plan_cells(s, max_cells=max_cells)
    if data:
        require_local(
            spec, {(c.dataset.name, c.protocol.realisations == "predefined") for c in cells}
        )
    state.out.print(
        f"{spec}: ok — {len(s.datasets)} datasets × {s.protocol.n_realisations} realisations "
        f"× {len(s.methods)} methods = {len(cells)} cells" + (", data available" if data else ""),
        highlight=False,
    )
    print_lines(state.out, summary_with_base(s, path, len(cells)))
    print_lines(state.out, estimate_lines(cells, [], jobs))


def verify(
    ctx: typer.Context,
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
    from kernbench.runner.verify import choose_sample, load_values, record_values, values_path
    from kernbench.runner.verify import verify as verify_cells
    from kernbench.specs.load import load_spec
    from kernbench.specs.shipped import resolve_spec

    out = state_of(ctx).out
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
        s, cells, sample, jobs=jobs, recorded_environment=recorded_env,
        recorded_numerics=recorded_numerics,
    )  # fmt: skip
    print_lines(out, verdict_lines(outcome, recorded_env))
    if not outcome.ok:
        raise typer.Exit(EXIT_CELLS_FAILED)


def verdict_lines(outcome: Any, recorded_env: str) -> list[str]:
    """What ``verify`` found: the cells that moved, stale ones, both environments, a verdict."""
    lines = [f"  {c.verdict}: {c.describe()}" for c in outcome.checks if c.verdict != "identical"]
    if outcome.stale:
        lines.append(
            f"  stale: {len(outcome.stale)} recorded cells are not in today's plan (the spec, "
            f"data, version or a method's revision changed): record the values again"
        )
    lines.append(f"  recorded: {recorded_env}")
    lines.append(f"  now:      {outcome.environment}")
    lines.append(outcome.verdict_line())
    return lines
