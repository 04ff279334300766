"""The verbs that list what kernbench holds: ``methods`` and ``specs``."""

from __future__ import annotations

import inspect
import sys
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from kernbench.cli.render import method_table, specs_table
from kernbench.cli.state import state_of
from kernbench.errors import KernbenchError, UsageError


def methods(
    ctx: typer.Context,
    name: Annotated[
        str | None, typer.Argument(help="A method: its parameters in full (else list all).")
    ] = None,
) -> None:
    """List registered methods, or one method's parameters: default, allowed values, meaning.

    Examples: kernbench methods · kernbench methods cgens

    A plug-in file's class: kernbench methods my_method:MyClass (the file my_method.py)
    """
    if name is not None:
        describe(state_of(ctx).out, name)
        return
    from kernbench.methods import default_params, registry

    for key, cls in registry().items():
        params = ", ".join(f"{k}={v!r}" for k, v in default_params(cls).items())
        typer.echo(f"{key:<14} {cls.__name__:<14} {params}")
    list_entry_point_methods()
    typer.echo("\n`kernbench methods NAME` shows allowed values and meanings.")


def list_entry_point_methods() -> None:
    """The methods installed distributions register in the ``kernbench.methods`` group."""
    from kernbench.methods.plugins import ENTRY_POINT_GROUP, entry_point_methods

    eps = entry_point_methods()
    if not eps:
        return
    typer.echo(f"\nfrom installed packages (entry-point group {ENTRY_POINT_GROUP}):")
    for key, ep in sorted(eps.items()):
        dist = f"{ep.dist.name} {ep.dist.version}" if ep.dist is not None else "?"
        typer.echo(f"{key:<14} {ep.value}  [{dist}]")


def describe(out: Console, name: str) -> None:
    """One method: where its class lives, its summary, its path parameter and parameters."""
    from kernbench.cells.sources import PLUGIN_PREFIX
    from kernbench.methods.describe import describe_method

    try:
        cls, params = describe_method(name)
    except KeyError as exc:
        raise UsageError("NAME", f"{exc.args[0]} (`kernbench methods` lists them)") from None
    own = vars(cls).get("__doc__")  # its own: not a base's (scikit-learn's mixins have theirs)
    summary = inspect.cleandoc(own or "(no docstring)").split("\n\n", 1)[0].replace("\n", " ")
    where = f"{cls.__module__}.{cls.__qualname__}"
    if cls.__module__.startswith(PLUGIN_PREFIX):  # a plug-in file's class: the file, not a module
        where = f"{sys.modules[cls.__module__].__file__}:{cls.__qualname__} (plug-in file)"
    out.print(f"[bold]{getattr(cls, 'registry_name', name)}[/] — {where}", highlight=False)
    out.print(escape(summary), highlight=False)
    path = getattr(cls, "path_param", None)
    if path:
        out.print(f"path parameter: {path} (every grid value scored from one fit)", highlight=False)
    method_table(out, params)


def specs(ctx: typer.Context) -> None:
    """List the paper specs shipped with kernbench (run one by name from any directory).

    Examples: kernbench specs · kernbench run quickstart · kernbench run cgens-table1
    """
    from kernbench.specs.shipped import packaged_specs, specs_dir

    found = packaged_specs()
    if not found:
        raise KernbenchError("no shipped specs (this installation lacks kernbench/experiments)")
    specs_table(state_of(ctx).out, found, specs_dir())
