"""How many threads a compiled kernel may use, and the pool that splits it into blocks.

The hot loops (the stump searches, the distance-kernel builds) are compiled with ``nogil=True``
and take a block of independent work (a range of features, a range of rows). :func:`run_blocks`
cuts the work into contiguous blocks and runs them on a process-wide thread pool. Each block's
numbers are computed exactly as in one thread (same loops, same summation order), so the results
are bitwise those of one thread whatever the count.

The count follows scikit-learn's ``n_jobs``: a positive integer is that many threads, −1 all the
cores this process may use, −2 all but one, and so on; ``None`` is the current default, which is
all the cores unless something set another one: the ``KERNBENCH_THREADS`` environment variable,
or :func:`thread_default` around a block of code (the runner sets it for each cell to the cores
the run has ÷ the cells it runs at once). The default is per thread (a ``ContextVar``), so cells
run by the threads of one Dask worker do not see each other's.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar

#: the thread default set by :func:`thread_default` (None: the environment or all cores)
_DEFAULT: ContextVar[int | None] = ContextVar("kernbench_threads", default=None)
_POOL: ThreadPoolExecutor | None = None
_POOL_SIZE = 0
_POOL_LOCK = threading.Lock()
ENV_VAR = "KERNBENCH_THREADS"
#: work is split over threads only into blocks of at least this many elementary steps (a row
#: visited on one feature, one coordinate of a distance): below it, handing a block to another
#: thread costs more than it saves
MIN_BLOCK_WORK = 1 << 16


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity where the OS tells it)."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # pragma: no cover - macOS, Windows
        return max(os.cpu_count() or 1, 1)


def _from_env() -> int | None:
    raw = os.environ.get(ENV_VAR, "").strip()
    if not raw:
        return None
    try:
        value = int(raw)
    except ValueError:
        message = f"{ENV_VAR} must be an integer (threads; -1: all cores), got {raw!r}"
        raise ValueError(message) from None
    if value == 0:
        raise ValueError(f"{ENV_VAR} must not be 0 (threads; -1: all cores)")
    return value


def resolve_threads(n_jobs: int | None = None) -> int:
    """The number of threads meant by ``n_jobs`` (scikit-learn's convention), at least 1.

    Parameters
    ----------
    n_jobs : int or None
        k > 0: k threads; −1: all cores; −k: all cores + 1 − k; None: the current default
        (:func:`thread_default`, else ``KERNBENCH_THREADS``, else all cores).

    Raises
    ------
    ValueError
        ``n_jobs == 0``.
    """
    if n_jobs is None:
        n_jobs = _DEFAULT.get()
    if n_jobs is None:
        n_jobs = _from_env()
    if n_jobs is None:
        return available_cores()
    n_jobs = int(n_jobs)
    if n_jobs == 0:
        raise ValueError("n_jobs == 0 has no meaning: use a positive count, -1 (all cores) or None")
    if n_jobs < 0:
        return max(available_cores() + 1 + n_jobs, 1)
    return n_jobs


@contextlib.contextmanager
def thread_default(n_jobs: int | None) -> Iterator[None]:
    """Within the block, ``n_jobs=None`` means ``n_jobs`` (None: leave the default as it is)."""
    if n_jobs is None:
        yield
        return
    token = _DEFAULT.set(resolve_threads(n_jobs))
    try:
        yield
    finally:
        _DEFAULT.reset(token)


def useful_threads(n_threads: int, work: int) -> int:
    """How many of ``n_threads`` to use on ``work`` elementary steps: at most one per
    :data:`MIN_BLOCK_WORK` steps, at least 1."""
    return max(1, min(n_threads, work // MIN_BLOCK_WORK))


def _pool(size: int) -> ThreadPoolExecutor:
    global _POOL, _POOL_SIZE
    with _POOL_LOCK:
        if _POOL is None or _POOL_SIZE < size:
            old = _POOL
            _POOL = ThreadPoolExecutor(max_workers=size, thread_name_prefix="kernbench")
            _POOL_SIZE = size
            if old is not None:
                old.shutdown(wait=False)
        return _POOL


def _forget_pool() -> None:
    """A forked child has none of the parent's threads: it starts its own pool when needed."""
    global _POOL, _POOL_SIZE, _POOL_LOCK
    _POOL, _POOL_SIZE, _POOL_LOCK = None, 0, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def block_bounds(n_items: int, n_blocks: int, align: int = 1) -> list[tuple[int, int]]:
    """``n_blocks`` contiguous ranges covering ``range(n_items)`` as evenly as possible, each
    starting at a multiple of ``align`` (fewer blocks when there are too few items)."""
    units = -(-n_items // align)  # ceil
    n_blocks = max(min(n_blocks, units), 1)
    cuts = [min((units * b // n_blocks) * align, n_items) for b in range(n_blocks + 1)]
    return [(lo, hi) for lo, hi in zip(cuts[:-1], cuts[1:]) if hi > lo] or [(0, n_items)]


def run_blocks(
    fn: Callable[[int, int], object],
    n_items: int,
    n_threads: int,
    *,
    align: int = 1,
) -> None:
    """Call ``fn(start, stop)`` over contiguous blocks of ``range(n_items)``, on ``n_threads``
    threads (the calling thread takes the first block). ``fn`` must release the GIL to gain
    anything (a ``nogil`` compiled kernel) and write disjoint outputs per block.
    """
    blocks = block_bounds(n_items, n_threads, align) if n_threads > 1 else [(0, n_items)]
    if len(blocks) == 1:
        fn(*blocks[0])
        return
    pool = _pool(len(blocks) - 1)
    futures = [pool.submit(fn, lo, hi) for lo, hi in blocks[1:]]
    try:
        fn(*blocks[0])
    finally:
        for f in futures:
            f.result()
