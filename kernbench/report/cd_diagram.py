"""The figures of the statistics over data sets: plot kinds ``cd`` and ``bayes``.

``cd``: Demšar's critical-difference diagram of the average ranks (Nemenyi). ``bayes``: the
Bayesian signed-rank test's posterior probabilities of the best-ranked method against every
other (a stacked bar per method: better / practically equivalent / worse). Both need at least two
methods over at least two complete data sets; otherwise they raise a one-line error (``kernbench
plot`` exits 2) instead of drawing nothing.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure

from kernbench.errors import KernbenchError
from kernbench.report.bayes import BayesResult
from kernbench.report.collect import Experiment, as_experiment
from kernbench.report.comparison import Comparison
from kernbench.report.significance import build_comparison
from kernbench.report.stat_tests import cd_cliques

__all__ = ["bayes_figure", "cd_diagram", "cd_figure", "comparison_for_plot"]


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


def comparison_for_plot(exp: Experiment, kind: str, **kwargs: object) -> Comparison:
    """The store's comparison of its table value, or a one-line error naming what is missing."""
    value = str(exp.table_spec.get("value", "test_error"))
    comp = build_comparison(exp, value=value, **kwargs)  # type: ignore[arg-type]
    if comp.friedman is None:
        raise KernbenchError(
            f"plot --kind {kind} compares methods over data sets: it needs at least 2 methods "
            f"over at least 2 complete data sets; {exp.name} has {len(comp.methods)} method(s) "
            f"over {len(comp.datasets)} complete data set(s)"
        )
    return comp


def cd_diagram(source: Experiment | str | os.PathLike[str]) -> dict[str, Figure]:
    """The CD diagram of the store's table value (``table.value``, test error by default)."""
    exp = as_experiment(source)
    comp = comparison_for_plot(exp, "cd")
    f = comp.friedman
    assert f is not None and comp.cd is not None
    p = f"Iman–Davenport p = {f.p_f:.3g}" if f.p_f is not None else f"Friedman p = {f.p_chi2:.3g}"
    title = f"{exp.name}: {comp.value}, N = {f.n} data sets, {p}"
    return {exp.name: cd_figure(f.average_ranks, comp.methods, comp.cd, title)}


def bayes_figure(posteriors: Sequence[BayesResult], control: str, title: str = "") -> Figure:
    """Stacked horizontal bars: for each method, P(control better), P(practically equivalent),
    P(method better), from the Bayesian signed-rank test."""
    rows = []
    for b in posteriors:
        other = b.b if b.a == control else b.a
        p_control, p_other = (b.p_a, b.p_b) if b.a == control else (b.p_b, b.p_a)
        rows.append((other, p_control, b.p_rope, p_other))
    fig = Figure(figsize=(7.5, 1.2 + 0.32 * len(rows)), layout="constrained")
    ax = fig.add_subplot()
    y = np.arange(len(rows))[::-1]
    left = np.zeros(len(rows))
    colours = ("#2f6fb0", "#bbbbbb", "#d0743c")
    labels = (f"{control} better", "practically equivalent", "other better")
    for k, (colour, label) in enumerate(zip(colours, labels, strict=True)):
        width = np.array([r[k + 1] for r in rows])
        ax.barh(y, width, left=left, color=colour, label=label)
        left += width
    ax.set_yticks(y, [r[0] for r in rows])
    ax.set_xlim(0, 1)
    ax.set_xlabel("posterior probability (Bayesian signed-rank test)")
    ax.xaxis.set_label_position("top")
    ax.legend(fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=3)
    if title:
        ax.set_title(title, fontsize=9)
    return fig


def bayes_diagram(source: Experiment | str | os.PathLike[str]) -> dict[str, Figure]:
    """The posterior probabilities of the best-ranked method against every other method."""
    exp = as_experiment(source)
    comp = comparison_for_plot(exp, "bayes")
    assert comp.friedman is not None
    best = comp.methods[int(np.argmin(comp.friedman.average_ranks))]
    comp = comparison_for_plot(exp, "bayes", control=best, bayes=True)
    title = (
        f"{exp.name}: {comp.value}, N = {len(comp.datasets)} data sets, rope ± {comp.rope:g}, "
        f"against {best} (best average rank)"
    )
    return {exp.name: bayes_figure(comp.bayes, best, title)}
