"""Paper-style results tables: rows = datasets, columns = methods, cell = mean ± spread.

:func:`build_table` reads one results directory into a :class:`Table` with everything a rendering
needs (numbers, best per row, significance marks, average ranks, published values, notes);
:func:`kernbench.report.render.render_table` turns it into markdown, LaTeX or CSV.

Rules (issue #2 part 7):

* a cell averages the realisations with status ``done``; failed, timed-out and missing
  realisations are counted and named in the notes, never averaged;
* the lowest mean of a row is the best; another method is marked *not significantly worse* when a
  paired two-sided t-test over the realisations both have gives p >= ``table.significance``
  (fewer than two shared realisations: no mark);
* the average rank uses only datasets where every method has a result; ties share the average rank;
* with a reference CSV, the published value sits beside ours, and the table reports how many of our
  means agree with it: within max(2 × sqrt(s_o²/n_o + s_p²/n_p), 1.5 points), the standard errors
  of the two means (:func:`kernbench.report.stats.within_tolerance`); rows whose published numbers
  were measured on another data set (the spec's ``reference.stand_ins``) are marked and counted
  apart.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from kernbench.files.writing import write_text_file
from kernbench.report.collect import (
    PERCENT_VALUES,
    Experiment,
    Selection,
    cell_values,
    load_experiment,
    row_value,
    split_flags,
    status_counts,
)
from kernbench.report.reference import Published, load_reference, match_reference
from kernbench.report.stats import (
    average_ranks,
    cell_mean,
    mean_spread,
    not_significantly_worse,
    published_stderr,
    row_ranks,
    sample_std,
    standard_error,
    within_tolerance,
)
from kernbench.store import find_stores
from kernbench.store.environment import environments

TABLE_MD = "table.md"


@dataclass
class TableCell:
    """One (dataset, method) entry of a table.

    ``values`` maps realisation index -> value (percent for errors) over the ``done`` realisations;
    ``problems`` counts the others by reason (``failed``, ``timeout``, ``missing`` ...).
    """

    dataset: str
    method: str
    values: dict[int, float]
    n_expected: int
    mean: float | None
    spread: float | None
    std: float | None
    stderr: float | None
    problems: Counter[str] = field(default_factory=Counter)
    first_error: str | None = None
    published: Published | None = None
    best: bool = False
    not_significantly_worse: bool = False
    p_value: float | None = None
    rank: float | None = None
    within_tolerance: bool | None = None
    #: the paper's data set when its published number was measured on another one than ours
    stand_in: str | None = None

    @property
    def n(self) -> int:
        """Number of realisations averaged."""
        return len(self.values)


@dataclass
class Table:
    """A results table of one experiment (see the module docstring for the rules)."""

    name: str
    title: str
    directory: Path
    value: str
    unit: str
    spread_kind: str
    significance: float
    datasets: list[str]
    methods: list[str]
    cells: dict[tuple[str, str], TableCell]
    average_ranks: dict[str, float | None]
    n_rank_datasets: int
    reference: str | None = None
    #: (cells agreeing, cells compared) over all cells with a published value
    tolerance: tuple[int, int] | None = None
    #: the same counts over the cells whose published number is on a stand-in data set
    tolerance_stand_ins: tuple[int, int] | None = None
    #: the spec's ``table.format``: how ``kernbench table`` renders it unless told otherwise
    format: str = "md"
    dataset_flags: dict[str, dict[str, int]] = field(default_factory=dict)
    substitutions: dict[str, list[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    #: one line when the cells came from different library versions (also among the notes)
    environment_warning: str | None = None

    def cell(self, dataset: str, method: str) -> TableCell:
        return self.cells[(dataset, method)]

    @property
    def has_reference(self) -> bool:
        return self.reference is not None


def _summarise_cell(exp: Experiment, dataset: str, method: str, value: str, kind: str) -> TableCell:
    rows = exp.rows.get((dataset, method), {})
    values, sizes = cell_values(rows, value)
    x = np.array(list(values.values()), dtype=float)
    _, spread = mean_spread(x, kind)  # type: ignore[arg-type]
    # one number per cell, whatever order the realisations finished in (equal counts tie)
    mean = cell_mean(values, sizes, percent=value in PERCENT_VALUES)
    errors = [row.get("error") for _, row in sorted(rows.items()) if row["status"] != "done"]
    first_error = next((e for e in errors if e), None)
    return TableCell(
        dataset=dataset,
        method=method,
        values=values,
        n_expected=exp.expected.get(dataset, len(values)),
        mean=mean,
        spread=spread,
        std=sample_std(x),
        stderr=standard_error(x),
        problems=status_counts(rows, value, exp.expected.get(dataset, 0)),
        first_error=first_error,
    )


def _mark_best(cells: list[TableCell], alpha: float) -> None:
    """Bold the lowest mean(s) of a row; mark the others not significantly worse (paired test)."""
    present = [c for c in cells if c.mean is not None]
    if not present:
        return
    best_mean = min(c.mean for c in present)  # type: ignore[type-var]
    best = [c for c in present if c.mean == best_mean]
    for c in best:
        c.best = True
    reference = best[0]
    for c in present:
        if c.best:
            continue
        c.not_significantly_worse, c.p_value = not_significantly_worse(
            reference.values, c.values, alpha
        )


def _dataset_flags(exp: Experiment, dataset: str) -> tuple[dict[str, int], list[str]]:
    """``flag -> number of realisations`` raising it (a realisation counts once over methods),
    and the distinct ``substitution`` notes of the flagged realisations."""
    by_realisation: dict[int, set[str]] = {}
    reasons: list[str] = []
    for method in exp.methods:
        for r, row in exp.rows.get((dataset, method), {}).items():
            info = (row.get("result") or {}).get("split_info") or {}
            flags = split_flags(info)
            by_realisation.setdefault(r, set()).update(flags)
            note = info.get("substitution")
            if flags and note and str(note) not in reasons:
                reasons.append(str(note))
    counts: Counter[str] = Counter()
    for flags in by_realisation.values():
        counts.update(flags)
    return dict(sorted(counts.items())), reasons


def _one_line(text: str, limit: int = 120) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    line = lines[0] if lines else ""  # "ErrorType: message" (the runner's format)
    return line if len(line) <= limit else line[: limit - 1] + "…"


def build_table(
    results_dir: str | os.PathLike[str],
    *,
    reference: bool = True,
    value: str | None = None,
    selection: Selection | None = None,
) -> Table:
    """Build the results table of one experiment.

    Parameters
    ----------
    results_dir : path
        A results directory holding ``results.sqlite``.
    reference : bool
        Put the published values of the spec's ``table.reference`` CSV beside ours.
    value : str, optional
        What to tabulate: ``test_error`` (default: the spec's ``table.value``), ``train_error``
        (both in percent), ``fit_time_s``, ``predict_time_s``, ``select_time_s``, ``model_size``.
    selection : Selection, optional
        The spec whose cells to tabulate (default: the spec last run into the store).

    Returns
    -------
    Table

    Raises
    ------
    kernbench.errors.KernbenchError
        Missing store, unknown value, or an unreadable/ambiguous reference CSV.
    """
    exp = load_experiment(results_dir, selection)
    tspec = exp.table_spec
    value = value or tspec.get("value") or "test_error"
    kind = tspec.get("spread") or "std"
    alpha = float(tspec.get("significance") or 0.05)

    cells = {
        (d, m): _summarise_cell(exp, d, m, value, kind) for d in exp.datasets for m in exp.methods
    }
    for d in exp.datasets:
        _mark_best([cells[(d, m)] for m in exp.methods], alpha)

    means = np.array(
        [
            [np.nan if cells[(d, m)].mean is None else cells[(d, m)].mean for m in exp.methods]
            for d in exp.datasets
        ],
        dtype=float,
    ).reshape(len(exp.datasets), len(exp.methods))
    ranks, n_used = average_ranks(means)
    for i, d in enumerate(exp.datasets):
        if not np.isnan(means[i]).any():
            for m, rank in zip(exp.methods, row_ranks(means[i]), strict=True):
                cells[(d, m)].rank = float(rank)

    table = Table(
        name=exp.name,
        title=exp.title,
        directory=exp.directory,
        value=value,
        unit="%" if value in PERCENT_VALUES else "",
        spread_kind=kind,
        significance=alpha,
        datasets=exp.datasets,
        methods=exp.methods,
        cells=cells,
        average_ranks={
            m: (None if np.isnan(r) else float(r)) for m, r in zip(exp.methods, ranks, strict=True)
        },
        n_rank_datasets=n_used,
        format=str(tspec.get("format") or "md"),
    )
    for d in exp.datasets:
        flags, reasons = _dataset_flags(exp, d)
        if flags:
            table.dataset_flags[d] = flags
            table.substitutions[d] = reasons
    ref_path = tspec.get("reference")
    if reference and ref_path:
        _attach_reference(table, ref_path, tspec)
    table.notes = _notes(table, exp)
    envs = environments(row for cell_rows in exp.rows.values() for row in cell_rows.values())
    table.environment_warning = envs.warning()
    if table.environment_warning:
        table.notes.append(f"Warning: {table.environment_warning}.")
    described = envs.describe()
    if described:
        table.notes.append(described)
    return table


def _attach_reference(table: Table, ref_path: str, tspec: dict) -> None:
    ref = load_reference(ref_path)
    table.reference = str(ref_path)
    stand_ins = tspec.get("reference_stand_ins") or {}
    n_within = n_compared = stand_within = stand_compared = 0
    for cell in table.cells.values():
        cell.published = match_reference(
            ref,
            cell.dataset,
            cell.method,
            reference_methods=tspec.get("reference_methods") or {},
            reference_datasets=tspec.get("reference_datasets") or {},
            value=table.value,
            source=Path(ref_path).name,
        )
        if cell.published is None:
            continue
        cell.stand_in = stand_ins.get(cell.dataset)
        if cell.mean is None:
            continue
        # the agreement of two means: each side's standard error (ours from its n runs, the
        # paper's from its printed spread, spread kind and number of runs)
        theirs = published_stderr(
            cell.published.spread,
            cell.published.spread_kind,
            cell.published.n_runs,
            n_fallback=cell.n,
        )
        cell.within_tolerance = within_tolerance(
            cell.mean, cell.stderr, cell.published.mean, theirs
        )
        n_compared += 1
        n_within += cell.within_tolerance
        if cell.stand_in is not None:
            stand_compared += 1
            stand_within += cell.within_tolerance
    table.tolerance = (n_within, n_compared)
    if stand_ins:
        table.tolerance_stand_ins = (stand_within, stand_compared)


def _notes(table: Table, exp: Experiment) -> list[str]:
    notes = []
    for d, flags in table.dataset_flags.items():
        n = max(len(exp.rows.get((d, m), {})) for m in exp.methods)
        what = ", ".join(f"{flag} in {k} of {n} realisation(s)" for flag, k in flags.items())
        text = f"{d}*: substitute splits or data: {what}"
        reasons = table.substitutions.get(d)
        notes.append(text + (f" ({'; '.join(reasons)})." if reasons else "."))
    for d, paper_data in _stand_ins(table).items():
        notes.append(
            f"‡ {d}: the published numbers were measured on {paper_data}, another data set than "
            "ours (a stand-in), and are counted apart."
        )
    return notes + _cell_notes(table) + list(exp.notes)


def _stand_ins(table: Table) -> dict[str, str]:
    """``dataset -> the paper's data set`` for the rows whose published numbers are stand-ins."""
    out: dict[str, str] = {}
    for d in table.datasets:
        for m in table.methods:
            paper_data = table.cell(d, m).stand_in
            if paper_data is not None:
                out[d] = paper_data
                break
    return out


def _cell_notes(table: Table) -> list[str]:
    """Cells with fewer realisations than expected, grouped by what went wrong, and their errors."""
    cells = [table.cell(d, m) for d in table.datasets for m in table.methods]
    never_run = [c for c in cells if c.n == 0 and set(c.problems) == {"missing"}]
    skip = {id(c) for c in never_run}
    partial = [c for c in cells if c.problems and id(c) not in skip]
    notes = []
    if never_run:
        notes.append(
            f"Not run ({len(never_run)} of {len(cells)} cells): {_cell_list(table, never_run)}."
        )
    by_problem: dict[str, list[TableCell]] = {}
    by_error: dict[str, list[TableCell]] = {}
    for c in partial:
        by_problem.setdefault(_problem_text(c), []).append(c)
        if c.first_error:
            by_error.setdefault(_one_line(c.first_error), []).append(c)
    notes += [f"{text}: {_cell_list(table, group)}." for text, group in by_problem.items()]
    notes += [f"First error in {_cell_list(table, group)}: {e}" for e, group in by_error.items()]
    return notes


def _cell_list(table: Table, cells: list[TableCell]) -> str:
    """``every cell`` | ``d1 (all methods); d2: A, B`` in table order."""
    if len(cells) == len(table.cells) > 1:
        return "every cell"
    methods: dict[str, list[str]] = {}
    for c in cells:
        methods.setdefault(c.dataset, []).append(c.method)
    parts = []
    for d in table.datasets:
        if d in methods:
            ms = methods[d]
            full = len(ms) == len(table.methods) > 1
            parts.append(f"{d} (all methods)" if full else f"{d}: {', '.join(ms)}")
    return "; ".join(parts)


def _problem_text(c: TableCell) -> str:
    what = ", ".join(f"{k} {reason}" for reason, k in sorted(c.problems.items()))
    return f"{c.n} of {c.n_expected} realisation(s) averaged, {what}"


def build_tables(
    path: str | os.PathLike[str], *, reference: bool = True, value: str | None = None
) -> list[Table]:
    """One table per results directory at or below ``path`` (see :func:`build_table`)."""
    return [build_table(p, reference=reference, value=value) for p in find_stores(path)]


def write_table_md(results_dir: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` to ``<results_dir>/table.md`` atomically and return the path."""
    target = Path(results_dir) / TABLE_MD
    return write_text_file(target, text if text.endswith("\n") else text + "\n")


def summary_frame(
    results_dir: str | os.PathLike[str], *, value: str = "test_error"
) -> pd.DataFrame:
    """One row per dataset × method with the numbers behind a table.

    Columns: ``dataset``, ``method``, ``mean``, ``std``, ``stderr`` (of ``value``; errors in
    percent), ``n`` (done realisations with a value), ``n_expected``, ``n_failed`` (status failed or
    timeout), ``n_missing`` (never recorded, or pending/interrupted/skipped/without a value),
    ``fit_time_s`` and ``model_size`` (means over the done realisations).
    """
    exp = load_experiment(results_dir)
    records = []
    for d in exp.datasets:
        for m in exp.methods:
            c = _summarise_cell(exp, d, m, value, "std")
            done = [row for row in exp.rows.get((d, m), {}).values() if row["status"] == "done"]
            fit = [x for row in done if (x := row_value(row, "fit_time_s")) is not None]
            size = [x for row in done if (x := row_value(row, "model_size")) is not None]
            n_failed = c.problems.get("failed", 0) + c.problems.get("timeout", 0)
            records.append(
                {
                    "dataset": d,
                    "method": m,
                    "mean": c.mean,
                    "std": c.std,
                    "stderr": c.stderr,
                    "n": c.n,
                    "n_expected": c.n_expected,
                    "n_failed": n_failed,
                    "n_missing": sum(c.problems.values()) - n_failed,
                    "fit_time_s": float(np.mean(fit)) if fit else None,
                    "model_size": float(np.mean(size)) if size else None,
                }
            )
    return pd.DataFrame.from_records(
        records,
        columns=[
            "dataset",
            "method",
            "mean",
            "std",
            "stderr",
            "n",
            "n_expected",
            "n_failed",
            "n_missing",
            "fit_time_s",
            "model_size",
        ],
    )
