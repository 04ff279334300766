"""Connecting to Dask: a scheduler's address checked and probed, the client, and the checks that
refuse a cluster before any submission (workers of another kernbench version, a plug-in module
they cannot import, no worker at all)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from kernbench.runner.execution.executor import BackendError, worker_count
from kernbench.runner.execution.local_cluster import (
    close_local_cluster,
    local_cluster,
    quiet_logger,
)
from kernbench.runner.plan.cells import Cell

if TYPE_CHECKING:
    from kernbench.runner.execution.early_workers import EarlyWorkers

__all__ = [
    "DASK_MISSING",
    "check_scheduler_address",
    "check_worker_plugins",
    "check_worker_versions",
    "dask_client",
    "probe_scheduler",
    "wait_for_a_worker",
]

DASK_MISSING = 'the dask backend needs the optional extra: pip install "kernbench[dask]"'

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
def dask_client(
    scheduler: str | None, jobs: int = -1, early: EarlyWorkers | None = None
) -> Iterator[Any]:
    """A ``dask.distributed`` client: to ``scheduler``, or to a LocalCluster on 127.0.0.1 (the
    one ``early`` started while the spec was read, when it has the workers ``jobs`` asks for;
    else a new one), closed at the end of the block.

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
        taken = early.take_cluster(workers) if early is not None else None
        cluster = taken or local_cluster(workers)  # started early, or now
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
