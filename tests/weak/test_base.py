"""The weak-learner protocols: every space of the package satisfies the one it is priced through,
and ``best_many`` of a space that shares no work is its ``best`` once per column."""

from __future__ import annotations

import numpy as np
import pytest

from kernbench.weak.base import ColumnSet, GroupedColumnSpace, WeakLearnerSpace, exclusions
from kernbench.weak.fourier import FourierSpace
from kernbench.weak.kernel_columns import KernelColumnSpace, make_kernel
from kernbench.weak.perceptron import PerceptronSpace
from kernbench.weak.rcd_perceptron import RCDPerceptronSpace
from kernbench.weak.stumps import StumpSpace


def _X() -> np.ndarray:
    return np.random.default_rng(0).normal(size=(40, 3))


def _oracle_spaces(X: np.ndarray) -> list:
    return [
        StumpSpace(X, include_constant=True),
        StumpSpace(X, include_constant=False, max_bins=8),
        PerceptronSpace(X, n_candidates=20, random_state=0),
        FourierSpace(X, sigma=1.0, n_candidates=20, random_state=0),
        RCDPerceptronSpace(X, max_run=50, random_state=0),
    ]


def test_every_oracle_space_is_a_weak_learner_space_and_not_a_grouped_one() -> None:
    for space in _oracle_spaces(_X()):
        assert isinstance(space, WeakLearnerSpace), type(space)
        assert not isinstance(space, GroupedColumnSpace), type(space)


def test_the_kernel_library_is_a_grouped_column_space() -> None:
    X = _X()
    space = KernelColumnSpace(X, [make_kernel("linear", X), make_kernel("rbf", X)])
    assert isinstance(space, GroupedColumnSpace)
    assert not isinstance(space, WeakLearnerSpace)  # priced by CG-Boost's own pricer
    assert [k.name for k in space.kernels] == ["linear", "rbf"]


@pytest.mark.parametrize("space_cls", [PerceptronSpace, FourierSpace])
def test_best_many_of_a_sampled_space_is_best_per_column_in_order(space_cls) -> None:
    X = _X()
    G = np.random.default_rng(1).normal(size=(X.shape[0], 3))
    space = space_cls(X, n_candidates=30, random_state=0)
    excl = [ColumnSet(), None, ColumnSet()]
    got = space.best_many(G, absolute=True, exclude=excl, rng=np.random.default_rng(5))
    rng = np.random.default_rng(5)
    want = [space.best(G[:, k], absolute=True, exclude=excl[k], rng=rng) for k in range(3)]
    for a, b in zip(got, want, strict=True):
        np.testing.assert_array_equal(a.column, b.column)
        assert a.score == b.score


def test_best_many_of_stumps_ignores_the_generator() -> None:
    X = _X()
    G = np.random.default_rng(2).normal(size=(X.shape[0], 2))
    space = StumpSpace(X, include_constant=True)
    a = space.best_many(G, rng=np.random.default_rng(0))
    b = space.best_many(G)
    assert [p.score for p in a] == [p.score for p in b]


def test_exclusions_spread_one_set_and_check_a_sequence() -> None:
    s = ColumnSet()
    assert exclusions(s, 3) == [s, s, s]
    assert exclusions(None, 2) == [None, None]
    with pytest.raises(ValueError, match="2 entries for 3 columns"):
        exclusions([s, s], 3)
