"""The frequentist tests behind ``kernbench significance``, on plain arrays (no store).

Over data sets (Demšar 2006; García & Herrera 2008), on a (data sets × methods) matrix of
per-dataset means:

* average ranks, the Friedman test and its Iman–Davenport F correction (:func:`friedman`);
* Nemenyi's critical difference of average ranks (:func:`critical_difference`);
* Wilcoxon signed-rank tests, Holm-corrected (:func:`wilcoxon_holm`): the exact null distribution
  of the signed-rank sum, with tied and zero differences, up to :data:`WILCOXON_EXACT_MAX_N` data
  sets, the normal approximation above; every result says which ran;
* a win / tie / loss matrix.

On one data set, across its paired realisations: the corrected resampled t-test of Nadeau &
Bengio (2003) with the correlation of the split design (:func:`split_correlation`).

Differences are compared after rounding to :data:`TIE_DECIMALS` decimals, so that two
differences equal in exact arithmetic (equal error counts) tie instead of being ranked apart by
the last bit of a float.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

__all__ = [
    "TIE_DECIMALS",
    "WILCOXON_EXACT_MAX_N",
    "FriedmanResult",
    "PairTest",
    "SetTest",
    "WilcoxonResult",
    "cd_cliques",
    "corrected_resampled_ttest",
    "corrected_ttest",
    "critical_difference",
    "friedman",
    "holm",
    "min_wilcoxon_p",
    "nemenyi_q",
    "rank_matrix",
    "split_correlation",
    "wilcoxon_holm",
    "wilcoxon_signed_rank",
    "win_tie_loss",
]

#: differences (and scores) are rounded to this many decimals before ranks and signs are taken
TIE_DECIMALS = 9
#: the Wilcoxon test uses its exact null distribution up to this many data sets (the normal
#: approximation, with the tie correction, above)
WILCOXON_EXACT_MAX_N = 200


def _settle(x: np.ndarray) -> np.ndarray:
    """``x`` rounded to :data:`TIE_DECIMALS` decimals (infinities kept)."""
    x = np.asarray(x, dtype=float)
    return np.where(np.isfinite(x), np.round(x, TIE_DECIMALS), x)


def rank_matrix(scores: np.ndarray, *, lower_is_better: bool = True) -> np.ndarray:
    """Ranks per row (data set) of a (data sets × methods) matrix; 1 = best, ties averaged."""
    s = _settle(scores)
    return np.vstack([stats.rankdata(row if lower_is_better else -row) for row in s])


@dataclass(frozen=True)
class FriedmanResult:
    """The Friedman test on the ranks of ``k`` methods over ``n`` data sets.

    Attributes
    ----------
    average_ranks : ndarray of shape (k,)
    chi2, p_chi2 : float
        Friedman's statistic χ²_F and its p-value (χ² with k − 1 degrees of freedom).
    f, p_f : float or None
        The Iman–Davenport statistic F_F = (n − 1) χ²_F / (n (k − 1) − χ²_F) and its p-value
        (F with k − 1 and (k − 1)(n − 1) degrees of freedom); ``None`` where F_F is undefined
        (every data set ranks the methods alike, so the denominator is 0), with ``note``.
    note : str or None
        Why a statistic is undefined.
    """

    average_ranks: np.ndarray
    n: int
    k: int
    chi2: float
    p_chi2: float
    f: float | None
    p_f: float | None
    note: str | None = None


def friedman(ranks: np.ndarray) -> FriedmanResult:
    """Friedman and Iman–Davenport statistics from a (data sets × methods) rank matrix.

    Uses the form of Demšar (2006), eq. (1)–(2), on the average ranks (no tie correction), so that
    published examples are reproduced to their printed digits.
    """
    r = np.asarray(ranks, dtype=float)
    n, k = r.shape
    if k < 2 or n < 2:
        raise ValueError(f"the Friedman test needs >= 2 methods and >= 2 data sets, got {k}, {n}")
    avg = r.mean(axis=0)
    chi2 = 12.0 * n / (k * (k + 1)) * (float(np.sum(avg**2)) - k * (k + 1) ** 2 / 4.0)
    chi2 = max(0.0, float(np.round(chi2, TIE_DECIMALS)))
    p_chi2 = float(stats.chi2.sf(chi2, k - 1))
    denom = n * (k - 1) - chi2
    if denom <= 1e-9 * n * k:
        note = (
            f"every one of the {n} data sets ranks the methods in the same order (χ²_F at its "
            "maximum): Iman–Davenport's F_F is undefined; the χ²_F p-value stands"
        )
        return FriedmanResult(avg, n, k, chi2, p_chi2, None, None, note)
    f = (n - 1) * chi2 / denom
    p_f = float(stats.f.sf(f, k - 1, (k - 1) * (n - 1)))
    return FriedmanResult(avg, n, k, chi2, p_chi2, float(f), p_f)


def nemenyi_q(k: int, alpha: float = 0.05) -> float:
    """The Nemenyi critical value q_α: the studentized range quantile for ``k`` groups and
    infinite degrees of freedom, divided by √2 (2.569 for k = 4, α = 0.05)."""
    if k < 2:
        raise ValueError("the Nemenyi test needs at least 2 methods")
    return float(stats.studentized_range.ppf(1.0 - alpha, k, np.inf) / math.sqrt(2.0))


def critical_difference(k: int, n: int, alpha: float = 0.05) -> float:
    """Nemenyi's critical difference of average ranks, q_α √(k (k + 1) / (6 n))."""
    return nemenyi_q(k, alpha) * math.sqrt(k * (k + 1) / (6.0 * n))


def holm(pvalues: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjusted p-values (monotone, capped at 1), in the input order."""
    p = np.asarray(pvalues, dtype=float)
    m = p.size
    order = np.argsort(p, kind="stable")
    adjusted = np.empty(m)
    running = 0.0
    for i, j in enumerate(order):
        running = max(running, min(1.0, (m - i) * p[j]))
        adjusted[j] = running
    return adjusted


# -- Wilcoxon --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class WilcoxonResult:
    """One two-sided Wilcoxon signed-rank test of paired differences ``d = x − y``.

    Attributes
    ----------
    statistic : float
        W = min(R+, R−): the smaller of the rank sums of the positive and negative differences,
        zero differences splitting their ranks between the two (``zsplit``).
    r_plus, r_minus : float
    p : float
        Two-sided p-value.
    method : str
        ``"exact"`` (the exact null distribution, ties and zeros included) or ``"normal"``
        (the normal approximation with the tie correction and a continuity correction).
    n, n_zero : int
        Number of differences, and of zero differences among them.
    """

    statistic: float
    r_plus: float
    r_minus: float
    p: float
    method: str
    n: int
    n_zero: int


def _exact_signed_rank_p(ranks: np.ndarray, s_obs: float) -> float:
    """P(|S − E S| ≥ |s − E S|) for S the sum of the ranks given a + sign, every sign ±1 with
    probability 1/2 independently: the exact permutation (sign-flip) distribution, computed by
    counting subsets of the (doubled, hence integer) ranks."""
    doubled = np.rint(2.0 * ranks).astype(int)
    total = int(doubled.sum())
    dist = np.zeros(total + 1)
    dist[0] = 1.0
    for r in doubled:  # each rank in the sum or not, with probability 1/2
        shifted = np.zeros_like(dist)
        shifted[r:] = dist[: total + 1 - r]
        dist = 0.5 * (dist + shifted)
    s2 = np.arange(total + 1)
    obs = int(np.rint(2.0 * s_obs))
    extreme = np.abs(2 * s2 - total) >= abs(2 * obs - total)
    return float(min(1.0, dist[extreme].sum()))


def wilcoxon_signed_rank(
    x: Sequence[float] | np.ndarray,
    y: Sequence[float] | np.ndarray,
    *,
    exact_max_n: int = WILCOXON_EXACT_MAX_N,
) -> WilcoxonResult:
    """The two-sided Wilcoxon signed-rank test of paired samples (Demšar 2006, section 3.1.3).

    Differences are rounded to :data:`TIE_DECIMALS` decimals; ``|d|`` is ranked with tied values
    sharing their average rank; zero differences split their ranks evenly between R+ and R−
    (Demšar's recommendation, scipy's ``zero_method="zsplit"``). With at most ``exact_max_n``
    differences the p-value is exact: the sign-flip distribution of the rank sum with these very
    ranks (ties and zeros included), as a complete enumeration gives it; above, the normal
    approximation with the tie correction.

    Raises
    ------
    ValueError
        Samples of different lengths, or none.
    """
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if a.shape != b.shape or a.ndim != 1 or a.size == 0:
        raise ValueError(f"paired samples must be 1-D of equal length, got {a.shape}, {b.shape}")
    d = _settle(a - b)
    n = d.size
    ranks = stats.rankdata(np.abs(d))
    zero = d == 0
    half_zero = float(ranks[zero].sum()) / 2.0
    r_plus = float(ranks[d > 0].sum()) + half_zero
    r_minus = float(ranks[d < 0].sum()) + half_zero
    statistic = min(r_plus, r_minus)
    n_zero = int(zero.sum())
    nonzero = ranks[~zero]
    if nonzero.size == 0:
        return WilcoxonResult(statistic, r_plus, r_minus, 1.0, "exact", n, n_zero)
    s_obs = r_plus - half_zero  # the rank sum of the positive differences
    if n <= exact_max_n:
        p = _exact_signed_rank_p(nonzero, s_obs)
        return WilcoxonResult(statistic, r_plus, r_minus, p, "exact", n, n_zero)
    mean = float(nonzero.sum()) / 2.0
    sd = math.sqrt(float(np.sum(nonzero**2)) / 4.0)
    z = max(0.0, abs(s_obs - mean) - 0.5) / sd
    p = float(min(1.0, 2.0 * stats.norm.sf(z)))
    return WilcoxonResult(statistic, r_plus, r_minus, p, "normal", n, n_zero)


def min_wilcoxon_p(n: int) -> float:
    """The smallest two-sided p-value a Wilcoxon signed-rank test on ``n`` differences can give:
    2 · 2⁻ⁿ, every difference of one sign (ties and zeros only raise it)."""
    return min(1.0, 2.0 ** (1 - n)) if n > 0 else 1.0


@dataclass(frozen=True)
class PairTest:
    """One Wilcoxon signed-rank comparison of two methods over data sets.

    ``better`` is the method the signed ranks favour (``None`` when R+ = R−), whether or not the
    difference is significant; ``method`` says which p-value ran (``exact`` or ``normal``).
    """

    a: str
    b: str
    statistic: float
    p: float
    p_holm: float
    method: str = "exact"
    better: str | None = None
    n: int = 0


def wilcoxon_holm(
    scores: np.ndarray,
    names: Sequence[str],
    control: str | None = None,
    *,
    lower_is_better: bool = True,
) -> list[PairTest]:
    """Wilcoxon signed-rank tests over data sets (:func:`wilcoxon_signed_rank`), Holm-corrected
    over every pair or every pair with ``control``."""
    s = np.asarray(scores, dtype=float)
    names = list(names)
    if control is not None and control not in names:
        raise ValueError(f"no method named {control!r} (methods: {', '.join(names)})")
    pairs = [
        (i, j)
        for i in range(len(names))
        for j in range(i + 1, len(names))
        if control is None or control in (names[i], names[j])
    ]
    raw = [wilcoxon_signed_rank(s[:, i], s[:, j]) for i, j in pairs]
    adjusted = holm([r.p for r in raw]) if raw else np.array([])
    out = []
    for (i, j), r, ph in zip(pairs, raw, adjusted, strict=True):
        # R− > R+: a's values are mostly the lower ones
        a_lower = r.r_minus > r.r_plus
        better = None
        if r.r_minus != r.r_plus:
            better = names[i] if a_lower == lower_is_better else names[j]
        out.append(PairTest(names[i], names[j], r.statistic, r.p, float(ph), r.method, better, r.n))
    return out


def win_tie_loss(scores: np.ndarray, *, lower_is_better: bool = True) -> np.ndarray:
    """``out[i, j] = (wins, ties, losses)`` of method i against j over the data sets."""
    s = _settle(scores)
    if not lower_is_better:
        s = -s
    k = s.shape[1]
    out = np.zeros((k, k, 3), dtype=int)
    for i in range(k):
        for j in range(k):
            out[i, j] = (
                int(np.sum(s[:, i] < s[:, j])),
                int(np.sum(s[:, i] == s[:, j])),
                int(np.sum(s[:, i] > s[:, j])),
            )
    return out


# -- one data set: the corrected resampled t-test ------------------------------------------------
def split_correlation(n_train: float, n_test: float, n_pool: float | None = None) -> float:
    """The correlation ρ of two realisations' test errors under random subsampling.

    Nadeau & Bengio (2003) approximate it by ρ₀ = n_test / n, the value it takes when the decision
    function does not depend on the training set: two random test sets of ``n_test`` rows drawn
    from the same ``n`` rows share n_test²/n of them on average. Their n is the whole data set,
    split into training and test parts (n = n_train + n_test). When both parts are drawn from a
    larger pool of ``n_pool`` rows (a training part capped at 300 rows, a test part at 1000, the
    rest unused), the same argument gives ρ₀ = n_test / n_pool, so the variance factor
    ρ₀ / (1 − ρ₀) is n_test / (n_pool − n_test) instead of n_test / n_train.

    Parameters
    ----------
    n_train, n_test : float
    n_pool : float, optional
        The rows both parts are drawn from; default (and never less than) n_train + n_test.
    """
    pool = max(float(n_pool or 0), float(n_train) + float(n_test))
    return float(n_test) / pool


@dataclass(frozen=True)
class SetTest:
    """The corrected resampled t-test of two methods on one data set.

    ``t`` and ``p`` are ``None`` where the test is undefined; ``note`` then says why (the same
    difference on every realisation, fewer than two shared realisations). ``diff`` is the mean
    difference a − b over the ``n`` shared realisations.
    """

    a: str
    b: str
    t: float | None
    p: float | None
    diff: float
    n: int
    note: str | None = None


def corrected_ttest(
    d: Sequence[float] | np.ndarray, rho: float
) -> tuple[float | None, float | None, str | None]:
    """``(t, p, note)`` of the corrected resampled t-test of paired differences ``d``.

    t = mean(d) / sqrt((1/J + ρ/(1 − ρ)) var(d)) with J − 1 degrees of freedom (Nadeau & Bengio
    2003; ρ from :func:`split_correlation`). Where it is undefined ``t`` and ``p`` are ``None``
    and ``note`` says why: every difference 0 gives t = 0, p = 1 (no evidence of a difference);
    one non-zero difference repeated on every realisation has no variance to test against.
    """
    x = _settle(np.asarray(d, dtype=float))
    J = x.size
    if J < 2:
        return None, None, f"{J} shared realisation(s): no test"
    mean = float(np.mean(x))
    var = float(np.var(x, ddof=1))
    if var <= 1e-18 * max(1.0, mean * mean):
        if mean == 0.0:
            return 0.0, 1.0, None
        return (
            None,
            None,
            (f"the same difference ({mean:+.3g}) on all {J} realisations: no variance to test"),
        )
    t = mean / math.sqrt((1.0 / J + rho / (1.0 - rho)) * var)
    return t, float(2.0 * stats.t.sf(abs(t), J - 1)), None


def corrected_resampled_ttest(
    a: Sequence[float],
    b: Sequence[float],
    n_train: float,
    n_test: float,
    n_pool: float | None = None,
) -> tuple[float, float]:
    """Nadeau & Bengio's corrected resampled t-test of paired results over J random splits.

    ``(t, two-sided p)`` of :func:`corrected_ttest` with ρ = :func:`split_correlation`
    (n_train, n_test, n_pool); NaN where the test is undefined (see there).
    """
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    t, p, _ = corrected_ttest(d, split_correlation(n_train, n_test, n_pool))
    return (math.nan if t is None else t), (math.nan if p is None else p)


def cd_cliques(avg_ranks: Sequence[float], cd: float) -> list[tuple[int, ...]]:
    """Maximal groups of methods (indices, best first) whose average ranks lie within ``cd`` of
    each other: the bars a CD diagram draws."""
    r = np.asarray(avg_ranks, dtype=float)
    order = [int(i) for i in np.argsort(r, kind="stable")]
    groups: list[tuple[int, ...]] = []
    for start in range(len(order)):
        end = start
        while end + 1 < len(order) and r[order[end + 1]] - r[order[start]] <= cd:
            end += 1
        group = tuple(order[start : end + 1])
        if len(group) > 1 and not any(set(group) <= set(g) for g in groups):
            groups.append(group)
    return groups
