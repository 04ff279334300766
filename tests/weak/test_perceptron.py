"""Sampled perceptrons: the pick rule against brute force, the sampling law, exclusion, seeds."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import gamma

from kernbench.weak.base import ColumnSet
from kernbench.weak.perceptron import Perceptron, PerceptronSpace, sign_pm1


def _data(seed=0, m=40, D=3):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(m, D)), rng.normal(size=m)


@pytest.mark.parametrize("absolute", [True, False])
def test_pick_is_the_brute_force_best_of_the_same_candidates(absolute):
    X, g = _data()
    space = PerceptronSpace(X, n_candidates=300)
    pick = space.best(g, absolute=absolute, rng=np.random.default_rng(11))
    Theta, kappa = space.sample(np.random.default_rng(11))  # the same draw
    cols = [sign_pm1(X @ Theta[:, p] - kappa[p]) for p in range(300)]
    scores = np.array([c @ g for c in cols])
    crit = np.abs(scores) if absolute else scores
    p = int(np.argmax(crit))
    np.testing.assert_array_equal(pick.learner.theta, Theta[:, p])
    assert pick.score == pytest.approx(abs(scores[p]))
    np.testing.assert_array_equal(pick.column, np.sign(scores[p]) * cols[p])
    np.testing.assert_array_equal(pick.learner.predict(X), pick.column)
    assert pick.score == pytest.approx(pick.column @ g)
    assert pick.score >= 0


def test_exclusion_skips_selected_columns_up_to_sign():
    X, g = _data(seed=1)
    space = PerceptronSpace(X, n_candidates=200)
    first = space.best(g, absolute=True, rng=np.random.default_rng(3))
    excl = ColumnSet()
    excl.add(-first.column)  # its negation is the same coordinate
    second = space.best(g, absolute=True, exclude=excl, rng=np.random.default_rng(3))
    assert second.column not in excl
    assert second.score <= first.score
    Theta, kappa = space.sample(np.random.default_rng(3))
    scores = np.abs(sign_pm1(X @ Theta - kappa).T @ g)
    admissible = [
        s for p, s in enumerate(scores) if sign_pm1(X @ Theta[:, p] - kappa[p]) not in excl
    ]
    assert second.score == pytest.approx(max(admissible))


def test_sampling_law_and_seeded_reproducibility():
    X, g = _data(seed=2, D=4)
    space = PerceptronSpace(X, n_candidates=2000)
    Theta, kappa = space.sample(np.random.default_rng(0))
    np.testing.assert_allclose(np.linalg.norm(Theta, axis=0), 1.0)
    assert np.all(np.abs(kappa) <= space.R)
    assert space.R == pytest.approx(np.linalg.norm(X, axis=1).max())
    a = PerceptronSpace(X, random_state=5).best(g, absolute=True)
    b = PerceptronSpace(X, random_state=5).best(g, absolute=True)
    np.testing.assert_array_equal(a.learner.theta, b.learner.theta)
    assert a.learner.kappa == b.learner.kappa


def test_monte_carlo_mean_is_the_perceptron_kernel():
    """E[h(x)h(x')] = 1 − c_D·||x − x'||/R with c_D = Γ(D/2)/(√π Γ((D+1)/2))
    (docs/methods/infinite_ensembles.md)."""
    rng = np.random.default_rng(4)
    D = 3
    X = rng.uniform(-1, 1, size=(30, D))
    space = PerceptronSpace(X)
    Theta, kappa = space.sample(np.random.default_rng(9), P=20_000)
    H = sign_pm1(X @ Theta - kappa)
    emp = H @ H.T / H.shape[1]
    c_D = gamma(D / 2) / (np.sqrt(np.pi) * gamma((D + 1) / 2))
    dist = np.linalg.norm(X[:, None] - X[None], axis=2)
    np.testing.assert_allclose(emp, 1 - c_D * dist / space.R, atol=0.02)


def test_predict_many_and_negation():
    X, _ = _data(seed=3)
    rng = np.random.default_rng(0)
    learners = [Perceptron(rng.normal(size=3), float(rng.normal()), s) for s in (1.0, -1.0, 1.0)]
    np.testing.assert_array_equal(
        Perceptron.predict_many(learners, X), np.column_stack([p.predict(X) for p in learners])
    )
    np.testing.assert_array_equal(learners[0].negated().predict(X), -learners[0].predict(X))


def test_adaboost_uses_the_sampled_space_through_its_hook():
    from kernbench.methods.adaboost import AdaBoost

    X, _ = _data(seed=6, m=120)
    y = (np.linalg.norm(X, axis=1) > 1.5).astype(int)
    kw = dict(n_estimators=15, weak_learner="perceptron_sampled")
    a = AdaBoost(random_state=2, **kw).fit(X, y)
    b = AdaBoost(random_state=2, **kw).fit(X, y)
    assert all(isinstance(h, Perceptron) for h in a.weak_learners_)
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))


@pytest.mark.parametrize("seed", range(6))
def test_best_first_is_the_stable_sort_order(seed: int) -> None:
    """best_first yields exactly np.argsort(neg, kind="stable"): ties (±0 included) to the first
    index, NaN last, whatever the first few taken."""
    from kernbench.weak.perceptron import best_first

    rng = np.random.default_rng(seed)
    neg = rng.integers(-3, 3, size=200).astype(float)  # many ties
    neg[rng.integers(0, 200, size=5)] = -0.0
    if seed % 2:
        neg[rng.integers(0, 200, size=3)] = np.nan
    if seed == 4:
        neg[:] = 0.0
    np.testing.assert_array_equal(list(best_first(neg)), np.argsort(neg, kind="stable"))
    assert next(best_first(neg)) == np.argsort(neg, kind="stable")[0]
