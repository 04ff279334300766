"""PSVM: the primal linear SVM with hinge or squared hinge loss, solved by the ExRM ALM.

Problem (2) of Guo, Wang & Ling with Ψ(w) = ½‖w‖² and φ(x) = x::

    min_{w,b}  ½‖w‖²  +  λ Σ_i (1 − y_i(x_iᵀw + b))₊^p,      p ∈ {1, 2}

(the bias is not regularised). It is ExRM's problem (5) with one component, and the same
augmented-Lagrangian scheme solves it (:func:`kernbench.solvers.exrm_alm.exrm_alm` with C = 1; the
scheme is the SVM-ALM the paper cites for PSVM). ``docs/methods/exrm.md`` has the details.
"""

from __future__ import annotations

from typing import ClassVar

from kernbench.methods.exrm import ALMLinearEnsemble
from kernbench.methods.registry import register


@register("psvm")
class PSVM(ALMLinearEnsemble):
    """Primal L1-loss (p = 1) or L2-loss (p = 2) linear SVM with an unregularised bias.

    Parameters
    ----------
    lam : float, default=2.0
        λ, the weight of the loss (an SVM's C).
    p : {1, 2}, default=2
        1: hinge loss (L1-PSVM); 2: squared hinge loss (L2-PSVM).
    max_iter : int, default=500
        Cap on the ALM's outer iterations (the path parameter).
    tol : float, default=0.05
        Stop when the objective changes by less than ``tol`` (absolute) between iterations.
    rho : float, default=1.1
        Growth factor of the ALM penalty μ.

    Attributes
    ----------
    classes_, coef_ (w), intercept_ (b), objective_, n_iter_, stop_reason_, trace_, coef_path_,
    intercept_path_, model_size_ (non-zero weights) : as for :class:`kernbench.methods.exrm.ExRM`
    with one component.

    See Also
    --------
    ExRM : C linear SVMs under the exclusivity regulariser (PSVM is C = 1).
    BagSVM, AdaSVM : bagged and boosted PSVMs.
    DRM : linear ν-SVMs with a diversity penalty.

    References
    ----------
    .. [1] X. Guo, X. Wang and H. Ling, "Exclusivity Regularized Machine: A New Ensemble SVM
       Classifier", Proc. Int. Joint Conf. on Artificial Intelligence (IJCAI), 2017:
       problem (5) with one component, the L1- and L2-PSVM of Sec. 4.
    .. [2] F. Nie, Y. Huang, X. Wang and H. Huang, "New Primal SVM Solver with Linear Computational
       Cost for Big Data Classifications", Proc. Int. Conf. on Machine Learning (ICML), 2014.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(n_samples=60, random_state=0)
    >>> from kernbench.methods import PSVM
    >>> clf = PSVM().fit(X, y)
    >>> clf.classes_
    array([0, 1])
    >>> clf.decision_function(X[:5]).shape
    (5,)
    >>> clf.coef_.shape
    (20,)
    >>> bool(clf.score(X, y) > 0.8)
    True
    """

    _parameter_constraints: ClassVar[dict] = dict(ALMLinearEnsemble._parameter_constraints)

    def __init__(
        self,
        lam: float = 2.0,
        p: int = 2,
        max_iter: int = 500,
        tol: float = 0.05,
        rho: float = 1.1,
    ) -> None:
        self.lam = lam
        self.p = p
        self.max_iter = max_iter
        self.tol = tol
        self.rho = rho

    def _components(self) -> int:
        return 1
