"""Inner-CV selection: equals an independent GridSearchCV; path scoring equals separate fits."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, StratifiedKFold

from kernbench.runner.cell.select import _simplicity_key, select_fit_score


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(n_samples=240, n_features=6, n_informative=3, random_state=3)
    y = np.where(y == 1, 1, -1)
    return X[:160], y[:160], X[160:], y[160:]


def test_selection_matches_gridsearchcv(data):
    X, y, Xt, yt = data
    grid = {"C": [1e-3, 1e-2, 1e-1, 1.0, 10.0]}
    out = select_fit_score(
        LogisticRegression(max_iter=2000), grid, X, y, Xt, yt, cv_folds=5, cv_seed=7
    )
    folds = StratifiedKFold(n_splits=5, shuffle=True, random_state=7)
    ref = GridSearchCV(LogisticRegression(max_iter=2000), grid, cv=folds).fit(X, y)
    ref_err = 1.0 - ref.cv_results_["mean_test_score"]
    ours = {row["params"]["C"]: row["mean_error"] for row in out.cv}
    np.testing.assert_allclose([ours[c] for c in grid["C"]], ref_err, atol=1e-12)
    best = min(grid["C"], key=lambda c: (round(ours[c], 12), c))
    assert out.params == {"C": best}
    final = LogisticRegression(max_iter=2000, C=best).fit(X, y)
    assert out.test_error == pytest.approx(np.mean(final.predict(Xt) != yt))
    assert out.train_error == pytest.approx(np.mean(final.predict(X) != y))


def test_single_point_grid_skips_cv(data):
    X, y, Xt, yt = data
    out = select_fit_score(LogisticRegression(), {"C": [0.5]}, X, y, Xt, yt, cv_folds=5)
    assert out.cv == [] and out.params == {"C": 0.5}


def test_ties_prefer_the_simpler_model():
    grid = {"n_estimators": [25, 50, 100], "C": [0.1, 1.0, 10.0]}
    a = {"n_estimators": 50, "C": 0.1}
    b = {"n_estimators": 25, "C": 10.0}
    assert _simplicity_key(b, grid, "n_estimators") < _simplicity_key(a, grid, "n_estimators")
    assert _simplicity_key({"C": 1.0}, {"C": [10.0, 1.0]}, None) < _simplicity_key(
        {"C": 10.0}, {"C": [10.0, 1.0]}, None
    )


def _naive_cv(make, grid_points, X, y, folds):
    """Independent selection: a fresh fit on raw features for every grid point and fold."""
    errs = {}
    for point in grid_points:
        fold_errs = [
            np.mean(make(**point).fit(X[tr], y[tr]).predict(X[va]) != y[va]) for tr, va in folds
        ]
        errs[tuple(sorted(point.items()))] = float(np.mean(fold_errs))
    return errs


def test_kernel_reuse_path_equals_fresh_fits(data):
    from kernbench.methods import SVMGauss

    X, y, Xt, yt = data
    grid = {"C": [0.1, 1.0, 10.0], "gamma": [0.05, 0.5]}
    out = select_fit_score(SVMGauss(tol=1e-6), grid, X, y, Xt, yt, cv_folds=4, cv_seed=5)
    folds = list(StratifiedKFold(n_splits=4, shuffle=True, random_state=5).split(X, y))
    points = [{"C": c, "gamma": g} for c in grid["C"] for g in grid["gamma"]]
    naive = _naive_cv(lambda **p: SVMGauss(tol=1e-6, **p), points, X, y, folds)
    ours = {tuple(sorted(r["params"].items())): r["mean_error"] for r in out.cv}
    assert ours == pytest.approx(naive, abs=1e-12)
    final = SVMGauss(tol=1e-6, **out.params).fit(X, y)
    assert out.test_error == pytest.approx(np.mean(final.predict(Xt) != yt))


def test_path_scoring_equals_separate_fits(data):
    from kernbench.methods import AdaBoost

    X, y, Xt, yt = data
    grid = {"n_estimators": [3, 10, 30]}
    out = select_fit_score(AdaBoost(), grid, X, y, Xt, yt, cv_folds=3, cv_seed=2)
    folds = list(StratifiedKFold(n_splits=3, shuffle=True, random_state=2).split(X, y))
    naive = _naive_cv(AdaBoost, [{"n_estimators": t} for t in grid["n_estimators"]], X, y, folds)
    ours = {tuple(sorted(r["params"].items())): r["mean_error"] for r in out.cv}
    assert ours == pytest.approx(naive, abs=1e-12)
    t = out.params["n_estimators"]
    assert len(out.trace["test_error"]) == t
    final = AdaBoost(n_estimators=t).fit(X, y)
    assert out.trace["test_error"][-1] == pytest.approx(np.mean(final.predict(Xt) != yt))


def test_warm_path_selection_scores_the_path_and_refits_along_it(data):
    from kernbench.methods.cgens import CGENS

    X, y, Xt, yt = data
    X, y = X[:90], y[:90]
    grid = {"C": [1.0, 0.1], "max_iter": [3, 10]}
    est = CGENS(random_state=0)
    out = select_fit_score(est, grid, X, y, Xt, yt, cv_folds=3, cv_seed=2)
    folds = list(StratifiedKFold(n_splits=3, shuffle=True, random_state=2).split(X, y))
    naive: dict[tuple, list[float]] = {}
    for tr, va in folds:
        fits = CGENS(random_state=0).fit_warm_path(X[tr], y[tr], [0.1, 1.0], [3, 10])
        for C, by_stage in zip([0.1, 1.0], fits):
            for t, model in by_stage.items():
                err = float(np.mean(model.predict(X[va]) != y[va]))
                naive.setdefault((("C", C), ("max_iter", t)), []).append(err)
    ours = {tuple(sorted(r["params"].items())): r["mean_error"] for r in out.cv}
    assert ours == pytest.approx({k: np.mean(v) for k, v in naive.items()}, abs=1e-12)
    best = out.params
    assert out.extra["warm_path"] == {"C": [c for c in [0.1, 1.0] if c <= best["C"]]}
    upto = out.extra["warm_path"]["C"]
    final = CGENS(random_state=0).fit_warm_path(X, y, upto, [best["max_iter"]])[-1]
    final = final[best["max_iter"]]
    assert out.test_error == pytest.approx(np.mean(final.predict(Xt) != yt))


def test_warm_path_switched_off_fits_each_value_cold(data):
    from kernbench.methods.cgens import CGENS

    X, y, Xt, yt = data
    X, y = X[:90], y[:90]
    grid = {"C": [0.1, 1.0], "max_iter": [3, 10]}
    out = select_fit_score(
        CGENS(random_state=0, warm_path=False), grid, X, y, Xt, yt, cv_folds=3, cv_seed=2
    )
    assert "warm_path" not in out.extra
    folds = list(StratifiedKFold(n_splits=3, shuffle=True, random_state=2).split(X, y))
    points = [{"C": c, "max_iter": t} for c in grid["C"] for t in grid["max_iter"]]
    naive = _naive_cv(lambda **p: CGENS(random_state=0, **p), points, X, y, folds)
    ours = {tuple(sorted(r["params"].items())): r["mean_error"] for r in out.cv}
    assert ours == pytest.approx(naive, abs=1e-12)
