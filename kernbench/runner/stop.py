"""A stop asked for by a signal: SIGINT and SIGTERM end a run cleanly, never as a failed cell.

SIGTERM is how SLURM, Kubernetes and ``timeout`` stop a job, SIGINT is Ctrl-C. Both go through
one handler that notes which signal came and raises ``KeyboardInterrupt`` in the main thread. The
run loop then records the cells in flight as ``interrupted`` and the command line exits with
``128 + signal number`` (130 for SIGINT, 143 for SIGTERM), the status a shell gives a process
killed by that signal, so the exit status does not depend on when the signal landed.

Python runs a signal handler between bytecodes, so a signal that lands inside compiled code
(numba, BLAS) is handled when that call returns, and the compiled code's caller may turn the
pending ``KeyboardInterrupt`` into another exception (numba reports ``SystemError: ... returned a
result with an exception set``). A cell that fails while a stop is requested is therefore not a
failure of the cell: :func:`raise_if_stopping` turns it back into the interrupt.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from typing import NoReturn

__all__ = [
    "STOP_SIGNALS",
    "exit_status",
    "install",
    "leave",
    "leave_now",
    "raise_if_stopping",
    "reset",
    "signals_stop",
    "stop_signal",
]

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_received: list[int] = []


def stop_signal() -> int | None:
    """The number of the first stop signal received since the last :func:`reset`, or None."""
    return _received[0] if _received else None


def reset() -> None:
    """Forget any signal received (a new run starts)."""
    _received.clear()


def exit_status() -> int:
    """The command line's exit status after a stop: ``128 + signal`` (130 without a signal)."""
    return 128 + (stop_signal() or signal.SIGINT)


def _handler(signum: int, frame: object) -> None:
    # a second signal stops the clean-up too: the store is transactional, so the cells it had
    # not yet marked ``interrupted`` merely stay pending, and a rerun computes them
    _received.append(signum)
    raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")


def install() -> None:
    """Route SIGINT and SIGTERM through the stop handler for the rest of the process (main thread
    only; the command line calls it first thing)."""
    if threading.current_thread() is threading.main_thread():
        for sig in STOP_SIGNALS:
            signal.signal(sig, _handler)


@contextlib.contextmanager
def signals_stop() -> Iterator[None]:
    """SIGINT and SIGTERM raise ``KeyboardInterrupt`` inside the block (main thread only; the
    previous handlers are restored afterwards)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    reset()
    previous = {sig: signal.signal(sig, _handler) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def raise_if_stopping(exc: BaseException) -> None:
    """Raise ``KeyboardInterrupt`` (from ``exc``) when a stop signal has been received."""
    sig = stop_signal()
    if sig is not None:
        raise KeyboardInterrupt(f"signal {signal.Signals(sig).name}") from exc


def leave_now() -> NoReturn:
    """End the process with :func:`exit_status` once the exit handlers have run, skipping the
    interpreter's final garbage collection of every module (seconds after a run has loaded the
    numerical stack): a stopped job must be gone promptly. Only for the command line, after the
    store is closed."""
    _exit(exit_status())


def leave(status: int) -> NoReturn:
    """End the process with ``status`` as the interpreter's own exit would (the program's
    threads joined, the exit handlers run, the standard streams flushed) but without its last
    step, which frees every object of every loaded module one at a time: about 0.8 s once
    scikit-learn and SciPy are loaded, spent after the command's work is done. Only for the
    command line's last step, after the store is closed."""
    shutdown = getattr(threading, "_shutdown", None)  # the interpreter's own first exit step
    if shutdown is not None and threading.current_thread() is threading.main_thread():
        shutdown()  # joins non-daemon threads, runs the threading exit hooks (executors)
    _exit(status)


def _exit(status: int) -> NoReturn:
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(status)
