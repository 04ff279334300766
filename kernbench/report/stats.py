"""Statistics behind a results table: spreads, the paired significance test, ranks, agreement.

Conventions (docs/choices.md): ``std`` is the sample standard deviation over realisations
(ddof = 1), ``stderr`` is ``std / sqrt(n)``. Realisations are paired across methods (every method of
a table sees the same splits), so two methods are compared with a paired t-test over the
realisations both have, as Lin & Li mark "results as significant as the best".
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Literal

import numpy as np
from scipy import stats

SpreadKind = Literal["std", "stderr"]


def sample_std(values: Sequence[float] | np.ndarray) -> float | None:
    """Sample standard deviation (ddof = 1); ``None`` for fewer than two values."""
    x = np.asarray(values, dtype=float)
    if x.size < 2:
        return None
    return float(np.std(x, ddof=1))


def standard_error(values: Sequence[float] | np.ndarray) -> float | None:
    """``std / sqrt(n)`` with the sample std; ``None`` for fewer than two values."""
    s = sample_std(values)
    return None if s is None else s / float(np.sqrt(len(values)))


def mean_spread(
    values: Sequence[float] | np.ndarray, kind: SpreadKind = "std"
) -> tuple[float | None, float | None]:
    """Mean and spread (``std`` or ``stderr``) of ``values``.

    Returns ``(None, None)`` for no values and ``(mean, None)`` for one value.
    """
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return None, None
    if kind == "std":
        spread = sample_std(x)
    elif kind == "stderr":
        spread = standard_error(x)
    else:
        raise ValueError(f"unknown spread kind {kind!r}; expected 'std' or 'stderr'")
    return float(np.mean(x)), spread


def cell_mean(
    values: Mapping[int, float], sizes: Mapping[int, int] | None = None, *, percent: bool = True
) -> float | None:
    """The mean of one cell's realisations, independent of the order they are given in.

    Where every value is an error rate over a known number of rows (``sizes``: realisation ->
    test or training rows), it is the exact mean of the error counts' fractions, rounded once:
    two cells with equal counts get the same float, so they tie in ranks and tables. Otherwise
    the correctly rounded sum (``math.fsum``) over the number of values.

    Parameters
    ----------
    values : mapping
        ``realisation -> value`` (errors in percent when ``percent``).
    sizes : mapping, optional
        ``realisation -> rows the value is a fraction of``.
    percent : bool
        The values are fractions × 100.

    Returns
    -------
    float or None
        ``None`` for no values.
    """
    if not values:
        return None
    scale = 100 if percent else 1
    if sizes and all(sizes.get(r) for r in values):
        total = Fraction(0)
        for r, v in values.items():
            n = int(sizes[r])
            count = round(v / scale * n)
            if abs(count / n - v / scale) > 1e-9 / n:
                break  # not a count of rows
            total += Fraction(count, n)
        else:
            return float(scale * total / len(values))
    return math.fsum(values.values()) / len(values)


def paired_ttest_pvalue(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float:
    """Two-sided p-value of the paired t-test of ``a`` against ``b`` (realisations in one order).

    The degenerate cases scipy leaves undefined are resolved by their limits: identical vectors
    (all differences zero) give p = 1 (no evidence of a difference); a constant non-zero difference
    (zero variance of the differences) gives p = 0.

    Raises
    ------
    ValueError
        If the vectors differ in length or hold fewer than two pairs.
    """
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"paired samples must be 1-D of equal length, got {x.shape} and {y.shape}")
    if x.size < 2:
        raise ValueError("a paired t-test needs at least two pairs")
    d = x - y
    scale = max(float(np.max(np.abs(x))), float(np.max(np.abs(y))), 1.0)
    if np.all(np.abs(d) <= 1e-12 * scale):
        return 1.0
    if np.all(np.abs(d - d[0]) <= 1e-12 * scale):
        return 0.0
    return float(stats.ttest_rel(x, y).pvalue)


def not_significantly_worse(
    best: dict[int, float], other: dict[int, float], alpha: float = 0.05
) -> tuple[bool, float | None]:
    """Whether ``other`` is not significantly different from ``best`` at level ``alpha``.

    Parameters
    ----------
    best, other : dict
        ``realisation index -> value`` of the row's best method and of the method compared.
    alpha : float
        Two-sided significance level.

    Returns
    -------
    (mark, p_value)
        ``mark`` is True when the paired test over the shared realisations gives p >= alpha; with
        fewer than two shared realisations there is no test: ``(False, None)``.
    """
    shared = sorted(set(best) & set(other))
    if len(shared) < 2:
        return False, None
    p = paired_ttest_pvalue([best[r] for r in shared], [other[r] for r in shared])
    return p >= alpha, p


def row_ranks(
    means: Sequence[float] | np.ndarray,
    spreads: Sequence[float] | np.ndarray | None = None,
    *,
    rule: Literal["average", "competition"] = "average",
) -> np.ndarray:
    """Ranks (1 = lowest mean) of the methods on one dataset.

    Parameters
    ----------
    means : array of shape (n_methods,)
    spreads : array of shape (n_methods,), optional
        Only for ``rule="competition"``: equal means are ordered by the smaller spread.
    rule : "average" | "competition"
        ``average``: ties in the mean share the average of the ranks they span (1, 2.5, 2.5, 4).
        ``competition``: the ExRM paper's rule (its Table 1): sort by mean, equal
        means by the smaller spread; identical (mean, spread) pairs share the lowest rank
        (1, 2, 2, 4).
    """
    m = np.asarray(means, dtype=float)
    if rule == "average":
        return stats.rankdata(m, method="average")
    if rule != "competition":
        raise ValueError(f"unknown rank rule {rule!r}; expected 'average' or 'competition'")
    s = np.zeros_like(m) if spreads is None else np.asarray(spreads, dtype=float)
    s = np.where(np.isnan(s), np.inf, s)
    # rank of i = 1 + number of methods j with a strictly better (mean, spread) pair
    better = (m[None, :] < m[:, None]) | ((m[None, :] == m[:, None]) & (s[None, :] < s[:, None]))
    return 1.0 + better.sum(axis=1)


def average_ranks(
    means: np.ndarray,
    spreads: np.ndarray | None = None,
    *,
    rule: Literal["average", "competition"] = "average",
) -> tuple[np.ndarray, int]:
    """Mean rank of every method over the datasets where all methods have a result.

    Parameters
    ----------
    means : array of shape (n_datasets, n_methods)
        NaN where a method has no result on a dataset; such datasets are left out.
    spreads : array of the same shape, optional
        Tie-break for ``rule="competition"`` (see :func:`row_ranks`).

    Returns
    -------
    (ranks, n_used)
        Mean rank per method (NaN everywhere when no dataset is complete) and the number of
        datasets used.
    """
    m = np.asarray(means, dtype=float)
    if m.ndim != 2:
        raise ValueError(f"means must be 2-D (datasets x methods), got shape {m.shape}")
    complete = ~np.isnan(m).any(axis=1)
    if not complete.any():
        return np.full(m.shape[1], np.nan), 0
    rows = []
    for i in np.flatnonzero(complete):
        s = None if spreads is None else np.asarray(spreads, dtype=float)[i]
        rows.append(row_ranks(m[i], s, rule=rule))
    return np.mean(rows, axis=0), int(complete.sum())


def published_stderr(
    spread: float | None, kind: str, n_runs: int | None, *, n_fallback: int | None = None
) -> float:
    """The standard error of a published mean from its printed spread.

    Parameters
    ----------
    spread : float or None
        The printed spread (``None``: the paper printed none).
    kind : str
        What the paper's ``±`` means: ``std`` (a standard deviation over its runs), ``stderr``
        (already a standard error) or ``none``.
    n_runs : int or None
        The paper's number of runs; for ``std`` the spread is divided by ``sqrt(n_runs)``.
    n_fallback : int, optional
        The number of runs to assume when the paper's is not known (a reproduction runs the
        paper's count, so the caller passes its own); without it a ``std`` counts as over one run.

    Returns
    -------
    float
        0 when there is no spread.
    """
    if spread is None or kind not in ("std", "stderr"):
        return 0.0
    if kind == "stderr":
        return float(spread)
    n = n_runs if n_runs else n_fallback
    return float(spread) / float(np.sqrt(max(int(n or 1), 1)))


def within_tolerance(
    ours_mean: float,
    ours_stderr: float | None,
    published_mean: float,
    published_stderr: float | None,
    *,
    k: float = 2.0,
    floor: float = 1.5,
) -> bool:
    """Whether two means agree: ``|ours − published| <= max(k · sqrt(se_o² + se_p²), floor)``.

    The agreement rule of every table and docs page (docs/tables-and-figures.md): with
    ``se = s / sqrt(n)`` of each side's runs, the difference of two means is compared with twice
    its own standard error, ``2 · sqrt(s_o²/n_o + s_p²/n_p)``, and never with less than 1.5
    points. Pass standard errors, not the per-run spreads (:func:`published_stderr` converts a
    printed one); a missing one counts as 0.
    """
    a = 0.0 if ours_stderr is None else float(ours_stderr)
    b = 0.0 if published_stderr is None else float(published_stderr)
    combined = float(np.hypot(a, b))
    return abs(float(ours_mean) - float(published_mean)) <= max(k * combined, floor)
