"""Which cell a dead worker was computing, so that a killed worker fails one cell, not the run.

When a loky worker dies (the OOM killer, a kill from outside), loky marks the whole pool broken,
fails every pending task with ``TerminatedWorkerError`` and kills the other workers itself. To
record the right cell as ``failed`` and run the others again on a new pool, the driver needs to
know which worker died *first*:

* each worker notes its pid in ``<marks>/<cell_id>`` before it computes a cell
  (:func:`note_pid`);
* :class:`DeathWatch`, a thread of the driving process, opens a ``pidfd`` for every pid noted and
  records the order in which they end. The first worker to end is the one that was killed; the
  ones loky kills afterwards end later.

A Dask worker computes a batch of cells per task and forgets each note once its cell is done
(:func:`forget_pid`), so the note left behind by a task that killed its workers names the cell
it was computing (:func:`noted_pid`; see :mod:`kernbench.runner.execution.dask_batches`). A worker
on another host cannot note its pid in the driver's directory: its cells are not attributed.
"""

from __future__ import annotations

import contextlib
import os
import select
import tempfile
import threading
from collections.abc import Mapping
from typing import Any

__all__ = ["DeathWatch", "forget_pid", "note_pid", "noted_pid", "worker_lost_errors"]


def note_pid(marks: str, cell_id: str) -> None:
    """On a worker, before it computes cell ``cell_id``: note its pid in ``marks/<cell_id>`` (a
    worker that cannot write there, on another host, notes nothing)."""
    with (
        contextlib.suppress(OSError),
        open(os.path.join(marks, cell_id), "w", encoding="ascii") as fh,
    ):
        fh.write(str(os.getpid()))


def forget_pid(marks: str, cell_id: str) -> None:
    """On a worker that has finished cell ``cell_id``: remove its note (if any)."""
    with contextlib.suppress(OSError):
        os.unlink(os.path.join(marks, cell_id))


def noted_pid(marks: str, cell_id: str) -> bool:
    """Whether a worker's note for cell ``cell_id`` is in ``marks`` (noted and not forgotten)."""
    return os.path.exists(os.path.join(marks, cell_id))


def worker_lost_errors() -> tuple[type[BaseException], ...]:
    """The exceptions of a loky pool that lost a worker."""
    from joblib.externals.loky.process_executor import TerminatedWorkerError

    return (TerminatedWorkerError,)


class DeathWatch:
    """A context manager: a marks directory and a thread recording the order workers end in.

    Attributes
    ----------
    marks : str
        The directory workers note their pids in (removed on exit).
    """

    def __init__(self, poll_s: float = 0.1) -> None:
        self.poll_s = poll_s
        self._dir = tempfile.TemporaryDirectory(prefix="kernbench-cells-")
        self.marks = self._dir.name
        self._order: list[set[int]] = []  # batches of pids, in the order they were seen ending
        self._names: set[str] = set()  # marks already read
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._watch, name="kernbench-deathwatch", daemon=True
        )
        self._can_watch = hasattr(os, "pidfd_open")

    def __enter__(self) -> DeathWatch:
        if self._can_watch:
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=2)
        self._dir.cleanup()

    def lost_cells(self, in_flight: Mapping[str, Any]) -> list[Any]:
        """The cells of ``in_flight`` whose worker ended first (empty when that cannot be told:
        no pid noted, no ``pidfd`` on this system, or several cells' workers seen ending at
        once). The marks of the other cells are forgotten: they are computed again."""
        if self._thread.is_alive():  # let the watching thread see the deaths that broke the pool
            self._stop.wait(3 * self.poll_s)
        pids = {cell_id: self._pid_of(cell_id) for cell_id in in_flight}
        with self._lock:  # the first batch of ended workers that were computing a cell in flight
            first = next((b for b in self._order if b & set(pids.values())), set())
            self._order.clear()
        lost = [in_flight[c] for c, pid in pids.items() if pid is not None and pid in first]
        if len({pids[c.cell_id] for c in lost}) > 1:
            lost = []  # two workers seen ending together: which was killed is unknown
        for cell_id in in_flight:
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(self.marks, cell_id))
            with self._lock:
                self._names.discard(cell_id)
        return lost

    # -- internals ---------------------------------------------------------------------------
    def _pid_of(self, cell_id: str) -> int | None:
        try:
            with open(os.path.join(self.marks, cell_id), encoding="ascii") as fh:
                return int(fh.read() or 0) or None
        except (OSError, ValueError):
            return None

    def _watch(self) -> None:
        fds: dict[int, int] = {}  # pidfd -> pid
        watched: set[int] = set()
        try:
            while not self._stop.is_set():
                gone = set()
                for pid in self._new_pids() - watched:
                    watched.add(pid)
                    try:
                        fds[os.pidfd_open(pid)] = pid
                    except OSError:  # ended before we looked: when, relative to others, unknown
                        gone.add(pid)
                if gone:
                    with self._lock:
                        self._order.append(gone)
                if not fds:
                    self._stop.wait(self.poll_s)
                    continue
                ready, _, _ = select.select(list(fds), [], [], self.poll_s)
                if ready:
                    with self._lock:
                        self._order.append({fds[fd] for fd in ready})
                    for fd in ready:
                        os.close(fd)
                        del fds[fd]
        finally:
            for fd in fds:
                with contextlib.suppress(OSError):
                    os.close(fd)

    def _new_pids(self) -> set[int]:
        """Pids noted in marks not read before."""
        pids = set()
        with contextlib.suppress(OSError):
            for name in os.listdir(self.marks):
                with self._lock:
                    if name in self._names:
                        continue
                pid = self._pid_of(name)
                if pid is not None:
                    with self._lock:
                        self._names.add(name)
                    pids.add(pid)
        return pids
