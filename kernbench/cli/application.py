"""The ``kernbench`` Typer app: its global options, and each verb family's verbs registered
under the one error guard.

Exit codes: 0 all good (a run: every planned cell done); 1 some cells failed; 2 usage, spec or
data error (message on stderr, no traceback unless ``--debug``); 3 internal error; 130 stopped
by SIGINT (Ctrl-C), 143 stopped by SIGTERM (128 + the signal's number, as a shell reports a
process the signal killed).
"""

from __future__ import annotations

from typing import Annotated

import typer

from kernbench.cli import catalogue, results, stores
from kernbench.cli import run as run_verbs
from kernbench.cli.guard import guard, guarded
from kernbench.cli.options import flags_without_a_type
from kernbench.cli.paper import paper_app
from kernbench.cli.state import EXIT_OK, CliState
from kernbench.datasets.cli import data_app

flags_without_a_type()

app = typer.Typer(
    name="kernbench",
    help="Reproducible comparisons of kernel machines and boosting ensembles.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _print_version(value: bool) -> None:
    if value:
        import kernbench

        typer.echo(f"kernbench {kernbench.__version__}")
        raise typer.Exit(EXIT_OK)


@app.callback()
def _main(
    ctx: typer.Context,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks on errors.")] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version", help="Print the version and exit.", is_eager=True, callback=_print_version
        ),
    ] = False,
) -> None:
    """kernbench: run experiment specs, tabulate and plot results."""
    # the console script passes its own state (``ends_with_process``); a caller in process none
    state = ctx.obj if isinstance(ctx.obj, CliState) else CliState()
    state.debug = debug
    ctx.obj = state


# the order of `kernbench --help` and docs/cli.md
VERBS = (
    run_verbs.run,
    stores.merge,
    run_verbs.validate,
    run_verbs.verify,
    catalogue.specs,
    results.table,
    results.significance,
    results.plot,
    stores.status,
    results.report,
    catalogue.methods,
    stores.restore,
)
for verb in VERBS:
    app.command(verb.__name__)(guard(verb))
app.add_typer(guarded(data_app), name="data", help="Datasets: list, info, fetch, verify.")
app.add_typer(
    guarded(paper_app),
    name="paper",
    help="Paper-specific steps: ExRM Table 3 and equivalence, MultiBoost_cw convergence, Fig. 6.",
)
