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

``docker stop``, Kubernetes and many schedulers signal the main process alone, never its
workers. The command line therefore ends every process below it once the store is closed
(:func:`leave_now`), and, from the first stop signal on, gives itself :data:`STOP_GRACE_S`
seconds at most: a clean-up stuck in a library's close does not outlast a container's grace
period. A worker tells a Ctrl-C from a method's own ``KeyboardInterrupt`` by
:func:`note_interrupts`.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from typing import NoReturn

from kernbench.runner.lifecycle.reaping import end_descendants
from kernbench.stop_signals import record, reset, stop_signal

__all__ = [
    "STOP_SIGNALS",
    "exit_status",
    "install",
    "leave",
    "leave_now",
    "note_interrupts",
    "raise_if_stopping",
    "reset",
    "signals_stop",
    "stop_signal",
]

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
#: seconds from the first stop signal to the end of the command line's process, whatever it is
#: doing then (a container's grace period before its SIGKILL is 10 s with ``docker stop``)
STOP_GRACE_S = 8.0
#: seconds after :data:`STOP_GRACE_S` at which the kernel ends the process (``SIGALRM`` at its
#: default action) should the interpreter itself be stuck (a compiled call holding the GIL)
_BACKSTOP_S = 1.5
_deadline: list[threading.Thread] = []  # the command line's: armed by install()
_first: list[int] = []  # the command line's first stop signal (never forgotten by reset())
_put_off = threading.Event()  # a stop signal landed inside the import machinery: raise it later
_main: list[int] = []  # the main thread's ident (install())


def exit_status() -> int:
    """The command line's exit status after a stop: ``128 + signal`` (130 without a signal)."""
    return 128 + (stop_signal() or (_first[0] if _first else signal.SIGINT))


def _in_import_machinery(frame: object) -> bool:
    """Whether ``frame`` is importlib's own code. An exception raised there can leave the
    interpreter's import lock held for ever (CPython swallows it in a module lock's weakref
    callback, between acquiring the lock and the ``try`` that would release it), after which
    every import in another thread waits for ever."""
    code = getattr(frame, "f_code", None)
    return code is not None and code.co_filename.startswith("<frozen importlib")


def _handler(signum: int, frame: object) -> None:
    # a second signal stops the clean-up too: the store is transactional, so the cells it had
    # not yet marked ``interrupted`` merely stay pending, and a rerun computes them
    record(signum)
    if _deadline and _deadline[0].ident is None:  # the first stop: the clocks start
        _first.append(signum)
        _deadline[0].start()
        with contextlib.suppress(ValueError, OSError, AttributeError):  # a kernel-side backstop
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
            signal.setitimer(signal.ITIMER_REAL, STOP_GRACE_S + _BACKSTOP_S)
    if _in_import_machinery(frame) and _deadline:
        _put_off.set()  # the deadline thread sends the signal again a moment later
        return
    raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")


def _end_at_deadline() -> None:
    """The command line's last resort after a stop signal: if the process has not ended within
    :data:`STOP_GRACE_S` (clean-up stuck in a library's close), end it and its processes now.
    Meanwhile it sends again a stop signal that landed inside the import machinery, so that the
    interrupt is raised in the first frame outside it. It imports nothing (the import lock may
    be held). The store is transactional: a cell not yet recorded as ``interrupted`` stays
    pending."""
    end = time.monotonic() + STOP_GRACE_S
    while (left := end - time.monotonic()) > 0:
        if _put_off.wait(left):
            _put_off.clear()
            time.sleep(0.005)
            with contextlib.suppress(Exception):
                signal.pthread_kill(_main[0], _first[0] if _first else signal.SIGINT)
    with contextlib.suppress(Exception):
        end_descendants()
    with contextlib.suppress(OSError):
        os.write(
            2,
            f"interrupted; the clean-up did not end within {STOP_GRACE_S:g} s: the cells still "
            "in flight stay pending (rerun to resume)\n".encode(),
        )
        os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
    os._exit(128 + (_first[0] if _first else signal.SIGINT))


def install() -> None:
    """Route SIGINT and SIGTERM through the stop handler for the rest of the process (main thread
    only; the command line calls it first thing). The process then ends at the latest
    :data:`STOP_GRACE_S` after the first stop signal (and the kernel ends it
    ``_BACKSTOP_S`` later should the interpreter itself be stuck)."""
    if threading.current_thread() is threading.main_thread():
        if not _deadline:
            _main[:] = [threading.get_ident()]
            _deadline.append(
                threading.Thread(target=_end_at_deadline, name="kernbench-stop", daemon=True)
            )
        for sig in STOP_SIGNALS:
            signal.signal(sig, _handler)
        if not isinstance(sys.unraisablehook, _UnraisableStop):
            sys.unraisablehook = _UnraisableStop(sys.unraisablehook)


class _UnraisableStop:
    """``sys.unraisablehook`` that keeps a stop from being lost where Python cannot raise.

    An exception raised in a garbage-collector callback, a weak-reference callback or a
    ``__del__`` is printed as "Exception ignored in ..." and dropped. When that exception is the
    stop handler's ``KeyboardInterrupt``, nothing is printed and the signal is sent again a
    moment later, to be raised in ordinary code; every other one goes to the previous hook."""

    def __init__(self, previous: object) -> None:
        self.previous = previous

    def __call__(self, unraisable: object) -> None:
        exc = getattr(unraisable, "exc_value", None)
        if isinstance(exc, KeyboardInterrupt) and _first and _deadline:
            _put_off.set()
            return
        self.previous(unraisable)  # type: ignore[operator]


def _noting_handler(signum: int, frame: object) -> None:
    record(signum)
    raise KeyboardInterrupt


def note_interrupts() -> None:
    """In a worker: a SIGINT raises ``KeyboardInterrupt`` as Python's default handler does, and
    is noted (:func:`stop_signal`), so that a cell tells a Ctrl-C from a method that raises
    ``KeyboardInterrupt`` itself (main thread only; SIGTERM keeps its default action)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _noting_handler)


@contextlib.contextmanager
def signals_stop() -> Iterator[None]:
    """SIGINT and SIGTERM raise ``KeyboardInterrupt`` inside the block (main thread only; the
    previous handlers are restored afterwards)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    if _first:  # the command line was stopped already (a library swallowed the interrupt)
        raise KeyboardInterrupt(f"signal {signal.Signals(_first[0]).name}")
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
    """End the process with :func:`exit_status` at once, and every process it started with it.

    Every process below this one is killed first (:func:`kernbench.runner.lifecycle.reaping.
    end_descendants`): workers that the signal did not reach (it was sent to this process
    alone, as ``docker stop`` and Kubernetes send it) would otherwise keep the interpreter's
    exit waiting on them. Then, with the standard error closed (what the dying workers' and
    libraries' threads might still say is no message of the run's), the exit handlers run and
    the process ends without the interpreter's final garbage collection of every module
    (seconds after a run has loaded the numerical stack). Only for the command line, after the
    store is closed and the last line printed."""
    end_descendants()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
    threading.Thread(target=_end_soon, args=(exit_status(),), daemon=True).start()
    _exit(exit_status())


def _end_soon(status: int, after_s: float = 5.0) -> None:
    """End the process with ``status`` after ``after_s`` (exit handlers that hang)."""
    threading.Event().wait(after_s)
    os._exit(status)


def leave(status: int) -> NoReturn:
    """End the process with ``status`` as the interpreter's own exit would (the program's
    threads joined, the exit handlers run, the standard streams flushed) but without its last
    step, which frees every object of every loaded module one at a time once scikit-learn and
    SciPy are loaded, after the command's work is done (timed in
    benchmarks/logs/performance.md, section 11c). Only for the command line's last step, after
    the store is closed."""
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
