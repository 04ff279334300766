"""The per-process cache of the sampled oracles' draws: bitwise the draws and the generator states
of uncached drawing, bitwise the same fits, and its memory bound."""

from __future__ import annotations

import numpy as np
import pytest

from kernbench.weak import draws
from kernbench.weak.draws import DrawCache, disabled, uniform_from
from kernbench.weak.fourier import FourierSpace
from kernbench.weak.perceptron import PerceptronSpace


@pytest.fixture
def cache(monkeypatch) -> DrawCache:
    """A fresh, empty process cache for the test."""
    fresh = DrawCache()
    monkeypatch.setattr(draws, "CACHE", fresh)
    return fresh


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float64).view(np.uint64)


def _data(seed: int = 0, m: int = 60, D: int = 4) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, D))
    return X, np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.3 * rng.normal(size=m) > 0.4, 1, 0)


def test_uniform_from_is_generator_uniform_bitwise() -> None:
    """κ rebuilt from the uniforms equals Generator.uniform's bitwise for every scale (R = 0,
    subnormal, huge and the Fourier range included), and random(P) leaves the same state."""
    scales = [0.0, 5e-324, 1e-300, 1e-12, 0.1, 1.0, 2.0 * np.pi, 3.7e8, 1e300]
    scales += list(np.random.default_rng(0).lognormal(0.0, 3.0, size=200))
    for k, R in enumerate(scales):
        for low, high in ((-R, R), (0.0, R)):
            a, b = np.random.default_rng(k), np.random.default_rng(k)
            want = a.uniform(low, high, size=257)
            got = uniform_from(b.random(257), low, high)
            np.testing.assert_array_equal(_bits(got), _bits(want), err_msg=f"R={R!r}")
            assert a.bit_generator.state == b.bit_generator.state


def _steps(space, rng: np.random.Generator, n: int) -> list[tuple[np.ndarray, np.ndarray, dict]]:
    out = []
    for _ in range(n):
        Theta, kappa = space.sample(rng)
        out.append((_bits(Theta).copy(), _bits(kappa).copy(), rng.bit_generator.state))
    return out


@pytest.mark.parametrize("kind", ["perceptron", "fourier"])
def test_cached_draws_equal_uncached_bitwise(cache: DrawCache, kind: str) -> None:
    """Fits of other folds (another R or σ) reuse a step's draw: Θ, κ and the generator's state
    after each step are those of drawing without the cache, with and without a buffered 32-bit
    half in the generator's state."""
    X, _ = _data(D=5)

    def space(scale: float):
        if kind == "perceptron":
            return PerceptronSpace(X * scale, n_candidates=300)
        return FourierSpace(X, sigma=scale, n_candidates=300)

    def rng(buffered: bool) -> np.random.Generator:
        r = np.random.default_rng(7)
        if buffered:
            r.integers(0, 10, dtype=np.uint32)  # PCG64 keeps the other 32-bit half
        return r

    for buffered in (False, True):
        for scale in (1.0, 0.37, 1.0, 2.5):  # the second 1.0 hits only; the others rescale
            with disabled():
                want = _steps(space(scale), rng(buffered), 6)
            got = _steps(space(scale), rng(buffered), 6)
            for (t1, k1, s1), (t2, k2, s2) in zip(got, want, strict=True):
                np.testing.assert_array_equal(t1, t2)
                np.testing.assert_array_equal(k1, k2)
                assert s1 == s2
    assert cache.misses == 12 and cache.hits == 6 * 8 - 12  # 6 steps × buffered/not, reused
    assert len(cache) == 12


def test_zero_radius_and_other_sizes(cache: DrawCache) -> None:
    """R = 0 (a space of zero rows) gives κ = 0 as before; a draw of another P is its own entry."""
    X = np.zeros((4, 3))
    for P in (50, 80, 50):
        with disabled():
            want = PerceptronSpace(X).sample(np.random.default_rng(1), P=P)
        got = PerceptronSpace(X).sample(np.random.default_rng(1), P=P)
        for a, b in zip(got, want, strict=True):
            np.testing.assert_array_equal(_bits(a), _bits(b))
    assert (cache.misses, cache.hits) == (2, 1)


def _fit_pairs(make, X, y):
    """Decision values without the cache, then with it (filled, then hit on rescaled X)."""
    for scale in (1.0, 3.0, 0.25):
        Xs = X * scale
        with disabled():
            want = make().fit(Xs, y).decision_function(Xs)
        got = make().fit(Xs, y).decision_function(Xs)
        yield got, want


#: estimator, parameters: the sampled methods of the UCI Fourier/perceptron spec, small
_METHODS = {
    "CGENS-Perc": ("cgens", dict(C=10.0, weak_learner="perceptron", solver_inner_epochs=1)),
    "CGENS-Fourier": ("cgens", dict(C=10.0, weak_learner="fourier", sigma=1.5)),
    "LPBoost-Perc": ("lpboost", dict(nu=0.2, weak_learner="perceptron")),
    "AdaBoost-Perc": ("adaboost", dict(n_estimators=20, weak_learner="perceptron_sampled")),
}


@pytest.mark.parametrize("name", sorted(_METHODS))
def test_fits_with_the_cache_are_bitwise_those_without(cache: DrawCache, name: str) -> None:
    """Each fit's decision values with the cache (filled by the first, hit by the rescaled fits:
    other κ scales) equal bitwise those of the fit drawing without it."""
    from kernbench.methods.adaboost import AdaBoost
    from kernbench.methods.cgens import CGENS
    from kernbench.methods.lpboost import LPBoost

    estimator, params = _METHODS[name]
    cls = {"cgens": CGENS, "lpboost": LPBoost, "adaboost": AdaBoost}[estimator]
    if estimator != "adaboost":
        params = dict(params, n_candidates=200, max_iter=25)
    X, y = _data(seed=4, m=80, D=4)
    for got, want in _fit_pairs(lambda: cls(random_state=3, **params), X, y):
        np.testing.assert_array_equal(_bits(got), _bits(want))
    assert cache.hits > 0 and cache.misses > 0


def test_memory_bound_keeps_the_current_streams_early_steps() -> None:
    """Never over max_bytes; a stream alone in a full cache keeps its first entries (the steps
    every fit shares); a new stream evicts the older one whole."""
    one = 3 * 100 * 8 + 100 * 8  # A (3 × 100) and U (100) in bytes
    cache = DrawCache(max_bytes=5 * one + 10)
    unit = lambda G: G  # noqa: E731

    def run(seed: int, steps: int) -> None:
        rng = np.random.default_rng(seed)
        for _ in range(steps):
            cache.draw(rng, "fourier", 3, 100, unit, 0.0, 1.0)
            assert cache.nbytes <= cache.max_bytes

    run(0, 12)
    assert len(cache) == 5 and cache.nbytes == 5 * one
    run(0, 12)
    assert cache.hits == 5  # the first five steps, again
    run(1, 3)  # another stream (another cell): the old one goes
    assert len(cache) == 3 and cache.nbytes == 3 * one
    assert all(key[3] == (1, ()) for key in cache._streams)
    cache.clear()
    assert len(cache) == 0 and cache.nbytes == 0
    tiny = DrawCache(max_bytes=one - 1)  # an entry bigger than the bound is not kept
    tiny.draw(np.random.default_rng(0), "fourier", 3, 100, unit, 0.0, 1.0)
    assert len(tiny) == 0 and tiny.nbytes == 0


def test_cached_arrays_are_read_only(cache: DrawCache) -> None:
    space = PerceptronSpace(_data()[0], n_candidates=50)
    Theta, kappa = space.sample(np.random.default_rng(0))
    with pytest.raises(ValueError):
        Theta[0, 0] = 1.0
    kappa[0] = 1.0  # κ is rebuilt per call: the caller's own
