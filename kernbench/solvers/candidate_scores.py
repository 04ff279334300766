"""Scores of P sampled weak-learner candidates in one pass (the sampled oracles' hot path).

For candidates h_p(x) = φ(θ_pᵀx − κ_p), p = 1..P, and signed sample weights g, the oracle needs

    s_p = Σ_i g_i φ(z_ip − κ_p),    Z = XΘ  (m × P, one BLAS product),

for φ = cos (Fourier features) or φ = sign with sign(0) = +1 (perceptrons). numpy evaluates
``np.cos`` on float64 one element at a time through the C library (tens of ns each), which made
the m × P cosines the whole cost of a Fourier oracle call. The kernels here fuse φ and the
weighted column sums into one compiled pass over Z whose inner loop runs along the P candidates
(contiguous), so it vectorises; the cosine is evaluated branch-free as below.

Cosine: x = k·π/2 + r with k = rint(2x/π) and |r| ≤ π/4, the reduction done in three parts
(Cody–Waite, the constants of fdlibm's ``__ieee754_rem_pio2``, exact for |k| < 2²⁰), then the
minimax polynomials of fdlibm's ``__kernel_sin`` / ``__kernel_cos`` on r and the quadrant
k mod 4 picks ±sin r or ±cos r. The result is within a few units in the last place of the
C library's cosine for |x| ≤ :data:`COS_ARG_LIMIT`; larger arguments use ``np.cos`` instead.
The sums run in a different order than the BLAS matrix–vector product they replace, so the
scores agree with the previous ones to rounding (relative 1e-15), and the chosen candidate is
the same except for candidates tied to that precision.

Z is formed a block of rows at a time, each block small enough to stay in the core's L2 cache
(:data:`L2_ENTRIES`) while the compiled pass reads it: the m × P matrix is never written to and
read back from memory (20 MB at m = 1300, P = 2000). A row of XΘ is the same whether the product
is formed whole or by rows (the BLAS kernel sums each entry over the D features in order), and the
pass adds the rows into the scores in the same order either way, so the blocking changes no bit
of the scores (tested).
"""

from __future__ import annotations

import numba
import numpy as np

#: the polynomial cosine is used for |x| up to this (its argument reduction is exact below ~1.6e6)
COS_ARG_LIMIT = 1.0e5
#: Z = XΘ is formed a block of rows at a time, of about this many entries (512 KB: in L2)
L2_ENTRIES = 65_536
#: the C library's cosine (huge arguments) runs on blocks of up to this many candidate entries
BLOCK_ENTRIES = 4_000_000

_TWO_OVER_PI = 6.36619772367581382433e-01
_PIO2_1 = 1.57079632673412561417e00  # first 33 bits of π/2
_PIO2_2 = 6.07710050630396597660e-11  # next 33 bits
_PIO2_3 = 2.02226624871116645580e-21  # the rest
_S1, _S2, _S3 = -1.66666666666666324348e-01, 8.33333333332248946124e-03, -1.98412698298579493134e-04
_S4, _S5, _S6 = 2.75573137070700676789e-06, -2.50507602534068634195e-08, 1.58969099521155010221e-10
_C1, _C2, _C3 = 4.16666666666666019037e-02, -1.38888888888741095749e-03, 2.48015872894767294178e-05
_C4, _C5, _C6 = -2.75573143513906633035e-07, 2.08757232129817482790e-09, -1.13596475577881948265e-11


@numba.njit(cache=True, inline="always", fastmath={"contract"})
def _cos(x):  # pragma: no cover - numba
    """cos(x) for |x| ≤ COS_ARG_LIMIT, branch-free (see the module docstring)."""
    fn = np.rint(x * _TWO_OVER_PI)
    r = ((x - fn * _PIO2_1) - fn * _PIO2_2) - fn * _PIO2_3  # x − k·π/2, |r| ≤ π/4
    z = r * r
    sin_r = r + r * z * (_S1 + z * (_S2 + z * (_S3 + z * (_S4 + z * (_S5 + z * _S6)))))
    cos_r = 1.0 - 0.5 * z + z * z * (_C1 + z * (_C2 + z * (_C3 + z * (_C4 + z * (_C5 + z * _C6)))))
    q = np.int64(fn) & 3
    value = sin_r if q & 1 else cos_r  # quadrants 1, 3: ∓sin r; 0, 2: ±cos r
    return value if ((q + 1) & 2) == 0 else -value


@numba.njit(cache=True, fastmath={"contract"})
def cos_column_sums(Z, kappa, g, out):  # pragma: no cover - numba
    """out[p] += Σ_i g_i cos(Z[i, p] − kappa[p]) for a C-contiguous block Z (rows × P)."""
    m, P = Z.shape
    for i in range(m):
        gi = g[i]
        row = Z[i]
        for p in range(P):
            out[p] += gi * _cos(row[p] - kappa[p])


@numba.njit(cache=True)
def sign_column_sums(Z, kappa, g, out):  # pragma: no cover - numba
    """out[p] += Σ_i g_i sign(Z[i, p] − kappa[p]) with sign(0) = +1, for a block Z (rows × P)."""
    m, P = Z.shape
    for i in range(m):
        gi = g[i]
        row = Z[i]
        for p in range(P):
            out[p] += gi if row[p] - kappa[p] >= 0.0 else -gi


def candidate_scores(
    X: np.ndarray, g: np.ndarray, Theta: np.ndarray, kappa: np.ndarray, activation: str
) -> np.ndarray:
    """s_p = Σ_i g_i φ(θ_pᵀx_i − κ_p) for every candidate p.

    Parameters
    ----------
    X : ndarray of shape (m, D)
    g : ndarray of shape (m,)
    Theta : ndarray of shape (D, P)
    kappa : ndarray of shape (P,)
    activation : {"cos", "sign"}

    Returns
    -------
    ndarray of shape (P,)
    """
    m = X.shape[0]
    P = Theta.shape[1]
    X = np.ascontiguousarray(X, dtype=np.float64)
    Theta = np.ascontiguousarray(Theta, dtype=np.float64)
    g = np.ascontiguousarray(g, dtype=np.float64)
    kappa = np.ascontiguousarray(kappa, dtype=np.float64)
    if activation == "cos" and not (
        # |θ_pᵀx_i − κ_p| ≤ max‖x_i‖·max‖θ_p‖ + max|κ_p| (Cauchy–Schwarz), without forming |Z|
        np.sqrt((X * X).sum(axis=1).max(initial=0.0) * (Theta * Theta).sum(axis=0).max(initial=0.0))
        + np.abs(kappa).max(initial=0.0)
        <= COS_ARG_LIMIT
    ):
        return _library_cos_scores(X, g, Theta, kappa)
    column_sums = sign_column_sums if activation == "sign" else cos_column_sums
    scores = np.zeros(P)
    rows = max(1, min(m, L2_ENTRIES // max(P, 1)))
    buffer = np.empty((rows, P))
    for start in range(0, m, rows):
        stop = min(m, start + rows)
        Z = buffer[: stop - start]
        np.matmul(X[start:stop], Theta, out=Z)
        column_sums(Z, kappa, g[start:stop], scores)
    return scores


def _library_cos_scores(
    X: np.ndarray, g: np.ndarray, Theta: np.ndarray, kappa: np.ndarray
) -> np.ndarray:
    """The scores with the C library's cosine (arguments too large for the polynomial one)."""
    m, P = X.shape[0], Theta.shape[1]
    block = max(1, BLOCK_ENTRIES // max(m, 1))
    scores = np.empty(P)
    for start in range(0, P, block):
        stop = min(P, start + block)
        Z = X @ Theta[:, start:stop]
        Z -= kappa[start:stop]
        scores[start:stop] = np.cos(Z, out=Z).T @ g
    return scores
