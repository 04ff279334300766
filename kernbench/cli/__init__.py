"""The ``kernbench`` command line: thin verbs that parse arguments and call the library.

``app`` (the Typer app, :mod:`kernbench.cli.application`) is imported on first use, so that
:func:`main` can install the stop-signal handler before Typer and the verbs' modules load.
"""

from __future__ import annotations

import sys
from typing import Any


def main() -> None:
    """Console-script entry point (SIGINT and SIGTERM stop any verb cleanly: exit 130 or 143).

    The stop handler is installed first, before Typer and kernbench's modules are imported, so
    that a signal during start-up is kernbench's clean stop too.
    """
    from kernbench.runner.lifecycle.stop import install, leave, leave_now, stop_signal

    install()
    try:
        from kernbench.cli.application import app
        from kernbench.cli.state import CliState

        app(obj=CliState(ends_with_process=True))
    except KeyboardInterrupt:  # a stop outside every verb's guard: loading, building the parser
        if stop_signal() is None:
            raise
        sys.stderr.write("interrupted\n")
        leave_now()
    except SystemExit as exc:
        if stop_signal() is not None:  # stopped by a signal: exit now, not after seconds of GC
            leave_now()
        if exc.code is None or isinstance(exc.code, int):  # the work is done: skip the teardown
            leave(exc.code or 0)
        raise


def __getattr__(name: str) -> Any:
    """``from kernbench.cli import app``: the Typer app, imported when first asked for."""
    if name == "app":
        from kernbench.cli.application import app

        return app
    raise AttributeError(f"module 'kernbench.cli' has no attribute {name!r}")
