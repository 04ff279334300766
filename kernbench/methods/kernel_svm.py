"""SVM-Stump, SVM-Perc and SVM-Gauss: C-SVMs with distance-based kernels
(docs/methods/infinite_ensembles.md).

Lin & Li (Sec. IV-V) show that an SVM with the simplified stump kernel −‖x − x′‖₁ (perceptron kernel
−‖x − x′‖₂) is an infinite ensemble of decision stumps (perceptrons). Both kernels are only
conditionally positive definite, so the dual MUST keep the bias equality Σ_i y_i λ_i = 0:
on that set λᵀ(yyᵀ ∘ Δ11ᵀ)λ = Δ(yᵀλ)² = 0, and the solution equals the one with the PSD kernel
Δ − ‖x − x′‖ (Theorems 2 and 5). libsvm's SMO (``sklearn.svm.SVC(kernel="precomputed")``) keeps that
equality on every pair step, which is why it is used here.

Every estimator splits the kernel into a hyper-parameter-free *base matrix* (pairwise distances,
computed once per realisation by the runner) and an elementwise map to the Gram matrix
(:class:`~kernbench.methods.base.PrecomputedKernelMixin`); ``fit`` on features takes the same path.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
from scipy.spatial.distance import cdist
from sklearn.base import _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import _libsvm as libsvm
from sklearn.utils._param_validation import Interval
from sklearn.utils.multiclass import _ovr_decision_function, check_classification_targets
from sklearn.utils.validation import check_array, check_is_fitted, column_or_1d, validate_data

from kernbench.methods.base import KernbenchClassifier, PrecomputedKernelMixin
from kernbench.methods.registry import register
from kernbench.solvers.threads import resolve_threads, run_blocks, useful_threads


def _too_large(what: str, *arrays: np.ndarray) -> str:
    big = max((float(np.max(np.abs(a))) for a in arrays if a.size), default=0.0)
    return (
        f"feature values too large: {what} overflow float64 (largest magnitude {big:.3g}); "
        "rescale the features, e.g. protocol.preprocess: minmax"
    )


def _float_matrix(K: Any) -> np.ndarray:
    """``K`` as a C-ordered float64 matrix of finite values (what ``check_array`` would accept
    and return for a dense array, without its data-frame probes: a Gram slice per fit)."""
    if not isinstance(K, np.ndarray):
        return check_array(K, dtype=np.float64, order="C")
    K = np.ascontiguousarray(K, dtype=np.float64)
    if K.ndim != 2:
        return check_array(K, dtype=np.float64, order="C")  # its error for a wrong shape
    if K.size == 0 or not np.isfinite(K).all():
        return check_array(K, dtype=np.float64, order="C")  # its error for NaN, inf, empty
    return K


class _LibsvmModel:
    """One C-SVC on a precomputed kernel, fitted and evaluated by scikit-learn's libsvm binding
    with exactly the arguments ``SVC(kernel="precomputed", C, tol, cache_size)`` passes it
    (``sklearn.svm._base.BaseLibSVM._dense_fit`` and ``_dense_decision_function``), so the
    model and its decision values are bitwise SVC's (``tests/methods/test_kernel_svm.py``
    compares them) without SVC's per-call input validation, which cost more than libsvm's own
    solve on most of Lin & Li's 550 problems per SVM-Gauss cell.

    Attributes mirror SVC's public ones: ``support_``, ``dual_coef_`` and ``intercept_`` (signs
    flipped for two classes, as SVC does), ``n_support_``, ``classes_``, ``n_iter_``.
    """

    def __init__(self) -> None:
        self.classes_: np.ndarray
        self.support_: np.ndarray
        self.n_support_: np.ndarray
        self.dual_coef_: np.ndarray
        self.intercept_: np.ndarray
        self.n_iter_: np.ndarray

    @classmethod
    def fit(
        cls, K: np.ndarray, codes: np.ndarray, classes: np.ndarray, *, C: float, tol: float,
        cache_size: float,
    ) -> _LibsvmModel:  # fmt: skip
        self = cls()
        self.classes_ = classes
        self._cache_size = cache_size
        # SVC draws libsvm's seed from the global RandomState (random_state=None); the seed only
        # matters with probability estimates, but drawing it keeps numpy's global stream as SVC
        # leaves it
        seed = np.random.mtrand._rand.randint(np.iinfo("i").max)
        libsvm.set_verbosity_wrap(0)
        (
            self.support_, self._support_vectors, self.n_support_, dual_coef, intercept,
            self._probA, self._probB, fit_status, self.n_iter_,
        ) = libsvm.fit(
            K, np.asarray(codes, dtype=np.float64, order="C"), svm_type=0,
            sample_weight=np.empty(0), class_weight=np.ones(classes.size), kernel="precomputed",
            C=C, nu=0.0, probability=False, degree=3, shrinking=True, tol=tol,
            cache_size=cache_size, coef0=0.0, gamma=0.0, epsilon=0.0, max_iter=-1,
            random_seed=seed,
        )  # fmt: skip
        if fit_status == 1:  # as SVC warns (only with a max_iter, which is never set here)
            warnings.warn("Solver terminated early.", ConvergenceWarning, stacklevel=3)
        if not (np.isfinite(intercept).all() and np.isfinite(dual_coef).all()):
            raise ValueError(
                "The dual coefficients or intercepts are not finite. The input data may contain "
                "large values and need to be preprocessed."
            )
        self._dual_coef = dual_coef  # libsvm's signs, what its decision function reads
        self._intercept = intercept.copy()
        binary = classes.size == 2
        self.dual_coef_ = -dual_coef if binary else dual_coef
        self.intercept_ = -intercept if binary else intercept
        return self

    def decision_function(self, K: np.ndarray) -> np.ndarray:
        """SVC's ``decision_function`` (``decision_function_shape="ovr"``) on a C-ordered float64
        test × train kernel matrix."""
        dec = libsvm.decision_function(
            K, self.support_, self._support_vectors, self.n_support_, self._dual_coef,
            self._intercept, self._probA, self._probB, svm_type=0, kernel="precomputed",
            degree=3, cache_size=self._cache_size, coef0=0.0, gamma=0.0,
        )  # fmt: skip
        if self.classes_.size == 2:
            return -dec.ravel()
        return _ovr_decision_function(dec < 0, -dec, self.classes_.size)


class _DistanceKernelSVM(PrecomputedKernelMixin, KernbenchClassifier):
    """C-SVM with bias on a precomputed kernel K = f(B), B a pairwise-distance matrix.

    Subclasses set ``_metric`` (a ``scipy.spatial.distance.cdist`` metric) and implement
    :meth:`gram_from_base`.
    """

    _metric: ClassVar[str] = ""

    _parameter_constraints: dict = {
        "C": [Interval(Real, 0.0, None, closed="neither")],
        "tol": [Interval(Real, 0.0, None, closed="neither")],
        "cache_size": [Interval(Real, 0.0, None, closed="neither")],
        "delta": [Interval(Real, None, None, closed="neither")],
        "n_jobs": [Integral, None],
    }

    # ------------------------------------------------------------------ kernel
    def base_matrix(self, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
        """Pairwise distances between the rows of ``X`` (n, D) and ``Y`` (p, D): shape (n, p).

        Blocks of rows of ``X`` go to ``n_jobs`` threads (scipy's ``cdist`` releases the GIL);
        every distance is computed as in one thread, so B is bitwise the same.

        Raises
        ------
        ValueError
            When a distance overflows float64 (features near the largest double).
        """
        X, Y = np.asarray(X, dtype=np.float64), np.asarray(Y, dtype=np.float64)
        B = np.empty((X.shape[0], Y.shape[0]))
        metric = self._metric

        def rows(lo: int, hi: int) -> None:
            with np.errstate(over="ignore", invalid="ignore"):
                cdist(X[lo:hi], Y, metric, out=B[lo:hi])

        threads = resolve_threads(self.n_jobs)
        run_blocks(rows, X.shape[0], useful_threads(threads, B.size * max(X.shape[1], 1)))
        if not np.isfinite(B).all():
            raise ValueError(_too_large(f"the pairwise {self._metric} distances", X, Y))
        return B

    # ------------------------------------------------------------------ Gram path
    @_fit_context(prefer_skip_nested_validation=True)
    def fit_gram(self, K: Any, y: Any) -> _DistanceKernelSVM:
        """Fit on a train × train Gram matrix ``K`` (from :meth:`gram_from_base`).

        After this only the ``*_gram`` methods predict (no training inputs are known).
        """
        self._fit_kernel(K, y)
        self.X_fit_ = None
        return self

    def _fit_kernel(self, K: Any, y: Any) -> None:
        K = _float_matrix(K)
        y = column_or_1d(y, warn=True)
        if y.dtype.kind not in "biuUS":  # labels of these kinds are class labels already
            check_classification_targets(y)  # floats: not continuous; objects: not mixed
        if K.shape[0] != K.shape[1] or K.shape[0] != y.shape[0]:
            raise ValueError(f"Gram matrix of shape {K.shape} does not match {y.shape[0]} labels")
        classes, codes = np.unique(y, return_inverse=True)
        if classes.size < 2:
            raise ValueError(f"SVM needs at least 2 classes in y; got {classes.size} class.")
        self.svc_ = _LibsvmModel.fit(K, codes, classes, C=self.C, tol=self.tol,
                                     cache_size=self.cache_size)  # fmt: skip
        self.classes_ = classes
        self.n_train_ = K.shape[0]
        self.support_ = self.svc_.support_
        self.dual_coef_ = self.svc_.dual_coef_  # y_i λ_i of the support vectors
        self.intercept_ = self.svc_.intercept_
        self.model_size_ = int(self.support_.size)

    def decision_function_gram(self, K: Any) -> np.ndarray:
        """Decision values from a test × train Gram matrix ``K`` (shape (n, n_train)).

        Binary: shape (n,), Σ_i y_i λ_i K(x_i, x) + b, positive ↔ ``classes_[1]``;
        multi-class: libsvm's one-vs-one machines aggregated to shape (n, n_classes).
        """
        check_is_fitted(self)
        K = _float_matrix(K)
        if K.shape[1] != self.n_train_:
            raise ValueError(f"Gram matrix has {K.shape[1]} columns; the fit had {self.n_train_}")
        with np.errstate(over="ignore", invalid="ignore"):
            dec = self.svc_.decision_function(K)
        if not np.isfinite(dec).all():  # Σ y_i λ_i K(x_i, x) can overflow for huge kernels
            raise ValueError(_too_large("the decision values Σ y_i λ_i K(x_i, x) + b", K))
        return dec

    # ------------------------------------------------------------------ feature path
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any) -> _DistanceKernelSVM:
        """Fit on features: K = gram_from_base(base_matrix(X, X)), then :meth:`fit_gram`.

        Parameters
        ----------
        X : array-like of shape (m, D)
        y : array-like of shape (m,)

        Returns
        -------
        self
        """
        X, y = validate_data(self, X, y, dtype=np.float64)
        self._fit_kernel(self.gram_from_base(self.base_matrix(X, X)), y)
        self.X_fit_ = X
        return self

    def decision_function(self, X: Any) -> np.ndarray:
        """Decision values on features (see :meth:`decision_function_gram`)."""
        check_is_fitted(self)
        if self.X_fit_ is None:
            raise ValueError(
                f"{type(self).__name__} was fitted with fit_gram; use decision_function_gram"
            )
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return self.decision_function_gram(self.gram_from_base(self.base_matrix(X, self.X_fit_)))

    def predict(self, X: Any) -> np.ndarray:
        """Labels: sign of the decision value (binary, sign(0) = +1) or its argmax."""
        return self._labels_from_decision(self.decision_function(X))


class _NegativeDistanceSVM(_DistanceKernelSVM):
    """The simplified distance kernels K = Δ − B of Lin & Li (Δ shifts change nothing)."""

    kernel_params = ("delta",)

    def __init__(
        self,
        C: float = 1.0,
        *,
        tol: float = 1e-3,
        cache_size: float = 200,
        delta: float = 0.0,
        n_jobs: int | None = None,
    ) -> None:
        self.C = C
        self.tol = tol
        self.cache_size = cache_size
        self.delta = delta
        self.n_jobs = n_jobs

    def gram_from_base(self, B: np.ndarray) -> np.ndarray:
        """K = Δ − B with B the pairwise distances of ``_metric``."""
        return self.delta - B


@register("svm_stump")
class SVMStump(_NegativeDistanceSVM):
    """SVM-Stump: C-SVM with the simplified stump kernel K(x, x′) = Δ − ‖x − x′‖₁.

    An infinite ensemble of decision stumps (Lin & Li Sec. IV); Δ = 0 is the simplified kernel and
    any Δ gives the same classifier (Theorem 2).

    Parameters
    ----------
    C : float, default=1.0
        Soft-margin parameter.
    tol : float, default=1e-3
        libsvm stopping tolerance.
    cache_size : float, default=200
        libsvm kernel cache (MB).
    delta : float, default=0.0
        Constant Δ added to the kernel (for invariance checks; Δ_S = ½ Σ_d (R_d − L_d)).
    n_jobs : int or None, default=None
        Threads of the distance-matrix build (scikit-learn's convention: −1 all cores, None the
        process default); the matrix is the same for any value.

    Attributes
    ----------
    classes_, support_, dual_coef_, intercept_, svc_ : as in ``sklearn.svm.SVC``
    model_size_ : int
        Number of support vectors.
    X_fit_ : ndarray or None
        Training inputs (to build the test Gram); None after :meth:`fit_gram`.

    See Also
    --------
    SVMPerc : the SVM with the perceptron kernel.
    SVMGauss : the SVM with the Gaussian kernel.
    AdaBoost : a finite, sparse ensemble of the same stumps.

    References
    ----------
    .. [1] H.-T. Lin and L. Li, "Novel Distance-Based SVM Kernels for Infinite Ensemble Learning",
       Proc. 12th Int. Conf. on Neural Information Processing (ICONIP), 2005:
       the dual (P2), the stump kernel (Definition 2, Sec. IV) and Theorem 2 (any Δ
       gives the same classifier).

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(n_samples=60, random_state=0)
    >>> from kernbench.methods import SVMStump
    >>> clf = SVMStump(C=1.0).fit(X, y)
    >>> clf.classes_
    array([0, 1])
    >>> clf.decision_function(X[:5]).shape
    (5,)
    >>> bool(clf.score(X, y) > 0.8)
    True
    """

    _metric = "cityblock"  # K = Δ − ‖x − x′‖₁: Definition 2 / Theorem 2


@register("svm_perc")
class SVMPerc(_NegativeDistanceSVM):
    """SVM-Perc: C-SVM with the simplified perceptron kernel K(x, x′) = Δ − ‖x − x′‖₂.

    An infinite ensemble of perceptrons (Lin & Li Sec. V); any Δ gives the same classifier
    (Theorem 5). Attributes as :class:`SVMStump`.

    Parameters
    ----------
    C : float, default=1.0
        Soft-margin parameter.
    tol, cache_size, delta : float
        As in :class:`SVMStump`.
    n_jobs : int or None, default=None
        As in :class:`SVMStump`.

    See Also
    --------
    SVMStump : the SVM with the stump kernel.
    SVMGauss : the SVM with the Gaussian kernel.
    AdaBoost : with ``weak_learner="perceptron"``, a finite ensemble of perceptrons.

    References
    ----------
    .. [1] H.-T. Lin and L. Li, "Novel Distance-Based SVM Kernels for Infinite Ensemble Learning",
       Proc. 12th Int. Conf. on Neural Information Processing (ICONIP), 2005:
       the perceptron kernel (Definition 3, Sec. V) and Theorem 5 (the simplified
       kernel gives the same classifier).

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(n_samples=60, random_state=0)
    >>> from kernbench.methods import SVMPerc
    >>> clf = SVMPerc(C=1.0).fit(X, y)
    >>> clf.classes_
    array([0, 1])
    >>> clf.decision_function(X[:5]).shape
    (5,)
    >>> bool(clf.score(X, y) > 0.8)
    True
    """

    _metric = "euclidean"  # K = Δ − ‖x − x′‖₂: Definition 3 / Theorem 5


@register("svm_gauss")
class SVMGauss(_DistanceKernelSVM):
    """SVM-Gauss: C-SVM with the Gaussian kernel K(x, x′) = exp(−γ‖x − x′‖²) + Δ.

    Parameters
    ----------
    C : float, default=1.0
    gamma : float, default=1.0
        Kernel width γ > 0.
    tol, cache_size, delta : float
        As in :class:`SVMStump` (Δ = 0 is the plain Gaussian kernel).
    n_jobs : int or None, default=None
        As in :class:`SVMStump`.

    See Also
    --------
    SVMStump : the SVM with the stump kernel.
    SVMPerc : the SVM with the perceptron kernel.
    RFFSVM : a linear SVM on random features approximating this kernel.

    References
    ----------
    .. [1] H.-T. Lin and L. Li, "Novel Distance-Based SVM Kernels for Infinite Ensemble Learning",
       Proc. 12th Int. Conf. on Neural Information Processing (ICONIP), 2005:
       the Gaussian-kernel comparison of Sec. VI-B, through the dual (P2).

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(n_samples=60, random_state=0)
    >>> from kernbench.methods import SVMGauss
    >>> clf = SVMGauss(C=1.0, gamma=0.1).fit(X, y)
    >>> clf.classes_
    array([0, 1])
    >>> clf.decision_function(X[:5]).shape
    (5,)
    >>> bool(clf.score(X, y) > 0.8)
    True
    """

    _metric = "sqeuclidean"
    kernel_params = ("gamma", "delta")

    _parameter_constraints: dict = {
        **_DistanceKernelSVM._parameter_constraints,
        "gamma": [Interval(Real, 0.0, None, closed="neither")],
    }

    def __init__(
        self,
        C: float = 1.0,
        *,
        gamma: float = 1.0,
        tol: float = 1e-3,
        cache_size: float = 200,
        delta: float = 0.0,
        n_jobs: int | None = None,
    ) -> None:
        self.C = C
        self.gamma = gamma
        self.tol = tol
        self.cache_size = cache_size
        self.delta = delta
        self.n_jobs = n_jobs

    def gram_from_base(self, B: np.ndarray) -> np.ndarray:
        """K = exp(−γ B) + Δ with B the pairwise squared Euclidean distances."""
        return np.exp(-self.gamma * B) + self.delta
