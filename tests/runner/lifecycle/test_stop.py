"""A stop signal: KeyboardInterrupt in the block, exit 128 + signal, and a cell failure under a
stop turned back into the interrupt (never recorded as a failed cell)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from kernbench.runner.lifecycle import stop


def test_sigterm_inside_the_block_interrupts_and_gives_143():
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt, match="SIGTERM"), stop.signals_stop():
        os.kill(os.getpid(), signal.SIGTERM)
        signal.pause()  # the handler runs here at the latest
    assert stop.stop_signal() == signal.SIGTERM and stop.exit_status() == 143
    assert signal.getsignal(signal.SIGTERM) is before  # restored
    stop.reset()
    assert stop.stop_signal() is None and stop.exit_status() == 130


def test_a_cell_error_during_a_stop_is_the_interrupt_not_a_failure():
    stop.reset()
    stop.raise_if_stopping(SystemError("unrelated"))  # no stop: nothing happens
    stop.record(signal.SIGTERM)
    try:
        # what numba reports when a signal's KeyboardInterrupt lands in its compiled loop
        err = SystemError(
            "CPUDispatcher(<function rcd_loop>) returned a result with an exception set"
        )
        with pytest.raises(KeyboardInterrupt) as info:
            stop.raise_if_stopping(err)
        assert info.value.__cause__ is err
    finally:
        stop.reset()


def test_leave_ends_as_the_interpreter_would_less_its_teardown(tmp_path):
    """``leave`` keeps what an ordinary exit does: the status, the buffered output, the exit
    handlers and the program's non-daemon threads."""
    script = textwrap.dedent(
        f"""
        import atexit, pathlib, threading, time
        from kernbench.runner.lifecycle import stop
        out = pathlib.Path({str(tmp_path)!r})
        atexit.register(lambda: (out / "atexit").write_text("ran"))
        def late():
            time.sleep(0.3)
            (out / "thread").write_text("ran")
        threading.Thread(target=late).start()
        print("x" * 10000)  # block-buffered into a pipe: flushed by leave
        stop.leave(3)
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert proc.returncode == 3
    assert proc.stdout == "x" * 10000 + "\n"
    assert (tmp_path / "atexit").read_text() == "ran"
    assert (tmp_path / "thread").read_text() == "ran"


#: a command line whose clean-up hangs after a stop (as a library's close can)
HANGING_CLEANUP = """
import os, signal, time
from kernbench.runner.lifecycle import stop
stop.STOP_GRACE_S = 0.5
stop.install()
try:
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(600)
except KeyboardInterrupt:
    while True:  # the clean-up never ends
        time.sleep(0.01)
"""


def test_a_stopped_command_line_ends_within_the_grace_period_whatever_hangs():
    done = subprocess.run(
        [sys.executable, "-c", HANGING_CLEANUP], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 143
    assert "the clean-up did not end within 0.5 s" in done.stderr


#: a command line whose stop is swallowed by a library before the run's own loop begins
SWALLOWED = """
import os, signal, sys
from kernbench.runner.lifecycle import stop
stop.install()
try:
    os.kill(os.getpid(), signal.SIGTERM)
    signal.pause()
except KeyboardInterrupt:
    pass  # a library's `except BaseException`
try:
    with stop.signals_stop():
        print("the run went on", flush=True)
except KeyboardInterrupt:
    print("stopped", stop.exit_status(), flush=True)
"""


def test_a_stop_swallowed_before_the_run_still_stops_it_with_the_signals_status():
    done = subprocess.run(
        [sys.executable, "-c", SWALLOWED], capture_output=True, text=True, timeout=120
    )
    assert done.stdout.split() == ["stopped", "143"], done.stdout + done.stderr


#: a stop signal that lands inside importlib's own code (``frame``: a frame of it, kept from an
#: import): raising there can leave the interpreter's import lock held for ever, so the
#: interrupt must come a moment later, outside it
IN_IMPORTLIB = """
import pathlib, signal, sys, tempfile, time
from kernbench.runner.lifecycle import stop
folder = tempfile.mkdtemp()
pathlib.Path(folder, "framed.py").write_text("import sys\\nFRAME = sys._getframe(1)\\n")
sys.path.insert(0, folder)
import framed
assert framed.FRAME.f_code.co_filename.startswith("<frozen importlib")
stop.install()
try:
    stop._handler(signal.SIGTERM, framed.FRAME)
except KeyboardInterrupt:
    print("raised inside importlib", flush=True)
    sys.exit(0)
try:
    time.sleep(5)
    print("lost", flush=True)
except KeyboardInterrupt:
    print("raised outside", stop.exit_status(), flush=True)
"""


def test_a_stop_landing_in_the_import_machinery_is_raised_just_outside_it():
    done = subprocess.run(
        [sys.executable, "-c", IN_IMPORTLIB], capture_output=True, text=True, timeout=120
    )
    assert done.stdout.split() == ["raised", "outside", "143"], done.stdout + done.stderr


#: a stop signal that lands in a ``__del__`` (as in a garbage-collector callback): Python prints
#: "Exception ignored" and drops the interrupt; the stop must neither be printed nor lost
IN_DEL = """
import os, signal, time
from kernbench.runner.lifecycle import stop
stop.install()

class Finalised:
    def __del__(self):
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.5)  # the handler runs here, inside the finaliser

item = Finalised()
try:
    del item
    time.sleep(5)
    print("lost", flush=True)
except KeyboardInterrupt:
    print("stopped", stop.exit_status(), flush=True)
"""


def test_a_stop_landing_in_a_finaliser_is_neither_printed_nor_lost():
    done = subprocess.run(
        [sys.executable, "-c", IN_DEL], capture_output=True, text=True, timeout=120
    )
    assert done.stdout.split() == ["stopped", "143"], done.stdout + done.stderr
    assert "Exception ignored" not in done.stderr and "Traceback" not in done.stderr, done.stderr
