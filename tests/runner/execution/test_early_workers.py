"""Workers started while the spec is read: loky's are reused by the run's own call and killed at
the end; Dask's LocalCluster is taken once, with the cell modules imported, or closed."""

from __future__ import annotations

import importlib.util
import logging
import os
import signal
import sys
import threading
import time

import pytest
from joblib import delayed

from kernbench.runner.execution import early_workers as ew
from kernbench.runner.execution.cell_task import CELL_MODULES
from kernbench.runner.execution.local_cluster import close_local_cluster, local_cluster
from kernbench.runner.execution.local_workers import local_parallel, stop_local_workers


def _pid_and_modules() -> tuple[int, bool]:
    time.sleep(0.2)  # long enough that each of two tasks lands on its own worker
    return os.getpid(), all(name in sys.modules for name in CELL_MODULES)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie child has not been reaped yet: it is gone all the same
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[1].split()[0] != "Z"
    except OSError:
        return False


def _blas_threads() -> list[int]:
    from threadpoolctl import threadpool_info

    return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]


@pytest.mark.parametrize(
    ("backend", "workers", "scheduler"),
    [("local", 1, None), ("dask", 2, "tcp://127.0.0.1:8786"), ("nope", 2, None)],
)
def test_nothing_is_started_where_no_worker_is_ours(backend, workers, scheduler):
    assert ew.start_early(backend, workers, scheduler) is None


def test_local_workers_are_started_with_the_modules_and_reused_then_killed():
    stop_local_workers()  # no pool left by another test
    early = ew.start_early("local", 2)
    assert early is not None and early.workers == 2
    early.join()
    seen = local_parallel(2, batch_size=1)(delayed(_pid_and_modules)() for _ in range(4))
    from joblib.externals.loky import reusable_executor

    started = set(reusable_executor._executor._processes)  # the pids loky started
    pids = {pid for pid, _ in seen}
    assert pids <= started and len(started) == 2  # the run's call ran on the early workers
    assert all(imported for _, imported in seen)  # which had imported the cell modules
    early.wait_for_local_workers()  # a no-op once started
    early.close()
    deadline = time.monotonic() + 30
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(p) for p in pids)
    assert early.take_cluster(2) is None  # a local start has no cluster to take


@pytest.mark.skipif(importlib.util.find_spec("distributed") is None, reason="needs dask")
def test_dask_cluster_is_taken_once_with_the_modules_imported():
    from dask.distributed import Client

    early = ew.start_early("dask", 1)
    assert early is not None
    assert early.take_cluster(2) is None  # another worker count: not this cluster
    cluster = early.take_cluster(1)
    try:
        assert cluster is not None and early.take_cluster(1) is None  # taken once
        with Client(cluster) as client:
            answers = client.run(lambda: all(m in sys.modules for m in CELL_MODULES))
            environ = client.run(lambda: os.environ.get("MALLOC_TRIM_THRESHOLD_"))
            blas = client.run(_blas_threads)
        assert list(answers.values()) == [True]
        # the cluster sets no trim threshold of its own (an earlier Dask cluster in this
        # process may have left Dask's in os.environ, before or after the fork server started)
        assert list(environ.values())[0] in (None, os.environ.get("MALLOC_TRIM_THRESHOLD_"))
        # one BLAS thread per worker, as Dask's spawned workers have, forked or not
        assert set(*blas.values()) == {1} or os.environ.get("OPENBLAS_NUM_THREADS") != "1"
        early.close()  # taken: the run closes it, not this
        assert cluster.status.name == "running"
    finally:
        cluster.close()


@pytest.mark.skipif(importlib.util.find_spec("distributed") is None, reason="needs dask")
def test_a_cluster_no_run_took_is_closed():
    early = ew.start_early("dask", 1)
    early.join()
    cluster = early._cluster
    pids = [nanny.pid for nanny in cluster.workers.values()]
    assert pids and all(_alive(pid) for pid in pids)
    with early:
        pass
    assert cluster.status.name == "closed"
    assert early.take_cluster(1) is None
    assert not any(_alive(pid) for pid in pids)


@pytest.mark.skipif(importlib.util.find_spec("distributed") is None, reason="needs dask")
def test_closing_a_local_cluster_kills_its_workers_and_starts_none_in_their_place():
    from dask.distributed import Client

    cluster = local_cluster(2)
    restarts: list[str] = []

    def counted(nanny):  # a nanny that sees its worker die while running starts another
        instantiate = nanny.instantiate

        async def instantiate_counted(*args, **kwargs):
            restarts.append(nanny.address)
            return await instantiate(*args, **kwargs)

        return instantiate_counted

    close = cluster.close

    def close_late(*args, **kwargs):  # the nannies see their workers die before the close
        time.sleep(1.0)
        return close(*args, **kwargs)

    try:
        with Client(cluster) as client:
            assert client.submit(sum, [1, 2]).result() == 3
        nannies = list(cluster.workers.values())
        pids = [nanny.pid for nanny in nannies]
        assert len(pids) == 2 and all(_alive(pid) for pid in pids)
        for nanny in nannies:
            nanny.instantiate = counted(nanny)
        cluster.close = close_late
    finally:
        close_local_cluster(cluster)
    assert cluster.status.name == "closed"
    assert not any(_alive(pid) for pid in pids)
    assert restarts == []  # told first that the cluster closes, no nanny replaced its worker


REFUSED_SPEC = """
name: refused
datasets: [twonorm]
methods:
  A: {estimator: no_such_estimator}
"""

TWO_CELLS_SPEC = """
name: two_cells
datasets:
  - {name: twonorm, options: {n_train: 60, n_test: 100}}
protocol: {n_realisations: 2, train_size: 0.5, cv_folds: 2, seed: 3, preprocess: minmax}
methods:
  AdaBoost: {estimator: adaboost, grid: {n_estimators: [5]}}
"""


def _kernbench_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("kernbench-")]


def _early_thread_waits_in_joblib(started: list) -> bool:
    """Whether the early thread (of the last :class:`EarlyWorkers` in ``started``) is in joblib's
    Parallel call, waiting for the workers' imports."""
    early = started[-1] if started else None
    frame = sys._current_frames().get(early._thread.ident) if early is not None else None
    while frame is not None:
        if frame.f_code.co_name == "_retrieve" and "joblib" in frame.f_code.co_filename:
            return True
        frame = frame.f_back
    return False


def _recording_starts(monkeypatch) -> list:
    """The :class:`EarlyWorkers` the command line starts from now on, as it starts them."""
    started: list = []
    real = ew.EarlyWorkers

    def recorded(*args, **kwargs):
        started.append(real(*args, **kwargs))
        return started[-1]

    monkeypatch.setattr(ew, "EarlyWorkers", recorded)
    return started


def _refuse_while_the_thread_waits_in_joblib(
    monkeypatch, tmp_path, *, ends_with_process: bool = False
) -> tuple[int, list[str]]:
    """``kernbench run --jobs 2`` in-process on a spec refused once the early thread waits in
    joblib for a cold pool's imports: (exit code, kernbench threads alive as it returned).
    ``ends_with_process``: as the console script calls it (its process ends with the command)."""
    from typer.testing import CliRunner

    import kernbench.specs.load
    from kernbench.cli import app
    from kernbench.cli.state import CliState

    stop_local_workers()  # a cold pool: the workers import for seconds
    started = _recording_starts(monkeypatch)
    real_load_spec = kernbench.specs.load.load_spec
    seen_waiting = []

    def load_spec_once_the_thread_waits(path):
        deadline = time.monotonic() + 120
        while not _early_thread_waits_in_joblib(started) and time.monotonic() < deadline:
            time.sleep(0.005)
        seen_waiting.append(_early_thread_waits_in_joblib(started))
        return real_load_spec(path)  # refused: no such estimator

    monkeypatch.setattr(kernbench.specs.load, "load_spec", load_spec_once_the_thread_waits)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    spec = tmp_path / "refused.yaml"
    spec.write_text(REFUSED_SPEC)
    args = ["run", str(spec), "--out", str(tmp_path / "out"), "--jobs", "2"]
    res = CliRunner().invoke(app, args, obj=CliState(ends_with_process=ends_with_process))
    left = _kernbench_threads()
    assert res.exit_code == 2, res.output
    assert seen_waiting == [True]  # the spec was refused while the thread waited in joblib
    return res.exit_code, left


def test_a_spec_refused_while_the_workers_import_leaves_no_thread_running(monkeypatch, tmp_path):
    """`kernbench run` called in-process returns only once its early thread has ended, even
    when the spec is refused while that thread waits in joblib for the workers' imports. A
    thread left running runs library code beside whatever the caller does next: on CPython
    3.11.0-3.11.7 two threads parsing at once (joblib's pre_dispatch, hypothesis's constant
    collection) can fail with "SystemError: AST constructor recursion depth mismatch"
    (gh-106905)."""
    _, left = _refuse_while_the_thread_waits_in_joblib(monkeypatch, tmp_path)
    assert left == []
    stop_local_workers()  # left warm for a later run of this process: not needed here


def test_the_command_line_does_not_wait_for_the_thread_when_the_spec_is_refused(
    monkeypatch, tmp_path
):
    """The `kernbench` process ends with its command: a refused spec exits without waiting for
    the workers' imports (seconds), and the thread ends with the process."""
    _, left = _refuse_while_the_thread_waits_in_joblib(
        monkeypatch, tmp_path, ends_with_process=True
    )  # as cli.main() calls the app
    assert left == ["kernbench-early-workers"]
    for early in threading.enumerate():
        if early.name == "kernbench-early-workers":
            early.join()  # (a command's process would have ended by now)
    stop_local_workers()


def test_a_run_on_two_workers_leaves_no_thread_and_no_worker(monkeypatch, tmp_path):
    from joblib.externals.loky import reusable_executor
    from typer.testing import CliRunner

    from kernbench.cli import app

    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    spec = tmp_path / "two_cells.yaml"
    spec.write_text(TWO_CELLS_SPEC)
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["run", str(spec), "--out", str(out), "--jobs", "2"])
    assert res.exit_code == 0, res.output
    assert _kernbench_threads() == []
    executor = reusable_executor._executor
    alive = [] if executor is None else [p for p in executor._processes.values() if p.is_alive()]
    assert alive == []  # the run's workers were killed once it was over


def test_a_stop_does_not_wait_for_the_workers_imports():
    stop_local_workers()  # a cold pool: the workers import for seconds
    early = ew.start_early("local", 2)
    deadline = time.monotonic() + 120
    while not _early_thread_waits_in_joblib([early]) and time.monotonic() < deadline:
        time.sleep(0.005)
    assert _early_thread_waits_in_joblib([early])
    with pytest.raises(KeyboardInterrupt), early:  # SIGINT, SIGTERM: the process ends at once
        raise KeyboardInterrupt
    assert early._thread.is_alive()  # not joined: the stop did not wait for the imports
    early.join()  # (a command's process would have ended by now)
    stop_local_workers()


@pytest.mark.skipif(importlib.util.find_spec("distributed") is None, reason="needs dask")
def test_a_cluster_started_for_a_failed_command_is_closed_even_as_the_process_ends(monkeypatch):
    made = []
    start = ew.local_cluster
    monkeypatch.setattr(ew, "local_cluster", lambda n: made.append(start(n)) or made[-1])
    early = ew.start_early("dask", 1, ends_with_command=True)  # as the command line starts it
    with pytest.raises(ValueError), early:
        raise ValueError("the spec is refused")
    assert not early._thread.is_alive()
    assert len(made) == 1 and made[0].status.name == "closed"


class _NoWorkers:
    """A cluster with nothing left to close (what close_local_cluster calls on it)."""

    workers: dict = {}

    def close(self) -> None:
        return None


def test_closing_the_cluster_on_a_stop_leaves_dask_silent_after_it():
    """On a stop the process ends right after the close: what Dask's event loop logs while it
    winds down (a comm it finds closed, with a traceback) must not reach the terminal, so the
    close does not give Dask's loggers their levels back; without a stop it does."""
    from kernbench import stop_signals

    loggers = [logging.getLogger("distributed"), logging.getLogger("distributed.batched")]
    before = [lg.level for lg in loggers]
    try:
        for lg in loggers:
            lg.setLevel(logging.INFO)
        close_local_cluster(_NoWorkers())
        assert [lg.level for lg in loggers] == [logging.INFO] * 2  # an ordinary close
        stop_signals.record(signal.SIGTERM)
        close_local_cluster(_NoWorkers())
        assert all(lg.level > logging.CRITICAL for lg in loggers)
    finally:
        stop_signals.reset()
        for lg, level in zip(loggers, before, strict=True):
            lg.setLevel(level)
