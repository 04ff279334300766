"""A cell's CPU clock counts the cell's threads and the kernel pool's, not the host's."""

from __future__ import annotations

import threading
import time

from kernbench.runner.cell.clock import POOL_PREFIX, CellClock


def _spin(seconds: float) -> None:
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def _in_thread(name: str, seconds: float) -> float:
    """CPU seconds a thread named ``name`` spent spinning ``seconds`` of its own CPU."""
    spent = []

    def work() -> None:
        start = time.thread_time()
        _spin(seconds)
        spent.append(time.thread_time() - start)

    thread = threading.Thread(target=work, name=name)
    thread.start()
    thread.join()
    return spent[0]


def test_a_host_thread_is_left_out_and_a_pool_thread_is_counted():
    def spin_while_running(name: str) -> tuple[float, float]:
        stop = threading.Event()

        def background() -> None:
            while not stop.is_set():
                pass

        host = threading.Thread(target=background, name=name)
        host.start()  # a host's threads live on (a Dask worker's event loop)
        try:
            process_start = time.process_time()
            clock = CellClock()
            _spin(0.2)
            return clock.seconds(), time.process_time() - process_start
        finally:
            stop.set()
            host.join()

    cell, process = spin_while_running("host-event-loop")
    # the host thread spun as long as the cell did: the process saw both, the clock the cell's
    assert cell < 0.75 * process
    assert cell >= 0.2 * 0.9

    clock = CellClock()
    worked = _in_thread(POOL_PREFIX + "0", 0.1)  # the kernel pool works for the cell
    assert clock.seconds() >= 0.9 * worked


def test_the_clock_is_never_negative():
    assert CellClock().seconds() >= 0.0
