"""The column-generation base: loop, stopping, paths, staged prediction, stump pricing with
masks."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from kernbench.methods.cg_pricing import OraclePricer
from kernbench.methods.cgens import CGENS
from kernbench.methods.column_generation import (
    ColumnGenerationClassifier,
    MasterStep,
    PricingRule,
    StumpColumnIds,
    WorkingSet,
    weak_learner_space,
)
from kernbench.weak.base import ColumnSet
from kernbench.weak.fourier import FourierFeature
from kernbench.weak.perceptron import Perceptron
from kernbench.weak.stumps import Stump, StumpSpace


class RidgeMaster:
    """Fully-corrective one-vs-all ridge on the columns: min_W,b ||H W + 1bᵀ − Y||² + lam·||W||²
    (closed form); pricing weights: the residuals (m × K)."""

    def __init__(self, Y, lam, tol):
        self.Y, self.lam, self.tol = Y, lam, tol

    def start(self):
        W, b = np.zeros((0, self.Y.shape[1])), self.Y.mean(axis=0)
        return self._step(float("nan"), np.zeros((self.Y.shape[0], 0)), W, b)

    def add_columns(self, picks, columns):
        pass

    def solve(self, ws):
        H = ws.H
        Hc = H - H.mean(axis=0)
        Yc = self.Y - self.Y.mean(axis=0)
        W = np.linalg.solve(Hc.T @ Hc + self.lam * np.eye(H.shape[1]), Hc.T @ Yc)
        b = self.Y.mean(axis=0) - H.mean(axis=0) @ W
        R = self.Y - (H @ W + b)
        return self._step(float((R**2).sum() + self.lam * (W**2).sum()), H, W, b)

    def _step(self, objective, H, W, b):
        g = self.Y - (H @ W + b)
        return MasterStep(objective=objective, g=g, threshold=self.tol, coef=W, intercept=b)


class RidgeOVA(ColumnGenerationClassifier):
    """A minimal multi-class user of the base: :class:`RidgeMaster` with the default pricer (the
    best column over classes is added, the default for 2-D weights)."""

    _binary_only = False

    def __init__(self, max_iter=10, lam=1.0, tol=1e-9, weak_learner="stump"):
        self.max_iter = max_iter
        self.lam = lam
        self.tol = tol
        self.weak_learner = weak_learner

    _parameter_constraints: dict = {}

    def _make_space(self, X, rng):
        return weak_learner_space(X, self.weak_learner, include_constant=False, rng=rng)

    def _make_master(self, X, y, space, ws, rng, context=None):
        K = self.classes_.size
        return RidgeMaster(
            np.where(np.arange(K)[None, :] == y[:, None], 1.0, -1.0), self.lam, self.tol
        )


def _blobs(seed=0, m=90, K=3):
    rng = np.random.default_rng(seed)
    y = np.arange(m) % K
    X = rng.normal(size=(m, 2)) + 2.5 * np.c_[np.cos(2 * np.pi * y / K), np.sin(2 * np.pi * y / K)]
    return X, y


def test_multiclass_user_gets_paths_trace_and_staged_decisions():
    X, y = _blobs()
    est = RidgeOVA(max_iter=12).fit(X, y)
    assert est.n_iter_ == 12 and est.stop_reason_ == "max_iter"
    assert [W.shape for W in est.coef_path_] == [(t + 1, 3) for t in range(12)]
    assert {len(v) for v in est.trace_.values()} == {12}
    staged = list(est.staged_decision_function(X))
    H = est._learner_matrix(X)
    for dec, W, b in zip(staged, est.coef_path_, est.intercept_path_):
        np.testing.assert_allclose(dec, H[:, : W.shape[0]] @ W + b)
    np.testing.assert_allclose(staged[-1], est.decision_function(X))
    errs = [np.mean(est.classes_[d.argmax(1)] != y) for d in staged]
    np.testing.assert_allclose(errs, est.trace_["train_error"])
    assert np.all(np.diff(est.trace_["objective"]) <= 1e-9)
    assert np.all(np.diff(est.trace_["time_s"]) >= 0)
    assert est.score(X, y) > 0.9


def test_masked_stump_pricing_equals_the_space_oracle_with_exclusion():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, 3))
    X[:, 2] = np.round(X[:, 0], 1)  # duplicate columns across features
    space = StumpSpace(X, include_constant=False)
    rule = PricingRule(absolute=True)
    ws = WorkingSet(50, space, rule)
    pricer = OraclePricer(space, rule, np.random.default_rng(0))
    excl = ColumnSet()
    for _ in range(25):
        g = rng.normal(size=50)
        ref = space.best(g, absolute=True, exclude=excl)
        (got,), cols = pricer.best(g, ws)
        assert cols == [0]
        np.testing.assert_array_equal(got.column, ref.column)
        assert got.score == pytest.approx(ref.score)
        excl.add(got.column)
        ws.add([got], cols)


def test_stump_column_ids_give_the_canonical_set():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 3))
    X[:, 1] = X[:, 0] * 3 + 1  # same ordering: every column of feature 1 duplicates feature 0
    space = StumpSpace(X, include_constant=False)
    ids = StumpColumnIds(space)
    H_full, _ = space.full_matrix()
    assert ids.first.size == H_full.shape[1]
    for i in range(space.n_candidates):
        assert ids.id_of(-space.column(i)) == ids.ids[i]
    assert ids.id_of(np.ones(40)) is None


def test_exhausted_and_empty_spaces_stop_cleanly():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([0, 1, 0, 1])
    est = CGENS(C=100.0, tol=0.0, max_iter=50).fit(X, y)
    assert est.stop_reason_ == "exhausted" and est.n_iter_ == 3  # 3 distinct non-constant stumps
    const = CGENS(max_iter=5).fit(np.ones((6, 2)), [0, 1, 0, 1, 0, 1])
    assert const.stop_reason_ == "empty_space" and const.n_iter_ == 0
    assert len(list(const.staged_decision_function(np.ones((2, 2))))) == 1


def test_learner_matrix_mixes_learner_types():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(7, 2))
    learners = [
        Stump(1, 0.1, -1),
        Perceptron(np.array([0.6, 0.8]), 0.2),
        FourierFeature(np.array([1.0, -1.0]), 0.5, -1.0),
        Stump(0, -np.inf, 1),
    ]
    est = RidgeOVA()
    est.learners_ = learners
    np.testing.assert_array_equal(
        est._learner_matrix(X), np.column_stack([lrn.predict(X) for lrn in learners])
    )


def _signed_columns(space):
    cols = np.array([space.column(i) for i in range(space.n_candidates)])
    return np.unique(np.vstack([cols, -cols]), axis=0)


@pytest.mark.parametrize("per_column", [True, False])
def test_signed_pricing_per_column_equals_brute_force_with_classwise_working_sets(per_column):
    """W ≥ 0: h and −h are distinct columns; per-column mode keeps one working set per column."""

    rng = np.random.default_rng(4)
    X = rng.normal(size=(30, 2))
    X[:, 1] = np.round(X[:, 1], 1)  # ties: several candidates share a column
    space = StumpSpace(X, include_constant=True)
    cols = _signed_columns(space)
    rule = PricingRule(signed=True, per_column=per_column)
    ws = WorkingSet(30, space, rule)
    pricer = OraclePricer(space, rule, np.random.default_rng(0))
    K = 3
    chosen = [set() for _ in range(K)]  # working sets as column tuples, per column (or shared)
    negation_picked = 0
    for _ in range(15):
        G = rng.normal(size=(30, K))
        picks, columns = pricer.best(G, ws)
        S = cols @ G  # (n_cols, K) scores of every signed column
        for k in range(K):
            used = chosen[k] if per_column else set().union(*chosen)
            free = np.array([tuple(c) not in used for c in cols])
            S[~free, k] = -np.inf
        if per_column:
            assert columns == list(range(K))
            for k, p in enumerate(picks):
                assert p.score == pytest.approx(S[:, k].max(), rel=1e-12)
                assert p.column @ G[:, k] == pytest.approx(p.score)
                np.testing.assert_array_equal(p.learner.predict(X), p.column)
        else:
            (p,) = picks
            assert p.score == pytest.approx(S.max(), rel=1e-12)
            assert p.column @ G[:, columns[0]] == pytest.approx(p.score)
        for p, k in zip(picks, columns):
            negation_picked += tuple(-p.column) in chosen[k if per_column else 0]
            chosen[k if per_column else 0].add(tuple(p.column))
        ws.add(picks, columns)
    assert negation_picked > 0  # −h was still available after h: the exclusion kept the sign


def test_signed_column_ids_separate_h_from_minus_h():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(25, 2))
    space = StumpSpace(X, include_constant=True)
    ids = StumpColumnIds(space, signed=True)
    n = space.n_candidates
    assert ids.ids.size == 2 * n and ids.first.size == _signed_columns(space).shape[0]
    for i in range(n):
        assert ids.id_of(space.column(i)) == ids.ids[i]
        assert ids.id_of(-space.column(i)) == ids.ids[n + i] != ids.ids[i]


def test_every_stop_reason_is_one_of_the_shared_values():
    """``stop_reason_`` takes its values from one table for every column-generation method."""
    from kernbench.methods import get_method
    from kernbench.methods.base import STOP_REASONS

    X, y = _blobs(m=60)
    yb = (y == 0).astype(int)
    fits = [
        get_method("cgens")(max_iter=5).fit(X, yb),
        get_method("lpboost")(max_iter=5).fit(X, yb),
        get_method("cgens_sls")(max_iter=5).fit(X, y),
        get_method("multiboost")(max_iter=5, solver="newton").fit(X, y),
        get_method("multiboost_cw")(max_iter=5).fit(X, y),
        get_method("cgboost")(kernels=["linear"], max_iter=5).fit(X, yb),
        get_method("cgboost_regressor")(kernels=["linear"], max_iter=5).fit(X, X[:, 0]),
        CGENS(C=100.0, tol=0.0, max_iter=50).fit(X[:4, :1], [0, 1, 0, 1]),  # exhausted
    ]
    assert {est.stop_reason_ for est in fits} <= set(STOP_REASONS)
    assert "exhausted" in {est.stop_reason_ for est in fits}


def test_every_iterative_method_stops_for_a_shared_reason():
    """The boosting and ExRM/DRM estimators take ``stop_reason_`` from the same table; a method's
    own cap ends in ``max_iter`` and a converged ExRM in ``converged``."""
    from kernbench.methods import get_method
    from kernbench.methods.base import STOP_REASONS

    X, y = _blobs(m=60)
    yb = (y == 0).astype(int)
    reasons = {
        name: get_method(name)(**params).fit(X, labels).stop_reason_
        for name, params, labels in [
            ("adaboost", {"n_estimators": 3}, yb),
            ("adaboost_mh", {"n_estimators": 3}, y),
            ("adaboost_mo", {"n_estimators": 3}, y),
            ("adaboost_ecc", {"n_estimators": 3}, y),
            ("exrm", {"max_iter": 2000}, yb),
            ("drm", {"max_iter": 3}, yb),
            ("psvm", {"max_iter": 2000}, yb),
        ]
    }
    assert set(reasons.values()) <= set(STOP_REASONS), reasons
    assert reasons["adaboost"] == reasons["adaboost_mh"] == "max_iter"
    assert reasons["exrm"] == reasons["psvm"] == "converged"


def test_working_set_matrix_holds_every_added_column_in_order():
    """Columns wait until H is read ({−1, 0, +1} columns as int8); H is then the added columns,
    exactly, whether read after every few adds or once at the end, across the buffer's growth."""
    rng = np.random.default_rng(5)
    m = 23
    added = []
    ws_often, ws_end = WorkingSet(m, None, PricingRule()), WorkingSet(m, None, PricingRule())
    for j in range(75):
        k = 1 + j % 2  # one or two picks at a time
        columns = [
            rng.choice([-1.0, 0.0, 1.0], size=m) if (j + i) % 3 else rng.normal(size=m) * 1e3
            for i in range(k)
        ]
        stump = Stump(0, 0.0, 1)  # the learners: only their count matters here
        picks = [SimpleNamespace(column=c, learner=stump, candidate=None) for c in columns]
        for ws in (ws_often, ws_end):
            ws.add(picks, [0] * k)
        added += columns
        if j % 4 == 0:
            np.testing.assert_array_equal(ws_often.H, np.column_stack(added))
    for ws in (ws_often, ws_end):
        assert ws.H.dtype == np.float64 and ws.n_columns == len(added)
        np.testing.assert_array_equal(ws.H, np.column_stack(added))


def test_classwise_coordinate_descent_never_builds_the_training_matrix(monkeypatch):
    """MultiBoost_cw's FCD master reads its own column layout: the (m, J) matrix is not read."""
    from kernbench.methods.multiboost_cw import MultiBoostCW

    def refuse(self):
        raise AssertionError("ws.H read")

    rng = np.random.default_rng(6)
    X = rng.normal(size=(60, 3))
    y = np.argmax(X @ rng.normal(size=(3, 3)), axis=1)
    monkeypatch.setattr(WorkingSet, "H", property(refuse))
    est = MultiBoostCW(max_iter=15).fit(X, y)
    assert est.n_iter_ > 1 and est.score(X, y) > 0.7
