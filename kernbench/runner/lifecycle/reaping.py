"""No process a run started outlives it: workers watch their parent, a stopped run ends its own.

A run starts processes of its own: loky's workers and their resource tracker, a Dask
LocalCluster's fork server and workers, a timed cell's child. Two ways they could outlive it:

* **the run is killed** (SIGKILL, the OOM killer, a container's grace period over). Nothing runs
  in the dead driver, so each process must notice by itself. :func:`watch_parent`, called first
  thing in every worker (:mod:`kernbench.runner.lifecycle.worker_setup`), starts a thread that waits
  on a ``pidfd`` of the worker's parent and kills the worker the moment the parent has ended
  (where ``pidfd_open`` is missing it polls ``os.getppid()`` once a second). Each process
  watches its own parent, so the end travels down a tree: a Dask worker watches the fork server,
  which itself ends with the driver; loky's resource tracker ends once every process holding its
  pipe (the driver, the workers) has. A timed cell's child asks the kernel for SIGKILL on its
  parent's death (see :mod:`kernbench.runner.execution.isolation`).
* **the run is stopped** by SIGTERM or SIGINT sent to its main process alone (``docker stop``,
  Kubernetes and many schedulers signal only the main process; a shell's Ctrl-C signals the
  whole group). Workers that never got the signal would keep the interpreter's exit waiting
  on them (``multiprocessing`` joins its children at exit). :func:`end_descendants` kills every
  process below this one once the store is closed: their cells are already recorded as
  ``interrupted``, and nothing in them is needed.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import threading
from pathlib import Path

__all__ = ["descendants", "end_descendants", "watch_parent"]

_WATCHING: list[int] = []  # the parent pid this process watches (at most one entry)
_LOCK = threading.Lock()


def _die() -> None:
    os.kill(os.getpid(), getattr(signal, "SIGKILL", signal.SIGTERM))


def _watch(parent: int) -> None:
    """Wait until ``parent`` has ended, then kill this process."""
    fd = None
    with contextlib.suppress(AttributeError, OSError):
        fd = os.pidfd_open(parent)
    if os.getppid() != parent:  # it ended before the pidfd was open
        _die()
    if fd is not None:
        while True:
            with contextlib.suppress(InterruptedError):
                ready, _, _ = select.select([fd], [], [])
                if ready:
                    _die()
    while os.getppid() == parent:  # no pidfd here: poll
        threading.Event().wait(1.0)
    _die()


def watch_parent() -> None:
    """Kill this process as soon as its parent process ends (once per process; idempotent).

    A daemon thread waits for the parent (the process's parent at the first call); it costs
    nothing while the parent lives. Called in a forked child, it starts a new thread there.
    """
    with _LOCK:
        parent = os.getppid()
        if _WATCHING and _WATCHING[0] == parent:
            return
        if parent <= 1:  # already orphaned (or PID 1's own child): nothing to watch
            return
        _WATCHING[:] = [parent]
        threading.Thread(
            target=_watch, args=(parent,), name="kernbench-parent-watch", daemon=True
        ).start()


def descendants(pid: int | None = None) -> list[int]:
    """The pids of every process below ``pid`` (this process by default), parents first
    (Linux: read from ``/proc``; elsewhere this process's ``multiprocessing`` children)."""
    root = os.getpid() if pid is None else pid
    proc = Path("/proc")
    if not (proc / "self" / "stat").exists():
        import multiprocessing

        return [p.pid for p in multiprocessing.active_children() if p.pid]
    children: dict[int, list[int]] = {}
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # ended meanwhile
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) > 1:
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    found: list[int] = []
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), ()):
            if child not in found:
                found.append(child)
                stack.append(child)
    return found


def end_descendants() -> int:
    """SIGKILL every process below this one (each at most once); return how many were sent.

    Only for a process that ends next (the command line after a stop): what the descendants
    were computing is lost. Processes started while this runs are caught by a second pass.
    """
    sent: set[int] = set()
    for _ in range(2):
        for pid in descendants():
            if pid in sent:
                continue
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, getattr(signal, "SIGKILL", signal.SIGTERM))
                sent.add(pid)
    return len(sent)
