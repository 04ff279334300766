"""The compiled stump search against the vectorised numpy search it replaced, and the binned option.

The reference below is the previous implementation of ``StumpSpace.scores`` and of the oracle's
tie rule (argsort once, gather, ``np.cumsum``, take at the cuts): the compiled search must give
bitwise the same scores, hence the same stumps, on data with ties and duplicated values.
"""

from __future__ import annotations

import numpy as np
import pytest

from kernbench.methods import AdaBoost
from kernbench.methods import adaboost as adaboost_module
from kernbench.solvers.stump_search import first_near_max
from kernbench.weak import stumps as stumps_module
from kernbench.weak.base import ColumnSet, Pick
from kernbench.weak.stumps import BIN_CHUNK_ROWS, TIE_RTOL, Stump, StumpSpace


class ReferenceStumps:
    """The numpy presorted search as it was before the compiled kernels (scores and best)."""

    def __init__(self, X: np.ndarray, include_constant: bool) -> None:
        m, D = X.shape
        self.X = X
        self.n_const = int(include_constant)
        self.order = np.argsort(X.T, axis=1, kind="stable")
        v = np.take_along_axis(X.T, self.order, axis=1)
        lo, hi = v[:, :-1], v[:, 1:]
        mid = 0.5 * lo + 0.5 * hi
        mid = np.where(mid > lo, mid, hi)
        split_flat = np.flatnonzero((hi > lo).ravel())
        self.feat, self.pos = np.divmod(split_flat, max(m - 1, 1))
        self.prefix_index = self.feat * m + self.pos
        self.features = np.concatenate([np.zeros(self.n_const, dtype=np.intp), self.feat])
        self.thresholds = np.concatenate([np.full(self.n_const, -np.inf), mid.ravel()[split_flat]])

    def scores(self, g: np.ndarray) -> np.ndarray:
        m, D = self.X.shape
        tail = g.shape[1:]
        gs = np.take(g, self.order, axis=0)
        np.cumsum(gs, axis=1, out=gs)
        G = g.sum(axis=0)
        out = np.empty((self.thresholds.size,) + tail)
        split = out[self.n_const :]
        np.take(gs.reshape((D * m,) + tail), self.prefix_index, axis=0, out=split)
        split *= -2.0
        split += G
        if self.n_const:
            out[0] = G
        return out

    def best(self, g: np.ndarray, **_: object) -> Pick:
        s = self.scores(g)
        a = np.abs(s)
        index = int(np.argmax(a >= a.max() - TIE_RTOL * float(np.abs(g).sum())))
        sign = 1 if s[index] >= 0 else -1
        stump = Stump(int(self.features[index]), float(self.thresholds[index]), sign)
        column = stump.predict(self.X)
        return Pick(stump, column, float(column @ g))


def tied_data(seed: int, m: int = 60, D: int = 6) -> np.ndarray:
    """Continuous and integer features, a constant one, a duplicated one, adjacent floats."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, D))
    X[:, 1] = rng.integers(0, 4, size=m)  # heavy ties
    X[:, 2] = 1.5  # constant
    X[:, 3] = X[:, 0]  # duplicate feature
    X[: m // 3, 4] = X[m // 3 : 2 * (m // 3), 4]  # repeated values
    X[0, 5], X[1, 5] = 1.0, np.nextafter(1.0, 2.0)
    return X


@pytest.mark.parametrize("include_constant", [False, True])
@pytest.mark.parametrize("seed", range(12))
def test_compiled_scores_and_picks_are_bitwise_the_reference(seed: int, include_constant: bool):
    X = tied_data(seed)
    rng = np.random.default_rng(1000 + seed)
    space, ref = (
        StumpSpace(X, include_constant=include_constant),
        ReferenceStumps(X, include_constant),
    )
    np.testing.assert_array_equal(space.candidate_thresholds, ref.thresholds)
    np.testing.assert_array_equal(space.candidate_features, ref.features)
    # continuous weights, integer weights (exact ties between candidates) and a (m, K) block
    for g in (rng.normal(size=X.shape[0]), rng.integers(-2, 3, size=X.shape[0]).astype(float)):
        np.testing.assert_array_equal(space.scores(g), ref.scores(g))
        pick, expected = space.best(g), ref.best(g)
        assert pick.learner == expected.learner
        np.testing.assert_array_equal(pick.column, expected.column)
        assert pick.score == expected.score
    G = rng.normal(size=(X.shape[0], 3))
    np.testing.assert_array_equal(space.scores(G), ref.scores(G))
    np.testing.assert_array_equal(space.scores(np.asfortranarray(G)), ref.scores(G))
    for index in range(space.n_candidates):  # columns from the presorted order
        np.testing.assert_array_equal(space.column(index), space.stump(index).predict(X))


def test_adaboost_path_equals_the_reference_search(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fifty AdaBoost rounds on tied data choose the same stumps with the same weights."""
    X = tied_data(3, m=200, D=6)
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + np.random.default_rng(0).normal(size=200) > 1, 1, -1)
    fast = AdaBoost(n_estimators=50).fit(X, y)
    spaces = dict(adaboost_module.WEAK_LEARNER_SPACES)
    spaces["stump"] = lambda est, X, rng: ReferenceStumps(X, True)
    monkeypatch.setattr(adaboost_module, "WEAK_LEARNER_SPACES", spaces)
    ref = AdaBoost(n_estimators=50).fit(X, y)
    assert fast.n_iter_ == ref.n_iter_ == 50
    assert fast.weak_learners_ == ref.weak_learners_
    np.testing.assert_array_equal(fast.estimator_weights_, ref.estimator_weights_)


def test_exclusion_still_follows_the_reference_order() -> None:
    X = tied_data(5, m=30, D=6)
    g = np.random.default_rng(5).normal(size=30)
    space, ref = StumpSpace(X, include_constant=True), ReferenceStumps(X, True)
    excl = ColumnSet()
    a = np.abs(ref.scores(g))
    for _ in range(5):
        pick = space.best(g, exclude=excl)
        allowed = [j for j in range(a.size) if space.column(j) not in excl]
        top = max(a[allowed])
        first = next(j for j in allowed if a[j] >= top - TIE_RTOL * np.abs(g).sum())
        assert pick.learner.feature == ref.features[first]
        assert pick.learner.threshold == ref.thresholds[first]
        excl.add(pick.column)


# ---------------------------------------------------------------------------- binned search
@pytest.mark.parametrize("include_constant", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_binned_with_enough_bins_is_the_exact_search(seed: int, include_constant: bool) -> None:
    """At most B distinct values per feature: same candidates; integer weights: same scores."""
    X = tied_data(seed)
    X[:, [0, 3, 4, 5]] = np.round(X[:, [0, 3, 4, 5]], 1)  # ≤ 256 distinct values everywhere
    exact = StumpSpace(X, include_constant=include_constant)
    binned = StumpSpace(X, include_constant=include_constant, max_bins=256)
    np.testing.assert_array_equal(binned.candidate_thresholds, exact.candidate_thresholds)
    np.testing.assert_array_equal(binned.candidate_features, exact.candidate_features)
    g = np.random.default_rng(seed).integers(-3, 4, size=X.shape[0]).astype(float)
    np.testing.assert_array_equal(binned.scores(g), exact.scores(g))  # integer sums are exact
    assert binned.best(g).learner == exact.best(g).learner
    G = np.random.default_rng(seed).normal(size=(X.shape[0], 2))
    np.testing.assert_allclose(binned.scores(G), exact.scores(G), rtol=0, atol=1e-12)


@pytest.mark.parametrize("max_bins", [2, 5, 16])
def test_binned_search_is_the_exact_search_restricted_to_quantile_cuts(max_bins: int) -> None:
    rng = np.random.default_rng(max_bins)
    X = tied_data(max_bins, m=300, D=6)
    g = rng.normal(size=300)
    exact = StumpSpace(X, include_constant=True)
    binned = StumpSpace(X, include_constant=True, max_bins=max_bins)
    # every binned candidate is an exact candidate (same feature and threshold) with its score
    key = {
        (f, t): j
        for j, (f, t) in enumerate(zip(exact.candidate_features, exact.candidate_thresholds))
    }
    idx = np.array(
        [key[(f, t)] for f, t in zip(binned.candidate_features, binned.candidate_thresholds)]
    )
    np.testing.assert_allclose(binned.scores(g), exact.scores(g)[idx], rtol=0, atol=1e-12)
    # at most B − 1 cuts (B bins) per feature, and the bins split the points near the quantiles
    for d in range(X.shape[1]):
        t = binned.candidate_thresholds[binned.candidate_features == d]
        t = t[np.isfinite(t)]
        assert t.size <= max_bins - 1
        distinct = np.unique(X[:, d]).size
        if distinct > max_bins:
            sizes = np.bincount(np.searchsorted(t, X[:, d], side="right"))
            assert (
                sizes.max() <= 2 * 300 / max_bins + np.unique(X[:, d], return_counts=True)[1].max()
            )
    # the pick is the brute-force best over the binned candidates, tie rule included
    pick = binned.best(g)
    s = exact.scores(g)[idx]
    first = int(np.argmax(np.abs(s) >= np.abs(s).max() - TIE_RTOL * np.abs(g).sum()))
    assert pick.learner.feature == binned.candidate_features[first]
    assert pick.learner.threshold == binned.candidate_thresholds[first]
    np.testing.assert_array_equal(pick.learner.predict(X), pick.column)
    assert pick.score == pytest.approx(abs(s[first]), rel=1e-12)
    for index in range(binned.n_candidates):
        np.testing.assert_array_equal(binned.column(index), binned.stump(index).predict(X))


def quantile_cuts(sample: np.ndarray, B: int) -> np.ndarray:
    """The documented rule on one feature's sample, with plain loops: for k = 1..B−1, the cut
    after the smallest distinct value u with #{x ≤ u} ≥ k·n/B (none after the largest value),
    at the midpoint between u and the next distinct value; every cut with at most B values."""
    values = sorted(set(sample.tolist()))
    n = sample.size
    if len(values) <= B:
        chosen = values[:-1]
    else:
        chosen = []
        for k in range(1, B):
            u = next(v for v in values if np.count_nonzero(sample <= v) >= k * n / B)
            if u != values[-1] and u not in chosen:
                chosen.append(u)
    out = []
    for u in chosen:
        nxt = values[values.index(u) + 1]
        mid = 0.5 * u + 0.5 * nxt
        out.append(mid if mid > u else nxt)
    return np.array(out)


@pytest.mark.parametrize("max_bins", [4, 32])
def test_binned_cuts_of_a_large_training_set_come_from_its_fixed_sample(
    max_bins: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above BIN_SAMPLE_ROWS rows the cuts are the quantile cuts of the documented sample, and
    the search is the brute-force best over them, on every row."""
    monkeypatch.setattr(stumps_module, "BIN_SAMPLE_ROWS", 400)
    m = 1500
    X = tied_data(max_bins, m=m, D=6)
    g = np.random.default_rng(max_bins).normal(size=m)
    space = StumpSpace(X, include_constant=True, max_bins=max_bins)
    rows = np.random.default_rng(stumps_module.BIN_SAMPLE_SEED).choice(m, 400, replace=False)
    for d in range(X.shape[1]):
        t = space.candidate_thresholds[space.candidate_features == d]
        expected = quantile_cuts(X[rows, d], max_bins)
        np.testing.assert_array_equal(t[np.isfinite(t)], expected)
    # every score is Σ g_i sign(x_id − t) over all m rows; the pick follows the tie rule
    brute = np.array(
        [
            g @ np.where(X[:, f] >= t, 1.0, -1.0)
            for f, t in zip(space.candidate_features, space.candidate_thresholds)
        ]
    )
    np.testing.assert_allclose(space.scores(g), brute, rtol=0, atol=1e-12)
    pick = space.best(g)
    first = int(np.argmax(np.abs(brute) >= np.abs(brute).max() - TIE_RTOL * np.abs(g).sum()))
    assert (pick.learner.feature, pick.learner.threshold) == (
        space.candidate_features[first],
        space.candidate_thresholds[first],
    )
    np.testing.assert_array_equal(pick.learner.predict(X), pick.column)
    for index in range(space.n_candidates):
        np.testing.assert_array_equal(space.column(index), space.stump(index).predict(X))


def test_binned_sample_with_few_values_gives_the_exact_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Fewer distinct values than max_bins, all in the sample: the cuts are exactly the exact
    search's midpoints, and scores (integer weights: exact sums) and picks are the exact ones."""
    monkeypatch.setattr(stumps_module, "BIN_SAMPLE_ROWS", 300)
    rng = np.random.default_rng(3)
    m = 2000
    X = np.column_stack(
        [
            rng.integers(0, 10, size=m),
            rng.integers(0, 40, size=m) * 0.25,
            np.full(m, 2.0),
            rng.choice([-1.5, 0.0, np.nextafter(0.0, 1.0), 7.0], size=m),
        ]
    ).astype(float)
    exact = StumpSpace(X, include_constant=True)
    binned = StumpSpace(X, include_constant=True, max_bins=64)
    np.testing.assert_array_equal(binned.candidate_thresholds, exact.candidate_thresholds)
    np.testing.assert_array_equal(binned.candidate_features, exact.candidate_features)
    for seed in range(3):
        g = np.random.default_rng(seed).integers(-3, 4, size=m).astype(float)
        np.testing.assert_array_equal(binned.scores(g), exact.scores(g))
        assert binned.best(g).learner == exact.best(g).learner


@pytest.mark.parametrize("max_bins", [2, 3, 256, 300])
def test_bin_codes_count_the_thresholds_at_or_below_each_value(max_bins: int) -> None:
    """Codes against np.searchsorted(side="right"), on the training rows and on values equal to
    the thresholds and next to them."""
    X = tied_data(max_bins, m=700, D=6)
    space = StumpSpace(X, include_constant=False, max_bins=max_bins)
    cuts = [space.candidate_thresholds[space.candidate_features == d] for d in range(6)]
    assert max(t.size for t in cuts) == max_bins - 1  # a feature with every cut it may have
    probe = X.copy()
    for d, t in enumerate(cuts):  # rows on the thresholds, just below them, just above them
        k = min(t.size, 200)
        probe[:k, d] = t[:k]
        probe[200 : 200 + k, d] = np.nextafter(t[:k], -np.inf)
        probe[400 : 400 + k, d] = np.nextafter(t[:k], np.inf)
    for data in (X, probe):
        space._build_codes(data, cuts)
        for d, t in enumerate(cuts):
            np.testing.assert_array_equal(space._codes[d], np.searchsorted(t, data[:, d], "right"))


def test_max_bins_is_validated() -> None:
    X = np.arange(6.0).reshape(3, 2)
    for bad in (1, 0, 70_000):
        with pytest.raises(ValueError, match="max_bins"):
            StumpSpace(X, include_constant=True, max_bins=bad)


@pytest.mark.parametrize("seed", range(20))
def test_first_near_max_is_the_vectorised_tie_rule(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    kind = seed % 4
    if kind == 0:
        s = rng.normal(size=n)
    elif kind == 1:  # many exact and near ties, both signs
        s = rng.integers(-3, 4, size=n) + rng.choice([0.0, 1e-13, -1e-13], size=n)
    elif kind == 2:  # increasing moduli: the maximum moves at every step
        s = np.cumsum(rng.uniform(0, 2e-12, size=n)) * rng.choice([-1, 1], size=n)
    else:
        s = np.zeros(n)
    for tol in (0.0, 1e-12, 0.5):
        a = np.abs(s)
        assert first_near_max(s, tol) == int(np.argmax(a >= a.max() - tol))


@pytest.mark.parametrize("include_constant", [False, True])
@pytest.mark.parametrize("seed", range(8))
def test_the_fused_tie_index_is_the_tie_rule_over_the_written_scores(seed, include_constant):
    X = tied_data(seed, m=40)
    rng = np.random.default_rng(seed)
    space = StumpSpace(X, include_constant=include_constant)
    for g in (rng.normal(size=40), rng.integers(-1, 2, size=40).astype(float), np.zeros(40)):
        for tol in (0.0, 1e-12, 0.3, 5.0):
            out = np.empty(space.n_candidates)
            index = space._scores_into(g, out, tol)
            assert index == first_near_max(out, tol)
            np.testing.assert_array_equal(out, space.scores(g))
            lean = np.full(space.n_candidates, np.nan)
            assert space._scores_into(g, lean, tol, write=False) == index
            assert lean[index] == out[index]  # the one score written, bitwise


@pytest.mark.parametrize(
    ("max_bins", "m", "D"),
    [
        # exact: (m·D) / MIN_BLOCK_WORK ≈ 3 blocks of features; an odd D leaves a lone last one
        (None, 3000, 67),
        # binned: 3 chunks of rows (BIN_CHUNK_ROWS each, the last one longer)
        (7, 3 * BIN_CHUNK_ROWS + 5, 7),
        (256, 3 * BIN_CHUNK_ROWS + 5, 7),
    ],
)
@pytest.mark.parametrize("include_constant", [False, True])
def test_the_threaded_search_is_bitwise_the_one_thread_search(max_bins, m, D, include_constant):
    X = tied_data(5, m=m, D=D)
    rng = np.random.default_rng(1)
    one = StumpSpace(X, include_constant=include_constant, max_bins=max_bins, n_threads=1)
    spaces = [
        StumpSpace(X, include_constant=include_constant, max_bins=max_bins, n_threads=n)
        for n in (2, 3, 5)
    ]
    assert [s._blocks for s in spaces] == [2, 3, 3]
    for g in (rng.normal(size=m), rng.integers(-1, 2, size=m).astype(float)):
        ref, pick = one.scores(g), one.best(g)
        many = one.scores(np.column_stack([g, -g]))
        for space in spaces:
            np.testing.assert_array_equal(space.scores(g), ref)
            np.testing.assert_array_equal(space.scores(np.column_stack([g, -g])), many)
            other = space.best(g)
            assert other.learner == pick.learner and other.score == pick.score
            for tol in (0.0, 0.5):
                lean = np.empty(space.n_candidates)
                assert space._scores_into(g, lean, tol, write=False) == one._scores_into(
                    g, np.empty(one.n_candidates), tol
                )


def test_auto_bins_large_training_sets_only() -> None:
    from kernbench.weak.stumps import AUTO_BINNED_ROWS, AUTO_MAX_BINS, resolve_max_bins

    assert resolve_max_bins("auto", AUTO_BINNED_ROWS - 1) is None
    assert resolve_max_bins("auto", AUTO_BINNED_ROWS) == AUTO_MAX_BINS
    assert resolve_max_bins(None, 10**6) is None and resolve_max_bins(16, 10) == 16
    with pytest.raises(ValueError, match="auto"):
        resolve_max_bins("fast", 10)
    X = tied_data(2, m=AUTO_BINNED_ROWS)
    assert StumpSpace(X, include_constant=True, max_bins="auto").max_bins == AUTO_MAX_BINS


@pytest.mark.parametrize("max_bins", [None, 32])
def test_column_generation_fits_the_same_model_under_any_thread_default(max_bins) -> None:
    from kernbench.methods import CGENS, LPBoost
    from kernbench.solvers.threads import thread_default, useful_threads

    rng = np.random.default_rng(7)
    X = tied_data(7, m=1400, D=100)  # 2 blocks of features at 2 threads
    y = np.where(X[:, 0] + 0.5 * X[:, 6] + rng.normal(scale=0.7, size=1400) > 0, 1, -1)
    for make in (
        lambda: LPBoost(nu=0.2, max_iter=8, max_bins=max_bins),
        lambda: CGENS(max_iter=8, max_bins=max_bins),
    ):
        fits = []
        assert useful_threads(2, X.size) == 2
        for threads in (1, 2):
            with thread_default(threads):
                fits.append(make().fit(X, y))
        np.testing.assert_array_equal(fits[0].decision_function(X), fits[1].decision_function(X))
