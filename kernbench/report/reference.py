"""Published reference numbers: load a tidy reference CSV and match it to our table cells.

A reference CSV (``experiments/reference/*.csv``) has one row per (dataset, method, setting,
metric) with the printed ``mean`` and ``spread``, the ``spread_kind`` (``std`` | ``stderr`` |
``none``: what the paper's ``±`` means) and ``n_runs`` (the paper's number of runs behind the
mean), plus setting columns such as ``T``, ``weak_learner``, ``kernel``, ``n_base``,
``regularization``. ``spread_kind`` and ``n_runs`` turn a printed spread into the standard error
of the published mean, which the agreement rule compares (docs/tables-and-figures.md).

A table cell (our dataset label, our method label) is matched by

* dataset: ``reference_datasets.get(label, label)`` against the ``dataset`` column; a mapping
  ``{"dataset": "Forest", "n_train": 1000}`` also filters on its other columns (one published
  dataset at several settings, e.g. training sizes);
* method: the filter ``reference_methods.get(label, {"method": label})``, a mapping of CSV column ->
  value (``{"method": "AdaBoost-Stump", "T": 100}``); numbers compare numerically (``100`` matches
  ``100`` and ``100.0``), ``None`` matches an empty field, anything else compares as text;
* metric: the filter's ``metric`` if given, otherwise the metric of the tabulated value
  (``test_error`` -> ``test_error_pct``).

No matching row means no published value (shown as ``–``). Several matching rows is an error that
names the columns telling them apart, so the spec can add the missing filter.
"""

from __future__ import annotations

import io
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from kernbench.errors import KernbenchError
from kernbench.files.reading import FileTooLarge, NotARegularFile, read_user_file

#: the largest reference CSV read (the shipped ones are a few kB each)
MAX_REFERENCE_BYTES = 16_000_000

#: reference-CSV metric for each value a table can show
METRIC_FOR_VALUE = {
    "test_error": "test_error_pct",
    "train_error": "train_error_pct",
    "fit_time_s": "train_time_s",
    "predict_time_s": "test_time_s",
    "n_iter": "n_iterations",
}


class ReferenceMatchError(KernbenchError):
    """A reference CSV that cannot be read, or a filter that is unknown or ambiguous."""


@dataclass(frozen=True)
class Published:
    """One published number as printed (``text`` keeps ``2.30`` as ``2.30``).

    ``n_runs`` is the paper's number of runs (``None`` when the CSV does not say), ``dataset``
    the CSV's data set the number was measured on.
    """

    mean: float
    spread: float | None
    spread_kind: str
    text: str
    spread_text: str | None = None
    n_runs: int | None = None
    dataset: str | None = None


def load_reference(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read a reference CSV with every field as text (empty fields are ``""``).

    Raises
    ------
    ReferenceMatchError
        If the file is missing or lacks the ``dataset``/``method``/``mean`` columns.
    """
    p = Path(path)
    if not p.exists():
        raise ReferenceMatchError(
            f"reference CSV not found: {p} (table.reference.file in the spec); "
            "fix the path or use --no-reference"
        )
    try:  # bounded: a device, a FIFO or a huge file is refused before it is read
        data = read_user_file(p, MAX_REFERENCE_BYTES, "reference CSV")
    except (FileTooLarge, NotARegularFile) as exc:
        raise ReferenceMatchError(
            f"reference file {p}: {exc.strerror}; fix table.reference.file in the spec or use "
            "--no-reference"
        ) from None
    try:
        frame = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False)
    except (OSError, ValueError) as exc:  # binary, not CSV, unreadable (ParserError: ValueError)
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ReferenceMatchError(
            f"reference file {p} is not a readable CSV ({first}); "
            "fix table.reference.file in the spec or use --no-reference"
        ) from None
    missing = [c for c in ("dataset", "method", "mean") if c not in frame.columns]
    if missing:
        raise ReferenceMatchError(f"reference CSV {p} lacks column(s) {missing}")
    return frame


def _field_matches(series: pd.Series, want: Any) -> pd.Series:
    text = series.astype(str).str.strip()
    if want is None:
        return text == ""
    if isinstance(want, int | float) and not isinstance(want, bool):
        numbers = pd.to_numeric(text, errors="coerce")
        return numbers == float(want)
    return text == str(want)


def _to_float(text: str) -> float | None:
    try:
        x = float(text)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def match_reference(
    reference: pd.DataFrame,
    dataset_label: str,
    method_label: str,
    *,
    reference_methods: Mapping[str, Mapping[str, Any]] | None = None,
    reference_datasets: Mapping[str, str | Mapping[str, Any]] | None = None,
    value: str = "test_error",
    source: str = "reference CSV",
) -> Published | None:
    """The published value for one table cell, or ``None`` when the reference has none.

    Parameters
    ----------
    reference : DataFrame
        As returned by :func:`load_reference`.
    dataset_label, method_label : str
        Our row and column labels.
    reference_methods, reference_datasets : mapping, optional
        The spec's ``table.reference_methods`` / ``table.reference_datasets``.
    value : str
        The tabulated value; selects the default ``metric`` (see ``METRIC_FOR_VALUE``).
    source : str
        Name of the CSV, for error messages.

    Raises
    ------
    ReferenceMatchError
        If a filter names a column the CSV lacks, or the filter matches several rows.
    """
    dataset = (reference_datasets or {}).get(dataset_label, dataset_label)
    filters = dict((reference_methods or {}).get(method_label, {"method": method_label}))
    if isinstance(dataset, Mapping):  # {"dataset": name, column: value, ...}
        filters.update({k: v for k, v in dataset.items() if k != "dataset"})
        dataset = dataset["dataset"]
    if "metric" not in filters and "metric" in reference.columns:
        metric = METRIC_FOR_VALUE.get(value)
        if metric is None:
            return None
        filters["metric"] = metric
    unknown = [c for c in filters if c not in reference.columns]
    if unknown:
        raise ReferenceMatchError(
            f"{source}: table.reference.methods.{method_label} filters on column(s) {unknown}, "
            f"which the CSV lacks; its columns are {list(reference.columns)}"
        )
    mask = _field_matches(reference["dataset"], dataset)
    for column, want in filters.items():
        mask &= _field_matches(reference[column], want)
    rows = reference[mask]
    if rows.empty:
        return None
    if len(rows) > 1:
        differing = [c for c in rows.columns if c != "note" and rows[c].nunique() > 1]
        options = rows[differing].to_dict("records")
        raise ReferenceMatchError(
            f"{source}: the reference filter {filters} for method {method_label!r} matches "
            f"{len(rows)} rows for dataset {dataset!r}, differing in {differing}: {options}; "
            f"add one of these columns to table.reference.methods.{method_label}"
        )
    row = rows.iloc[0]
    mean = _to_float(row["mean"])
    if mean is None:
        return None
    spread_text = str(row.get("spread", "")).strip() or None
    kind = str(row.get("spread_kind", "")).strip() or ("none" if spread_text is None else "std")
    runs = _to_float(str(row.get("n_runs", "")).strip())
    return Published(
        mean=mean,
        spread=_to_float(spread_text) if spread_text else None,
        spread_kind=kind,
        text=str(row["mean"]).strip(),
        spread_text=spread_text,
        n_runs=int(runs) if runs is not None and runs >= 1 else None,
        dataset=str(dataset),
    )
