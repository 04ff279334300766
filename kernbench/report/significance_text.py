"""A :class:`~kernbench.report.significance.Comparison` as markdown (``kernbench significance``).

Every test line names the test and the variant that ran (exact or normal Wilcoxon, the
correlation of the corrected t-test and where its pool size came from); what the comparison left
out is named with the reason; an undefined statistic is stated, never printed as inf or p = 0.
With a control, the text ends with one verdict line per method (:func:`verdicts`).
"""

from __future__ import annotations

import numpy as np

from kernbench.report.bayes import BAYES_SAMPLES, BAYES_SEED, DECISIVE, BayesResult
from kernbench.report.comparison import Comparison, SplitDesign
from kernbench.report.stat_tests import WILCOXON_EXACT_MAX_N, PairTest, nemenyi_q

__all__ = ["fmt_p", "nemenyi_says", "design_text", "render_comparison", "verdicts"]


def fmt_p(p: float | None) -> str:
    """A p-value to three significant digits ("< 1e-300" below what a float holds)."""
    if p is None or not np.isfinite(p):
        return "–"
    return "< 1e-300" if p <= 0 else f"{p:.3g}"


def nemenyi_says(comp: Comparison, a: str, b: str) -> bool | None:
    """Whether the Nemenyi test separates ``a`` and ``b`` (``None`` without a test)."""
    if comp.friedman is None or comp.cd is None:
        return None
    return abs(comp.rank_of(a) - comp.rank_of(b)) > comp.cd


def design_text(design: SplitDesign) -> str:
    """``300 train / 1000 test of 5000 rows (catalogue), ρ = 0.200``."""
    return (
        f"{design.n_train} train / {design.n_test} test of {design.n_pool} rows "
        f"({design.source}), ρ = {design.rho:.3f}"
    )


def _unit(comp: Comparison, amount: float = 2.0) -> str:
    if not comp.value.endswith("error"):
        return ""
    return " point" if amount == 1 else " points"


def _left_out(comp: Comparison) -> list[str]:
    lines = []
    if comp.excluded:
        lines += ["Left out of the comparison:", ""]
        lines += [f"- {what}: {why}" for what, why in comp.excluded]
        lines.append("")
    if comp.dropped:
        lines += ["Compared on fewer realisations (complete pairs only):", ""]
        lines += [f"- {d}: {why}" for d, why in comp.dropped.items()]
        lines.append("")
    if comp.timed_out and comp.timeouts == "loss":
        shown = ", ".join(f"{m} on {d}" for d, m in comp.timed_out)
        lines += [f"Timed out (counted as losses): {shown}.", ""]
    return lines


def _pair_row(comp: Comparison, t: PairTest) -> str:
    mark = " *" if t.p_holm < comp.alpha else ""
    nem = nemenyi_says(comp, t.a, t.b)
    return (
        f"| {t.a} vs {t.b} | {t.statistic:.1f} | {fmt_p(t.p)} | {fmt_p(t.p_holm)}{mark} | "
        f"{t.method} | {t.better or '–'} | {'yes' if nem else 'no'} |"
    )


def _wilcoxon_lines(comp: Comparison) -> list[str]:
    n = len(comp.datasets)
    m = comp.n_pairs
    methods = {t.method for t in comp.pairs}
    how = (
        "exact p-values (the sign-flip distribution of the rank sum, tied and zero differences "
        f"included; exact up to N = {WILCOXON_EXACT_MAX_N})"
        if methods == {"exact"}
        else "p-values by the normal approximation with the tie correction (N > "
        f"{WILCOXON_EXACT_MAX_N})"
        if methods == {"normal"}
        else "exact or normal p-values as the p method column says"
    )
    lines = [
        f"Wilcoxon signed-rank tests over the N = {n} data sets ({how}; zero differences split "
        f"their ranks), Holm-corrected over {m} pair(s). 'better' is the method the signed ranks "
        "favour; * marks p (Holm) < α; 'Nemenyi' says whether the average ranks differ by more "
        "than the CD.",
        "",
    ]
    if comp.min_p >= comp.alpha:
        lines += [
            f"With N = {n} data sets the smallest p-value a Wilcoxon test can give is "
            f"{comp.min_p:.3g} ≥ α = {comp.alpha}: no pair can be significant, whatever the "
            "results.",
            "",
        ]
    elif m > 1 and comp.min_p * m >= comp.alpha:
        lines += [
            f"With N = {n} data sets the smallest p-value is {comp.min_p:.3g}; after Holm over "
            f"{m} pairs the smallest p (Holm) is {comp.min_p * m:.3g} ≥ α = {comp.alpha}: no pair "
            "can be significant.",
            "",
        ]
    lines += [
        "| pair | W | p | p (Holm) | p method | better | Nemenyi |",
        "|:---|---:|---:|---:|:---|:---|:---|",
    ]
    lines += [_pair_row(comp, t) for t in comp.pairs]
    return lines


def _per_dataset_lines(comp: Comparison) -> list[str]:
    if not any(comp.per_dataset.values()):
        return []
    lines = [
        "",
        "Corrected resampled t-test per data set (Nadeau & Bengio 2003) over the realisations "
        "both methods finished: t = mean(d) / sqrt((1/J + ρ/(1 − ρ)) var(d)), J − 1 degrees of "
        "freedom, ρ = n_test / n_pool for training and test parts drawn from a pool of n_pool "
        f"rows. Pairs with p < {comp.alpha} (no multiplicity correction), the better method "
        "first:",
        "",
    ]
    unit = _unit(comp)
    for d, tests in comp.per_dataset.items():
        sig = []
        for s in tests:
            if s.p is None or s.p >= comp.alpha:
                continue
            a_better = (s.diff < 0) == comp.lower_is_better
            best, other = (s.a, s.b) if a_better else (s.b, s.a)
            sig.append(
                f"{best} over {other} by {abs(s.diff):.2f}{unit} (t = {abs(s.t or 0):.2f}, "
                f"p = {fmt_p(s.p)})"
            )
        undefined = [f"{s.a} vs {s.b}: {s.note}" for s in tests if s.p is None and s.note]
        design = comp.designs.get(d)
        head = f"- {d} ({design_text(design)})" if design else f"- {d}"
        text = "; ".join(sig) if sig else "none"
        if undefined:
            text += f". Undefined: {'; '.join(undefined)}"
        lines.append(f"{head}: {text}")
    return lines


def _bayes_row(b: BayesResult) -> str:
    note = f" ({b.note})" if b.note else ""
    return f"| {b.a} vs {b.b} | {b.p_a:.3f} | {b.p_rope:.3f} | {b.p_b:.3f} | {b.reading()}{note} |"


def _bayes_lines(comp: Comparison) -> list[str]:
    if comp.rope is None:
        return []
    unit = _unit(comp, comp.rope)
    lines = [
        "",
        f"## Bayesian comparison (rope ± {comp.rope:g}{unit})",
        "",
        f"Bayesian signed-rank test over the N = {len(comp.datasets)} data sets (Benavoli et al. "
        f"2017: prior weight 0.5 at 0, {BAYES_SAMPLES} Monte Carlo draws, seed {BAYES_SEED}). "
        f"P(a) / P(b): a / b better by more than the rope; P(rope): practically equivalent. A "
        f"reading needs a probability ≥ {DECISIVE}.",
        "",
        "| pair | P(a) | P(rope) | P(b) | reading |",
        "|:---|---:|---:|---:|:---|",
    ]
    lines += [_bayes_row(b) for b in comp.bayes]
    if any(comp.bayes_per_dataset.values()):
        lines += [
            "",
            "Bayesian correlated t-test per data set (Corani & Benavoli 2015; the ρ of the "
            "corrected t-test above), pairs with a reading:",
            "",
        ]
        for d, posts in comp.bayes_per_dataset.items():
            decided = [
                f"{b.a} vs {b.b}: {b.reading()} ({max(b.p_a, b.p_rope, b.p_b):.3f})"
                for b in posts
                if b.reading() != "undecided"
            ]
            lines.append(f"- {d}: {'; '.join(decided) if decided else 'none'}")
    return lines


def verdict_parts(comp: Comparison) -> list[tuple[str, str, str, str]]:
    """Per method against the control: ``(method, Holm–Wilcoxon verdict, Nemenyi's view,
    Bayesian reading)``; the last is empty without ``--bayes``. Shared by the text and HTML."""
    control = comp.control
    if control is None or comp.friedman is None:
        return []
    bayes = {(b.a, b.b): b for b in comp.bayes}
    parts = []
    for t in comp.pairs:
        other = t.b if t.a == control else t.a
        if t.p_holm < comp.alpha:
            word = "better than" if t.better == other else "worse than"
            verdict = f"{word} {control} (Holm–Wilcoxon p = {fmt_p(t.p_holm)})"
        else:
            verdict = (
                f"no detectable difference from {control} (Holm–Wilcoxon p = {fmt_p(t.p_holm)})"
            )
        nem = nemenyi_says(comp, t.a, t.b)
        gap = abs(comp.rank_of(t.a) - comp.rank_of(t.b))
        agree = nem == (t.p_holm < comp.alpha)
        nemenyi = (
            f"Nemenyi {'agrees' if agree else 'disagrees'} (rank difference {gap:.2f}, "
            f"CD {comp.cd:.2f})"
        )
        reading = ""
        b = bayes.get((t.a, t.b))
        if b is not None:
            p_other, p_control = (b.p_a, b.p_b) if b.a == other else (b.p_b, b.p_a)
            reading = b.reading()
            if reading == "practically equivalent":
                reading = f"practically equivalent (Bayes, P = {b.p_rope:.3f})"
            else:
                reading = (
                    f"Bayes: P({other} better) = {p_other:.3f}, P(equivalent) = "
                    f"{b.p_rope:.3f}, P({control} better) = {p_control:.3f}"
                )
        parts.append((other, verdict, nemenyi, reading))
    return parts


def verdicts(comp: Comparison) -> list[str]:
    """One line per method against the control: better / worse / no detectable difference by
    the Holm–Wilcoxon test, what Nemenyi says, and with ``--bayes`` the Bayesian reading."""
    return [
        f"- {other}: " + "; ".join(p for p in (verdict, nemenyi, reading) if p) + "."
        for other, verdict, nemenyi, reading in verdict_parts(comp)
    ]


def render_comparison(comp: Comparison) -> str:
    """The comparison as markdown: what was left out, ranks, Friedman / Iman–Davenport, CD,
    Holm–Wilcoxon, win/tie/loss, the per-dataset corrected t-tests, the Bayesian tests (with
    ``bayes``) and, with a control, one verdict per method."""
    lines = [f"## Statistics over data sets ({comp.value})", ""]
    lines += _left_out(comp)
    f = comp.friedman
    if f is None:
        k, n = len(comp.methods), len(comp.datasets)
        lines.append(
            f"{k} method(s) over {n} complete data set(s): a comparison over data sets needs at "
            "least two of each; no test."
        )
        return "\n".join(lines) + "\n"
    lines += ["| method | average rank |", "|:---|---:|"]
    for i in np.argsort(f.average_ranks, kind="stable"):
        lines.append(f"| {comp.methods[i]} | {f.average_ranks[i]:.3f} |")
    if f.f is None:
        id_text = f"Iman–Davenport F_F undefined: {f.note}"
    else:
        id_text = f"Iman–Davenport F_F = {f.f:.3f} (p = {fmt_p(f.p_f)})"
    lines += [
        "",
        f"Friedman χ²_F = {f.chi2:.3f} (p = {fmt_p(f.p_chi2)}); {id_text}; over N = {f.n} data "
        f"sets and k = {f.k} methods.",
        f"Nemenyi critical difference at α = {comp.alpha}: CD = {comp.cd:.3f} "
        f"(q_α = {nemenyi_q(f.k, comp.alpha):.3f}).",
        "",
    ]
    lines += _wilcoxon_lines(comp)
    lines += ["", "Win / tie / loss of the row method against the column method:", ""]
    lines.append("| | " + " | ".join(comp.methods) + " |")
    lines.append("|:---|" + "---:|" * len(comp.methods))
    assert comp.wtl is not None
    for i, m in enumerate(comp.methods):
        cells = ["-" if i == j else "/".join(map(str, comp.wtl[i, j])) for j in range(f.k)]
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
    lines += _per_dataset_lines(comp)
    lines += _bayes_lines(comp)
    verdict = verdicts(comp)
    if verdict:
        lines += ["", f"## Verdict against {comp.control}", ""] + verdict
    return "\n".join(lines) + "\n"
