"""Typed, validated experiment spec objects (built by :mod:`kernbench.specs.load`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from kernbench.cells.protocol import Protocol
from kernbench.cells.sources import MethodSource

# Protocol (the split protocol) and MethodSource (an outside method's provenance) are defined
# beside the code that reads them and are parts of a spec too
__all__ = ["DatasetSpec", "MethodSource", "MethodSpec", "Protocol", "Spec", "TableSpec", "TakeSpec"]


@dataclass(frozen=True)
class DatasetSpec:
    """One dataset of the experiment, by catalogue name (or a data file of the user's), with
    options (``label_noise``, ``n_train``...).

    ``label`` is the row name in tables (defaults to ``name``; twonorm with ``label_noise`` might be
    labelled ``twonorm-n``).
    """

    name: str
    label: str
    options: dict[str, Any] = field(default_factory=dict)
    #: the spec's protocol with this dataset's overrides (``None``: the spec's protocol as is)
    protocol: Protocol | None = None
    #: the catalogue mapping of a dataset from outside the package (a ``file:`` in the spec or a
    #: user catalogue); a worker registers it before building the realisation
    entry: dict[str, Any] | None = None


@dataclass(frozen=True)
class TakeSpec:
    """Parameters a method takes from another method's selection on the same realisation.

    Attributes
    ----------
    source : str
        The label of the method whose chosen parameters are taken.
    params : dict
        ``target parameter -> (source parameter, transform name)``; the transforms are
        :data:`kernbench.specs.param_transforms.TRANSFORMS` (``identity``, ``gamma_to_sigma`` ...).
    """

    source: str
    params: dict[str, tuple[str, str]]


@dataclass(frozen=True)
class MethodSpec:
    """One table column: a registered estimator with fixed ``params`` and a ``grid`` to search,
    and optionally parameters ``take``-n from another method's selection."""

    label: str
    estimator: str
    params: dict[str, Any] = field(default_factory=dict)
    grid: dict[str, list[Any]] = field(default_factory=dict)
    take: TakeSpec | None = None
    #: provenance of an estimator from outside the package (None: one of kernbench's own)
    source: MethodSource | None = None


@dataclass(frozen=True)
class TableSpec:
    """How ``kernbench table`` renders the experiment.

    Attributes
    ----------
    value : str
        What a cell shows: a name of :data:`kernbench.cells.records.VALUES` (``--value``
        overrides it).
    spread : "std" | "stderr"
        The spread after ``±``: sample standard deviation (ddof 1) or standard error (std / √n).
    format : "md" | "latex" | "csv"
        The default output format of ``kernbench table`` (``--format`` overrides it).
    reference : str or None
        A CSV of published numbers shown beside ours; in a spec, ``reference.file`` (relative to
        the spec) with ``reference.methods`` (our label -> filters on the CSV's columns) and
        ``reference.datasets`` (our label -> the CSV's dataset name, or a mapping
        ``{dataset: NAME, <column>: value}`` that also filters on other columns) and
        ``reference.stand_ins`` (our label -> the paper's data set, for rows whose published
        numbers were measured on another data set).
    reference_methods, reference_datasets : dict
        ``reference.methods`` and ``reference.datasets`` of the spec.
    reference_stand_ins : dict
        ``reference.stand_ins``: our dataset label -> the paper's data set, for rows whose
        published numbers were measured on another data set than ours (marked ‡ in tables and
        counted apart).
    significance : float
        Level of the paired t-test behind "not significantly worse than the best" (†).
    """

    value: str = "test_error"
    spread: Literal["std", "stderr"] = "std"
    format: Literal["md", "latex", "csv"] = "md"
    reference: str | None = None
    reference_methods: dict[str, dict[str, Any]] = field(default_factory=dict)
    reference_datasets: dict[str, Any] = field(default_factory=dict)
    reference_stand_ins: dict[str, str] = field(default_factory=dict)
    significance: float = 0.05


@dataclass(frozen=True)
class Spec:
    """A validated experiment spec."""

    name: str
    title: str
    path: str
    datasets: tuple[DatasetSpec, ...]
    methods: tuple[MethodSpec, ...]
    protocol: Protocol
    table: TableSpec
