"""Statistics over data sets: is a difference between methods real?

The procedures recommended by Demšar (2006) and García & Herrera (2008) for comparing several
classifiers over several data sets, on the per-dataset mean of a table value (lower is better for
errors and times):

* average ranks (1 = best; ties share the average rank);
* the Friedman test and its Iman–Davenport F correction;
* the Nemenyi critical difference (CD) of the average ranks, drawn as a CD diagram;
* pairwise Wilcoxon signed-rank tests, Holm-corrected (all pairs, or each method against a
  control);
* a win / tie / loss matrix;
* per data set, the corrected resampled t-test of Nadeau & Bengio (2003) across realisations,
  which widens the variance by ``n_test / n_train`` because random train/test splits overlap.

Cells that timed out: with ``timeouts="exclude"`` (the default) a data set on which any method
timed out on a realisation, or has no value, is left out of the comparison over data sets (every
test needs complete blocks) and named in :attr:`Comparison.left_out`; with
``timeouts="loss"`` a method that timed out on a realisation of a data set is ranked last on that
data set (its mean is taken as +inf), which counts the time-out as a loss. Cells that failed are
never counted as losses.

Only ``scipy.stats`` is used (``rankdata``, ``chi2``, ``f``, ``studentized_range``, ``wilcoxon``,
``t``); the tests in ``tests/report/test_significance.py`` reproduce Demšar's worked example.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from matplotlib.figure import Figure
from scipy import stats

from kernbench.records import row_value
from kernbench.report.collect import Experiment, as_experiment
from kernbench.report.plot_kinds import plot_kind

Timeouts = Literal["exclude", "loss"]

__all__ = [
    "Comparison",
    "FriedmanResult",
    "PairTest",
    "build_comparison",
    "cd_cliques",
    "cd_figure",
    "corrected_resampled_ttest",
    "critical_difference",
    "friedman",
    "holm",
    "nemenyi_q",
    "rank_matrix",
    "render_comparison",
    "significance_html",
    "wilcoxon_holm",
    "win_tie_loss",
]


# -- the tests -----------------------------------------------------------------------------------
def rank_matrix(scores: np.ndarray, *, lower_is_better: bool = True) -> np.ndarray:
    """Ranks per row (data set) of a (data sets × methods) matrix; 1 = best, ties averaged."""
    s = np.asarray(scores, dtype=float)
    return np.vstack([stats.rankdata(row if lower_is_better else -row) for row in s])


@dataclass(frozen=True)
class FriedmanResult:
    """The Friedman test on the ranks of ``k`` methods over ``n`` data sets.

    Attributes
    ----------
    average_ranks : ndarray of shape (k,)
    chi2, p_chi2 : float
        Friedman's statistic χ²_F and its p-value (χ² with k − 1 degrees of freedom).
    f, p_f : float
        The Iman–Davenport statistic F_F = (n − 1) χ²_F / (n (k − 1) − χ²_F) and its p-value
        (F with k − 1 and (k − 1)(n − 1) degrees of freedom).
    """

    average_ranks: np.ndarray
    n: int
    k: int
    chi2: float
    p_chi2: float
    f: float
    p_f: float


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
    p_chi2 = float(stats.chi2.sf(chi2, k - 1))
    denom = n * (k - 1) - chi2
    f = (n - 1) * chi2 / denom if denom > 0 else math.inf
    p_f = float(stats.f.sf(f, k - 1, (k - 1) * (n - 1))) if math.isfinite(f) else 0.0
    return FriedmanResult(avg, n, k, float(chi2), p_chi2, float(f), p_f)


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


@dataclass(frozen=True)
class PairTest:
    """One Wilcoxon signed-rank comparison of two methods over data sets."""

    a: str
    b: str
    statistic: float
    p: float
    p_holm: float


def wilcoxon_holm(
    scores: np.ndarray, names: Sequence[str], control: str | None = None
) -> list[PairTest]:
    """Wilcoxon signed-rank tests over data sets (``zero_method="zsplit"``: ties split between
    the signs, as Demšar recommends), Holm-corrected over every pair or every pair with
    ``control``."""
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
    raw = []
    for i, j in pairs:
        d = s[:, i] - s[:, j]
        if not np.any(d != 0):
            raw.append((0.0, 1.0))
            continue
        res = stats.wilcoxon(s[:, i], s[:, j], zero_method="zsplit")
        raw.append((float(res.statistic), float(res.pvalue)))
    adjusted = holm([p for _, p in raw]) if raw else np.array([])
    return [
        PairTest(names[i], names[j], st, p, float(ph))
        for (i, j), (st, p), ph in zip(pairs, raw, adjusted, strict=True)
    ]


def win_tie_loss(scores: np.ndarray, *, lower_is_better: bool = True) -> np.ndarray:
    """``out[i, j] = (wins, ties, losses)`` of method i against j over the data sets."""
    s = np.asarray(scores, dtype=float)
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


def corrected_resampled_ttest(
    a: Sequence[float], b: Sequence[float], n_train: float, n_test: float
) -> tuple[float, float]:
    """Nadeau & Bengio's corrected resampled t-test of paired results over J random splits.

    t = mean(d) / sqrt((1/J + n_test/n_train) var(d)), with J − 1 degrees of freedom (the plain
    paired t-test has 1/J alone and is far too liberal when training sets overlap). Returns
    ``(t, two-sided p)``; (0, 1) when all differences are equal to zero, NaN with fewer than two
    pairs.
    """
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    J = d.size
    if J < 2:
        return math.nan, math.nan
    var = float(np.var(d, ddof=1))
    mean = float(np.mean(d))
    if var <= 1e-12 * max(1.0, mean * mean):  # equal differences, up to rounding
        return (0.0, 1.0) if abs(mean) <= 1e-12 else (math.copysign(math.inf, mean), 0.0)
    t = mean / math.sqrt((1.0 / J + n_test / n_train) * var)
    return t, float(2.0 * stats.t.sf(abs(t), J - 1))


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


# -- from a store --------------------------------------------------------------------------------
@dataclass
class Comparison:
    """Every statistic of one store's methods over its data sets (see the module docstring).

    ``scores`` is (data sets × methods) of per-dataset means over realisations; ``datasets`` the
    data sets used; ``left_out`` those without a value for every method; ``timed_out`` the
    ``(dataset, method)`` pairs with a timed-out realisation.
    """

    value: str
    methods: list[str]
    datasets: list[str]
    scores: np.ndarray
    alpha: float
    timeouts: Timeouts
    control: str | None = None
    left_out: list[str] = field(default_factory=list)
    timed_out: list[tuple[str, str]] = field(default_factory=list)
    friedman: FriedmanResult | None = None
    cd: float | None = None
    pairs: list[PairTest] = field(default_factory=list)
    wtl: np.ndarray | None = None
    per_dataset: dict[str, list[tuple[str, str, float, float]]] = field(default_factory=dict)


def _lower_is_better(value: str) -> bool:
    return "accuracy" not in value and "auc" not in value


def build_comparison(
    source: Experiment | str | os.PathLike[str],
    *,
    value: str = "test_error",
    alpha: float = 0.05,
    control: str | None = None,
    timeouts: Timeouts = "exclude",
) -> Comparison:
    """The statistics over data sets of one store (the plan's methods and data sets).

    Raises
    ------
    ValueError
        ``control`` is not a method of the store.
    """
    exp = as_experiment(source)
    if control is not None and control not in exp.methods:
        raise ValueError(f"--control {control!r} is no method of the store ({exp.methods})")
    lower = _lower_is_better(value)
    loss = math.inf if lower else -math.inf
    timed_out: list[tuple[str, str]] = []
    per_real: dict[str, dict[str, dict[int, float]]] = {}
    sizes: dict[str, tuple[float, float]] = {}
    means = np.full((len(exp.datasets), len(exp.methods)), math.nan)
    seen = np.zeros(means.shape, dtype=bool)  # a value or a time-out: the method ran there
    for i, d in enumerate(exp.datasets):
        per_real[d] = {}
        for j, m in enumerate(exp.methods):
            cell = exp.rows.get((d, m), {})
            vals = {}
            for r, row in cell.items():
                v = row_value(row, value) if row["status"] == "done" else None
                if v is not None:
                    vals[r] = v
                    res = row.get("result") or {}
                    if res.get("n_train") and res.get("n_test"):
                        sizes.setdefault(d, (float(res["n_train"]), float(res["n_test"])))
            per_real[d][m] = vals
            timed = any(row["status"] == "timeout" for row in cell.values())
            if timed:
                timed_out.append((d, m))
            seen[i, j] = timed or bool(vals)
            if timed:  # never the mean of the realisations that happened to finish
                means[i, j] = loss if timeouts == "loss" else math.nan
            elif vals:
                means[i, j] = float(np.mean(list(vals.values())))
    # methods and data sets without any value were not run (a partial run, `--only`): they are
    # not part of the comparison; a data set some run method lacks is left out (named)
    ran = seen.any(axis=0)
    methods = [m for m, keep in zip(exp.methods, ran, strict=True) if keep]
    if control is not None and control not in methods:
        raise ValueError(f"--control {control!r} has no results in the store")
    sub = means[:, ran]
    complete = ~np.isnan(sub).any(axis=1)
    touched = seen[:, ran].any(axis=1)
    used = [d for d, ok in zip(exp.datasets, complete, strict=True) if ok]
    left_out = [d for d, ok, t in zip(exp.datasets, complete, touched, strict=True) if t and not ok]
    scores = sub[complete]
    timed_out = [(d, m) for d, m in timed_out if m in methods]
    comp = Comparison(value, methods, used, scores, alpha, timeouts, control, left_out, timed_out)
    k, n = len(methods), len(used)
    if k >= 2 and n >= 2:
        comp.friedman = friedman(rank_matrix(scores, lower_is_better=lower))
        comp.cd = critical_difference(k, n, alpha)
        finite = np.where(np.isinf(scores), np.nan, scores)
        if np.isnan(finite).any():  # a time-out counted as a loss: worse than any finite value
            worst = np.nanmax(np.abs(finite)) if np.isfinite(finite).any() else 1.0
            finite = np.where(np.isnan(finite), (1 if lower else -1) * (10.0 * worst + 1.0), finite)
        comp.pairs = wilcoxon_holm(finite, methods, control)
        comp.wtl = win_tie_loss(scores, lower_is_better=lower)
    for d, by_method in per_real.items():
        if d not in sizes or d not in used + left_out:
            continue
        tests = []
        for a, b in _pairs(methods, control):
            shared = sorted(set(by_method[a]) & set(by_method[b]))
            if len(shared) >= 2:
                t, p = corrected_resampled_ttest(
                    [by_method[a][r] for r in shared], [by_method[b][r] for r in shared], *sizes[d]
                )
                tests.append((a, b, t, p))
        comp.per_dataset[d] = tests
    return comp


def _pairs(methods: Sequence[str], control: str | None) -> list[tuple[str, str]]:
    return [
        (a, b)
        for i, a in enumerate(methods)
        for b in methods[i + 1 :]
        if control is None or control in (a, b)
    ]


def render_comparison(comp: Comparison) -> str:
    """The comparison as markdown: ranks, Friedman / Iman–Davenport, CD, Holm–Wilcoxon,
    win/tie/loss and the per-dataset corrected t-tests."""
    lines = [f"## Statistics over data sets ({comp.value})", ""]
    if comp.left_out:
        lines += [
            f"Left out (a method has no value): {', '.join(comp.left_out)}.",
            "",
        ]
    if comp.timed_out:
        shown = ", ".join(f"{m} on {d}" for d, m in comp.timed_out)
        how = "counted as losses" if comp.timeouts == "loss" else "their data sets left out"
        lines += [f"Timed out ({how}): {shown}.", ""]
    f = comp.friedman
    if f is None:
        lines.append("Fewer than two methods or two complete data sets: no test.")
        return "\n".join(lines) + "\n"
    lines += ["| method | average rank |", "|:---|---:|"]
    for i in np.argsort(f.average_ranks, kind="stable"):
        lines.append(f"| {comp.methods[i]} | {f.average_ranks[i]:.3f} |")
    lines += [
        "",
        f"Friedman χ²_F = {f.chi2:.3f} (p = {f.p_chi2:.3g}); Iman–Davenport F_F = {f.f:.3f} "
        f"(p = {f.p_f:.3g}), over N = {f.n} data sets and k = {f.k} methods.",
        f"Nemenyi critical difference at α = {comp.alpha}: CD = {comp.cd:.3f} "
        f"(q_α = {nemenyi_q(f.k, comp.alpha):.3f}).",
        "",
        "| pair | Wilcoxon W | p | p (Holm) |",
        "|:---|---:|---:|---:|",
    ]
    for t in comp.pairs:
        mark = " *" if t.p_holm < comp.alpha else ""
        lines.append(f"| {t.a} vs {t.b} | {t.statistic:.1f} | {t.p:.3g} | {t.p_holm:.3g}{mark} |")
    lines += ["", "Win / tie / loss of the row method against the column method:", ""]
    lines.append("| | " + " | ".join(comp.methods) + " |")
    lines.append("|:---|" + "---:|" * len(comp.methods))
    for i, m in enumerate(comp.methods):
        cells = ["-" if i == j else "/".join(map(str, comp.wtl[i, j])) for j in range(f.k)]
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
    if any(comp.per_dataset.values()):
        lines += [
            "",
            "Corrected resampled t-test (Nadeau & Bengio) per data set, pairs with p < "
            f"{comp.alpha}:",
            "",
        ]
        for d, tests in comp.per_dataset.items():
            sig = [
                f"{a} vs {b} (t = {t:.2f}, p = {p:.3g})" for a, b, t, p in tests if p < comp.alpha
            ]
            lines.append(f"- {d}: {'; '.join(sig) if sig else 'none'}")
    return "\n".join(lines) + "\n"


# -- the critical-difference diagram ---------------------------------------------------------------
def cd_figure(
    avg_ranks: Sequence[float], names: Sequence[str], cd: float, title: str = ""
) -> Figure:
    """Demšar's critical-difference diagram: the rank axis (1 left), each method at its average
    rank, the CD as a scale bar, and a thick bar over each group not significantly different."""
    r = np.asarray(avg_ranks, dtype=float)
    k = len(names)
    order = list(np.argsort(r, kind="stable"))
    half = (k + 1) // 2
    height = 1.6 + 0.28 * half
    fig = Figure(figsize=(8.0, height + (0.3 if title else 0.0)))
    # the rank axis in the middle; the method names outside it, left and right
    ax = fig.add_axes((0.26, 0.02, 0.48, 0.9 if title else 0.96))
    ax.set_xlim(0.7, k + 0.3)
    ax.set_ylim(-0.35 * half - 0.9, 1.3)
    ax.axis("off")
    ax.hlines(0.0, 1, k, color="black", lw=1)
    for x in range(1, k + 1):
        ax.vlines(x, 0.0, 0.08, color="black", lw=1)
        ax.text(x, 0.14, str(x), ha="center", va="bottom", fontsize=9)
    ax.hlines(0.8, 1, 1 + cd, color="black", lw=1.5)
    ax.vlines([1, 1 + cd], 0.74, 0.86, color="black", lw=1.5)
    ax.text(1 + cd / 2, 0.9, f"CD = {cd:.2f}", ha="center", va="bottom", fontsize=9)
    for slot, i in enumerate(order):
        left = slot < half
        y = -0.35 * ((slot if left else k - 1 - slot) + 1) - 0.3
        x_end = 0.7 if left else k + 0.3
        ax.plot([r[i], r[i], x_end], [0.0, y, y], color="black", lw=0.8)
        ax.text(
            x_end + (-0.05 if left else 0.05),
            y,
            f"{names[i]} ({r[i]:.2f})" if not left else f"({r[i]:.2f}) {names[i]}",
            ha="right" if left else "left",
            va="center",
            fontsize=9,
            clip_on=False,
        )
    for level, group in enumerate(cd_cliques(r, cd)):
        lo, hi = r[group[0]], r[group[-1]]
        y = -0.12 - 0.1 * level
        ax.hlines(y, lo - 0.03, hi + 0.03, color="black", lw=3.5)
    if title:
        fig.suptitle(title, fontsize=9)
    return fig


def significance_html(source: Experiment | str | os.PathLike[str], *, value: str) -> str:
    """The HTML report's section: the CD diagram and the statistics (empty with fewer than two
    methods or two complete data sets)."""
    import base64
    import html
    import io

    exp = as_experiment(source)
    comp = build_comparison(exp, value=value)
    if comp.friedman is None:
        return ""
    buf = io.BytesIO()
    fig = cd_figure(comp.friedman.average_ranks, comp.methods, comp.cd)
    fig.savefig(buf, format="png", dpi=110)
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return (
        "<h2>Statistics over data sets</h2>"
        f'<figure><img alt="critical-difference diagram" style="max-width: 100%" '
        f'src="data:image/png;base64,{data}">'
        "<figcaption>Critical-difference diagram (Nemenyi): methods joined by a bar are not "
        "significantly different.</figcaption></figure>"
        f'<div class="wide"><pre>{html.escape(render_comparison(comp))}</pre></div>'
    )


@plot_kind("cd", "critical-difference diagram of the average ranks over data sets (Nemenyi)")
def cd_diagram(source: Experiment | str | os.PathLike[str]) -> dict[str, Figure]:
    """The CD diagram of the store's table value (``table.value``, test error by default)."""
    exp = as_experiment(source)
    value = str(exp.table_spec.get("value", "test_error"))
    comp = build_comparison(exp, value=value)
    if comp.friedman is None:
        return {}
    title = (
        f"{exp.name}: {value}, N = {comp.friedman.n} data sets, "
        f"Friedman p = {comp.friedman.p_f:.3g} (Iman–Davenport)"
    )
    return {exp.name: cd_figure(comp.friedman.average_ranks, comp.methods, comp.cd, title)}
