"""DRM: Diversity Regularized Machine (Yu, Li & Zhou, IJCAI 2011), as reconstructed for kernbench.

T linear ν-SVMs trained together, each norm-bounded (‖w_t‖ ≤ 1), with a diversity penalty that
pushes their directions apart. kernbench solves the convex relaxation in which the pairwise cosine
cos(w_t, w_t') is replaced by ½‖w_t + w_t'‖² (equal, up to a constant, when both norms are 1)::

    min  Σ_t [ −ρ_t + (1/(νN)) Σ_i (ρ_t − y_i(w_tᵀx_i + b_t))₊ ]  +  μ Σ_{t<t'} ½‖w_t + w_t'‖²
    s.t. ‖w_t‖₂ ≤ 1,

by exact block-coordinate descent over the learners
(:func:`kernbench.solvers.drm_bcd.drm_bcd`), and predicts with the mean of the learners.

**What is reconstructed.** The DRM paper itself could not be read for this project; the formulation
is assembled from its abstract and introduction (an ensemble of SVMs under an explicit diversity
constraint in a mathematical-programming framework), from what the ExRM paper says of it (global
optimality needs ‖w_t‖ = 1 for every t, which often fails; its base learner is LIBSVM's ν-SVM; one
learner is ν-SVM) and from a secondary summary (angle-based diversity 1 − cos, a relaxation to
‖w_t + w_t'‖² under unit norms, per-learner alternating optimisation, averaged learners). The hinge
loss, the bias, ν = 0.5, μ = 1 and the linear kernel are kernbench's choices; the ExRM paper gives
no DRM settings. ``docs/methods/exrm.md`` has the derivation of the block solver.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval

from kernbench.methods.base import LinearPathClassifier
from kernbench.methods.registry import register
from kernbench.solvers.drm_bcd import DRMResult, drm_bcd, drm_objective
from kernbench.solvers.nu_floor import nu_floor_linear, only_trivial, usable_nu


@register("drm")
class DRM(LinearPathClassifier):
    """Diversity Regularized Machine (relaxed, linear): T norm-bounded ν-SVMs with a diversity term.

    Parameters
    ----------
    n_components : int, default=10
        T, the number of learners (1: a linear ν-SVM).
    nu : float, default=0.5
        ν of the ν-SVM loss. A ν above ν_max = 2·min(class counts)/N (where the problem is
        unbounded) is lowered to ν_max. A ν at or below ν_min, the smallest ν at which a ν-SVM on
        the data has a non-zero w (below it the class hulls reduced by ν overlap and the only
        optimum is W = 0, whose sign is rounding noise), is raised to ν_min + 0.1·(ν_max − ν_min)
        (:mod:`kernbench.solvers.nu_floor`). When ν_min = ν_max no ν has a non-trivial learner and
        the fit is the optimum W = 0 with the bias towards the larger class. ``nu_`` holds the ν
        used.
    mu : float, default=1.0
        Weight of the diversity penalty.
    max_iter : int, default=50
        Cap on block-coordinate sweeps (the path parameter).
    tol : float, default=1e-4
        Stop when a sweep changes the objective by less than ``tol``·max(1, |objective|).
    random_state : int, RandomState instance or None, default=None
        Seeds the random unit-norm initial learners.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    nu_ : float
        The ν used.
    nu_min_ : float
        ν_min on the training data (0 when every ν > 0 gives a non-trivial learner).
    components_ : ndarray of shape (T, M)
    component_intercepts_, margins_, norm_multipliers_ : ndarray of shape (T,)
        b_t, ρ_t and the multipliers λ_t of ‖w_t‖ ≤ 1.
    coef_, intercept_ : the mean learner (w̄, b̄); the decision is x ᵀw̄ + b̄.
    unit_norm_attained_ : bool
        Every λ_t > 0, i.e. every ‖w_t‖ = 1: only then does the relaxation solve the cosine problem.
    pairwise_cosines_ : ndarray of shape (T, T)
    objective_ : float
    n_iter_ : int
        Sweeps run.
    stop_reason_ : {"converged", "max_iter"}
    trace_ : dict of lists
        ``objective``, ``time_s``, ``min_norm``, ``max_cosine`` per sweep.
    coef_path_, intercept_path_ : the mean learner after each sweep.
    model_size_ : int
        T.

    See Also
    --------
    ExRM : linear SVMs made diverse by the exclusivity regulariser.
    PSVM : one primal linear SVM.

    References
    ----------
    .. [1] Y. Yu, Y.-F. Li and Z.-H. Zhou, "Diversity Regularized Machine", Proc. Int. Joint Conf.
       on Artificial Intelligence (IJCAI), 2011.
    .. [2] X. Guo, X. Wang and H. Ling, "Exclusivity Regularized Machine: A New Ensemble SVM
       Classifier", Proc. Int. Joint Conf. on Artificial Intelligence (IJCAI), 2017:
       the DRM baseline of Sec. 4 (Tables 1-3).

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(n_samples=60, random_state=0)
    >>> from kernbench.methods import DRM
    >>> clf = DRM(n_components=3, max_iter=10, random_state=0).fit(X, y)
    >>> clf.classes_
    array([0, 1])
    >>> clf.decision_function(X[:5]).shape
    (5,)
    >>> clf.components_.shape
    (3, 20)
    >>> bool(clf.score(X, y) > 0.8)
    True
    """

    path_param: ClassVar[str] = "max_iter"

    _parameter_constraints: ClassVar[dict] = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "nu": [Interval(Real, 0, 1, closed="right")],
        "mu": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_components: int = 10,
        nu: float = 0.5,
        mu: float = 1.0,
        max_iter: int = 50,
        tol: float = 1e-4,
        random_state: Any = None,
    ) -> None:
        self.n_components = n_components
        self.nu = nu
        self.mu = mu
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any) -> DRM:
        """Block-coordinate descent on the relaxed DRM problem.

        Parameters
        ----------
        X : array-like of shape (N, M)
        y : array-like of shape (N,), two classes

        Returns
        -------
        self
        """
        X, _, y_index = self._check_training_data(X, y, binary_only=True)
        y_pm = np.where(y_index == 1, 1.0, -1.0)
        # ν above 2·min(class counts)/N leaves the ν-SVM unbounded (LIBSVM refuses it): clip
        n_small = min(int(np.sum(y_index == 0)), int(np.sum(y_index == 1)))
        nu_max = 2.0 * n_small / X.shape[0]
        # ν at or below ν_min: the only optimum is W = 0 (every learner's ν-SVM is trivial)
        self.nu_min_ = nu_floor_linear(X, y_pm)
        self.nu_ = usable_nu(self.nu, self.nu_min_, nu_max)
        if only_trivial(self.nu_min_, nu_max):  # no ν gives a non-trivial learner
            res = _constant_solution(X, y_pm, int(self.n_components), nu_max)
        else:
            res = drm_bcd(
                X,
                y_pm,
                int(self.n_components),
                nu=self.nu_,
                mu=float(self.mu),
                max_sweeps=int(self.max_iter),
                tol=float(self.tol),
                rng=self._make_rng(),
            )
        self.components_ = res.W
        self.component_intercepts_ = res.b
        self.margins_ = res.rho
        self.norm_multipliers_ = res.lam
        self.coef_ = res.W.mean(axis=0)
        self.intercept_ = float(res.b.mean())
        norms = np.linalg.norm(res.W, axis=1)
        safe = np.where(norms > 0, norms, 1.0)
        U = res.W / safe[:, None]
        self.pairwise_cosines_ = U @ U.T
        self.unit_norm_attained_ = bool(np.all(res.lam > 0))
        self.objective_ = res.objective
        self.n_iter_ = res.n_sweeps
        self.stop_reason_ = res.stop_reason
        self.trace_ = res.trace
        self.coef_path_ = res.coef_path
        self.intercept_path_ = res.intercept_path
        self.model_size_ = int(self.n_components)
        return self


def _constant_solution(X: np.ndarray, y: np.ndarray, T: int, nu: float) -> DRMResult:
    """The optimum when no ν gives a non-trivial learner (ν_min = ν_max): W = 0 and, at
    ν = ν_max, ρ_t = 1 with b_t = ±1 towards the larger class (b_t = 0 on a tie), objective 0.

    With w = 0 the ν-SVM part is −ρ + (N_small·(ρ + |b|)₊ + N_large·(ρ − |b|)₊)/(νN) for b towards
    the larger class, which is 0 at ν = ν_max = 2·N_small/N for every ρ = |b| ≥ 0: the optimum
    that predicts the larger class.
    """
    M = X.shape[1]
    bias = float(np.sign(np.sum(y)))
    W = np.zeros((T, M))
    b = np.full(T, bias)
    rho = np.full(T, abs(bias))
    objective = drm_objective(X, y, W, b, rho, nu, 0.0)
    return DRMResult(
        W=W,
        b=b,
        rho=rho,
        lam=np.zeros(T),
        objective=objective,
        n_sweeps=1,
        stop_reason="converged",
        trace={
            "objective": [objective],
            "time_s": [0.0],
            "min_norm": [0.0],
            "max_cosine": [float("nan")],
        },
        coef_path=np.zeros((1, M)),
        intercept_path=np.array([bias]),
    )
