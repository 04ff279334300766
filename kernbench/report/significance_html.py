"""The statistics over data sets as HTML tables: the section of ``kernbench report --html``.

One CD diagram, what was left out, the average ranks, the Friedman / Iman–Davenport and Nemenyi
lines, the pairs that either test separates (all pairs stay in ``kernbench significance``), the
per-data-set corrected t-tests, and the Bayesian signed-rank posteriors of the best-ranked method
against the others — or, with a control, the Bayesian posteriors against the control and one
verdict per method.
"""

from __future__ import annotations

import base64
import html
import io
import os

import numpy as np

from kernbench.report.cd_diagram import cd_figure
from kernbench.report.collect import Experiment, as_experiment
from kernbench.report.comparison import Comparison
from kernbench.report.significance import build_comparison
from kernbench.report.significance_text import design_text, fmt_p, nemenyi_says, verdict_parts
from kernbench.report.stat_tests import nemenyi_q

__all__ = ["CD_ALT", "significance_html"]

#: the alt text of the section's CD diagram (the report leaves out a drawn ``cd_*.png``)
CD_ALT = "critical-difference diagram"


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _table(head: list[str], rows: list[list[str]], klass: str = "stats") -> str:
    th = "".join(f"<th>{_e(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f'<div class="wide"><table class="{klass}"><tr>{th}</tr>{body}</table></div>'


def _figure(comp: Comparison) -> str:
    assert comp.friedman is not None and comp.cd is not None
    buf = io.BytesIO()
    cd_figure(comp.friedman.average_ranks, comp.methods, comp.cd).savefig(
        buf, format="png", dpi=110
    )
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return (
        f'<figure><img alt="{CD_ALT}" style="max-width: 100%" '
        f'src="data:image/png;base64,{data}">'
        "<figcaption>Critical-difference diagram (Nemenyi): methods joined by a bar are not "
        "significantly different.</figcaption></figure>"
    )


def _pairs_html(comp: Comparison) -> str:
    rows = []
    for t in comp.pairs:
        nem = nemenyi_says(comp, t.a, t.b)
        wil = t.p_holm < comp.alpha
        if not (nem or wil):
            continue
        rows.append(
            [
                f"{t.a} vs {t.b}",
                t.better or "–",
                f"{fmt_p(t.p_holm)} ({t.method})",
                "yes" if wil else "no",
                "yes" if nem else "no",
            ]
        )
    intro = (
        f"<p>{len(rows)} of {comp.n_pairs} pairs are separated by at least one test "
        f"(Holm-corrected Wilcoxon signed-rank, α = {comp.alpha}; Nemenyi: average ranks "
        "further apart than the CD). <code>kernbench significance</code> lists every pair.</p>"
    )
    if not rows:
        return intro
    head = ["pair", "better", "Wilcoxon p (Holm)", "Wilcoxon", "Nemenyi"]
    return intro + _table(head, rows)


def _per_dataset_html(comp: Comparison) -> str:
    rows = []
    for d, tests in comp.per_dataset.items():
        sig = [s for s in tests if s.p is not None and s.p < comp.alpha]
        design = comp.designs.get(d)
        rows.append([d, design_text(design) if design else "–", f"{len(sig)} of {len(tests)}"])
    if not rows:
        return ""
    return (
        "<p>Corrected resampled t-test per data set (Nadeau &amp; Bengio 2003, ρ = n_test / "
        f"n_pool): pairs with p &lt; {comp.alpha}.</p>"
        + _table(["data set", "split design", "significant pairs"], rows)
    )


def _bayes_html(comp: Comparison, best: str, why: str = "best average rank") -> str:
    rows = []
    for b in comp.bayes:
        other = b.b if b.a == best else b.a
        p_best, p_other = (b.p_a, b.p_b) if b.a == best else (b.p_b, b.p_a)
        rows.append([other, f"{p_best:.3f}", f"{b.p_rope:.3f}", f"{p_other:.3f}", b.reading()])
    return (
        f"<p>Bayesian signed-rank test of {_e(best)} ({why}) against each method, "
        f"rope ± {comp.rope:g}: posterior probabilities.</p>"
        + _table(
            ["method", f"P({best} better)", "P(equivalent)", "P(method better)", "reading"], rows
        )
    )


def significance_html(
    source: Experiment | str | os.PathLike[str],
    *,
    value: str,
    control: str | None = None,
    rope: float | None = None,
) -> str:
    """The HTML report's section (empty with fewer than two methods or two complete data sets;
    what was left out is still named).

    Parameters
    ----------
    source : Experiment or path
    value : str
        The table value compared.
    control : str, optional
        Compare every method with this one: the Bayesian table and a verdict per method against
        it (default: the best-ranked method's Bayesian table, no verdicts).
    rope : float, optional
        The Bayesian region of practical equivalence (default as ``kernbench significance``).

    Raises
    ------
    ValueError
        ``control`` is not one of the store's methods.
    """
    exp = as_experiment(source)
    comp = build_comparison(exp, value=value)
    if control is not None and control not in exp.methods:
        raise ValueError(f"--control {control!r} is no method of the store ({exp.methods})")
    parts = ["<h2>Statistics over data sets</h2>"]
    if comp.excluded or comp.dropped:
        items = [f"{what}: {why}" for what, why in comp.excluded]
        items += [f"{d}: {why}" for d, why in comp.dropped.items()]
        parts.append(
            '<p>Left out or compared on fewer realisations:</p><ul class="notes">'
            + "".join(f"<li>{_e(i)}</li>" for i in items)
            + "</ul>"
        )
    f = comp.friedman
    if f is None:
        if len(parts) == 1:
            return ""
        parts.append("<p>Fewer than two methods or two complete data sets: no test.</p>")
        return "\n".join(parts)
    parts.append(_figure(comp))
    order = np.argsort(f.average_ranks, kind="stable")
    parts.append(
        _table(
            ["method", "average rank"],
            [[comp.methods[i], f"{f.average_ranks[i]:.3f}"] for i in order],
        )
    )
    id_text = (
        f"Iman–Davenport F_F = {f.f:.3f} (p = {fmt_p(f.p_f)})"
        if f.f is not None
        else f"Iman–Davenport F_F undefined: {f.note}"
    )
    parts.append(
        f"<p>Friedman χ²_F = {f.chi2:.3f} (p = {fmt_p(f.p_chi2)}); {_e(id_text)}; over N = "
        f"{f.n} data sets and k = {f.k} methods. Nemenyi critical difference at α = "
        f"{comp.alpha}: CD = {comp.cd:.3f} (q_α = {nemenyi_q(f.k, comp.alpha):.3f}).</p>"
    )
    parts.append(_pairs_html(comp))
    parts.append(_per_dataset_html(comp))
    best = comp.methods[int(order[0])]
    against = control or best
    bayes = build_comparison(exp, value=value, control=against, bayes=True, rope=rope)
    parts.append(_bayes_html(bayes, against, "the control" if control else "best average rank"))
    if control:
        parts.append(f"<h3>Verdict against {_e(control)}</h3>")
        parts.append(
            _table(
                ["method", "Holm–Wilcoxon", "Nemenyi", "Bayesian signed-rank"],
                [list(row) for row in verdict_parts(bayes)],
            )
        )
    return "\n".join(p for p in parts if p)
