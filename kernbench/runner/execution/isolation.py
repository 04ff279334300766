"""Per-cell wall-clock limits: run a call in a child process that can really be stopped.

A Python thread cannot be stopped, and a solver stuck in compiled code ignores signals, so a cell
with a time limit runs in a child interpreter (``python -m kernbench.runner.execution.isolation``)
in a fresh session; when the limit passes, the whole process group is killed. The child is a plain
``subprocess`` rather than a ``multiprocessing`` child so it also works inside daemonic workers
(loky, Dask nannies forbid ``multiprocessing`` children). Calls and results travel as
length-prefixed pickles over the child's stdin/stdout: both ends are this package, never a file
from elsewhere.

One child serves the calls of one thread of one worker, one after another, so the interpreter
start and the imports (seconds of CPU) are paid once per worker, not once per cell, and the
child keeps what a worker keeps between its cells (:mod:`kernbench.runner.cell.worker_cache`). It is
replaced only when it is lost: killed at a limit, crashed, or started under another environment
or working directory than the caller's now. The clock of a call starts when the child says it
is ready for that call, so a slow start does not eat a cell's budget.
"""

from __future__ import annotations

import contextlib
import importlib
import math
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from typing import IO, Any

from kernbench.errors import KernbenchError

__all__ = ["CellTimeout", "ChildDied", "call_with_timeout", "close_children"]

#: the byte a child sends once it has read a call and is about to start it (the clock starts)
_READY = b"R"
#: the first byte of a reply: the call returned / the call raised (its exception follows)
_RETURNED, _RAISED = b"O", b"E"
#: length prefix of every frame (unsigned 64-bit, little-endian)
_LEN = struct.Struct("<Q")
#: seconds a finished call's reply may take to arrive once its first byte has come
_REPLY_GRACE_S = 120.0


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


class _Child:
    """One long-lived child interpreter and the pipes and stderr file that go with it."""

    def __init__(self) -> None:
        self.env = dict(os.environ)
        self.cwd = os.getcwd()
        self.calls = 0
        # append mode: the child's writes land at the end even after the file is emptied
        self.err: IO[bytes] = tempfile.TemporaryFile(mode="a+b")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kernbench.runner.execution.isolation"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.err,  # a file, not a pipe: a chatty child cannot block on it
            start_new_session=True,  # its own process group: a kill reaches its children too
            env={**self.env, "KERNBENCH_PARENT_PID": str(os.getpid())},
        )

    def usable(self) -> bool:
        """Alive, and started under the caller's present environment and directory."""
        return self.proc.poll() is None and self.env == dict(os.environ) and self.cwd == os.getcwd()

    def send(self, payload: bytes) -> None:
        assert self.proc.stdin is not None
        self.err.seek(0)
        self.err.truncate()  # a death note shows this call's stderr only
        self.proc.stdin.write(_LEN.pack(len(payload)))
        self.proc.stdin.write(payload)
        self.proc.stdin.flush()

    def read(self, n: int, deadline: float) -> bytes | None:
        """``n`` bytes from the child before ``deadline``; None when time runs out; fewer
        bytes when the child's output ended."""
        assert self.proc.stdout is not None
        return _read_until(self.proc.stdout, n, deadline)

    def kill(self) -> None:
        _kill_group(self.proc)
        with contextlib.suppress(Exception):
            self.proc.wait(timeout=5)
        self.close_files()

    def close(self) -> None:
        """Let the child end by itself (its input ends), then make sure it has."""
        with contextlib.suppress(Exception):
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            _kill_group(self.proc)
            with contextlib.suppress(Exception):
                self.proc.wait(timeout=5)
        self.close_files()

    def close_files(self) -> None:
        for f in (self.proc.stdin, self.proc.stdout, self.err):
            with contextlib.suppress(Exception):
                if f is not None:
                    f.close()

    def death_note(self, when: str) -> str:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        code = self.proc.returncode
        if code is None:
            how = "still running"
        elif code < 0:
            how = f"killed by signal {signal.Signals(-code).name}"
        else:
            how = f"exit status {code}"
        self.err.seek(0)
        tail = self.err.read().decode(errors="replace").strip().splitlines()[-5:]
        return f"cell process ended {when} ({how})" + "".join(f"\n  {line}" for line in tail)


_LOCAL = threading.local()  # .child: the calling thread's child (one call at a time each)
_ALL: set[_Child] = set()
_ALL_LOCK = threading.Lock()


def _take_child() -> tuple[_Child, bool]:
    """The calling thread's child, started anew when missing or unusable; and whether it is new."""
    child: _Child | None = getattr(_LOCAL, "child", None)
    if child is not None and child.usable():
        return child, False
    if child is not None:
        _drop(child, kill=True)
    child = _Child()
    _LOCAL.child = child
    with _ALL_LOCK:
        _ALL.add(child)
    return child, True


def _drop(child: _Child, *, kill: bool) -> None:
    if getattr(_LOCAL, "child", None) is child:
        _LOCAL.child = None
    with _ALL_LOCK:
        _ALL.discard(child)
    child.kill() if kill else child.close()


def close_children() -> None:
    """End every child this process keeps (a run is over: free their memory)."""
    with _ALL_LOCK:
        children = list(_ALL)
        _ALL.clear()
    _LOCAL.child = None
    for child in children:
        child.close()


def call_with_timeout(
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    timeout_s: float | None,
    *,
    preload: tuple[str, ...] = (),
    startup_limit_s: float = 300.0,
) -> Any:
    """Return ``fn(*args)`` computed in a child process killed after ``timeout_s`` seconds.

    The calling thread's child is reused from call to call; a new one is started when there is
    none yet or the last was lost. The clock starts when the child is ready for this call
    (interpreter started, ``preload`` modules and the call's own module imported), so a loaded
    machine's slow imports do not eat a cell's budget.

    Parameters
    ----------
    fn : callable
        Must be importable by reference (a module-level function).
    args : tuple
        Picklable arguments.
    timeout_s : float or None
        Wall-clock limit of the call itself (None: none; the call is only kept out of this
        process, e.g. a plug-in method that might end it).
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
    for attempt in range(2):
        child, fresh = _take_child()
        try:
            try:
                child.send(payload)
            except (BrokenPipeError, ConnectionResetError):
                ready = b""  # the child ended between two calls
            else:
                ready = child.read(1, time.monotonic() + startup_limit_s)
            if ready != _READY:
                if not fresh and ready == b"" and attempt == 0:
                    _drop(child, kill=True)  # lost while idle: the call has not started
                    continue
                raise ChildDied(child.death_note("before it was ready"))
            status, body = _reply(child, timeout_s)
        except BaseException:  # timeout, death, start-up failure or an interrupt: kill it
            _drop(child, kill=True)
            raise
        child.calls += 1
        if status == _RAISED:
            exc = pickle.loads(body)
            if not isinstance(exc, Exception):  # SystemExit, KeyboardInterrupt: not this process's
                raise ChildDied(f"the call raised {type(exc).__name__}: {exc}")
            raise exc
        return pickle.loads(body)
    raise AssertionError("unreachable")  # pragma: no cover


def _reply(child: _Child, timeout_s: float | None) -> tuple[bytes, bytes]:
    """The status byte and the pickled reply of a call the child is ready for, its clock
    starting now; :class:`CellTimeout` or :class:`ChildDied` when there is none."""
    t0 = time.monotonic()
    limit = math.inf if timeout_s is None else timeout_s
    status = child.read(1, t0 + limit)
    if status is None:
        raise CellTimeout(limit, time.monotonic() - t0)
    if status not in (_RETURNED, _RAISED):
        raise ChildDied(child.death_note("without a result"))
    grace = time.monotonic() + _REPLY_GRACE_S
    header = child.read(_LEN.size, grace)
    if header is None or len(header) != _LEN.size:
        raise ChildDied(child.death_note("while sending its result"))
    (n,) = _LEN.unpack(header)
    body = child.read(n, grace)
    if body is None or len(body) != n:
        raise ChildDied(child.death_note("while sending its result"))
    return status, body


def _read_until(stream: IO[bytes], n: int, deadline: float) -> bytes | None:
    """Read ``n`` bytes before ``deadline``; None when time runs out; fewer at end of file."""
    fd = stream.fileno()
    chunks: list[bytes] = []
    got = 0
    while got < n:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        readable, _, _ = select.select([fd], [], [], min(left, 3600.0))  # select's own bound
        if not readable:
            continue
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:  # EOF
            break
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


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


def _read_exact(stream: IO[bytes], n: int) -> bytes | None:
    data = stream.read(n)
    return data if len(data) == n else None


def _child_main() -> None:
    """Serve calls until the input ends: read a call, say ready, run it, send the reply."""
    _die_with_parent()
    # the reply channel is the original stdout; anything a call prints goes to stderr
    channel = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    requests = sys.stdin.buffer
    while (header := _read_exact(requests, _LEN.size)) is not None:
        body = _read_exact(requests, _LEN.unpack(header)[0])
        if body is None:
            return
        preload, fn, args = pickle.loads(body)
        for module in preload:
            importlib.import_module(module)
        channel.write(_READY)
        channel.flush()
        status = _RETURNED
        try:
            data = pickle.dumps(fn(*args), protocol=pickle.HIGHEST_PROTOCOL)
        except BaseException as exc:
            status = _RAISED
            try:
                data = pickle.dumps(exc)
            except Exception:  # an unpicklable exception (or result): send its text
                data = pickle.dumps(RuntimeError(f"{type(exc).__name__}: {exc}"))
        del args
        channel.write(status + _LEN.pack(len(data)))
        channel.write(data)
        channel.flush()


if __name__ == "__main__":
    _child_main()
