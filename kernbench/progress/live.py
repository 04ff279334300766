"""The live progress of ``kernbench run``: an ETA that moves with the clock, and timed lines.

On a terminal, a Rich bar shows the cells finished and :class:`MovingEtaColumn`; without one (make,
a SLURM log, a pipe), :class:`ProgressLines` prints one line at the start, one every
``$KERNBENCH_PROGRESS_EVERY`` seconds (default 30) and one at the end: counts, rate, elapsed time
and ETA. ``$KERNBENCH_PROGRESS`` = ``1`` forces the bar, ``0`` turns progress off.

The estimate is a throughput one: with ``c`` of ``n`` cells finished, the last at ``t_c`` seconds
after the start, the time per cell is ``max(t_c / c, t / (c + 1))`` at time ``t``, and the ETA is
that times ``n`` minus ``t``. Between completions it counts down second by second; once the wait
for the next cell is longer than the mean so far, it grows instead of sitting at zero.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

from rich.progress import ProgressColumn, Task
from rich.text import Text

__all__ = ["MovingEtaColumn", "ProgressLines", "RunClock", "format_clock", "progress_mode"]

DEFAULT_EVERY_S = 30.0


def format_clock(seconds: float | None) -> str:
    """``H:MM:SS`` (``-:--:--`` when unknown)."""
    if seconds is None:
        return "-:--:--"
    s = int(round(max(0.0, seconds)))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


class RunClock:
    """Counts of a run's finished cells and the ETA they give at any moment.

    Parameters
    ----------
    clock : callable
        Seconds from an arbitrary origin (``time.monotonic``; a test gives its own).
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.start = clock()
        self.total: int | None = None
        self.done = 0
        self.failed = 0
        self._last = 0.0  # seconds from the start to the latest finished cell
        self._lock = threading.Lock()

    def begin(self, total: int) -> None:
        """The run knows how many cells it will run (after its data are available); the clock
        restarts, so that fetching data and starting workers do not count as cell time."""
        with self._lock:
            self.total = total
            self.start = self._clock()

    def finished(self, ok: bool) -> None:
        """One more cell finished (``ok``: done or skipped, else failed or timed out)."""
        with self._lock:
            if ok:
                self.done += 1
            else:
                self.failed += 1
            self._last = self._clock() - self.start

    @property
    def completed(self) -> int:
        return self.done + self.failed

    def elapsed(self) -> float:
        return self._clock() - self.start

    def eta(self) -> float | None:
        """Seconds still needed at this moment (None before the first cell or without a total)."""
        with self._lock:
            c, n, last = self.completed, self.total, self._last
        if n is None or c == 0:
            return None
        if c >= n:
            return 0.0
        now = self.elapsed()
        per_cell = max(last / c, now / (c + 1))
        return max(0.0, per_cell * n - now)

    def line(self, name: str) -> str:
        """One line: ``NAME: 12/300 cells (11 done, 1 failed), 2.4 cells/min, elapsed 0:05:00,
        ETA 1:50:00``."""
        now = self.elapsed()
        c, n = self.completed, self.total
        of = f"/{n}" if n is not None else ""
        rate = f"{_per_minute(c, now)} cells/min" if c and now > 0 else "no cell finished yet"
        return (
            f"{name}: {c}{of} cells ({self.done} done, {self.failed} failed), {rate}, "
            f"elapsed {format_clock(now)}, ETA {format_clock(self.eta())}"
        )


class MovingEtaColumn(ProgressColumn):
    """``ETA H:MM:SS`` from the task's ``clock`` field, redrawn at every refresh."""

    def render(self, task: Task) -> Text:
        clock = task.fields.get("clock")
        eta = clock.eta() if isinstance(clock, RunClock) else None
        return Text(f"ETA {format_clock(eta)}", style="progress.remaining")


class ProgressLines:
    """A thread that prints :meth:`RunClock.line` every ``every`` seconds and once at the end.

    Use as a context manager around the run.
    """

    def __init__(
        self,
        clock: RunClock,
        name: str,
        write: Callable[[str], None],
        every: float = DEFAULT_EVERY_S,
    ) -> None:
        self.clock, self.name, self.write, self.every = clock, name, write, every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="kernbench-progress", daemon=True)

    def _loop(self) -> None:
        while not self._stop.wait(self.every):
            if self.clock.total:  # not before the run knows its cells, nor when it has none
                self.write(self.clock.line(self.name))

    def __enter__(self) -> ProgressLines:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        if self.clock.total:
            self.write(self.clock.line(self.name))


def progress_mode(is_terminal: bool) -> tuple[str, float]:
    """``("bar" | "lines" | "off", seconds between lines)`` from the terminal and the environment.

    ``$KERNBENCH_PROGRESS_EVERY`` that is not a positive number falls back to the default.
    """
    forced = os.environ.get("KERNBENCH_PROGRESS", "")
    try:
        every = float(os.environ.get("KERNBENCH_PROGRESS_EVERY", DEFAULT_EVERY_S))
    except ValueError:
        every = DEFAULT_EVERY_S
    if not 0.0 < every < float("inf"):  # NaN fails it too
        every = DEFAULT_EVERY_S
    if forced == "0":
        return "off", every
    if forced == "1" or is_terminal:
        return "bar", every
    return "lines", every


def _per_minute(count: int, seconds: float) -> str:
    """``count`` per ``seconds`` as a rate per minute in plain digits: three significant figures
    below 100 (``2.4``, ``0.05``), whole numbers above (``3620``, never ``3.62e+03``)."""
    rate = 60.0 * count / seconds
    return f"{rate:.0f}" if rate >= 100 else f"{rate:.3g}"
