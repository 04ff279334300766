"""One run per results directory: an advisory ``flock`` on ``<dir>/.kernbench.lock``.

Why ``flock`` rather than a bare ``O_EXCL`` pid file: the kernel releases the lock when its holder
dies, however it dies (SIGKILL, power loss of a local machine, OOM killer), so a stale lock cannot
block the next run and pid reuse cannot fool us. The lock file itself is never deleted (deleting a
lock file that another process is about to lock is the classic race); it only carries a JSON line
naming the holder (pid, host, start time, command) for the refusal message.

A file left by a dead holder (SIGKILL) still names it; the next run acquires the lock (the kernel
released it) and reports that it took over from that pid. A lock that is held although the pid it
names is dead on this host means a descendant of a killed run still holds the descriptor; the
message says so and how to find it. Descendants created with ``fork`` close the descriptor in the
child (``os.register_at_fork``), so the runner's own children never keep a lock alive.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import socket
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernbench.errors import StoreError
from kernbench.files.writing import open_no_follow
from kernbench.store.boundary import os_error

LOCK_FILE = ".kernbench.lock"

#: descriptors of locks held by this process (closed in forked children)
_HELD: set[int] = set()


def _close_held_in_child() -> None:
    # The child's copy shares the open file description; the parent keeps the lock as long as its
    # own descriptor is open, so closing ours releases nothing and keeps a forked child from
    # outliving a killed parent while still holding the run lock.
    for fd in list(_HELD):
        with contextlib.suppress(OSError):
            os.close(fd)
    _HELD.clear()


os.register_at_fork(after_in_child=_close_held_in_child)


class RunLocked(StoreError):
    """Another live process holds the results directory's run lock."""

    def __init__(self, directory: Path, holder: dict[str, Any] | None, note: str = "") -> None:
        self.directory = directory
        self.holder = holder or {}
        super().__init__(
            f"{directory} is in use by another kernbench run "
            f"({describe_holder(self.holder)}){note}; "
            "wait for it to finish, or pass --wait to queue behind it"
        )


@dataclass(frozen=True)
class TakeOver:
    """What the lock file said about a previous holder that is no longer running."""

    holder: dict[str, Any]


def describe_holder(holder: dict[str, Any]) -> str:
    """``pid 123 on host h since 2026-01-01 12:00:00 UTC: kernbench run x.yaml``."""
    if not holder:
        return "holder unknown"
    started = holder.get("started_at")
    when = (
        time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(float(started)))
        if isinstance(started, int | float)
        else "unknown time"
    )
    text = f"pid {holder.get('pid', '?')} on host {holder.get('host', '?')} since {when}"
    if holder.get("command"):
        text += f": {holder['command']}"
    return text


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists on this host."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def read_holder(directory: str | os.PathLike[str]) -> dict[str, Any]:
    """The holder recorded in the lock file (empty when absent or unreadable)."""
    try:
        text = (Path(directory) / LOCK_FILE).read_text(encoding="utf-8").strip()
        data = json.loads(text) if text else {}
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


class RunLock:
    """Exclusive run lock on a results directory (a context manager).

    Parameters
    ----------
    directory : path
        The results directory (created if missing).
    wait : bool
        Block until the current holder finishes instead of raising :class:`RunLocked`.
    poll_s : float
        Polling interval while waiting.
    timeout_s : float, optional
        Give up waiting after this long (raises :class:`RunLocked`); None waits forever.

    Attributes
    ----------
    took_over : TakeOver or None
        Set when the lock file named a previous holder that is gone (a killed run).
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        wait: bool = False,
        poll_s: float = 0.5,
        timeout_s: float | None = None,
    ) -> None:
        self.directory = Path(directory)
        self.path = self.directory / LOCK_FILE
        self.wait = wait
        self.poll_s = poll_s
        self.timeout_s = timeout_s
        self.took_over: TakeOver | None = None
        self._fd: int | None = None

    def acquire(self) -> RunLock:
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            fd = open_no_follow(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:  # read-only directory, a directory or a symlink named so, ...
            raise os_error(exc) from None
        deadline = None if self.timeout_s is None else time.monotonic() + self.timeout_s
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError as exc:
                    if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                        raise StoreError(f"cannot lock {self.path}: {exc}") from exc
                if not self.wait or (deadline is not None and time.monotonic() >= deadline):
                    holder = read_holder(self.directory)
                    raise RunLocked(self.directory, holder, self._orphan_note(holder))
                time.sleep(self.poll_s)
        except BaseException:
            os.close(fd)
            raise
        previous = read_holder(self.directory)
        if previous and not self._is_me(previous):
            self.took_over = TakeOver(previous)
        try:
            self._write_holder(fd)
        except OSError as exc:  # a full disk
            os.close(fd)
            raise os_error(exc) from None
        self._fd = fd
        _HELD.add(fd)
        return self

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        _HELD.discard(fd)
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)  # a clean release leaves no holder behind
        os.close(fd)  # closing the last descriptor releases the flock

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()

    # -- internals ---------------------------------------------------------------------------
    def _orphan_note(self, holder: dict[str, Any]) -> str:
        pid = holder.get("pid")
        here = holder.get("host") == socket.gethostname()
        if here and isinstance(pid, int) and not pid_alive(pid):
            return (
                f"; pid {pid} is gone but a process it started still holds the lock "
                f"(`fuser {self.path}` names it)"
            )
        return ""

    @staticmethod
    def _is_me(holder: dict[str, Any]) -> bool:
        return holder.get("pid") == os.getpid() and holder.get("host") == socket.gethostname()

    @staticmethod
    def _write_holder(fd: int) -> None:
        holder = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started_at": time.time(),
            "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]])[:300],
        }
        data = (json.dumps(holder) + "\n").encode()
        os.ftruncate(fd, 0)
        os.pwrite(fd, data, 0)
        os.fsync(fd)
