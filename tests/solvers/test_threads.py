"""The thread count convention and the block splitter of kernbench.solvers.threads."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from kernbench.solvers import threads
from kernbench.solvers.threads import (
    MIN_BLOCK_WORK,
    available_cores,
    block_bounds,
    resolve_threads,
    run_blocks,
    thread_default,
    useful_threads,
)


def test_counts_follow_the_n_jobs_convention(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(threads, "available_cores", lambda: 8)
    monkeypatch.delenv(threads.ENV_VAR, raising=False)
    assert resolve_threads(3) == 3
    assert resolve_threads(-1) == 8
    assert resolve_threads(-2) == 7
    assert resolve_threads(-20) == 1
    assert resolve_threads(None) == 8  # nothing set: all cores
    with pytest.raises(ValueError, match="n_jobs == 0"):
        resolve_threads(0)


def test_the_default_comes_from_the_block_then_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(threads, "available_cores", lambda: 8)
    monkeypatch.setenv(threads.ENV_VAR, "3")
    assert resolve_threads(None) == 3
    with thread_default(2):
        assert resolve_threads(None) == 2
        assert resolve_threads(5) == 5  # an explicit count wins
        seen = []
        other = threading.Thread(target=lambda: seen.append(resolve_threads(None)))
        other.start()
        other.join()
        assert seen == [3]  # the block's default is this thread's only
    with thread_default(None):
        assert resolve_threads(None) == 3
    assert resolve_threads(None) == 3
    monkeypatch.setenv(threads.ENV_VAR, "many")
    with pytest.raises(ValueError, match="KERNBENCH_THREADS"):
        resolve_threads(None)


def test_available_cores_is_positive() -> None:
    assert available_cores() >= 1


@pytest.mark.parametrize("n_items", [0, 1, 2, 7, 50, 51])
@pytest.mark.parametrize("n_blocks", [1, 2, 3, 16])
@pytest.mark.parametrize("align", [1, 2])
def test_blocks_cover_the_range_once_in_order(n_items: int, n_blocks: int, align: int) -> None:
    blocks = block_bounds(n_items, n_blocks, align)
    covered = [i for lo, hi in blocks for i in range(lo, hi)]
    assert covered == list(range(n_items))
    assert len(blocks) <= max(n_blocks, 1)
    assert all(lo % align == 0 for lo, _ in blocks)
    if n_items >= n_blocks * align:
        assert len(blocks) == n_blocks


def test_run_blocks_calls_every_block_once_and_waits() -> None:
    out = np.zeros(1000, dtype=int)
    calls = []

    def fill(lo: int, hi: int) -> None:
        calls.append((lo, hi))
        out[lo:hi] += 1

    run_blocks(fill, 1000, 4)
    assert sorted(calls) == block_bounds(1000, 4)
    assert (out == 1).all()


def test_run_blocks_raises_a_block_error() -> None:
    def fail(lo: int, hi: int) -> None:
        if lo > 0:
            raise RuntimeError("block failed")

    with pytest.raises(RuntimeError, match="block failed"):
        run_blocks(fail, 10, 2)


def test_small_work_uses_fewer_threads() -> None:
    assert useful_threads(4, MIN_BLOCK_WORK - 1) == 1
    assert useful_threads(4, 2 * MIN_BLOCK_WORK) == 2
    assert useful_threads(4, 100 * MIN_BLOCK_WORK) == 4


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs os.fork")
def test_a_forked_child_starts_its_own_pool() -> None:
    import os

    run_blocks(lambda lo, hi: None, 10, 2)  # the parent's pool exists
    pid = os.fork()
    if pid == 0:  # the child: the parent's pool threads are not here
        import signal

        signal.alarm(30)  # a pool without threads would wait for ever: killed, the test fails
        code = 1
        try:
            out = np.zeros(10)
            run_blocks(lambda lo, hi: out.__setitem__(slice(lo, hi), 1.0), 10, 2)
            code = 0 if out.sum() == 10 else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0  # not killed by the alarm
