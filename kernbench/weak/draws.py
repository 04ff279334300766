"""A per-process cache of the sampled oracles' candidate draws (perceptrons, Fourier features).

Every oracle call of :class:`~kernbench.weak.perceptron.PerceptronSpace` and
:class:`~kernbench.weak.fourier.FourierSpace` draws P fresh candidates: a D × P block of standard
normals, then P uniforms. Every fit of a cell's cross-validation grid (folds × grid values) and its
refit seeds its generator the same way, so step t of every fit draws from the same generator state
and gets the same numbers; only κ's scale (a perceptron space's R, the fold's largest row norm)
differs between folds. The cache keeps each draw's raw material under the generator's exact state
before it, so the repeated fits reuse it instead of redrawing it.

What it holds
-------------
Under the key (bit generator's name, its whole state: the 128-bit state and increment and the
buffered 32-bit half, kind, D, P), one :class:`Draw`:

- ``A``: the D × P block made from ``rng.standard_normal((D, P))``: for perceptrons the block
  normalised column by column (Θ itself), for Fourier features the raw normals (Θ = A / σ is
  formed per call, σ being the space's);
- ``U``: the P doubles in [0, 1) of ``rng.random(P)`` drawn next, from which κ is made;
- ``after``: the bit generator's state after both draws.

Why it is exact
---------------
The draws are a pure function of the bit generator's state, D and P: ``standard_normal`` and
``random`` read nothing else (numpy's ``Generator`` keeps no buffer of its own; PCG64's buffered
32-bit half is in its state, and in the key). ``Generator.uniform(low, high, size)`` computes
each value as ``low + (high − low) · u`` from the same ``u`` that ``random`` returns (both take
one 64-bit output per double), so :func:`uniform_from` rebuilds κ bitwise from U for any scale,
R = 0 included (tested against ``Generator.uniform``). On a hit the generator is set to the stored
after-state, so it continues exactly as after a real draw. A draw is cached only for PCG64 and
PCG64DXSM (the generators of ``default_rng``); any other generator, and a disabled cache, draw as
the spaces did before (``standard_normal``, then ``uniform``). A redraw (``best`` when every
candidate is excluded) starts from another state: another key.

Memory
------
Bounded by ``max_bytes`` (default 256 MB per process, or ``KERNBENCH_DRAW_CACHE_MB``). Entries are
grouped by stream (kind, D, P and the generator's seed sequence): one cell's fits share a stream.
When a new entry does not fit, whole older streams (least recently used first) are dropped; once
the current stream alone fills the cache, nothing more is added, so the early steps that every fit
of a cell shares stay. The cache is a module global, one per process (each loky or Dask worker has
its own). ``KERNBENCH_DRAW_CACHE=0`` turns it off; :func:`disabled` turns it off for a block.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

#: the default bound on the cache's arrays, per process
DEFAULT_MAX_BYTES = 256 * 2**20
#: the bit generators whose state dict the key is made from
_CACHED_BIT_GENERATORS = ("PCG64", "PCG64DXSM")


@dataclass(frozen=True)
class Draw:
    """One cached draw: the D × P block ``A``, the P uniforms ``U`` (both read-only) and the bit
    generator's state ``after`` them."""

    A: np.ndarray
    U: np.ndarray
    after: dict

    @property
    def nbytes(self) -> int:
        return self.A.nbytes + self.U.nbytes


def uniform_from(U: np.ndarray, low: float, high: float) -> np.ndarray:
    """``Generator.uniform(low, high, P)`` from the P doubles ``U`` of ``Generator.random(P)`` drawn
    at the same state: ``low + (high − low)·U`` (numpy's own formula, bitwise)."""
    low = float(low)
    return low + (float(high) - low) * U


class DrawCache:
    """The draws of the sampled oracles, keyed by the generator's state (see the module docstring).

    Parameters
    ----------
    max_bytes : int
        Bound on the cached arrays' bytes.
    """

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.max_bytes = int(max_bytes)
        self.enabled = True
        self.nbytes = 0
        self.hits = 0
        self.misses = 0
        self._streams: OrderedDict[Hashable, dict[tuple, Draw]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return sum(len(entries) for entries in self._streams.values())

    def clear(self) -> None:
        with self._lock:
            self._streams.clear()
            self.nbytes = 0

    def draw(
        self,
        rng: np.random.Generator,
        kind: str,
        D: int,
        P: int,
        prepare: Callable[[np.ndarray], np.ndarray],
        low: float,
        high: float,
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(prepare(rng.standard_normal((D, P))), rng.uniform(low, high, P))``: from the cache
        when ``rng``'s state has been seen for this ``kind``, D and P (the first array is then
        read-only), drawn as written otherwise; ``rng`` ends in the state the draws leave either
        way. ``prepare`` must be a pure function of the normals (it may work in place)."""
        bitgen = rng.bit_generator
        before = bitgen.state if self.enabled else {}
        name = before.get("bit_generator")
        if name not in _CACHED_BIT_GENERATORS:  # disabled, or a generator without a cached state
            return prepare(rng.standard_normal((D, P))), rng.uniform(low, high, size=P)
        inner = before["state"]
        key = (name, inner["state"], inner["inc"], before["has_uint32"], before["uinteger"])
        key += (kind, D, P)
        stream = (kind, D, P, _seed_id(bitgen))
        with self._lock:  # cells may run in threads of one process (a threaded Dask worker)
            entries = self._streams.get(stream)
            entry = entries.get(key) if entries is not None else None
            if entry is not None:
                self.hits += 1
                self._streams.move_to_end(stream)
            else:
                self.misses += 1
        if entry is not None:
            bitgen.state = entry.after
        else:
            A = prepare(rng.standard_normal((D, P)))
            U = rng.random(P)
            A.setflags(write=False)
            U.setflags(write=False)
            entry = Draw(A, U, bitgen.state)
            with self._lock:
                self._add(stream, key, entry)
        return entry.A, uniform_from(entry.U, low, high)

    def _add(self, stream: Hashable, key: tuple, entry: Draw) -> None:
        """Keep ``entry`` if the bound allows (see the module docstring); under the lock."""
        size = entry.nbytes
        if size > self.max_bytes or key in self._streams.get(stream, ()):
            return
        while self.nbytes + size > self.max_bytes:
            oldest = next(iter(self._streams))
            if oldest == stream:  # this stream alone fills the cache: keep its early steps
                return
            self.nbytes -= sum(e.nbytes for e in self._streams.pop(oldest).values())
        self._streams.setdefault(stream, {})[key] = entry
        self._streams.move_to_end(stream)
        self.nbytes += size


def _seed_id(bitgen: np.random.BitGenerator) -> Hashable:
    """The generator's seed sequence (entropy, spawn key) as a hashable stream id; the eviction
    groups by it (the key alone decides a hit)."""
    seq = getattr(bitgen, "seed_seq", None)
    entropy = getattr(seq, "entropy", None)
    if isinstance(entropy, list | np.ndarray):
        entropy = tuple(int(e) for e in entropy)
    return entropy, tuple(getattr(seq, "spawn_key", ()))


def _max_bytes_from_env() -> int:
    mb = os.environ.get("KERNBENCH_DRAW_CACHE_MB")
    return DEFAULT_MAX_BYTES if mb is None else int(float(mb) * 2**20)


#: this process's cache, used by the sampled spaces
CACHE = DrawCache(_max_bytes_from_env())
CACHE.enabled = os.environ.get("KERNBENCH_DRAW_CACHE", "1") != "0"


def draw(
    rng: np.random.Generator,
    kind: str,
    D: int,
    P: int,
    prepare: Callable[[np.ndarray], np.ndarray],
    low: float,
    high: float,
) -> tuple[np.ndarray, np.ndarray]:
    """:meth:`DrawCache.draw` on this process's :data:`CACHE`."""
    return CACHE.draw(rng, kind, D, P, prepare, low, high)


@contextmanager
def disabled() -> Iterator[None]:
    """Draw without the cache inside the block, as the spaces drew before it (the draws, and the
    generator after them, are the same; only the time differs)."""
    was = CACHE.enabled
    CACHE.enabled = False
    try:
        yield
    finally:
        CACHE.enabled = was
