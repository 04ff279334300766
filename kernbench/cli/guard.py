"""The one error guard every verb runs under: a library error is one line on stderr and exit 2
(a traceback only with ``--debug``); a stop is exit 130 or 143; anything else is exit 3."""

from __future__ import annotations

import copy
import functools
import inspect
import sqlite3
from collections.abc import Callable
from typing import Any

import typer
from rich.markup import escape

from kernbench.cli.state import EXIT_INTERNAL, EXIT_USAGE, CliState, state_of
from kernbench.errors import KernbenchError, printable


def _message(exc: BaseException) -> str:
    """A library error's one line: store and file-system faults said for people."""
    if isinstance(exc, OSError):
        from kernbench.store.boundary import describe_os_error

        return describe_os_error(exc)
    if isinstance(exc, sqlite3.Error):
        return f"results store: {exc}"
    return str(exc)


def _internal(state: CliState, what: str) -> typer.Exit:
    state.err.print(
        f"[bold red]internal error:[/] {what}\nrerun with --debug for the traceback",
        highlight=False,
    )
    return typer.Exit(EXIT_INTERNAL)


_CTX = "guard_ctx"  # the context parameter the guard adds to a verb that takes none


def _with_context(fn: Callable[..., Any]) -> tuple[inspect.Signature, str, bool]:
    """``fn``'s signature with a ``typer.Context`` parameter (its own, or one added), the
    parameter's name, and whether ``fn`` takes it."""
    sig = inspect.signature(fn, eval_str=True)
    own = [n for n, p in sig.parameters.items() if p.annotation is typer.Context]
    if own:
        return sig, own[0], True
    added = inspect.Parameter(_CTX, inspect.Parameter.KEYWORD_ONLY, annotation=typer.Context)
    return sig.replace(parameters=[*sig.parameters.values(), added]), _CTX, False


def guard(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` with library errors turned into a one-line message and exit code 2.

    The guard reads ``--debug`` from the command's context, which Typer passes to the verb's
    ``typer.Context`` parameter (added to the signature Typer sees when the verb has none).
    """
    sig, ctx_name, takes_ctx = _with_context(fn)

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        ctx = kwargs.get(ctx_name) if takes_ctx else kwargs.pop(ctx_name, None)
        state = state_of(ctx)
        try:
            return fn(*args, **kwargs)
        except typer.Exit:
            raise
        except (KernbenchError, OSError, sqlite3.Error) as exc:
            # store and file-system faults are the user's to fix, like spec errors: exit 2
            if state.debug:
                raise
            line = escape(printable(_message(exc)))
            state.err.print(f"[bold red]error:[/] {line}", highlight=False, markup=True)
            raise typer.Exit(EXIT_USAGE) from None
        except KeyboardInterrupt:
            from kernbench.runner.lifecycle.stop import exit_status

            # a verb that runs no cells has none to save
            saved = "; finished cells are saved (rerun to resume)" if state.runs_cells else ""
            state.err.print(f"interrupted{saved}")
            raise typer.Exit(exit_status()) from None
        except SystemExit as exc:  # not typer's Exit: something in the work tried to end it
            if state.debug:
                raise
            raise _internal(state, f"SystemExit({exc.code!r}) raised inside the command") from None
        except Exception as exc:
            if state.debug:
                raise
            raise _internal(state, f"{type(exc).__name__}: {escape(printable(str(exc)))}") from None

    wrapper.__signature__ = sig  # type: ignore[attr-defined]
    return wrapper


def guarded(sub: typer.Typer) -> typer.Typer:
    """A copy of a sub-app whose commands go through :func:`guard`."""
    copied = copy.copy(sub)
    copied.registered_commands = []
    for command in sub.registered_commands:
        command = copy.copy(command)
        command.callback = guard(command.callback)
        copied.registered_commands.append(command)
    return copied
