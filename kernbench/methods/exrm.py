"""ExRM: Exclusivity Regularized Machine (Guo, Wang & Ling, IJCAI 2017, Alg. 2).

C linear SVM components w_1 … w_C, trained jointly on problem (5)::

    min_{W,b}  ½ Σ_k (Σ_c |W_kc|)²  +  λ Σ_c Σ_i (1 − y_i(x_iᵀw_c + b_c))₊^p

by the augmented-Lagrangian scheme of Alg. 2 (numerical core:
:func:`kernbench.solvers.exrm_alm.exrm_alm`). The ensemble is the mean of the components,
w_e = (1/C)Σ_c w_c, b_e = (1/C)Σ_c b_c, and predicts sign(x ᵀw_e + b_e).

Problem (5) is convex and symmetric under permutations of the components, and Alg. 2 starts from
identical columns and keeps them identical, so the ensemble it returns is the primal SVM with λ/C
(:class:`kernbench.methods.psvm.PSVM` with ``lam = λ/C``); ``docs/methods/exrm.md`` derives this and
``docs/papers/exrm.md`` measures it.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, Options

from kernbench.methods.base import LinearPathClassifier
from kernbench.methods.registry import register
from kernbench.solvers.exrm_alm import exrm_alm


class ALMLinearEnsemble(LinearPathClassifier):
    """Shared fit/predict of ExRM and PSVM: Alg. 2 on C components, the mean as the model.

    Subclasses decide the number of components (``_components()``).
    """

    path_param: ClassVar[str] = "max_iter"

    _parameter_constraints: ClassVar[dict] = {
        "lam": [Interval(Real, 0, None, closed="neither")],
        "p": [Options(Integral, {1, 2})],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "rho": [Interval(Real, 1, None, closed="left")],
    }

    def _components(self) -> int:
        raise NotImplementedError

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any) -> ALMLinearEnsemble:
        """Run Alg. 2 on (X, y) (binary labels, any two values).

        Parameters
        ----------
        X : array-like of shape (N, M)
        y : array-like of shape (N,)

        Returns
        -------
        self
        """
        X, _, y_index = self._check_training_data(X, y, binary_only=True)
        y_pm = np.where(y_index == 1, 1.0, -1.0)  # +1 ↔ classes_[1]
        res = exrm_alm(
            X,
            y_pm,
            self._components(),
            float(self.lam),
            int(self.p),
            max_iter=int(self.max_iter),
            tol=float(self.tol),
            rho=float(self.rho),
        )
        self.components_ = res.W.T.copy()  # (C, M): w_c as rows
        self.component_intercepts_ = res.b.copy()
        self.coef_ = res.W.mean(axis=1)  # Alg. 2 output: the mean of the components
        self.intercept_ = float(res.b.mean())
        self.coef_path_ = res.coef_path
        self.intercept_path_ = res.intercept_path
        self.objective_ = res.objective
        self.n_iter_ = res.n_iter
        self.stop_reason_ = res.stop_reason
        self.trace_ = res.trace
        self.model_size_ = int(np.count_nonzero(res.W))
        return self


@register("exrm")
class ExRM(ALMLinearEnsemble):
    """Exclusivity Regularized Machine: C linear SVMs under the ℓ₁,₂ exclusivity regulariser.

    Parameters
    ----------
    n_components : int, default=10
        C, the number of base SVMs.
    lam : float, default=2.0
        λ, the weight of the loss in (5) (the paper's 2).
    p : {1, 2}, default=2
        1: hinge loss (L1-ExRM); 2: squared hinge loss (L2-ExRM).
    max_iter : int, default=500
        Cap on the ALM's outer iterations (the path parameter: every smaller cap in a grid is scored
        from one fit).
    tol : float, default=0.05
        Stop when the objective (5) changes by less than ``tol`` between iterations (the paper's
        0.05, absolute). 0 runs ``max_iter`` iterations.
    rho : float, default=1.1
        Growth factor of the ALM penalty μ (18) (the paper's 1.1; 1 keeps μ = 1 fixed, which
        converges to the optimum of (5) instead of stalling slightly above it).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    coef_ : ndarray of shape (M,)
        w_e, the mean of the components.
    intercept_ : float
        b_e.
    components_ : ndarray of shape (C, M)
    component_intercepts_ : ndarray of shape (C,)
    coef_path_, intercept_path_ : ndarray of shape (n_iter_, M) and (n_iter_,)
        The ensemble after each outer iteration.
    objective_ : float
        Problem (5) at the returned components.
    n_iter_ : int
    stop_reason_ : {"converged", "max_iter"}
    trace_ : dict of lists
        ``objective``, ``residual_pw`` (‖P − W‖_F), ``residual_e`` (‖E − Y + XᵀP + 1bᵀ‖_F), ``mu``
        and ``inner_iter`` (Alg. 1 sweeps) per outer iteration.
    model_size_ : int
        Non-zero entries of W.

    Notes
    -----
    Method, corrections to the printed algorithm and invariants: ``docs/methods/exrm.md``.

    See Also
    --------
    PSVM : the one-component case.
    DRM : linear SVMs made diverse by an angle-based penalty.
    BagSVM, AdaSVM : bagged and boosted linear SVMs.

    References
    ----------
    .. [1] X. Guo, X. Wang and H. Ling, "Exclusivity Regularized Machine: A New Ensemble SVM
       Classifier", Proc. Int. Joint Conf. on Artificial Intelligence (IJCAI), 2017:
       problem (5), its augmented-Lagrangian splitting (6)-(18), Algorithm 1 (the W
       solver) and Algorithm 2 (ExRM).

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(n_samples=60, random_state=0)
    >>> from kernbench.methods import ExRM
    >>> clf = ExRM(n_components=3).fit(X, y)
    >>> clf.classes_
    array([0, 1])
    >>> clf.decision_function(X[:5]).shape
    (5,)
    >>> clf.components_.shape
    (3, 20)
    >>> bool(clf.score(X, y) > 0.8)
    True
    """

    _parameter_constraints: ClassVar[dict] = {
        **ALMLinearEnsemble._parameter_constraints,
        "n_components": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(
        self,
        n_components: int = 10,
        lam: float = 2.0,
        p: int = 2,
        max_iter: int = 500,
        tol: float = 0.05,
        rho: float = 1.1,
    ) -> None:
        self.n_components = n_components
        self.lam = lam
        self.p = p
        self.max_iter = max_iter
        self.tol = tol
        self.rho = rho

    def _components(self) -> int:
        return int(self.n_components)
