"""Threads per cell: the share of the cores each cell gets, and the default it runs under; the
executor each backend name opens."""

from __future__ import annotations

import pytest

from kernbench.runner.execution import backends, cell_task, executor
from kernbench.runner.execution.executor import BackendError
from kernbench.runner.execution.inline import InlineExecutor
from kernbench.runner.execution.local_pool import LocalPoolExecutor
from kernbench.solvers import threads


def test_threads_per_cell_share_the_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(executor, "available_cores", lambda: 16)
    monkeypatch.setattr(threads, "available_cores", lambda: 16)
    assert executor.threads_per_cell(1) == 16
    assert executor.threads_per_cell(2) == 8
    assert executor.threads_per_cell(3) == 5
    assert executor.threads_per_cell(-1) == 1  # one cell per core
    assert executor.threads_per_cell(32) == 1
    assert executor.threads_per_cell(2, threads=3) == 3  # --threads overrides
    assert executor.threads_per_cell(-1, threads=-1) == 16
    assert executor.threads_per_cell(1, remote=True) == 1  # a remote cluster's cores are unknown


@pytest.mark.parametrize("timeout_s", [None, 60.0])
def test_a_cell_runs_under_its_thread_default(
    monkeypatch: pytest.MonkeyPatch, timeout_s: float | None
) -> None:
    if timeout_s is not None:  # the child process: a picklable stand-in for run_cell
        monkeypatch.setattr(cell_task, "call_with_timeout", lambda fn, args, *a, **k: fn(*args))
    monkeypatch.setattr(cell_task, "run_cell", lambda cell: threads.resolve_threads(None))
    monkeypatch.delenv(threads.ENV_VAR, raising=False)
    assert cell_task.compute_cell(object(), timeout_s, threads=3) == 3  # type: ignore[arg-type]
    assert cell_task.compute_cell(object(), timeout_s) == threads.available_cores()  # type: ignore[arg-type]
    opened = backends.open_executor("local", jobs=1, threads=2)
    assert isinstance(opened, InlineExecutor) and opened.threads == 2


def test_each_backend_name_opens_its_executor(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    assert isinstance(backends.open_executor("local", jobs=1), InlineExecutor)
    assert isinstance(backends.open_executor("local", jobs=0), InlineExecutor)  # 0 reads as 1
    pool = backends.open_executor("local", jobs=2)
    assert isinstance(pool, LocalPoolExecutor) and pool.arrived() == 0
    assert isinstance(pool, executor.Executor) and isinstance(InlineExecutor(), executor.Executor)
    with pytest.raises(BackendError, match="unknown backend"):
        backends.open_executor("slurm")
    with pytest.raises(BackendError, match="--scheduler needs --backend dask"):
        backends.open_executor("local", scheduler="tcp://127.0.0.1:8786")


def test_the_dask_executor_has_the_executor_shape() -> None:
    pytest.importorskip("distributed")
    opened = backends.open_executor("dask", jobs=1, scheduler="tcp://127.0.0.1:8786")
    assert isinstance(opened, executor.Executor) and opened.arrived() == 0  # not connected yet
