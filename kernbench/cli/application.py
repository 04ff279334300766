"""The ``kernbench`` Typer app: its global options, and each verb family's verbs registered
under the one error guard.

Exit codes: 0 all good (a run: every planned cell done); 1 some cells failed; 2 usage, spec or
data error (message on stderr, no traceback unless ``--debug``); 3 internal error; 130 stopped
by SIGINT (Ctrl-C), 143 stopped by SIGTERM (128 + the signal's number, as a shell reports a
process the signal killed).
"""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from kernbench.cli import catalogue, results, stores
from kernbench.cli import run as run_verbs
from kernbench.cli.guard import guard, guarded
from kernbench.cli.options import flags_without_a_type
from kernbench.cli.paper import paper_app
from kernbench.cli.state import EXIT_OK, CliState
from kernbench.datasets.cli import data_app

flags_without_a_type()


#: the click that Typer parses with (its own copy in recent Typers), read from a public class
_CLICK_ERRORS = sys.modules[
    next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException").__module__
]
_NO_ARGS_IS_HELP: tuple[type[BaseException], ...] = tuple(
    c for c in [getattr(_CLICK_ERRORS, "NoArgsIsHelpError", None)] if c is not None
)


class OneLineUsageErrors(TyperGroup):
    """The app's command group, whose command-line errors (an unknown option, a value of the
    wrong type or out of its choices) are one line on stderr and exit 2, as every verb's own
    errors are, instead of Typer's box under the usage text."""

    def main(  # type: ignore[override]
        self,
        args: Any = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:  # a caller that handles click's exceptions itself
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except _NO_ARGS_IS_HELP as exc:  # `kernbench` alone: the help
            exc.show()  # type: ignore[attr-defined]
            sys.exit(exc.exit_code)  # type: ignore[attr-defined]
        except _CLICK_ERRORS.ClickException as exc:
            ctx = getattr(exc, "ctx", None)
            where = f"{ctx.command_path}: " if ctx is not None else ""
            hint = f" (`{ctx.command_path} --help`)" if ctx is not None else ""
            typer.echo(f"error: {where}{exc.format_message()}{hint}", err=True)
            sys.exit(exc.exit_code)
        except typer.Abort:
            typer.echo("aborted", err=True)
            sys.exit(1)
        # Typer returns an Exit's code, or the verb's value (None) when it ends normally
        sys.exit(code if isinstance(code, int) else 0)


app = typer.Typer(
    name="kernbench",
    cls=OneLineUsageErrors,
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
