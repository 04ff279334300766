"""Result revisions: one versioned table of the changes that altered a method's results.

A cell's identity (:func:`kernbench.runner.plan.cells.cell_identity`) hashes the spec entries, the
data and the package version. When a change of a method's code changes its results for the same
parameters, the method gets a new :class:`Revision` here: the revision enters the identity of the
cells it applies to, so the runner refits those cells and keeps every other one.

Beside its revisions, every registered method names one fixed small fit (:func:`reference_values`:
its decision values on :func:`reference_data` with the method's ``reference_params``) and the
``tolerance`` within which that fit must reproduce on any machine. The recorded values live in
``tests/runner/plan/reference_values.json``; ``tests/runner/plan/test_revisions.py`` refits and
compares, so
a change of a method's numerics fails that test until the change is either undone or declared
here (a new revision when stored results are affected) and the values recorded again.

Why a tolerance and not a hash: the same code gives other last bits on another CPU, BLAS kernel or
library version (OpenBLAS picks its kernels at run time; numba compiles for the host CPU). A
method whose computation ends after a fixed, data-decided sequence of steps moves by rounding only
(:data:`ROUNDING`); a method that stops an iterative solver on a tolerance can stop a step sooner
or later, and moves by up to that solver's accuracy (:data:`LBFGSB_ACCURACY`).
"""

from __future__ import annotations

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


#: Relative tolerance (of the largest |value|) of a reference fit whose values move by rounding
#: alone from one machine to another: its steps (pricing, ratio tests, active-set changes, stopping
#: tests) decide the same way with a margin far above the last bit on this small problem. Across
#: OpenBLAS's Prescott, Haswell and SkylakeX kernels and numba's generic CPU, these fits moved by
#: at most 7e-13 relative; 1e-8 keeps four orders of magnitude of margin and still fails on any
#: change of the algorithm (a changed parameter moves the values by 1e-3 or more).
ROUNDING = 1e-8

#: Relative tolerance of a reference fit whose restricted problems L-BFGS-B solves (MultiBoost):
#: it stops on a relative objective decrease of ``ftol`` = 2.2e-9 or a projected gradient of 1e-5,
#: so another kernel's last bits can end it an iteration earlier or later, and its iterate is only
#: that accurate. Across the kernels above the values moved by up to 1.7e-6 relative (3e-5 of 17.9).
LBFGSB_ACCURACY = 1e-4

#: How far (percentage points of test error) a cell of a published page may move when rerun
#: under other numerics (``kernbench verify``; under the recorded numerics it must be identical).
#: Rounding can tip a near-tie the other way (two grid values with equal CV error, two columns
#: with equal edge) and the cell's model then differs. Measured on 1176 cells of the grand
#: comparison (84 per method) rerun under OpenBLAS's Haswell kernels, numpy without its AVX-512
#: paths and numba for a generic CPU, against the values computed natively on an AVX-512 machine:
#: BagSVM moved in 5 cells (at most 0.10 points), RFF-SVM in 1 (0.52), ten methods in none.
CELL_TOLERANCE = 1.0
#: CGENS: its pricing picks the best of thousands of stumps at each of 100 iterations, and the
#: pick follows last-bit differences of the edges; in the measurement above 47 of 84 cells moved,
#: 15 by more than a point, at most 3.85 (a model of the same method from other near-ties).
CGENS_CELL_TOLERANCE = 5.0
#: AdaBoost of trees (scikit-learn's): its reweighting's ``exp``/``log`` differ in the last bits
#: between numpy's AVX-512 and AVX2 paths, and a later tree can split elsewhere; 17 of 84 cells
#: moved, at most 1.70 points.
ADATREE_CELL_TOLERANCE = 2.5


@dataclass(frozen=True)
class MethodNumerics:
    """The revisions of one registered method and how its reference fit is checked.

    Attributes
    ----------
    revisions : tuple of Revision
        The changes that altered the method's stored results, oldest first.
    reference_params : dict
        Parameters of the reference fit (:func:`reference_values`).
    tolerance : float
        Largest allowed difference between a refit's values and the recorded ones, relative to
        the largest recorded |value| (at least 1): :data:`ROUNDING` or :data:`LBFGSB_ACCURACY`.
    cell_tolerance : float
        How far a published cell's test error may move on another kind of machine, in
        percentage points (:data:`CELL_TOLERANCE`).
    """

    revisions: tuple[Revision, ...] = ()
    reference_params: dict[str, Any] = field(default_factory=dict)
    tolerance: float = ROUNDING
    cell_tolerance: float = CELL_TOLERANCE


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


def _multiboost_lbfgsb(params: Params, grid: Grid) -> bool:
    return "lbfgsb" in _values(params, grid, "solver", "lbfgsb")


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

#: Every registered method: its result revisions and how its reference fit is checked.
REVISIONS: dict[str, MethodNumerics] = {
    "ada_svm": MethodNumerics(reference_params={"n_estimators": 2}),
    "ada_tree": MethodNumerics(
        reference_params={"n_estimators": 5}, cell_tolerance=ADATREE_CELL_TOLERANCE
    ),
    "adaboost": MethodNumerics(
        (
            Revision(1, "the RCD perceptron merges equal projections in a stable order"),
            Revision(2, _BINNED_SAMPLE, _binned_stumps("auto")),
        ),
        reference_params={"n_estimators": 10},
    ),
    "adaboost_ecc": MethodNumerics(reference_params={"n_estimators": 10}),
    "adaboost_mh": MethodNumerics(reference_params={"n_estimators": 10}),
    "adaboost_mo": MethodNumerics(reference_params={"n_estimators": 10}),
    "bag_svm": MethodNumerics(reference_params={"n_estimators": 5}),
    "bag_tree": MethodNumerics(reference_params={"n_estimators": 5}),
    "cgboost": MethodNumerics(_CGBOOST_REVISIONS, reference_params={"max_iter": 10}),
    "cgboost_regressor": MethodNumerics(
        (
            *_CGBOOST_REVISIONS,
            Revision(2, "the default penalty is the 1-norm (was the 2-norm)", _norm_unset),
        ),
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
        reference_params={"max_iter": 10},
        cell_tolerance=CGENS_CELL_TOLERANCE,
    ),
    "cgens_sls": MethodNumerics(reference_params={"max_iter": 10}),
    "drm": MethodNumerics(
        (
            Revision(
                1,
                "a ν at or below ν_min is raised into (ν_min, ν_max] (was the zero model, whose "
                "sign is rounding noise); with ν_min = ν_max the larger class",
            ),
        ),
        reference_params={},
    ),
    "exrm": MethodNumerics(reference_params={}),
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
        reference_params={"max_iter": 10},
    ),
    "multiboost": MethodNumerics(
        (
            Revision(
                1,
                "L-BFGS-B's products H W and Hᵀ U run through the stumps' sorted thresholds: "
                "equal to rounding, and its solves stop elsewhere within their tolerance",
                _multiboost_lbfgsb,
            ),
        ),
        reference_params={"max_iter": 10},
        tolerance=LBFGSB_ACCURACY,
    ),
    "multiboost_cw": MethodNumerics(reference_params={"max_iter": 10}),
    "psvm": MethodNumerics(reference_params={}),
    "rff_svm": MethodNumerics(reference_params={"n_components": 50}),
    "svm_gauss": MethodNumerics(reference_params={}),
    "svm_perc": MethodNumerics(reference_params={}),
    "svm_stump": MethodNumerics(reference_params={}),
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


def reference_values(estimator: str) -> np.ndarray:
    """``estimator``'s reference fit: its decision values (regressors: predictions) on the
    reference test points after a fit with its ``reference_params`` on :func:`reference_data`
    (three classes for a multi-class method; ``random_state`` 0 where the method has one),
    flattened to one float64 vector."""
    from kernbench.methods import get_method  # the runner imports the methods anyway

    cls = get_method(estimator)
    est = cls(**REVISIONS[estimator].reference_params)
    if "random_state" in est.get_params(deep=False):
        est.set_params(random_state=0)
    data = reference_data()
    tags = est.__sklearn_tags__()
    if tags.estimator_type == "regressor":
        out = est.fit(data["X"], data["y_reg"]).predict(data["X_test"])
    else:
        y = data["y3"] if tags.classifier_tags.multi_class else data["y"]
        out = est.fit(data["X"], y).decision_function(data["X_test"])
    return np.asarray(out, dtype=np.float64).ravel()


def reference_mismatch(estimator: str, recorded: np.ndarray) -> float:
    """How far a refit of ``estimator``'s reference fit is from ``recorded``, in units of its
    tolerance: the largest |difference| divided by ``tolerance · max(1, max |recorded|)``, so
    a value ≤ 1 passes (``inf`` when the shapes differ)."""
    values = reference_values(estimator)
    recorded = np.asarray(recorded, dtype=np.float64)
    if values.shape != recorded.shape:
        return float("inf")
    scale = max(1.0, float(np.max(np.abs(recorded), initial=0.0)))
    return float(np.max(np.abs(values - recorded), initial=0.0)) / (
        REVISIONS[estimator].tolerance * scale
    )


__all__ = [
    "CELL_TOLERANCE",
    "LBFGSB_ACCURACY",
    "REVISIONS",
    "ROUNDING",
    "MethodNumerics",
    "Revision",
    "reference_data",
    "reference_mismatch",
    "reference_values",
    "result_revision",
]
