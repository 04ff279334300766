"""Result revisions: one versioned table of the changes that altered a method's results.

A cell's identity (:func:`kernbench.runner.plan.cell_identity`) hashes the spec entries, the data
and the package version. When a change of a method's code changes its results for the same
parameters, the method gets a new :class:`Revision` here: the revision enters the identity of the
cells it applies to, so the runner refits those cells and keeps every other one.

Beside its revisions, every registered method records ``digest``: a digest of the decision values
of one fixed small fit (:func:`reference_digest`, on :func:`reference_data`, with the method's
``reference_params``). ``tests/runner/test_revisions.py`` recomputes it, so a change of a method's
numerics fails that test until the change is either undone or declared here: a new revision when
stored results are affected, and the new digest.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

Params = Mapping[str, Any]
Grid = Mapping[str, list[Any]]


def _always(params: Params, grid: Grid) -> bool:
    return True


def _values(params: Params, grid: Grid, name: str, default: Any) -> list[Any]:
    """Every value ``name`` takes in a method entry: its grid, else its fixed value (or default)."""
    return list(grid[name]) if name in grid else [params.get(name, default)]


@dataclass(frozen=True)
class Revision:
    """One change of a method's results.

    Attributes
    ----------
    number : int
        The revision; a cell's revision is the largest number among those that apply to it.
    reason : str
        What changed in the results.
    applies : callable
        ``applies(params, grid)``: whether the change touches a method entry with these fixed
        parameters and grid (default: every entry).
    """

    number: int
    reason: str
    applies: Callable[[Params, Grid], bool] = _always


@dataclass(frozen=True)
class MethodNumerics:
    """The revisions of one registered method and the digest of its reference fit."""

    revisions: tuple[Revision, ...] = ()
    digest: str = ""
    reference_params: dict[str, Any] = field(default_factory=dict)


def _cgboost_gap_rule(params: Params, grid: Grid) -> bool:
    norms = _values(params, grid, "norm", "l2")
    tols = _values(params, grid, "tol", None)
    return "l2" in norms and any(t is None for t in tols)


def _norm_unset(params: Params, grid: Grid) -> bool:
    return "norm" not in params and "norm" not in grid


def _cgens_exact_bias(params: Params, grid: Grid) -> bool:
    return "exact" in _values(params, grid, "bias_mode", "exact")


def _cgens_warm_path(params: Params, grid: Grid) -> bool:
    return len(grid.get("C", [])) > 1 and True in _values(params, grid, "warm_path", True)


def _cgens_capped_path(params: Params, grid: Grid) -> bool:
    # capped solves on the path (path_inner_epochs, or solver_inner_epochs, which takes
    # precedence): every stage is now completed
    capped = any(
        v is not None
        for name, default in (("path_inner_epochs", 1), ("solver_inner_epochs", None))
        for v in _values(params, grid, name, default)
    )
    return _cgens_warm_path(params, grid) and capped


def _lpboost_c_form(params: Params, grid: Grid) -> bool:
    return any(c is not None for c in _values(params, grid, "C", None))


def _lpboost_nu_form(params: Params, grid: Grid) -> bool:
    return any(c is None for c in _values(params, grid, "C", None))


def _binned_stumps(default: Any) -> Callable[[Params, Grid], bool]:
    """Entries that may search stumps binned: a stump weak learner and some ``max_bins`` not
    None (``default``: the method's own)."""

    def applies(params: Params, grid: Grid) -> bool:
        stumps = "stump" in _values(params, grid, "weak_learner", "stump")
        return stumps and any(b is not None for b in _values(params, grid, "max_bins", default))

    return applies


_BINNED_SAMPLE = (
    "the binned stump search takes its cuts from a fixed 200 000-row sample and adds its "
    "histograms over fixed chunks of rows"
)


_CGBOOST_REVISIONS = (
    Revision(
        1,
        "the 2-norm's default TR2 threshold is relative to the full problem's duality gap "
        "(2-norm cells with the default tol)",
        _cgboost_gap_rule,
    ),
)

#: Every registered method: its result revisions and the digest of its reference fit.
REVISIONS: dict[str, MethodNumerics] = {
    "ada_svm": MethodNumerics(digest="f0052ec6c87b2607", reference_params={"n_estimators": 2}),
    "ada_tree": MethodNumerics(digest="bc3b5311ce40d604", reference_params={"n_estimators": 5}),
    "adaboost": MethodNumerics(
        (
            Revision(1, "the RCD perceptron merges equal projections in a stable order"),
            Revision(2, _BINNED_SAMPLE, _binned_stumps("auto")),
        ),
        digest="384acb2d7ba9de52",
        reference_params={"n_estimators": 10},
    ),
    "adaboost_ecc": MethodNumerics(
        digest="fc37ac9aa2057909", reference_params={"n_estimators": 10}
    ),
    "adaboost_mh": MethodNumerics(digest="4d646a016cde986e", reference_params={"n_estimators": 10}),
    "adaboost_mo": MethodNumerics(digest="619ac274f67f4bec", reference_params={"n_estimators": 10}),
    "bag_svm": MethodNumerics(digest="623570600b6a4729", reference_params={"n_estimators": 5}),
    "bag_tree": MethodNumerics(digest="ff063c542862a854", reference_params={"n_estimators": 5}),
    "cgboost": MethodNumerics(
        _CGBOOST_REVISIONS, digest="6935ecd1b5dc9a8a", reference_params={"max_iter": 10}
    ),
    "cgboost_regressor": MethodNumerics(
        (
            *_CGBOOST_REVISIONS,
            Revision(2, "the default penalty is the 1-norm (was the 2-norm)", _norm_unset),
        ),
        digest="b1f6701f0837490c",
        reference_params={"max_iter": 10},
    ),
    "cgens": MethodNumerics(
        (
            Revision(1, "the exact-bias SMO's face steps follow zero-curvature rays"),
            Revision(
                2,
                "the exact-bias SMO shrinks its active set every 1000 pair updates",
                _cgens_exact_bias,
            ),
            Revision(
                3,
                "the exact-bias SMO shrinks its active set every 20 pair updates (LIBSVM's)",
                _cgens_exact_bias,
            ),
            Revision(
                4,
                "model selection fits a grid's values of C along one warm-started path per fold",
                _cgens_warm_path,
            ),
            Revision(
                5,
                "the path along C caps its intermediate restricted solves at m pair updates "
                "(every stage's model solved to tolerance)",
                _cgens_capped_path,
            ),
            Revision(6, _BINNED_SAMPLE, _binned_stumps(None)),
        ),
        digest="d0b7a7314f46076f",
        reference_params={"max_iter": 10},
    ),
    "cgens_sls": MethodNumerics(digest="d5921fb4a66eec05", reference_params={"max_iter": 10}),
    "drm": MethodNumerics(
        (
            Revision(
                1,
                "a ν at or below ν_min is raised into (ν_min, ν_max] (was the zero model, whose "
                "sign is rounding noise); with ν_min = ν_max the larger class",
            ),
        ),
        digest="bb2753a75bfa442b",
        reference_params={},
    ),
    "exrm": MethodNumerics(digest="45d5d0e257ed6733", reference_params={}),
    "lpboost": MethodNumerics(
        (
            Revision(1, "C=None runs the ν-LP (was the C-form with C = 1/(νm))"),
            Revision(2, "the ν-master stores ±1 columns sparsely: other optimal duals"),
            Revision(3, "the ν-LP held as its dual (cut rows, dual simplex): other optimal duals"),
            Revision(4, "the C-form (4) held as its dual (5), grown by cuts", _lpboost_c_form),
            Revision(5, _BINNED_SAMPLE, _binned_stumps(None)),
            Revision(
                6,
                "the ν-form raises a ν at or below ν_min into (ν_min, 1] (was an optimum of "
                "value 0, whose ensemble predicts by rounding noise or one class)",
                _lpboost_nu_form,
            ),
        ),
        digest="c4b37f0a531a5b60",
        reference_params={"max_iter": 10},
    ),
    "multiboost": MethodNumerics(digest="b1526a321dd5d1e3", reference_params={"max_iter": 10}),
    "multiboost_cw": MethodNumerics(digest="e438932acc398b75", reference_params={"max_iter": 10}),
    "psvm": MethodNumerics(digest="534ab6ca6785534c", reference_params={}),
    "rff_svm": MethodNumerics(digest="d5e35602b9895812", reference_params={"n_components": 50}),
    "svm_gauss": MethodNumerics(digest="38cc332b7e40ff43", reference_params={}),
    "svm_perc": MethodNumerics(digest="06d9a69486cd1320", reference_params={}),
    "svm_stump": MethodNumerics(digest="b1532ecfc2db3eb6", reference_params={}),
}


def result_revision(estimator: str, params: Params, grid: Grid) -> int:
    """The result revision of a method entry: the largest revision of ``estimator`` that applies
    to these fixed ``params`` and ``grid`` (0 when none does, or the method has none)."""
    entry = REVISIONS.get(estimator)
    if entry is None:
        return 0
    return max((r.number for r in entry.revisions if r.applies(params, grid)), default=0)


def reference_data() -> dict[str, np.ndarray]:
    """The fixed small problem of the reference fits.

    40 training points ``X`` in R³ (fixed seed) with a noisy linear score: binary labels ``y``
    (its sign), three-class labels ``y3`` (its terciles) and real targets ``y_reg`` (the score);
    20 test points ``X_test``.
    """
    rng = np.random.default_rng(20240517)
    X = rng.standard_normal((60, 3))
    score = X @ np.array([1.0, -0.7, 0.4]) + 0.5 * rng.standard_normal(60)
    y3 = np.digitize(score, np.quantile(score[:40], [1 / 3, 2 / 3]))
    return {
        "X": X[:40],
        "y": np.where(score[:40] > 0, 1, 0),
        "y3": y3[:40],
        "y_reg": score[:40],
        "X_test": X[40:],
    }


def reference_digest(estimator: str) -> str:
    """Digest of ``estimator``'s decision values (regressors: predictions) on the reference test
    points after a fit with its ``reference_params`` on :func:`reference_data` (three classes for
    a multi-class method; ``random_state`` 0 where the method has one); values rounded to 8
    decimals, sha256, first 16 hex digits."""
    from kernbench.methods import get_method  # the runner imports the methods anyway

    cls = get_method(estimator)
    params = dict(REVISIONS[estimator].reference_params)
    est = cls(**params)
    if "random_state" in est.get_params(deep=False):
        est.set_params(random_state=0)
    data = reference_data()
    tags = est.__sklearn_tags__()
    if tags.estimator_type == "regressor":
        out = est.fit(data["X"], data["y_reg"]).predict(data["X_test"])
    else:
        y = data["y3"] if tags.classifier_tags.multi_class else data["y"]
        out = est.fit(data["X"], y).decision_function(data["X_test"])
    values = np.round(np.asarray(out, dtype=np.float64), 8) + 0.0  # + 0.0: no −0.0
    return hashlib.sha256(values.tobytes()).hexdigest()[:16]


__all__ = [
    "REVISIONS",
    "MethodNumerics",
    "Revision",
    "reference_data",
    "reference_digest",
    "result_revision",
]
