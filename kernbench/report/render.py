"""Render a :class:`~kernbench.report.tables.Table` as markdown, LaTeX or tidy CSV.

Layout of a cell: ``mean ± spread`` of our realisations, ``(n=k)`` appended when k differs from the
expected count, the row's best in bold, ``†`` (markdown) / underline (LaTeX) for methods not
significantly worse than the best. With a reference CSV the published value comes first: in markdown
in the same cell, ``26.97 | 27.40 ± 1.20`` (published | ours); in LaTeX as a ``paper`` sub-column
before an ``ours`` sub-column under each method; in CSV as ``published_mean``/``published_spread``.
A published number measured on another data set than ours (a stand-in) carries ``‡`` (CSV:
``published_dataset`` names the paper's data set, ``stand_in`` is true) and the notes name the
paper's data set.
"""

from __future__ import annotations

import io
from typing import Any, Literal

import numpy as np
import pandas as pd

from kernbench.cells.records import VALUES
from kernbench.report.tables import Table, TableCell

Format = Literal["md", "latex", "csv"]
DASH = "–"
NSW_MARK = "†"
STAND_IN_MARK = "‡"


def _number(x: float, percent: bool) -> str:
    """Test errors with two decimals; other values (RMSE, iterations, seconds) with three
    significant digits, and whole from 1000 up (1000 iterations, not 1e+03)."""
    if percent:
        return f"{x:.2f}"
    return f"{x:.0f}" if abs(x) >= 1000 else f"{x:.3g}"


def _ours(cell: TableCell, percent: bool, pm: str) -> str:
    """``mean ± spread`` of our realisations, or ``n/a`` when none has a value."""
    if cell.mean is None:
        return "n/a"
    text = _number(cell.mean, percent)
    if cell.spread is not None:
        text += f"{pm}{_number(cell.spread, percent)}"
    return text


def _count(cell: TableCell) -> str:
    return f" (n={cell.n})" if cell.mean is not None and cell.n != cell.n_expected else ""


def _dataset_label(table: Table, dataset: str) -> str:
    return dataset + ("*" if dataset in table.dataset_flags else "")


def _legend(table: Table, *, bold: str, mark: str, alpha: str, pm: str) -> list[str]:
    percent = table.unit == "%"
    name = VALUES[table.value].label if table.value in VALUES else table.value
    name += " (%)" if percent else ""
    parts = [
        f"{name}, mean{pm}{table.spread_kind} over realisations",
        f"{bold}: lowest mean of the row",
        f"{mark}: not significantly worse than the best (paired two-sided t-test over the "
        f"realisations both have, uncorrected for overlapping training sets, "
        f"{alpha} = {table.significance:g}; `kernbench significance` gives the corrected test)",
    ]
    if any(_count(c) for c in table.cells.values()):
        parts.append("(n=k): k realisations averaged instead of the expected count")
    if table.has_reference:
        parts.append(f"{DASH}: no published value")
    lines = ["; ".join(parts) + "."]
    if table.n_rank_datasets:
        lines.append(
            f"Average rank over the {table.n_rank_datasets} dataset(s) where every method has a "
            "result (rank 1 = lowest mean; ties share the average rank)."
        )
    if table.has_reference:
        lines.append(f"Published values from {_basename(table.reference)}, shown first.")
        if table.tolerance is not None:
            lines.append(agreement_line(table))
    return lines


def agreement_line(table: Table) -> str:
    """The table's agreement count under the rule on means, stand-ins counted apart."""
    k, n = table.tolerance or (0, 0)
    unit = " points" if table.unit == "%" else ""
    text = (
        f"{k} of {n} of our means agree with the published one: |ours − published| ≤ "
        f"max(2 × sqrt(s_o²/n_o + s_p²/n_p), 1.5{unit}), the standard errors of the two means."
    )
    if table.tolerance_stand_ins is not None:
        ks, ns = table.tolerance_stand_ins
        text += (
            f" Like for like {k - ks}/{n - ns}; on stand-ins ({STAND_IN_MARK}: published on "
            f"another data set) {ks}/{ns}."
        )
    return text


def _published_text(cell: TableCell, mark: str = STAND_IN_MARK) -> str:
    """The published number as printed, ``‡``-marked when measured on a stand-in data set."""
    if cell.published is None:
        return DASH
    return cell.published.text + (mark if cell.stand_in is not None else "")


def _basename(path: str | None) -> str:
    return "" if path is None else path.replace("\\", "/").rsplit("/", 1)[-1]


# -- markdown ------------------------------------------------------------------------------------
def _md_escape(text: str) -> str:
    """Escape the characters that would break a pipe table or start emphasis."""
    return text.replace("|", "\\|").replace("*", "\\*")


def _md_cell(table: Table, cell: TableCell) -> str:
    percent = table.unit == "%"
    ours = _ours(cell, percent, " ± ")
    if cell.best:
        ours = f"**{ours}**"
    elif cell.not_significantly_worse:
        ours += NSW_MARK
    ours += _count(cell)
    if not table.has_reference:
        return ours
    return f"{_published_text(cell)} \\| {ours}"


def _rank_text(rank: float | None) -> str:
    return DASH if rank is None else f"{rank:.2f}"


def render_markdown(table: Table) -> str:
    """GitHub-flavoured markdown: heading, pipe table, legend and notes."""
    # with published numbers, every cell reads "published | ours": the header says so
    first = "dataset (published \\| ours)" if table.has_reference else "dataset"
    header = [first] + [_md_escape(m) for m in table.methods]
    lines = [
        f"### {table.title}",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "|".join([":---"] + ["---:"] * len(table.methods)) + "|",
    ]
    for d in table.datasets:
        row = [_md_escape(_dataset_label(table, d))]
        row += [_md_cell(table, table.cell(d, m)) for m in table.methods]
        lines.append("| " + " | ".join(row) + " |")
    ranks = [_rank_text(table.average_ranks[m]) for m in table.methods]
    lines.append("| avg. rank | " + " | ".join(ranks) + " |")
    lines.append("")
    lines += _legend(table, bold="**bold**", mark=NSW_MARK, alpha="α", pm=" ± ")
    if table.notes:
        lines += ["", "Notes:"] + [f"- {_md_escape(n)}" for n in table.notes]
    return "\n".join(lines) + "\n"


# -- LaTeX ---------------------------------------------------------------------------------------
_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "×": r"$\times$",
    "²": r"$^2$",
    "α": r"$\alpha$",
    "–": "--",
    "±": r"$\pm$",
    "≤": r"$\le$",
    "−": r"$-$",
    "‡": r"$^\ddagger$",
    "…": r"\ldots{}",
}


def latex_escape(text: str) -> str:
    """Escape LaTeX's special characters in plain text."""
    return "".join(_LATEX_SPECIALS.get(ch, ch) for ch in text)


def _latex_cell(table: Table, cell: TableCell) -> str:
    ours = _ours(cell, table.unit == "%", r" $\pm$ ")
    if cell.best:
        ours = rf"\textbf{{{ours}}}"
    elif cell.not_significantly_worse:
        ours = rf"\underline{{{ours}}}"
    return ours + _count(cell)


def render_latex(table: Table) -> str:
    """A booktabs ``table`` environment; with a reference, ``paper``/``ours`` sub-columns."""
    ref = table.has_reference
    per_method = 2 if ref else 1
    colspec = "l" + "r" * per_method * len(table.methods)
    out = [
        r"\begin{table}[t]",
        r"\centering",
        rf"\caption{{{latex_escape(table.title)}}}",
        rf"\label{{tab:{latex_escape(table.name)}}}",
        rf"\begin{{tabular}}{{{colspec}}}",
        r"\toprule",
    ]
    methods = [latex_escape(m) for m in table.methods]
    if ref:
        out.append(" & " + " & ".join(rf"\multicolumn{{2}}{{c}}{{{m}}}" for m in methods) + r" \\")
        out.append(
            " ".join(rf"\cmidrule(lr){{{2 + 2 * i}-{3 + 2 * i}}}" for i in range(len(methods)))
        )
        out.append("dataset & " + " & ".join(["paper & ours"] * len(methods)) + r" \\")
    else:
        out.append("dataset & " + " & ".join(methods) + r" \\")
    out.append(r"\midrule")
    for d in table.datasets:
        row = [latex_escape(_dataset_label(table, d))]
        for m in table.methods:
            cell = table.cell(d, m)
            if ref:
                row.append(_published_text(cell, r"$^\ddagger$").replace(DASH, "--"))
            row.append(_latex_cell(table, cell))
        out.append(" & ".join(row) + r" \\")
    out.append(r"\midrule")
    ranks = []
    for m in table.methods:
        ranks += ([""] if ref else []) + [_rank_text(table.average_ranks[m]).replace(DASH, "--")]
    out.append("avg.\\ rank & " + " & ".join(ranks) + r" \\")
    out += [r"\bottomrule", r"\end{tabular}"]
    legend = _legend(table, bold="bold", mark="underlined", alpha="α", pm=" ± ")
    out.append(r"\par\smallskip\footnotesize")
    out += [latex_escape(line) + r"\par" for line in legend]
    out += [latex_escape(note) + r"\par" for note in table.notes]
    out.append(r"\end{table}")
    return "\n".join(out) + "\n"


# -- CSV -----------------------------------------------------------------------------------------
CSV_COLUMNS = [
    "dataset",
    "method",
    "mean",
    "spread",
    "n",
    "published_mean",
    "published_spread",
    "best",
    "not_significantly_worse",
    "spread_kind",
    "n_expected",
    "p_value",
    "rank",
    "published_spread_kind",
    "within_tolerance",
    "value",
    "unit",
    "published_n_runs",
    "published_dataset",
    "stand_in",
]


def table_frame(table: Table) -> pd.DataFrame:
    """The table as a tidy DataFrame, one row per (dataset, method) (columns ``CSV_COLUMNS``)."""
    records = []
    for d in table.datasets:
        for m in table.methods:
            c = table.cell(d, m)
            p = c.published
            records.append(
                {
                    "dataset": d,
                    "method": m,
                    "mean": c.mean,
                    "spread": c.spread,
                    "n": c.n,
                    "published_mean": None if p is None else p.mean,
                    "published_spread": None if p is None else p.spread,
                    "best": c.best,
                    "not_significantly_worse": c.not_significantly_worse,
                    "spread_kind": table.spread_kind,
                    "n_expected": c.n_expected,
                    "p_value": c.p_value,
                    "rank": c.rank,
                    "published_spread_kind": None if p is None else p.spread_kind,
                    "within_tolerance": c.within_tolerance,
                    "value": table.value,
                    "unit": table.unit,
                    "published_n_runs": None if p is None else p.n_runs,
                    "published_dataset": None if p is None else p.dataset,
                    "stand_in": None if p is None else c.stand_in is not None,
                }
            )
    return pd.DataFrame.from_records(records, columns=CSV_COLUMNS)


def render_csv(table: Table) -> str:
    """Tidy CSV (full precision), one row per (dataset, method)."""
    buf = io.StringIO()
    table_frame(table).to_csv(buf, index=False, lineterminator="\n")
    return buf.getvalue()


def render_table(table: Table, fmt: Format = "md") -> str:
    """Render ``table`` as ``md`` (default), ``latex`` or ``csv``."""
    renderers = {"md": render_markdown, "latex": render_latex, "csv": render_csv}
    if fmt not in renderers:
        raise ValueError(f"unknown table format {fmt!r}; expected one of {list(renderers)}")
    return renderers[fmt](table)


def rows_markdown(rows: list[dict[str, Any]]) -> str:
    """A markdown table of tidy rows (floats below 0.01 in scientific notation)."""
    if not rows:
        return "(no rows)"
    keys = list(rows[0])

    def fmt(v: Any) -> str:
        if v is None or (isinstance(v, float) and np.isnan(v)):
            return DASH
        if isinstance(v, float):
            return f"{v:.2e}" if 0 < abs(v) < 0.01 else f"{v:.4g}"
        return str(v)

    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    lines += ["| " + " | ".join(fmt(r[k]) for k in keys) + " |" for r in rows]
    return "\n".join(lines)
