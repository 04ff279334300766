"""Where cells are computed: in this process, on local loky workers, or on a Dask cluster.

``local`` goes through joblib's loky backend, one cell per task; ``dask`` submits batches of cells
to a ``dask.distributed`` client (a scheduler address, or a LocalCluster on 127.0.0.1; see
:mod:`kernbench.runner.dask_batches`). Workers only compute and return
:class:`~kernbench.store.CellRecord` objects; the driving process writes the store. Dask
reschedules the task of a worker that dies, so a lost worker loses no cell; a local worker that
dies has the cell it was computing recorded as ``failed`` while the run goes on (so does a Dask
task that killed every worker it was given, when its worker shares the driver's file system).

:class:`CellExecutor` keeps track of the cells handed to the backend and not yet returned
(:attr:`CellExecutor.in_flight`), so an interrupted run can record exactly those as
``interrupted``.
"""

from __future__ import annotations

import contextlib
import functools
import os
import time
import traceback
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from kernbench.cells.records import CellRecord
from kernbench.errors import KernbenchError
from kernbench.runner.cell import cell_record, run_cell
from kernbench.runner.early_workers import (
    CELL_MODULES,
    close_local_cluster,
    local_cluster,
    local_parallel,
    quiet_logger,
    take_cluster,
    wait_for_local_workers,
)
from kernbench.runner.isolation import (
    CellTimeout,
    ChildDied,
    call_with_timeout,
    close_children,
)
from kernbench.runner.lost_workers import DeathWatch, note_pid, worker_lost_errors
from kernbench.runner.plan import Cell
from kernbench.runner.stop import raise_if_stopping
from kernbench.solvers.threads import available_cores, resolve_threads, thread_default

BACKENDS: tuple[str, ...] = ("local", "dask")
DASK_MISSING = 'the dask backend needs the optional extra: pip install "kernbench[dask]"'


def worker_count(jobs: int, cells: int | None = None) -> int:
    """Workers for ``--jobs``: -1 means one per core; never more than the cores, nor than the
    ``cells`` to run (a worker costs an interpreter with the numerical stack loaded, ~275 MB)."""
    cores = os.cpu_count() or 1
    n = cores if jobs < 1 else min(jobs, cores)
    return max(1, min(n, cells) if cells is not None else n)


class BackendError(KernbenchError):
    """A backend that cannot be used (missing extra, unreachable scheduler, bad address)."""


def threads_per_cell(jobs: int, threads: int | None = None, *, remote: bool = False) -> int:
    """Threads each cell's compiled kernels may use: ``threads`` when given, else the cores of
    this machine ÷ the cells run at once (``jobs``, joblib's convention: −1 one per core), at
    least 1; 1 on a remote Dask scheduler (``remote``), whose workers' cores are unknown here."""
    if threads is not None:
        return resolve_threads(threads)
    if remote:
        return 1
    return max(available_cores() // resolve_threads(jobs), 1)


def _run_cell_threaded(cell: Cell, threads: int | None) -> CellRecord:
    with thread_default(threads):
        return run_cell(cell)


def compute_cell(
    cell: Cell,
    timeout_s: float | None = None,
    threads: int | None = None,
    *,
    isolate: bool = False,
) -> CellRecord:
    """Compute one cell, in a killable child process when ``timeout_s`` is set or ``isolate``
    (no limit then), with ``threads`` as its kernels' thread default (None: leave the process
    default).

    Returns a ``timeout`` record when the limit passes and a ``failed`` one when the child dies
    without a result (a method that called ``os._exit`` too); otherwise whatever
    :func:`kernbench.runner.cell.run_cell` returns.
    """
    if timeout_s is None and not isolate:
        return _run_cell_threaded(cell, threads)
    started = time.time()
    try:
        return call_with_timeout(
            _run_cell_threaded, (cell, threads), timeout_s, preload=CELL_MODULES
        )
    except (CellTimeout, ChildDied) as exc:
        return cell_record(
            cell,
            "timeout" if isinstance(exc, CellTimeout) else "failed",
            error=f"{type(exc).__name__}: {exc}",
            traceback=traceback.format_exc() if isinstance(exc, ChildDied) else None,
            result={"timeout_s": timeout_s},
            started_at=started,
        )


def _compute_marked(
    cell: Cell, timeout_s: float | None, threads: int | None, marks: str
) -> CellRecord:
    """:func:`compute_cell` on a worker that first notes which process computes the cell."""
    note_pid(marks, cell.cell_id)
    return compute_cell(cell, timeout_s, threads)


class CellExecutor:
    """Run cells on a backend and yield their records as they finish (in completion order).

    Parameters
    ----------
    backend : "local" | "dask"
    jobs : int
        ``local``: joblib ``n_jobs`` (-1 all cores; 1 runs inline; at most the cores and the
        cells to run, see :func:`worker_count`). ``dask``: workers of the
        LocalCluster started when no scheduler is given (-1: one per core).
    scheduler : str, optional
        ``dask`` only: address of a running scheduler (``tcp://HOST:PORT``).
    timeout_s : float, optional
        Per-cell wall-clock limit (see :func:`compute_cell`).
    threads : int, optional
        Threads per cell (see :func:`threads_per_cell`; None: cores ÷ cells at once).

    Attributes
    ----------
    in_flight : dict
        ``cell_id -> Cell`` handed to the backend whose record the consumer has not yet taken
        (a cell stays in flight until the generator is resumed after yielding its record).
    """

    def __init__(
        self,
        backend: str = "local",
        *,
        jobs: int = -1,
        scheduler: str | None = None,
        timeout_s: float | None = None,
        threads: int | None = None,
    ) -> None:
        if backend not in BACKENDS:
            choices = ", ".join(BACKENDS)
            raise BackendError(f"unknown backend {backend!r} (expected one of {choices})")
        if scheduler is not None and backend != "dask":
            raise BackendError("--scheduler needs --backend dask")
        if backend == "dask":
            import importlib.util

            if importlib.util.find_spec("distributed") is None:
                raise BackendError(DASK_MISSING)
            if scheduler is not None:
                check_scheduler_address(scheduler)
        self.backend = backend
        self.jobs = jobs if jobs != 0 else 1
        self.scheduler = scheduler
        self.timeout_s = timeout_s
        self.threads = threads_per_cell(
            self.jobs, threads, remote=backend == "dask" and scheduler is not None
        )
        self.in_flight: dict[str, Cell] = {}
        self._parallel: Any = None  # the joblib call now yielding records
        self._batches: Any = None  # the Dask run now yielding records
        self._stack = contextlib.ExitStack()
        self._entered = False
        self._client: Any = None

    def __enter__(self) -> CellExecutor:
        """Connect to the backend (Dask: the scheduler, or a new LocalCluster) before any work."""
        if self.backend == "dask":
            try:
                client = self._stack.enter_context(dask_client(self.scheduler, self.jobs))
                check_worker_versions(client, self.scheduler or "the local Dask cluster")
                self._client = client
            except BaseException:
                self._stack.close()  # `with` never entered: disconnect now, not at collection
                raise
        self._entered = True
        return self

    def __exit__(self, *exc: object) -> None:
        self._entered = False
        self._stack.close()

    def run(self, cells: Sequence[Cell]) -> Iterator[CellRecord]:
        """Yield one record per cell as cells finish (call inside ``with executor:``)."""
        if not cells:
            return
        if self.backend == "dask":
            yield from self._run_dask(cells)
        elif (n_jobs := worker_count(self.jobs, len(cells))) == 1:
            try:
                for cell in cells:
                    self.in_flight[cell.cell_id] = cell
                    # a method from outside the package runs outside the driver: nothing it
                    # does (os._exit, a crash) can end the run
                    outside = cell.method.source is not None
                    yield compute_cell(cell, self.timeout_s, self.threads, isolate=outside)
                    self.in_flight.pop(cell.cell_id, None)
            finally:
                close_children()  # this process's cell child: not needed after the run
        else:
            yield from self._run_joblib(cells, n_jobs=n_jobs)

    def arrived(self) -> int:
        """Records that have arrived and wait to be yielded (0 when the next one means waiting):
        a consumer may hold the records it has until then and store them together."""
        if self._batches is not None:
            return self._batches.arrived()
        jobs = getattr(self._parallel, "_jobs", None)  # joblib: finished tasks, unordered mode
        try:
            return len(jobs) if jobs is not None else 0
        except TypeError:
            return 0

    # -- internals ---------------------------------------------------------------------------
    def _tasks(self, cells: Iterable[Cell], marks: str) -> Iterator[Any]:
        """joblib pulls this lazily as it dispatches: what was pulled is in flight."""
        from joblib import delayed

        for cell in cells:
            self.in_flight[cell.cell_id] = cell
            yield delayed(_compute_marked)(cell, self.timeout_s, self.threads, marks)

    def _run_joblib(self, cells: Sequence[Cell], n_jobs: int) -> Iterator[CellRecord]:
        """Cells on joblib's workers. A worker that dies (the OOM killer, a kill from outside)
        breaks the whole pool: the cell it was computing is recorded as ``failed`` and the
        others run again on a new pool (see :mod:`kernbench.runner.lost_workers`). A cell in
        flight at two losses that could not be attributed is recorded as ``failed`` too."""
        wait_for_local_workers()  # the workers started while the spec was read (reused)
        pending = {c.cell_id: c for c in cells}
        suspect: Counter[str] = Counter()
        with DeathWatch() as watch:
            while pending:
                parallel = local_parallel(n_jobs, return_as="generator_unordered", batch_size=1)
                self._parallel = parallel
                try:
                    for rec in parallel(self._tasks(list(pending.values()), watch.marks)):
                        yield rec
                        self.in_flight.pop(rec.cell_id, None)  # the consumer has taken it
                        pending.pop(rec.cell_id, None)
                    return
                except worker_lost_errors() as exc:
                    raise_if_stopping(exc)  # a signal that also reached the workers: a stop
                    lost = watch.lost_cells(self.in_flight)
                    if not lost:
                        suspect.update(list(self.in_flight))  # the ids, counted once each
                        lost = [c for i, c in self.in_flight.items() if suspect[i] >= 2]
                    why = (str(exc).splitlines() or [""])[0].split(". ")[0][:200]
                    for cell in lost:
                        yield cell_record(
                            cell,
                            "failed",
                            error="WorkerDied: the worker process computing this cell died (out "
                            "of memory, killed from outside, or ended by the method itself): "
                            f"{type(exc).__name__}: {why}",
                        )
                        self.in_flight.pop(cell.cell_id, None)
                        pending.pop(cell.cell_id, None)
                    self.in_flight.clear()  # the others are dispatched again
                finally:
                    self._parallel = None

    def _run_dask(self, cells: Sequence[Cell]) -> Iterator[CellRecord]:
        if not self._entered:  # used without `with`: connect for this run only
            with self:
                yield from self._run_dask_guarded(cells)
        else:
            yield from self._run_dask_guarded(cells)

    def _run_dask_guarded(self, cells: Sequence[Cell]) -> Iterator[CellRecord]:
        """Cells never raise (a failing cell is a ``failed`` record), so whatever the Dask
        backend raises is the cluster's: a lost scheduler becomes one :class:`BackendError`."""
        from kernbench.runner.dask_batches import DaskBatches

        where = self.scheduler or "the local Dask cluster"
        check_worker_plugins(self._client, cells, where)
        wait_for_a_worker(self._client, where)
        compute = functools.partial(compute_cell, timeout_s=self.timeout_s, threads=self.threads)
        self._batches = DaskBatches(self._client, compute, self.in_flight)
        try:
            yield from self._batches.run(cells)
        except (KernbenchError, KeyboardInterrupt, GeneratorExit):
            raise
        except Exception as exc:
            first = (str(exc).splitlines() or [""])[0][:200]
            raise BackendError(
                f"lost the Dask scheduler at {where} ({type(exc).__name__}: {first}); "
                "finished cells are saved: restart the scheduler and rerun the same command"
            ) from exc
        finally:
            self._batches = None


#: seconds a scheduler without workers is given for the first one to join
FIRST_WORKER_S = 60.0


def wait_for_a_worker(client: Any, where: str, limit_s: float = FIRST_WORKER_S) -> None:
    """Return once the cluster has a worker; a :class:`BackendError` after ``limit_s``."""
    if client.scheduler_info()["workers"]:
        return
    try:
        client.wait_for_workers(1, timeout=limit_s)
    except TimeoutError:
        raise BackendError(
            f"no Dask worker joined {where} within {limit_s:g} s; start workers, then rerun"
        ) from None


#: seconds the workers have to answer the driver's version question
WORKER_ANSWER_S = 60.0


def _bounded(call: Any, limit_s: float, message: str) -> Any:
    """``call()`` in a daemon thread; a :class:`BackendError` with ``message`` after ``limit_s``
    (the thread is left behind: it cannot hold the process open)."""
    import threading

    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = call()
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=target, name="kernbench-bounded", daemon=True)
    thread.start()
    thread.join(limit_s)
    if thread.is_alive():
        raise BackendError(message)
    if "error" in box:
        raise box["error"]
    return box["value"]


def check_worker_versions(client: Any, where: str) -> None:
    """Refuse a cluster whose workers run another kernbench version (before any submission).

    A worker with other code computes other numbers under this version's cell identities, or
    fails on every cell; both are refused here, naming the worker and both versions.
    """
    import importlib.metadata

    import kernbench

    # a stdlib function travels by reference, so even a worker with no or old kernbench answers
    answers = _bounded(
        lambda: client.run(importlib.metadata.version, "kernbench", on_error="return"),
        WORKER_ANSWER_S,
        f"the workers of {where} did not answer within {WORKER_ANSWER_S:g} s; check the cluster",
    )
    wrong = {
        addr: (f"{type(v).__name__}: {v}" if isinstance(v, BaseException) else str(v))
        for addr, v in sorted(answers.items())
        if v != kernbench.__version__
    }
    if wrong:
        addr, theirs = next(iter(wrong.items()))
        more = f" (and {len(wrong) - 1} more worker(s))" if len(wrong) > 1 else ""
        raise BackendError(
            f"Dask worker {addr}{more} at {where} runs kernbench {theirs}, this driver "
            f"{kernbench.__version__}; install the same kernbench on every worker, then rerun"
        )


def check_worker_plugins(client: Any, cells: Sequence[Cell], where: str) -> None:
    """Refuse a cluster whose workers cannot import a plug-in module of the cells, or import
    another version of it (before any submission). A plug-in file's code travels with its
    cells, so it needs nothing on the workers."""
    from kernbench.methods.plugins import module_provenance

    wanted = {
        c.method.source.module: c.method.source.record()
        for c in cells
        if c.method.source is not None and c.method.source.code is None
    }
    for module, mine in sorted(wanted.items()):
        answers = client.run(module_provenance, module, on_error="return")
        for addr, theirs in sorted(answers.items()):
            if isinstance(theirs, BaseException):
                first = (str(theirs).splitlines() or [""])[0][:200]
                raise BackendError(
                    f"Dask worker {addr} at {where} cannot import the plug-in module {module!r} "
                    f"({type(theirs).__name__}: {first}); install it on every worker, then rerun"
                )
            if theirs != mine:
                raise BackendError(
                    f"Dask worker {addr} at {where} has plug-in module {module!r} as {theirs}, "
                    f"this driver as {mine}; install the same on every worker, then rerun"
                )


@contextlib.contextmanager
def dask_client(scheduler: str | None, jobs: int = -1) -> Iterator[Any]:
    """A ``dask.distributed`` client: to ``scheduler``, or to a LocalCluster on 127.0.0.1.

    Raises
    ------
    BackendError
        dask is not installed (naming the extra), the address is malformed or unreachable.
    """
    if scheduler is not None:  # before distributed is imported (seconds): refuse early
        check_scheduler_address(scheduler)
        probe_scheduler(scheduler)
    try:
        from dask.distributed import Client
    except ImportError:
        raise BackendError(DASK_MISSING) from None
    if scheduler is None:
        workers = worker_count(jobs)
        cluster = take_cluster(workers) or local_cluster(workers)  # started early, or now
        try:
            with Client(cluster) as client:
                yield client
        finally:
            close_local_cluster(cluster)
        return
    # distributed logs a traceback per failed reconnection; the run ends with one line instead
    with quiet_logger("distributed"):
        try:
            client = Client(scheduler, timeout="20s")
        except (OSError, TimeoutError) as exc:
            raise BackendError(
                f"cannot connect to the Dask scheduler at {scheduler}: {exc}"
            ) from None
        with client:
            yield client


#: seconds a scheduler has to accept a connection and to send its first bytes
PROBE_TIMEOUT_S = 10.0


def probe_scheduler(address: str, timeout_s: float = PROBE_TIMEOUT_S) -> None:
    """Refuse, within ``2 * timeout_s``, a ``tcp://`` address where no Dask scheduler answers.

    ``distributed`` waits for the scheduler's handshake without a time limit once the TCP
    connection is up, so a listener that accepts and never answers (a silent port, an HTTP
    server) would hang the run. A Dask scheduler sends its handshake as soon as it accepts:
    a length-prefixed frame (8 bytes, little-endian, then the message). No bytes within
    ``timeout_s``, or a first frame length no Dask message has, is a :class:`BackendError`.
    (``tls://`` waits for the client to speak first: it is left to ``distributed``.)
    """
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(address)
    if parts.scheme != "tcp":
        return
    where = f"the Dask scheduler at {address}"
    try:
        with socket.create_connection((parts.hostname, parts.port), timeout=timeout_s) as sock:
            sock.settimeout(timeout_s)
            first = b""
            while len(first) < 8:
                chunk = sock.recv(8 - len(first))
                if not chunk:
                    break
                first += chunk
    except TimeoutError:
        raise BackendError(
            f"{where} accepted the connection but sent nothing within {timeout_s:g} s: it is "
            "not a Dask scheduler (check the host and port of --scheduler)"
        ) from None
    except OSError as exc:
        raise BackendError(f"cannot connect to {where}: {exc.strerror or exc}") from None
    if len(first) < 8 or int.from_bytes(first, "little") >= 1 << 26:
        raise BackendError(
            f"{where} answered, but not as a Dask scheduler does (check the host and port of "
            "--scheduler)"
        )


def check_scheduler_address(address: str) -> str:
    """Accept ``tcp://HOST:PORT`` (or ``tls://``); anything else is a :class:`BackendError`."""
    from urllib.parse import urlsplit

    parts = urlsplit(address)
    try:
        port = parts.port
    except ValueError:
        port = None
    if parts.scheme not in ("tcp", "tls") or not parts.hostname or port is None:
        raise BackendError(
            f"--scheduler expects an address like tcp://127.0.0.1:8786, got {address!r}"
        )
    return address
