"""The stump oracle against brute force over every (feature, threshold, sign).

The oracle is described in docs/methods/column_generation.md.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from kernbench.weak.base import ColumnSet
from kernbench.weak.stumps import (
    SpaceExhaustedError,
    Stump,
    StumpSpace,
    feature_usage,
    predict_stumps,
    stump_arrays,
)


def brute_candidates(X: np.ndarray, include_constant: bool) -> list[tuple[int, float, np.ndarray]]:
    """Every (feature, threshold, +1-column) in the documented tie order, built with plain loops."""
    m, D = X.shape
    out = []
    if include_constant:
        out.append((0, -np.inf, np.ones(m)))
    for d in range(D):
        values = sorted(set(X[:, d].tolist()))
        for lo, hi in itertools.pairwise(values):
            t = (lo + hi) / 2
            col = np.array([1.0 if X[i, d] - t >= 0 else -1.0 for i in range(m)])
            out.append((d, t, col))
    return out


def all_distinct_columns(X: np.ndarray) -> list[np.ndarray]:
    """Every column sign(x_d - t) for t at every data value and above the maximum (no midpoints)."""
    cols = []
    for d in range(X.shape[1]):
        for t in [*X[:, d].tolist(), X[:, d].max() + 1.0]:
            cols.append(np.where(X[:, d] - t >= 0, 1.0, -1.0))
    return cols


def small_data(seed: int, m: int = 14, D: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """Integer-valued inputs with many ties, a constant feature, a duplicated feature; integer g."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 5, size=(m, D)).astype(float)
    X[:, 1] = 3.0  # constant feature
    X = np.column_stack([X, X[:, 0]])  # duplicate of feature 0
    g = rng.integers(-3, 4, size=m).astype(float)
    return X, g


@pytest.mark.parametrize("include_constant", [False, True])
@pytest.mark.parametrize("seed", range(25))
def test_best_equals_brute_force_with_exact_tie_rule(seed: int, include_constant: bool) -> None:
    X, g = small_data(seed)
    space = StumpSpace(X, include_constant=include_constant)
    cands = brute_candidates(X, include_constant)
    # brute-force argmax over (candidate, sign); integer data makes every score exact
    best_val, best = -np.inf, None
    for d, t, col in cands:
        for s in (1, -1):
            val = s * float(g @ col)
            if val > best_val:  # strict: the first candidate wins ties, polarity +1 first
                best_val, best = val, (d, t, s)
    pick = space.best(g)
    assert pick.score == best_val
    assert (pick.learner.feature, pick.learner.threshold) == best[:2]
    if best_val != 0:
        assert pick.learner.sign == best[2]
    np.testing.assert_array_equal(pick.learner.predict(X), pick.column)
    assert pick.column @ g == pick.score
    # absolute mode: the maximum modulus is the same stump for a negation-complete set
    pa = space.best(g, absolute=True)
    assert pa.score == max(abs(float(g @ c)) for _, _, c in cands)
    assert pa.learner == pick.learner


@pytest.mark.parametrize("seed", range(10))
def test_best_matches_threshold_free_brute_force_on_continuous_data(seed: int) -> None:
    """Scores against every column sign(x_d − t) for t at data values, a different enumeration."""
    rng = np.random.default_rng(100 + seed)
    X = rng.normal(size=(30, 3))
    X[:10, 2] = X[10:20, 2]  # some ties
    g = rng.normal(size=30)
    for include_constant in (False, True):
        cols = all_distinct_columns(X)
        if not include_constant:
            cols = [c for c in cols if not np.all(c == c[0])]
        expected = max(abs(float(g @ c)) for c in cols)
        pick = StumpSpace(X, include_constant=include_constant).best(g)
        assert pick.score == pytest.approx(expected, rel=1e-12, abs=1e-12)
        np.testing.assert_array_equal(pick.learner.predict(X), pick.column)


@pytest.mark.parametrize("seed", range(15))
def test_exclude_equals_brute_force(seed: int) -> None:
    X, g = small_data(seed, m=10, D=3)
    g = g + 0.01 * np.random.default_rng(seed).normal(size=g.size)
    space = StumpSpace(X, include_constant=True)
    cands = brute_candidates(X, True)
    excl = ColumnSet()
    for n_excluded in range(6):
        admissible = [(d, t, c) for d, t, c in cands if c not in excl]
        if not admissible:
            with pytest.raises(SpaceExhaustedError, match="excluded"):
                space.best(g, exclude=excl)
            break
        expected = max(abs(float(g @ c)) for _, _, c in admissible)
        pick = space.best(g, exclude=excl)
        assert pick.column not in excl
        assert pick.score == pytest.approx(expected, rel=1e-12)
        assert len(excl) == n_excluded
        excl.add(pick.column)


def test_exclude_skips_duplicates_across_features_and_negations() -> None:
    X = np.array([[0.0, 0.0, 5.0], [1.0, 1.0, 4.0], [2.0, 2.0, 3.0], [3.0, 3.0, 2.0]])
    g = np.array([-1.0, -1.0, 1.0, 1.0])
    space = StumpSpace(X, include_constant=False)
    first = space.best(g)
    assert first.score == 4.0 and first.learner == Stump(0, 1.5, 1)
    excl = ColumnSet()
    excl.add(-first.column)  # the negation excludes it too, and its copies on features 1 and 2
    second = space.best(g, exclude=excl)
    assert second.score == 2.0
    assert second.learner == Stump(0, 0.5, 1)


def test_best_many_equals_columnwise_best() -> None:
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 5))
    G = rng.normal(size=(40, 4))
    space = StumpSpace(X, include_constant=True)
    excl = ColumnSet()
    excl.add(space.best(G[:, 1]).column)
    many = space.best_many(G, exclude=[None, excl, None, None])
    for k in range(4):
        single = space.best(G[:, k], exclude=excl if k == 1 else None)
        assert many[k].learner == single.learner
        assert many[k].score == pytest.approx(single.score, rel=1e-14)
    np.testing.assert_allclose(
        space.scores(G),
        np.column_stack([space.scores(G[:, k]) for k in range(4)]),
        rtol=0,
        atol=1e-12,
    )


def test_scores_equal_candidate_columns() -> None:
    X, g = small_data(7)
    space = StumpSpace(X, include_constant=True)
    H, stumps = space.full_matrix(canonical=False)
    assert H.shape[1] == space.n_candidates == len(brute_candidates(X, True))
    np.testing.assert_array_equal(space.scores(g), H.T @ g)
    for j, (d, t, col) in enumerate(brute_candidates(X, True)):
        np.testing.assert_array_equal(H[:, j], col)
        assert (stumps[j].feature, stumps[j].threshold) == (d, t)


@pytest.mark.parametrize("seed", range(5))
def test_full_matrix_is_the_canonical_set(seed: int) -> None:
    X, g = small_data(seed, m=9, D=3)
    H, stumps = StumpSpace(X, include_constant=False).full_matrix()
    expected = set()
    for c in all_distinct_columns(X):
        if np.all(c == c[0]):
            continue
        expected.add((c if c[0] > 0 else -c).tobytes())
    assert {H[:, j].tobytes() for j in range(H.shape[1])} == expected
    assert H.shape[1] == len(expected)  # duplicates merged
    assert np.all(H[0] == 1.0)
    for j, st in enumerate(stumps):
        np.testing.assert_array_equal(st.predict(X), H[:, j])
    # the oracle's best non-constant score is the best over ±H_full
    assert StumpSpace(X, include_constant=False).best(g).score == np.abs(H.T @ g).max()
    Hc, sc = StumpSpace(X, include_constant=False).full_matrix(with_constant=True)
    np.testing.assert_array_equal(Hc[:, -1], np.ones(X.shape[0]))
    np.testing.assert_array_equal(sc[-1].predict(X + 1e6), np.ones(X.shape[0]))


def test_stump_predict_sign_zero_is_plus_one_and_vectorised_matches() -> None:
    X = np.array([[0.0, 1.0], [0.5, -2.0], [1.0, 3.0]])
    assert Stump(0, 0.5, 1).predict(X).tolist() == [-1.0, 1.0, 1.0]
    assert Stump(0, 0.5, -1).predict(X).tolist() == [1.0, -1.0, -1.0]
    assert Stump(1, -np.inf, -1).predict(X).tolist() == [-1.0, -1.0, -1.0]
    rng = np.random.default_rng(0)
    stumps = [
        Stump(int(rng.integers(2)), float(rng.normal()), int(rng.choice([-1, 1]))) for _ in range(9)
    ]
    Z = rng.normal(size=(20, 2))
    np.testing.assert_array_equal(
        predict_stumps(Z, *stump_arrays(stumps)), np.column_stack([s.predict(Z) for s in stumps])
    )


def test_thresholds_between_adjacent_floats_separate_the_points() -> None:
    a = 1.0
    b = np.nextafter(a, 2.0)
    X = np.array([[a], [b]])
    g = np.array([-1.0, 1.0])
    pick = StumpSpace(X, include_constant=False).best(g)
    assert pick.score == 2.0
    np.testing.assert_array_equal(pick.learner.predict(X), [-1.0, 1.0])


def test_degenerate_inputs() -> None:
    X = np.ones((5, 2))
    with pytest.raises(SpaceExhaustedError, match="no stump candidates"):
        StumpSpace(X, include_constant=False).best(np.ones(5))
    pick = StumpSpace(X, include_constant=True).best(np.array([1.0, -3, 0, 0, 0]))
    assert pick.score == 2.0 and pick.learner.sign == -1
    with pytest.raises(ValueError, match="finite"):
        StumpSpace(np.array([[np.nan]]), include_constant=True)
    with pytest.raises(ValueError, match="shape"):
        StumpSpace(np.ones((3, 1)), include_constant=True).best(np.ones(4))
    single = StumpSpace(np.array([[2.0, 3.0]]), include_constant=True).best(np.array([-0.5]))
    assert single.score == 0.5


def test_feature_usage_counts_splits_per_feature_and_constants_only_in_the_total() -> None:
    learners = [
        Stump(2, 0.5, 1),
        Stump(0, -1.0, -1),
        Stump(2, 0.7, -1),
        Stump(0, -np.inf, 1),  # the constant stump: no feature
    ]
    np.testing.assert_array_equal(feature_usage(learners, 4), [0.25, 0.0, 0.5, 0.0])
    np.testing.assert_array_equal(feature_usage([], 3), [0.0, 0.0, 0.0])
    assert feature_usage([Stump(0, 0.0, 1), object()], 2) is None  # not a stump ensemble
