"""Simplex label coding and the closed-form SLS-SVM solution (CGENS paper Sec. V, App. A).

K = l + 1 classes are coded by the K vertices c_1..c_K of a regular simplex centred at the origin of
R^l: unit vectors with pairwise inner products -1/l (docs/methods/column_generation.md). The
simplex least-squares SVM (10) regresses these codes on the features; its solution (11) needs only
S⁻¹ = (HᵀH + C⁻¹I)⁻¹ applied to L and to 1, which :mod:`kernbench.solvers.incremental_inverse`
maintains per column.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def simplex_code(n_classes: int) -> np.ndarray:
    """The simplex code vectors c_1..c_K as the columns of an (l, K) matrix, l = K − 1.

    Recursive construction: C_2 = [1, −1] and
    C_{k+1} = [[1, −(1/k)·1ᵀ], [0, √(1 − 1/k²)·C_k]].

    Parameters
    ----------
    n_classes : int
        K ≥ 2.

    Returns
    -------
    ndarray of shape (K - 1, K)
        Unit columns, pairwise inner products −1/(K − 1), summing to the zero vector.
    """
    if n_classes < 2:
        raise ValueError(f"simplex coding needs at least 2 classes, got {n_classes}")
    codes = np.array([[1.0, -1.0]])
    for k in range(2, n_classes):
        top = np.concatenate(([1.0], np.full(k, -1.0 / k)))
        bottom = np.hstack((np.zeros((k - 1, 1)), np.sqrt(1.0 - 1.0 / k**2) * codes))
        codes = np.vstack((top, bottom))
    return codes


def simplex_labels(y_index: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """The label matrix L ∈ R^{m×l} whose row i is c_{y_i}ᵀ.

    Parameters
    ----------
    y_index : ndarray of int, shape (m,)
        Class indices in 0..K−1.
    codes : ndarray of shape (l, K)
        From :func:`simplex_code`.
    """
    return np.ascontiguousarray(codes[:, y_index].T)


@dataclass(frozen=True)
class SLSSolution:
    """The solution (11) of the simplex least-squares SVM (10) on fixed columns.

    Attributes
    ----------
    b : ndarray of shape (l,)
        Biases, b = ((1ᵀS⁻¹L)/(1ᵀS⁻¹1))ᵀ.
    U : ndarray of shape (m, l)
        Dual variables, U = S⁻¹(L − 1bᵀ); residuals O = C⁻¹U (18c).
    W : ndarray of shape (J, l)
        Weights, W = HU (18a), with H ∈ R^{J×m}.
    objective : float
        ½‖W‖²_F + (C/2)‖O‖²_F, the value of (10).
    """

    b: np.ndarray
    U: np.ndarray
    W: np.ndarray
    objective: float


def sls_closed_form(
    S_inv_L: np.ndarray, S_inv_1: np.ndarray, H: np.ndarray, C: float
) -> SLSSolution:
    """Assemble (11) from S⁻¹L and S⁻¹1.

    Parameters
    ----------
    S_inv_L : ndarray of shape (m, l)
        S⁻¹L with S = HᵀH + C⁻¹I_m.
    S_inv_1 : ndarray of shape (m,)
        S⁻¹1.
    H : ndarray of shape (J, m)
        Weak-learner responses on the training set, one row per learner (J may be 0).
    C : float
        Regularisation parameter of (10).
    """
    b = S_inv_L.sum(axis=0) / S_inv_1.sum()  # (11): b = (1ᵀS⁻¹L / 1ᵀS⁻¹1)ᵀ
    U = S_inv_L - np.outer(S_inv_1, b)  # (11): U = S⁻¹(L − 1bᵀ)
    W = H @ U  # (11) / (18a): w_τ = H U_{:τ}
    objective = 0.5 * float(np.sum(W * W)) + 0.5 / C * float(np.sum(U * U))  # (10) with O = U/C
    return SLSSolution(b=b, U=U, W=W, objective=objective)
