"""The process state a cell may change, put back after it: a method cannot reach the next cell.

A plug-in method is the researcher's own code, run in whatever process computes the cell (the
driver at ``--jobs 1``, a worker, a timed cell's child). Whatever it changes in that process would
otherwise reach every later cell there, and, in the driver, the run itself: a ``fit`` that calls
``os.chdir`` moved the relative paths of the run. :func:`cell_state` records, before a cell,

* the working directory, the environment (``os.environ``) and ``sys.path``;
* the signal handlers (main thread only: Python sets them nowhere else);
* the global random generators, ``random`` and ``numpy.random``'s legacy one;

seeds both generators from the cell's own seed, so that a method drawing from them draws the
same numbers whichever process, worker or order computes the cell, and puts everything back once
the cell is over, however it ended. Nothing here changes a number of kernbench's own methods:
they draw from generators of their own, seeded from the cell.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np

__all__ = ["cell_state", "seed_globals"]


def seed_globals(seed: int) -> None:
    """Seed ``random`` and ``numpy.random``'s global generator from ``seed``."""
    random.seed(seed)
    np.random.seed(seed % 2**32)  # noqa: NPY002 - the legacy global generator, on purpose


def _handlers() -> dict[int, Any]:
    """The Python-level handler of every signal that has one (main thread only)."""
    out: dict[int, Any] = {}
    for sig in signal.valid_signals():
        with contextlib.suppress(ValueError, OSError):
            handler = signal.getsignal(sig)
            if handler is not None:  # None: set outside Python; nothing to put back
                out[sig] = handler
    return out


def _restore_handlers(saved: dict[int, Any]) -> None:
    for sig, handler in saved.items():
        with contextlib.suppress(ValueError, OSError, TypeError):
            if signal.getsignal(sig) is not handler:
                signal.signal(sig, handler)


def _restore_environ(saved: dict[str, str]) -> None:
    for key in [k for k in os.environ if k not in saved]:
        del os.environ[key]
    for key, value in saved.items():
        if os.environ.get(key) != value:
            os.environ[key] = value


@contextlib.contextmanager
def cell_state(seed: int) -> Iterator[None]:
    """Within the block the global generators are seeded from ``seed``; afterwards the working
    directory, environment, ``sys.path``, signal handlers (main thread) and global generators
    are what they were before it."""
    main = threading.current_thread() is threading.main_thread()
    cwd = os.getcwd()
    environ = dict(os.environ)
    path = list(sys.path)
    handlers = _handlers() if main else {}
    py_state = random.getstate()
    np_state = np.random.get_state()  # noqa: NPY002
    seed_globals(seed)
    try:
        yield
    finally:
        try:
            moved = os.getcwd() != cwd
        except OSError:  # the cell removed the directory it moved to
            moved = True
        if moved:
            with contextlib.suppress(OSError):  # ours removed meanwhile: nowhere to go back
                os.chdir(cwd)
        _restore_environ(environ)
        sys.path[:] = path
        if main:
            _restore_handlers(handlers)
        random.setstate(py_state)
        np.random.set_state(np_state)  # noqa: NPY002
