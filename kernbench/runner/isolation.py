"""Per-cell wall-clock limits: run a call in a child process that can really be stopped.

A Python thread cannot be stopped, and a solver stuck in compiled code ignores signals, so a cell
with a time limit runs in its own child interpreter (``python -m kernbench.runner.isolation``) in a
fresh session; when the limit passes, the whole process group is killed. The child is a plain
``subprocess`` rather than a ``multiprocessing`` child so it also works inside daemonic workers
(loky, Dask nannies forbid ``multiprocessing`` children). The call and its result travel as pickles
over the child's stdin/stdout: both ends are this package, never a file from elsewhere.

The cost (one interpreter start plus imports) is paid only when a limit
is set, and is not counted against the limit: the clock starts when the child says it is ready.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import pickle
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import IO, Any

from kernbench.errors import KernbenchError

#: exit status of a child whose call raised (its exception travels pickled on stdout)
_RAISED = 17
#: the byte a child sends once it is ready to start the call (the clock starts then)
_READY = b"R"


class CellTimeout(KernbenchError):
    """The call ran longer than its limit and was killed."""

    def __init__(self, limit_s: float, elapsed_s: float) -> None:
        self.limit_s = limit_s
        self.elapsed_s = elapsed_s
        super().__init__(
            f"exceeded the time limit of {limit_s:g} s (killed after {elapsed_s:.1f} s)"
        )


class ChildDied(KernbenchError):
    """The child process ended without a result (crash, out of memory, killed from outside)."""


def call_with_timeout(
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    timeout_s: float,
    *,
    preload: tuple[str, ...] = (),
    startup_limit_s: float = 300.0,
) -> Any:
    """Return ``fn(*args)`` computed in a child process killed after ``timeout_s`` seconds.

    The clock starts when the child is ready (interpreter started, ``preload`` modules and the
    call's own module imported), so a loaded machine's slow imports do not eat a cell's budget.

    Parameters
    ----------
    fn : callable
        Must be importable by reference (a module-level function).
    args : tuple
        Picklable arguments.
    timeout_s : float
        Wall-clock limit of the call itself.
    preload : tuple of str
        Modules the child imports before the clock starts.
    startup_limit_s : float
        Limit on the child's start-up (a child that cannot even start is a ``ChildDied``).

    Raises
    ------
    CellTimeout
        The limit passed; the child and everything it started were killed.
    ChildDied
        The child ended without a result (signal, crash) or did not start in time.
    Exception
        Whatever ``fn`` raised, re-raised here.
    """
    payload = pickle.dumps((preload, fn, args), protocol=pickle.HIGHEST_PROTOCOL)
    with tempfile.TemporaryFile() as err_file:
        proc = subprocess.Popen(
            [sys.executable, "-m", "kernbench.runner.isolation"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err_file,  # a file, not a pipe: a chatty child cannot block on it
            start_new_session=True,  # its own process group: a kill reaches its children too
            env={**os.environ, "KERNBENCH_PARENT_PID": str(os.getpid())},
        )
        try:
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(payload)
            proc.stdin.close()
            ready = _read_until(proc.stdout, 1, time.monotonic() + startup_limit_s)
            if ready != _READY:
                raise ChildDied(_death_note(proc, err_file, "before it was ready"))
            t0 = time.monotonic()
            out = _read_until(proc.stdout, None, t0 + timeout_s)
            if out is None:
                raise CellTimeout(timeout_s, time.monotonic() - t0)
            proc.wait()
        except BaseException:  # timeout, start-up failure or an interrupt: leave no child behind
            _kill_group(proc)
            with contextlib.suppress(Exception):
                proc.wait(timeout=5)
            raise
        if proc.returncode == 0:
            return pickle.loads(out)
        if proc.returncode == _RAISED:
            raise pickle.loads(out)
        raise ChildDied(_death_note(proc, err_file, "without a result"))


def _read_until(stream: IO[bytes], n: int | None, deadline: float) -> bytes | None:
    """Read ``n`` bytes (or to EOF when None) before ``deadline``; None when time runs out."""
    fd = stream.fileno()
    chunks: list[bytes] = []
    got = 0
    while n is None or got < n:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        readable, _, _ = select.select([fd], [], [], min(left, 3600.0))  # select's own bound
        if not readable and deadline - time.monotonic() > 0:
            continue
        if not readable:
            return None
        chunk = os.read(fd, (n - got) if n is not None else 1 << 16)
        if not chunk:  # EOF
            break
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _death_note(proc: subprocess.Popen[bytes], err_file: IO[bytes], when: str) -> str:
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)
    code = proc.returncode
    if code is None:
        how = "still running"
    elif code < 0:
        how = f"killed by signal {signal.Signals(-code).name}"
    else:
        how = f"exit status {code}"
    err_file.seek(0)
    tail = err_file.read().decode(errors="replace").strip().splitlines()[-5:]
    return f"cell process ended {when} ({how})" + "".join(f"\n  {line}" for line in tail)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


def _die_with_parent() -> None:
    """Linux: ask the kernel to SIGKILL this child when its parent dies (a killed run)."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    parent = os.environ.get("KERNBENCH_PARENT_PID")
    if parent is not None and os.getppid() != int(parent):  # parent died before prctl
        os._exit(1)


def _child_main() -> None:
    _die_with_parent()
    # the result channel is the original stdout; anything the call prints goes to stderr
    channel = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    preload, fn, args = pickle.loads(sys.stdin.buffer.read())
    for module in preload:
        importlib.import_module(module)
    channel.write(_READY)
    channel.flush()
    try:
        result = fn(*args)
    except BaseException as exc:
        try:
            data = pickle.dumps(exc)
        except Exception:  # an unpicklable exception: send its text
            data = pickle.dumps(RuntimeError(f"{type(exc).__name__}: {exc}"))
        channel.write(data)
        channel.flush()
        os._exit(_RAISED)
    channel.write(pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
    channel.flush()


if __name__ == "__main__":
    _child_main()
