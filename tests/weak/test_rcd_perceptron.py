"""RCD perceptron against brute force and its invariants (docs/methods/adaboost.md)."""

from __future__ import annotations

import numpy as np
import pytest

from kernbench.solvers.radix_sort import _sort_pairs
from kernbench.solvers.rcd import (
    RESCALE_SQNORM,
    ZERO_GROUP_RTOL,
    exact_step,
    rcd_loop,
    update_wgt,
    weighted_error,
)
from kernbench.solvers.rcd_reference import reference_rcd_loop
from kernbench.weak.base import ColumnSet
from kernbench.weak.rcd_perceptron import (
    Perceptron,
    RCDPerceptronSpace,
    augment,
    rcd_directions,
    train_rcd_perceptron,
)


def direct_error(Xa: np.ndarray, w: np.ndarray, yw: np.ndarray) -> float:
    """Σ|y'_n| [sign(w̃ᵀx̃_n) ≠ sign(y'_n)] with sign(0) = +1, straight from the definition."""
    pred = np.where(Xa @ w >= 0.0, 1.0, -1.0)
    return float(sum(abs(v) for p, v in zip(pred, yw) if v != 0 and p != np.sign(v)))


def random_problem(seed: int, m: int = 14, d: int = 3, duplicates: int = 3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, d))
    X[:duplicates] = X[duplicates : 2 * duplicates]  # repeated points: equal z for every direction
    yw = rng.choice([-1.0, 1.0], size=m) * rng.uniform(0.1, 1.0, size=m)
    Xa = augment(X)
    w = rng.uniform(-1.0, 1.0, size=d + 1)
    u = rng.uniform(-1.0, 1.0, size=d + 1)
    return Xa, yw, w, u


def brute_force_step(Xa: np.ndarray, yw: np.ndarray, w: np.ndarray, u: np.ndarray):
    """Every candidate α (all midpoints of the projected points, the sentinels, a dense grid), each
    scored by classifying every point with w̃ + αu; returns (sorted candidate t, errors)."""
    a = Xa @ u
    o = Xa @ w
    z = np.unique(o[a != 0] / a[a != 0])
    ts = [z[0] - 1.0, z[-1] + 1.0, *((z[:-1] + z[1:]) / 2)]
    ts += list(np.linspace(z[0] - 3.0, z[-1] + 3.0, 2001))
    ts = np.array(sorted(t for t in ts if not np.any(z == t)))
    errs = np.array([direct_error(Xa, w - t * u, yw) for t in ts])
    return ts, errs


@pytest.mark.parametrize("seed", range(25))
def test_update_wgt_equals_brute_force_over_all_alpha(seed):
    Xa, yw, w, u = random_problem(seed)
    w_new, err_before = update_wgt(w, u, Xa, yw)
    ts, errs = brute_force_step(Xa, yw, w, u)
    assert err_before == pytest.approx(direct_error(Xa, w, yw), abs=1e-12)
    assert direct_error(Xa, w_new, yw) == pytest.approx(errs.min(), abs=1e-12)
    assert direct_error(Xa, w_new, yw) <= err_before + 1e-12


@pytest.mark.parametrize("seed", range(10))
def test_exact_step_takes_first_minimiser_among_midpoints(seed):
    # Integer weights make ties between thresholds frequent, so the tie rule is exercised.
    rng = np.random.default_rng(100 + seed)
    z = rng.integers(0, 6, size=12).astype(float)
    g = rng.choice([-2.0, -1.0, 1.0, 2.0], size=12)
    t, err = exact_step(z, g)
    # independent: groups by exact z, drop cancelled groups, score every candidate directly
    zu = np.array([v for v in np.unique(z) if g[z == v].sum() != 0])
    cands = [zu[0] - 1.0, *((zu[:-1] + zu[1:]) / 2), zu[-1] + 1.0]

    def err_at(t0: float) -> float:
        pred = np.where(z - t0 >= 0, 1.0, -1.0)
        return float(np.abs(g)[pred != np.sign(g)].sum())

    errs = [err_at(c) for c in cands]
    assert err == pytest.approx(min(errs))
    assert t == cands[int(np.argmin(errs))]


def test_exact_step_merges_equal_z_and_drops_cancelled_groups():
    # z = 1 holds +2 and -2: the group cancels, so the midpoint skips it (1 = (0 + 2) / 2).
    t, err = exact_step(np.array([0.0, 1.0, 1.0, 2.0]), np.array([-1.0, 2.0, -2.0, 1.0]))
    assert (t, err) == (1.0, 2.0)
    # ties between the low sentinel and the top: the first (lowest t) wins
    t, err = exact_step(np.array([0.0, 1.0, 1.0, 2.0]), np.array([1.0, 2.0, -2.0, -1.0]))
    assert (t, err) == (-1.0, 3.0)
    # all weight on one side: a sentinel threshold, zero error
    t, err = exact_step(np.array([3.0, 5.0]), np.array([1.0, 1.0]))
    assert (t, err) == (2.0, 0.0)
    t, err = exact_step(np.array([3.0, 5.0]), np.array([-1.0, -1.0]))
    assert (t, err) == (6.0, 0.0)


def test_points_orthogonal_to_the_direction_keep_their_prediction():
    Xa = augment(np.array([[1.0, 0.0], [0.0, 1.0], [0.0, -1.0], [2.0, 0.5]]))
    u = np.array([0.0, 1.0, 0.0])  # a_n = 0 for the first point
    w = np.array([-1.0, 0.2, 0.1])
    yw = np.array([1.0, 1.0, -1.0, 1.0])
    w_new, _ = update_wgt(w, u, Xa, yw)
    assert np.sign(Xa[0] @ w_new) == np.sign(Xa[0] @ w)
    ts, errs = brute_force_step(Xa, yw, w, u)
    assert direct_error(Xa, w_new, yw) == pytest.approx(errs.min())


def test_step_never_increases_error_when_current_margin_is_zero():
    # Both points sit at w̃ᵀx̃ = 0 (predicted +1, both correct) with a of opposite signs: every
    # threshold misclassifies one of them, so the step must be refused.
    Xa = np.array([[1.0, 1.0], [-1.0, 1.0]])
    w = np.array([0.0, 0.0])
    u = np.array([1.0, 0.0])
    yw = np.array([0.5, 0.5])
    w_new, err = update_wgt(w, u, Xa, yw)
    assert err == 0.0
    assert np.array_equal(w_new, w)


def test_rescale_keeps_predictions_and_normalises():
    rng = np.random.default_rng(3)
    Xa = augment(rng.normal(size=(30, 4)))
    yw = rng.normal(size=30)
    w = rng.normal(size=5) * 1e6  # ‖w̃‖² ≈ 1e12 > 1e10
    u = rng.uniform(-1, 1, size=5)
    w_new, _ = update_wgt(w, u, Xa, yw)
    assert np.linalg.norm(w_new) == pytest.approx(1.0)
    ts, errs = brute_force_step(Xa, yw, w, u)
    assert direct_error(Xa, w_new, yw) == pytest.approx(errs.min(), abs=1e-12)


def test_rcd_directions_follow_the_bias_first_cycles():
    d, max_run = 4, 23
    dirs = rcd_directions(d, max_run, np.random.default_rng(0))
    assert dirs.shape == (max_run, d + 1)
    for r in range(max_run):
        c = (r + d) % (d + 1)  # a cycle opens with the bias direction
        if c == d:
            assert np.array_equal(dirs[r], np.eye(d + 1)[d])
        else:
            assert dirs[r, d] == 0.0
            assert np.all(np.abs(dirs[r, :d]) <= 1.0) and np.all(dirs[r, :d] != 0.0)
    # a fresh random set in every cycle
    assert not np.allclose(dirs[1 : d + 1], dirs[d + 2 : 2 * d + 2])
    # U[-1, 1] entries: mean ≈ 0, variance ≈ 1/3
    many = rcd_directions(d, 5000 * (d + 1), np.random.default_rng(1))
    entries = many[many[:, d] == 0.0][:, :d].ravel()
    assert abs(entries.mean()) < 0.01 and entries.var() == pytest.approx(1 / 3, rel=0.02)


@pytest.mark.parametrize("seed", range(4))
def test_every_rcd_step_never_increases_the_weighted_error(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(60, 5))
    y = np.where(X[:, 0] * X[:, 1] + 0.3 * rng.normal(size=60) > 0, 1.0, -1.0)  # not separable
    yw = rng.dirichlet(np.ones(60)) * y
    Xa = augment(X)
    w0 = rng.uniform(-0.05, 0.05, size=6)
    dirs = rcd_directions(5, 120, rng)
    w = w0
    errors = [direct_error(Xa, w, yw)]
    for u in dirs:
        w, _ = update_wgt(w, u, Xa, yw)
        errors.append(direct_error(Xa, w, yw))
    assert np.all(np.diff(errors) <= 1e-12)
    assert errors[-1] < errors[0]
    # the compiled loop takes the same steps and reports the same trace
    w_loop, trace = rcd_loop(Xa, yw, w0, dirs)
    assert np.allclose(trace, errors, atol=1e-12)
    assert np.allclose(w_loop, w)


@pytest.mark.parametrize("seed", range(3))
def test_rcd_reaches_zero_error_on_separable_data(seed):
    rng = np.random.default_rng(seed)
    m, d = 200, 5
    X = rng.uniform(-1.0, 1.0, size=(m, d))
    theta, b = rng.normal(size=d), 0.2
    margin = X @ theta + b
    keep = np.abs(margin) > 0.05 * np.linalg.norm(theta)  # a margin band keeps it learnable
    X, y = X[keep], np.where(margin[keep] > 0, 1.0, -1.0)
    weights = rng.dirichlet(np.ones(y.size))
    h, trace = train_rcd_perceptron(X, weights * y, max_run=600, rng=rng)
    assert np.all(np.diff(trace) <= 1e-12)  # monotone decrease
    assert trace[-1] == 0.0
    assert np.array_equal(h.predict(X), y)
    assert trace[0] > 0.0


def test_training_is_deterministic_under_a_seed_and_varies_across_seeds():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 4))
    yw = np.sign(rng.normal(size=80)) / 80
    h1, t1 = train_rcd_perceptron(X, yw, max_run=50, rng=np.random.default_rng(7))
    h2, t2 = train_rcd_perceptron(X, yw, max_run=50, rng=np.random.default_rng(7))
    h3, _ = train_rcd_perceptron(X, yw, max_run=50, rng=np.random.default_rng(8))
    assert np.array_equal(h1.w, h2.w) and h1.b == h2.b and np.array_equal(t1, t2)
    assert not np.array_equal(h1.w, h3.w)
    assert t1.shape == (51,)


def test_perceptron_predicts_with_sign_zero_positive():
    h = Perceptron(w=np.array([1.0, -1.0]), b=0.0)
    X = np.array([[1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
    assert np.array_equal(h.predict(X), [1.0, -1.0, 1.0])
    assert np.array_equal(h.negated().decision_function(X), -h.decision_function(X))


def test_space_best_follows_the_oracle_protocol():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(50, 3))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] > 0.1, 1.0, -1.0)
    g = y / 50
    space = RCDPerceptronSpace(X, max_run=100, random_state=0)
    pick = space.best(g)
    assert np.array_equal(pick.column, pick.learner.predict(X))
    assert pick.score == pytest.approx(float(g @ pick.column))
    assert pick.score > 0.9  # a linearly separable target: RCD gets (nearly) all of it
    flipped = space.best(-g, absolute=True, rng=np.random.default_rng(1))
    assert flipped.score >= 0.0
    assert flipped.score == pytest.approx(float(-g @ flipped.column))
    excl = ColumnSet()
    excl.add(pick.column)
    with pytest.raises(NotImplementedError):
        space.best(g, exclude=excl)
    with pytest.raises(ValueError, match="shape"):
        space.best(g[:-1])


# --------------------------------------------------------------------------- fused loop
def _situations(Xa: np.ndarray, yw: np.ndarray, w0: np.ndarray, dirs: np.ndarray) -> dict:
    """Replay the reference steps and count the updates with each situation the fused loop must
    reproduce: tied z, points with a_n = 0, cancelled groups, refused steps, rescales."""
    count = dict.fromkeys(("ties", "a_zero", "cancelled", "refused", "rescaled"), 0)
    slack = 1e-12 * np.abs(yw).sum()
    w = w0
    for u in dirs:
        a, o = Xa @ u, Xa @ w
        moving = a != 0.0
        z, g = o[moving] / a[moving], np.sign(a[moving]) * yw[moving]
        z_unique, group = np.unique(z, return_inverse=True)
        G = np.bincount(group, weights=g, minlength=z_unique.size)
        t, err_moving = exact_step(z, g)
        refused = (
            err_moving + weighted_error(o[~moving], yw[~moving]) > weighted_error(o, yw) + slack
        )
        count["ties"] += z_unique.size < z.size
        count["a_zero"] += not moving.all()
        count["cancelled"] += np.any(np.abs(G) <= ZERO_GROUP_RTOL * np.abs(g).sum())
        count["refused"] += refused
        count["rescaled"] += not refused and np.sum((w - t * u) ** 2) > RESCALE_SQNORM
        w, _ = update_wgt(w, u, Xa, yw)
    return count


def _tie_problem(seed: int, m: int = 150, d: int = 3):
    """Integer inputs in {-1, 0, 1} (27 distinct rows, so equal z along every direction), four
    zero rows (a_n = 0 along every direction with a zero bias entry) and every fourth direction
    integer-valued (more a_n = 0). Weights: multiples of 1/m, as in AdaBoost's rounds (few distinct
    values, not dyadic): group sums round and prefix errors tie, so the first minimiser depends on
    the rounding and hence on the order within each group, and groups cancel exactly or to within
    ZERO_GROUP_RTOL. Every fifth seed takes its labels from the starting perceptron, whose zero
    margins force refused steps; every other seed starts from ‖w̃‖² just above 1e10 (rescale)."""
    rng = np.random.default_rng(seed)
    X = rng.integers(-1, 2, size=(m, d)).astype(float)
    X[:4] = 0.0
    Xa = augment(X)
    dirs = rcd_directions(d, 200, rng)
    dirs[1::4, :d] = rng.integers(-1, 2, size=(dirs[1::4].shape[0], d))
    w0 = rng.uniform(-0.05, 0.05, size=d + 1)
    yw = rng.choice([-3.0, -2.0, -1.0, 1.0, 2.0, 3.0], size=m) / m
    if seed % 5 == 0:
        w0 = np.array([1.0, -1.0] + [0.0] * (d - 1))
        yw = np.where(Xa @ w0 >= 0.0, 1.0, -1.0) * np.abs(yw)
        dirs = np.vstack([dirs[1::4][:20], dirs])  # integer directions first: margins stay 0
    elif seed % 2 == 0:
        w0 *= 1.00001e5 / np.linalg.norm(w0)
    return Xa, yw, w0, dirs


@pytest.mark.parametrize("seed", range(30))
def test_fused_rcd_loop_equals_the_reference_bit_for_bit(seed):
    """The fused ``rcd_loop`` against the reference loop over ``update_wgt``: identical weights and
    traces (assert_array_equal, not allclose). The fused loop performs the same floating-point
    operations in the same order (projection summed over k in order, errors summed over n in
    order, group sums as differences of the running sum over z sorted stably, BLAS ``np.dot`` for
    the rescale), so nothing may differ, not even in the last bit. On these problems the order
    within tied groups matters: the previous, unstable reference sort (``np.argsort(z)``,
    numba's quicksort) gives different weights on several of the seeds."""
    Xa, yw, w0, dirs = _tie_problem(seed)
    w_ref, trace_ref = reference_rcd_loop(Xa, yw, w0, dirs)
    w_fused, trace_fused = rcd_loop(Xa, yw, w0, dirs)
    np.testing.assert_array_equal(w_fused, w_ref)
    np.testing.assert_array_equal(trace_fused, trace_ref)


def test_tie_problems_cover_every_situation_of_the_fused_loop():
    seen = dict.fromkeys(("ties", "a_zero", "cancelled", "refused", "rescaled"), 0)
    for seed in range(6):
        for key, value in _situations(*_tie_problem(seed)).items():
            seen[key] += value
    assert all(v > 0 for v in seen.values()), seen


@pytest.mark.parametrize("seed", range(3))
def test_fused_rcd_loop_equals_the_reference_on_continuous_data(seed):
    rng = np.random.default_rng(seed)
    m, d = 400, 8
    X = rng.normal(size=(m, d)) * rng.uniform(0.01, 100.0, size=d)  # features of mixed scale
    yw = rng.dirichlet(np.ones(m)) * np.where(X[:, 0] * X[:, 1] > 0, 1.0, -1.0)
    Xa = augment(X)
    w0 = rng.uniform(-0.05, 0.05, size=d + 1)
    dirs = rcd_directions(d, 300, rng)
    w_ref, trace_ref = reference_rcd_loop(Xa, yw, w0, dirs)
    w_fused, trace_fused = rcd_loop(Xa, yw, w0, dirs)
    np.testing.assert_array_equal(w_fused, w_ref)
    np.testing.assert_array_equal(trace_fused, trace_ref)


def _sorted_by_fused_sort(z: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n = z.size
    z_buf, g_buf, z_tmp, g_tmp = z.copy(), g.copy(), np.empty(n), np.empty(n)
    counts = np.empty((8, 256), dtype=np.intp)
    swapped = _sort_pairs(z_buf.view(np.uint64), g_buf, z_tmp.view(np.uint64), g_tmp, n, counts)
    return (z_tmp, g_tmp) if swapped else (z_buf, g_buf)


def _hard_orders():
    rng = np.random.default_rng(0)
    yield from (rng.normal(size=n) for n in (0, 1, 2, 3, 16, 17, 18, 300))
    yield 1.0 + 1e-4 * rng.random(2000)  # one run of equal top bytes: radix on the low bytes
    yield np.r_[1.0 + 1e-6 * rng.random(1500), rng.normal(size=500) * 1e6]  # a dense cluster
    yield rng.integers(-3, 4, size=1000) * 0.5  # few values, many ties
    yield np.r_[0.0, 1.0, -1.0, 0.0, np.inf, -np.inf, 5e-324, -5e-324, 1.7e308, -1.7e308, np.nan]
    yield np.r_[rng.normal(size=200), [np.nan] * 20, rng.normal(size=200)]
    yield rng.standard_cauchy(size=1000)
    yield np.sort(rng.normal(size=1000))
    yield np.sort(rng.normal(size=1000))[::-1]


@pytest.mark.parametrize("z", list(_hard_orders()))
def test_fused_sort_is_numbas_stable_argsort(z):
    """The allocation-free radix sort of (z, g) pairs puts them in the order of
    np.argsort(z, kind="mergesort"), the reference's stable order (ties in index order)."""
    g = np.arange(z.size, dtype=np.float64)  # the payload records the permutation
    zs, gs = _sorted_by_fused_sort(z, g)
    order = np.argsort(z, kind="stable")
    np.testing.assert_array_equal(zs, z[order])
    np.testing.assert_array_equal(gs, g[order])


# --------------------------------------------------------------------------- AdaBoost-Perc
def _xor_ish(seed: int, m: int = 80):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, 3))
    y = np.where(X[:, 0] * X[:, 1] + 0.2 * X[:, 2] > 0, "b", "a")  # string labels: classes_ order
    return X, y


def test_adaboost_perc_is_deterministic_under_a_seed():
    from kernbench.methods import AdaBoost

    X, y = _xor_ish(0)
    kw = dict(n_estimators=15, weak_learner="perceptron", max_run=60)
    f1 = AdaBoost(**kw, random_state=11).fit(X, y).decision_function(X)
    f2 = AdaBoost(**kw, random_state=11).fit(X, y).decision_function(X)
    f3 = AdaBoost(**kw, random_state=12).fit(X, y).decision_function(X)
    assert np.array_equal(f1, f2)
    assert not np.array_equal(f1, f3)


def test_adaboost_perc_equals_a_hand_written_adaboost_over_rcd():
    """Discrete AdaBoost written out independently with train_rcd_perceptron and the same
    generator."""
    from kernbench.methods import AdaBoost

    X, y = _xor_ish(1)
    T, max_run = 12, 50
    model = AdaBoost(T, weak_learner="perceptron", max_run=max_run, random_state=5).fit(X, y)

    y_pm = np.where(y == "b", 1.0, -1.0)
    rng = np.random.default_rng(5)
    d = np.full(y.size, 1.0 / y.size)
    F = np.zeros(y.size)
    alphas = []
    for _ in range(T):
        h, _ = train_rcd_perceptron(X, d * y_pm, max_run=max_run, rng=rng)
        col = h.predict(X)
        eps = d[col != y_pm].sum()
        if eps > 0.5:  # step 2.2: negate
            h = h.negated()
            col = h.predict(X)
            eps = d[col != y_pm].sum()
        alpha = 0.5 * np.log((1 - eps) / eps)
        d = d * np.exp(-alpha * y_pm * col)
        d /= d.sum()
        F += alpha * col
        alphas.append(alpha)
    assert model.n_iter_ == T
    assert np.allclose(model.estimator_weights_, alphas, rtol=1e-10)
    assert np.allclose(model.decision_function(X), F, rtol=1e-10)
    assert np.all(np.array(model.trace_["weighted_error"]) < 0.5)
    # training error ≤ Π_t 2√(ε_t(1 − ε_t))
    eps = np.array(model.trace_["weighted_error"])
    train_err = np.mean(model.predict(X) != y)
    assert train_err <= np.prod(2 * np.sqrt(eps * (1 - eps))) + 1e-12


def test_adaboost_perc_negates_a_perceptron_worse_than_chance(monkeypatch):
    """A base learner with weighted error > ½ enters the ensemble negated."""
    import kernbench.weak.rcd_perceptron as rcd
    from kernbench.methods import AdaBoost

    X, y = _xor_ish(2)
    y_pm = np.where(y == "b", 1.0, -1.0)
    bad = Perceptron(w=np.zeros(3), b=1.0)  # constant +1 ...
    if np.mean(y_pm > 0) > 0.5:
        bad = bad.negated()  # ... or −1, whichever is the minority class: ε > ½
    monkeypatch.setattr(rcd, "_train_augmented", lambda Xa, yw, max_run, rng: (bad, None))
    model = AdaBoost(1, weak_learner="perceptron", max_run=5, random_state=0).fit(X, y)
    eps_raw = np.mean(bad.predict(X) != y_pm)
    assert eps_raw > 0.5
    assert model.trace_["weighted_error"][0] == pytest.approx(1 - eps_raw)
    assert np.array_equal(model.weak_learners_[0].predict(X), -bad.predict(X))


def test_adaboost_rejects_a_non_positive_max_run():
    from kernbench.methods import AdaBoost

    X, y = _xor_ish(3)
    with pytest.raises(ValueError, match="max_run"):
        AdaBoost(3, weak_learner="perceptron", max_run=0).fit(X, y)
