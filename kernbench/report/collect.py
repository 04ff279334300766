"""Read one results store into what a report needs: labels in spec order, one row per realisation.

The report reads only the store (``docs/DESIGN.md``). A store may hold rows of other specs (the
spec was edited, or two specs share one results directory). The report shows exactly the cells of
one spec: the one last run into the store (its cell identities are recorded there), or the one
given as a :class:`Selection` (``kernbench table --spec``). Other rows are counted in the notes and
never shown.

Stores written before the plan was recorded fall back to matching rows by labels: for every
(dataset, method, realisation) the row of the spec's estimator finished last; a note says so.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kernbench.cells.records import PERCENT_VALUES, row_value
from kernbench.store import Store

__all__ = [
    "PERCENT_VALUES",
    "Experiment",
    "Selection",
    "as_experiment",
    "cell_values",
    "load_experiment",
    "row_value",
    "split_flags",
    "status_counts",
]


@dataclass
class Experiment:
    """One results directory, ready for tables and figures.

    Attributes
    ----------
    directory : Path
    name, title : str
        From the stored spec (the directory name when the store has no spec).
    datasets, methods : list of str
        Row and column labels: spec order, then labels only the store knows (sorted).
    rows : dict
        ``(dataset, method) -> {realisation: row}`` with one chosen store row per realisation.
    expected : dict
        ``dataset -> number of realisations expected`` per cell.
    spec : dict
        The stored spec (empty without one).
    notes : list of str
        What was left out while reading (superseded or unknown rows).
    """

    directory: Path
    name: str
    title: str
    datasets: list[str]
    methods: list[str]
    rows: dict[tuple[str, str], dict[int, dict[str, Any]]]
    expected: dict[str, int]
    spec: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def table_spec(self) -> dict[str, Any]:
        return dict(self.spec.get("table") or {})

    @property
    def protocol(self) -> dict[str, Any]:
        return dict(self.spec.get("protocol") or {})


@dataclass(frozen=True)
class Selection:
    """Which cells a report shows: a spec (as stored, ``spec_to_dict``) and its cell identities.

    Built by the caller that knows how to plan a spec (the CLI's ``--spec``); by default the
    report uses the spec and plan recorded in the store.
    """

    spec: dict[str, Any]
    cell_ids: frozenset[str]


def _ordered(spec_labels: list[str], seen: set[str]) -> list[str]:
    return list(spec_labels) + sorted(seen - set(spec_labels))


def load_experiment(
    results_dir: str | os.PathLike[str], selection: Selection | None = None
) -> Experiment:
    """Read the store in ``results_dir`` (see :class:`Experiment`).

    Parameters
    ----------
    results_dir : path
    selection : Selection, optional
        The spec whose cells to show; default: the spec last run into the store.
    """
    directory = Path(results_dir)
    with Store(directory) as store:
        if selection is None:
            spec = store.get_meta("spec") or {}
            plan = store.plan_ids()
        else:
            spec, plan = selection.spec, set(selection.cell_ids)
        all_rows = store.rows()

    spec_datasets = [d["label"] for d in spec.get("datasets", [])]
    spec_methods = [m["label"] for m in spec.get("methods", [])]
    notes: list[str] = []
    if plan is not None:
        current = [r for r in all_rows if r["cell_id"] in plan]
        others = len(all_rows) - len(current)
        if others:
            notes.append(
                f"{others} stored cell(s) of other specs (or earlier versions of "
                f"{spec.get('name', 'this spec')!r}) were left out."
            )
    else:
        current = _match_by_labels(all_rows, spec, spec_datasets, spec_methods, notes)

    chosen: dict[tuple[str, str], dict[int, dict[str, Any]]] = {}
    superseded = 0
    for r in sorted(current, key=lambda r: r.get("finished_at") or 0.0):
        cell = chosen.setdefault((r["dataset"], r["method"]), {})
        if int(r["realisation"]) in cell:
            superseded += 1
        cell[int(r["realisation"])] = r  # (by labels only) later rows replace earlier ones
    if superseded:
        notes.append(
            f"{superseded} older stored cell(s) for the same dataset, method and realisation "
            "(earlier parameters or grid) were superseded by the latest."
        )
    if plan is None and spec and (superseded or len(current) < len(all_rows)):
        notes.append(
            "this store predates recorded plans, so its cells were matched by labels; rerun "
            "`kernbench run SPEC` into it (finished cells are not recomputed) or pass --spec to "
            "select exactly one spec's cells."
        )

    protocol = spec.get("protocol") or {}
    # a dataset may override the spec's protocol (n_realisations, fallback, ...)
    protocols = {
        str(d.get("label")): d.get("protocol") or protocol
        for d in spec.get("datasets") or []
        if isinstance(d, dict)
    }
    if any(_only_existing(p) for p in [protocol, *protocols.values()]):
        notes += _drop_unavailable(chosen)
    datasets = _ordered(spec_datasets, {d for d, _ in chosen})
    methods = _ordered(spec_methods, {m for _, m in chosen})
    expected = {
        d: _expected_counts(protocols.get(d, protocol), datasets, chosen)[d] for d in datasets
    }
    return Experiment(
        directory=directory,
        name=str(spec.get("name") or directory.name),
        title=str(spec.get("title") or spec.get("name") or directory.name),
        datasets=datasets,
        methods=methods,
        rows=chosen,
        expected=expected,
        spec=spec,
        notes=notes,
    )


def as_experiment(source: Experiment | str | os.PathLike[str]) -> Experiment:
    """``source`` itself if already loaded, else :func:`load_experiment` of that directory."""
    return source if isinstance(source, Experiment) else load_experiment(source)


def _match_by_labels(
    all_rows: list[dict[str, Any]],
    spec: dict[str, Any],
    spec_datasets: list[str],
    spec_methods: list[str],
    notes: list[str],
) -> list[dict[str, Any]]:
    """Rows of a store without a recorded plan that carry the spec's labels and estimators."""
    if not spec:
        return list(all_rows)
    estimator_of = {m["label"]: m.get("estimator") for m in spec.get("methods", [])}
    known = [r for r in all_rows if r["dataset"] in spec_datasets and r["method"] in spec_methods]
    unknown = len(all_rows) - len(known)
    if unknown:
        notes.append(f"{unknown} stored cell(s) with labels not in the spec were left out.")
    current = [r for r in known if estimator_of.get(r["method"]) in (None, r["estimator"])]
    if len(current) < len(known):
        notes.append(
            f"{len(known) - len(current)} stored cell(s) of an estimator the spec no longer "
            "uses were left out."
        )
    return current


def _only_existing(protocol: dict[str, Any]) -> bool:
    """Predefined realisations with ``fallback: fewer``: only the source's realisations exist."""
    return protocol.get("realisations") == "predefined" and protocol.get("fallback") == "fewer"


def _drop_unavailable(chosen: dict[tuple[str, str], dict[int, dict[str, Any]]]) -> list[str]:
    """Forget realisations every method of a dataset recorded as ``skipped`` (not in the source);
    return a note per dataset that lost some."""
    status: dict[tuple[str, int], set[str]] = {}
    for (d, _), cell in chosen.items():
        for r, row in cell.items():
            status.setdefault((d, r), set()).add(row["status"])
    absent = {key for key, seen in status.items() if seen == {"skipped"}}
    for (d, _), cell in chosen.items():
        for r in [r for r in cell if (d, r) in absent]:
            del cell[r]
    per_dataset = Counter(d for d, _ in absent)
    return [
        f"{d}: {k} realisation(s) the source does not have were left out (protocol.fallback: "
        "fewer)."
        for d, k in sorted(per_dataset.items())
    ]


def _expected_counts(
    protocol: dict[str, Any],
    datasets: list[str],
    chosen: dict[tuple[str, str], dict[int, dict[str, Any]]],
) -> dict[str, int]:
    """Realisations expected per cell: the protocol's ``n_realisations``; with predefined splits
    and ``fallback: fewer`` (or without a protocol) the realisations any method recorded."""
    seen: dict[str, set[int]] = {d: set() for d in datasets}
    for (d, _), cell in chosen.items():
        seen[d].update(cell)
    n = protocol.get("n_realisations")
    if n is None or _only_existing(protocol):
        return {d: len(seen[d]) for d in datasets}
    return {d: int(n) for d in datasets}


#: the rows an error value is a fraction of (``result`` key), for exact means of counts
_ROWS_OF = {"test_error": "n_test", "train_error": "n_train"}


def cell_values(
    cell: dict[int, dict[str, Any]], value: str
) -> tuple[dict[int, float], dict[int, int]]:
    """``(values, sizes)`` of one cell's ``done`` realisations, in realisation order.

    ``values`` maps realisation -> value (percent for errors); ``sizes`` maps realisation ->
    the rows an error is a fraction of (test rows for ``test_error``, training rows for
    ``train_error``; empty for other values), so that means can be taken from exact counts
    (:func:`kernbench.report.stats.cell_mean`).
    """
    values: dict[int, float] = {}
    sizes: dict[int, int] = {}
    key = _ROWS_OF.get(value)
    for r in sorted(cell):
        row = cell[r]
        if row["status"] != "done":
            continue
        v = row_value(row, value)
        if v is None:
            continue
        values[r] = v
        n = (row.get("result") or {}).get(key) if key else None
        if isinstance(n, int | float) and n > 0:
            sizes[r] = int(n)
    return values, sizes


def status_counts(cell: dict[int, dict[str, Any]], value: str, expected: int) -> Counter[str]:
    """How many realisations of one cell have no value, by reason.

    Reasons are the store statuses other than ``done`` (``failed``, ``timeout``, ...), ``no value``
    for a done cell without the tabulated number, and ``missing`` for realisations never recorded.
    """
    counts: Counter[str] = Counter()
    for row in cell.values():
        if row["status"] != "done":
            counts[row["status"]] += 1
        elif row_value(row, value) is None:
            counts["no value"] += 1
    n_missing = expected - len(cell)
    if n_missing > 0:
        counts["missing"] += n_missing
    return counts


#: flags that mark substitute splits or data (also recognised as ``split_info[flag] is True``)
SUBSTITUTION_FLAGS = frozenset(
    {
        "synthetic_split",
        "substitute",
        "rebuilt_scaling",
        "standardized_pool",
        "ida_encoding",
        "dropped_constant_columns",
    }
)


def split_flags(split_info: dict[str, Any] | None) -> list[str]:
    """Footnote-worthy flags of a realisation's ``split_info``.

    ``synthetic_split`` when ``split == "synthetic_split"``, and the substitution flags
    (``substitute``, ``rebuilt_scaling`` ...) listed in ``flags`` or given as keys set to ``True``.
    Descriptive flags (``embedded``, ``label_noise``, ``fixed_split`` ...) are not footnoted.
    """
    info = split_info or {}
    flags = ["synthetic_split"] if info.get("split") == "synthetic_split" else []
    listed = info.get("flags") or []
    if isinstance(listed, str):
        listed = [listed]
    keyed = [k for k in sorted(SUBSTITUTION_FLAGS) if info.get(k) is True]
    for flag in [*map(str, listed), *keyed]:
        if flag not in flags and flag in SUBSTITUTION_FLAGS:
            flags.append(flag)
    return flags
