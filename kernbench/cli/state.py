"""What one invocation of the command line carries from its options to its verbs and its error
guard: ``--debug``, whether the verb has begun running cells, and its two consoles.

It lives in Typer's context (``ctx.obj``), made fresh by the app's callback for each command; no
module holds it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import typer
from rich.console import Console

EXIT_OK, EXIT_CELLS_FAILED, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


def _console(stderr: bool = False) -> Console:
    # emoji off: a name such as ``:x:`` in a path or label is printed as written, never as an emoji
    return Console(stderr=stderr, soft_wrap=True, emoji=False)


@dataclass
class CliState:
    """One command's state.

    Attributes
    ----------
    debug : bool
        ``--debug``: errors raise with their traceback instead of one line.
    runs_cells : bool
        Set by ``kernbench run`` once cells may have been computed: a stop then says that the
        finished cells are saved.
    ends_with_process : bool
        The process ends with this command (the console script, :func:`kernbench.cli.main`), so
        closing what it started early need not wait for threads; False for a caller in process.
    out, err : rich.console.Console
        Standard output and standard error.
    """

    debug: bool = False
    runs_cells: bool = False
    ends_with_process: bool = False
    out: Console = field(default_factory=_console)
    err: Console = field(default_factory=lambda: _console(stderr=True))


def state_of(ctx: typer.Context | None) -> CliState:
    """The command's state in ``ctx`` (a default one when there is none: a verb called
    directly, or before the app's callback ran)."""
    found = ctx.find_object(CliState) if ctx is not None else None
    return found if found is not None else CliState()


def wide(console: Console) -> Console:
    """A console for tables: the terminal's width, or 200 columns when piped (no folding at 80)."""
    return Console(width=None if console.is_terminal else 200, emoji=False)
