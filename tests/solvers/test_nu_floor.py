"""ν_min, the smallest ν with a non-trivial ν-machine, against cvxpy / linprog solves of the
machines themselves on both sides of it."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from scipy.optimize import linprog

from kernbench.solvers.nu_floor import (
    RAISE_FRACTION,
    nu_floor_by_cuts,
    nu_floor_duplicates,
    nu_floor_groups,
    nu_floor_linear,
    only_trivial,
    raised_nu,
    smallest_cancelling_cap,
    usable_nu,
)
from kernbench.weak.stumps import StumpSpace


def _overlapping(N: int = 60, M: int = 2, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A weak linear signal under heavy label noise: the ν-reduced hulls overlap up to ν ≈ 0.6."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, M))
    y = np.where(X[:, 0] + 2.0 * rng.standard_normal(N) > 0, 1.0, -1.0)
    return X, y


def _nu_svm_value(X: np.ndarray, y: np.ndarray, nu: float) -> float:
    """min −ρ + (1/(νN))Σ(ρ − y(wᵀx + b))₊ over ‖w‖ ≤ 1 (the norm-bounded ν-SVM), by cvxpy."""
    N, M = X.shape
    w, b, rho = cp.Variable(M), cp.Variable(), cp.Variable()
    loss = cp.sum(cp.pos(rho - cp.multiply(y, X @ w + b))) / (nu * N)
    prob = cp.Problem(cp.Minimize(-rho + loss), [cp.norm(w) <= 1])
    prob.solve(solver="CLARABEL")
    return prob.value


def _nu_lp_value(H: np.ndarray, y: np.ndarray, nu: float) -> float:
    """β* of the ν-LP (LPBoost ν-form) over the explicit columns H: min β s.t. every edge ≤ β."""
    m, J = H.shape
    res = linprog(
        np.r_[np.zeros(m), 1.0],
        A_ub=np.hstack([(y[:, None] * H).T, -np.ones((J, 1))]),
        b_ub=np.zeros(J),
        A_eq=np.r_[np.ones(m), 0.0][None, :],
        b_eq=[1.0],
        bounds=[(0.0, 1.0 / (nu * m))] * m + [(None, None)],
        method="highs",
    )
    return res.fun


def test_linear_floor_separates_trivial_from_non_trivial_nu_svms() -> None:
    X, y = _overlapping()
    nu_min = nu_floor_linear(X, y)
    nu_max = 2 * min(np.sum(y > 0), np.sum(y < 0)) / y.size
    assert 0.5 < nu_min < nu_max
    # at or below ν_min the optimum is 0 (w = 0); above it, strictly negative (w ≠ 0)
    assert _nu_svm_value(X, y, 0.97 * nu_min) == pytest.approx(0.0, abs=1e-7)
    assert _nu_svm_value(X, y, nu_min) == pytest.approx(0.0, abs=1e-7)
    assert _nu_svm_value(X, y, nu_min + 0.05 * (nu_max - nu_min)) < -1e-4


def test_linear_floor_is_zero_on_separable_data() -> None:
    X = np.array([[0.0, 1.0], [1.0, 2.0], [0.0, -1.0], [1.0, -2.0]])
    y = np.array([1.0, 1.0, -1.0, -1.0])
    assert nu_floor_linear(X, y) == 0.0


def test_stump_floor_by_cuts_equals_the_full_lp() -> None:
    X, y = _overlapping(N=50, M=3, seed=1)
    X = np.round(X)  # discrete features: many ties and label conflicts, as in flare-solar
    space = StumpSpace(X, include_constant=True)
    H, _ = space.full_matrix(with_constant=True)
    c_full, _ = smallest_cancelling_cap((y[:, None] * H).T)
    by_cuts = nu_floor_by_cuts(lambda g: space.best(g).column, y)
    assert by_cuts == pytest.approx(1.0 / (c_full * y.size), rel=1e-9)
    # the ν-LP over every stump, both polarities: β* = 0 at ν_min, β* > 0 above it
    H = np.hstack([H, -H])
    assert _nu_lp_value(H, y, by_cuts) == pytest.approx(0.0, abs=1e-9)
    assert _nu_lp_value(H, y, by_cuts + 0.05 * (1 - by_cuts)) > 1e-4


@pytest.mark.parametrize(("max_bins", "distinct"), [(None, False), (None, True), (4, True)])
def test_stump_group_floor_equals_the_cutting_planes_and_the_full_lp(max_bins, distinct) -> None:
    """One LP over each feature's groups of points (equal values, or one bin) gives the floor that
    the cutting planes reach through the stump oracle, and the full ν-LP leaves 0 there."""
    X, y = _overlapping(N=50, M=3, seed=1)
    X = np.round(X)
    if distinct:  # a feature of distinct values (binned into 4, it still has ties)
        X[:, 2] += 0.01 * np.arange(50)
    space = StumpSpace(X, include_constant=True, max_bins=max_bins)
    by_groups = nu_floor_groups(space.feature_groups(), y)
    assert by_groups == pytest.approx(nu_floor_by_cuts(lambda g: space.best(g).column, y), rel=1e-9)
    if max_bins is None and distinct:
        assert by_groups == 0.0  # the distinct feature's stumps peel every point off
        return
    H, _ = space.full_matrix(canonical=False)
    H = np.hstack([H, -H])
    assert 0.2 < by_groups < 1.0
    assert _nu_lp_value(H, y, by_groups) == pytest.approx(0.0, abs=1e-9)
    assert _nu_lp_value(H, y, by_groups + 0.05 * (1 - by_groups)) > 1e-4


def test_the_separability_certificate_agrees_with_the_lp(monkeypatch) -> None:
    """Binned stumps on many features separate noisy labels (ν_min = 0): the linear SVM on the
    one-hot groups shows it without the LP; the LP alone gives the same 0, and on data it cannot
    separate the certificate fails and the LP decides."""
    import kernbench.solvers.nu_floor as nf

    rng = np.random.default_rng(2)
    X = rng.standard_normal((120, 30))
    y = np.where(X[:, 0] + rng.standard_normal(120) > 0, 1.0, -1.0)
    groups = StumpSpace(X, include_constant=True, max_bins=8).feature_groups()
    assert nu_floor_groups(groups, y) == 0.0
    noisy = StumpSpace(np.round(X[:, :2]), include_constant=True).feature_groups()
    with_certificate = nu_floor_groups(noisy, y)
    assert with_certificate > 0.3
    calls = []
    monkeypatch.setattr(nf, "_additively_separable", lambda *a: calls.append(1) or False)
    assert nu_floor_groups(groups, y) == 0.0  # the LP: only v = 0 cancels every group
    assert nu_floor_groups(noisy, y) == with_certificate
    assert len(calls) == 2


def test_raised_nu() -> None:
    assert raised_nu(0.5, 0.4, 0.9) == 0.5
    assert raised_nu(0.5, 0.6, 0.9) == pytest.approx(0.6 + RAISE_FRACTION * 0.3)
    assert raised_nu(0.6, 0.6, 0.9) == pytest.approx(0.6 + RAISE_FRACTION * 0.3)


def test_usable_nu() -> None:
    assert usable_nu(0.5, 0.4, 0.9) == 0.5
    assert usable_nu(0.95, 0.4, 0.9) == 0.9  # above ν_max: lowered
    assert usable_nu(0.3, 0.4, 0.9) == pytest.approx(0.4 + RAISE_FRACTION * 0.5)
    assert usable_nu(0.3, 0.9, 0.9) == 0.9 and only_trivial(0.9, 0.9)  # no non-trivial ν
    assert not only_trivial(0.89, 0.9)


def test_duplicate_floor_equals_the_stump_floor_in_one_dimension() -> None:
    """In one dimension the stumps are the half-lines (the perceptrons): the floor from the groups
    of identical points equals the cutting planes' floor over every stump."""
    rng = np.random.default_rng(5)
    x = np.round(2 * rng.standard_normal((70, 1)))  # 70 points on about 10 values
    y = np.where(x[:, 0] + 2 * rng.standard_normal(70) > 0, 1.0, -1.0)
    space = StumpSpace(x, include_constant=True)
    by_cuts = nu_floor_by_cuts(lambda g: space.best(g).column, y)
    assert 0.3 < nu_floor_duplicates(x, y) == pytest.approx(by_cuts, rel=1e-9)
    assert nu_floor_duplicates(x[:, 0][:, None] + 1e-3 * np.arange(70)[:, None], y) == 0.0


def test_the_floor_lp_falls_back_to_other_highs_algorithms(monkeypatch):
    """HiGHS's default can end with an unknown status (seen on a spambase split); the other
    algorithms then give the same optimum, and a failure of all of them is an error."""
    import scipy.optimize

    import kernbench.solvers.nu_floor as nf

    rng = np.random.default_rng(3)
    E = rng.standard_normal((4, 30))
    expected = nf.smallest_cancelling_cap(E)[0]
    assert np.isfinite(expected)
    real = scipy.optimize.linprog

    def flaky(*args, method="highs", **kwargs):
        res = real(*args, method=method, **kwargs)
        if method == "highs":
            res.status, res.message = 4, "HiGHS Status 15: model_status is Unknown"
        return res

    monkeypatch.setattr(nf, "linprog", flaky)
    assert nf.smallest_cancelling_cap(E)[0] == pytest.approx(expected, rel=1e-7)

    def broken(*args, method="highs", **kwargs):
        res = real(*args, method=method, **kwargs)
        res.status, res.message = 4, f"{method} failed"
        return res

    monkeypatch.setattr(nf, "linprog", broken)
    with pytest.raises(RuntimeError, match="highs-ipm: highs-ipm failed"):
        nf.smallest_cancelling_cap(E)
