"""Threads per cell: the share of the cores each cell gets, and the default it runs under."""

from __future__ import annotations

import pytest

from kernbench.runner import backends
from kernbench.solvers import threads


def test_threads_per_cell_share_the_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(backends, "available_cores", lambda: 16)
    monkeypatch.setattr(threads, "available_cores", lambda: 16)
    assert backends.threads_per_cell(1) == 16
    assert backends.threads_per_cell(2) == 8
    assert backends.threads_per_cell(3) == 5
    assert backends.threads_per_cell(-1) == 1  # one cell per core
    assert backends.threads_per_cell(32) == 1
    assert backends.threads_per_cell(2, threads=3) == 3  # --threads overrides
    assert backends.threads_per_cell(-1, threads=-1) == 16
    assert backends.threads_per_cell(1, remote=True) == 1  # a remote cluster's cores are unknown


@pytest.mark.parametrize("timeout_s", [None, 60.0])
def test_a_cell_runs_under_its_thread_default(
    monkeypatch: pytest.MonkeyPatch, timeout_s: float | None
) -> None:
    if timeout_s is not None:  # the child process: a picklable stand-in for run_cell
        monkeypatch.setattr(backends, "call_with_timeout", lambda fn, args, *a, **k: fn(*args))
    monkeypatch.setattr(backends, "run_cell", lambda cell: threads.resolve_threads(None))
    monkeypatch.delenv(threads.ENV_VAR, raising=False)
    assert backends.compute_cell(object(), timeout_s, threads=3) == 3  # type: ignore[arg-type]
    assert backends.compute_cell(object(), timeout_s) == threads.available_cores()  # type: ignore[arg-type]
    executor = backends.CellExecutor("local", jobs=1, threads=2)
    assert executor.threads == 2
