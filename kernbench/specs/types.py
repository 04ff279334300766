"""Typed, validated experiment spec objects (built by :mod:`kernbench.specs.load`)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

#: the longest per-cell time limit accepted (30 days), from a spec or ``--timeout``
MAX_TIMEOUT_S = 30 * 86400.0

Realisations = Literal["predefined", "random"]
Fallback = Literal["random", "fewer"]


@dataclass(frozen=True)
class Protocol:
    """How a dataset is split into realisations and how hyper-parameters are selected.

    Attributes
    ----------
    realisations : "predefined" | "random"
        ``predefined`` uses the source's own train/test realisations (IDA splits, fixed train/test
        files); ``random`` draws seeded random partitions. Generated datasets (twonorm, ...) draw a
        fresh sample per realisation, except under ``predefined`` when the catalogue names a
        predefined source for them (IDA twonorm, ringnorm).
    n_realisations : int
        Number of realisations (runs) per dataset.
    train_size, test_size : int or float or None
        Sizes of the random split: an int is a count, a float in (0, 1) a fraction. ``test_size``
        None means "the rest". Substitute splits under ``predefined`` use the source's own sizes.
    stratify : bool
        Stratify random splits and CV folds by class.
    seed : int
        Experiment seed; every split, fold and learner seed derives from it.
    cv_folds : int
        Folds of the inner cross-validation on the training part (grid search); 1 disables CV.
    preprocess : None | "standardize" | "minmax"
        Feature scaling fitted on the training part only; ``minmax_range`` is its target interval.
    fallback : "random" | "fewer"
        With ``predefined``: what to do for realisations the source does not have. ``random`` draws
        seeded random splits with the source's train/test sizes (flagged ``synthetic_split``);
        ``fewer`` runs only the realisations that exist.
    per_class : int or None
        Class-balanced subsampling of the training part (``1000 per class``).
    timeout_s : float or None
        Per-cell wall-clock limit; a cell over it is recorded with status ``timeout``.
    decision_grid : int or None
        For two-feature data: also record the final model's decision values on a
        ``decision_grid`` × ``decision_grid`` grid, with the training points, so that
        ``kernbench plot --kind boundary`` can draw decision boundaries from the store.
    grid_extent : float or None
        The grid spans [−grid_extent, grid_extent]² (None: the training points' bounding box
        with a 10 % margin).
    """

    realisations: Realisations = "random"
    n_realisations: int = 10
    train_size: float | int | None = None
    test_size: float | int | None = None
    stratify: bool = True
    seed: int = 0
    cv_folds: int = 5
    preprocess: str | None = None
    minmax_range: tuple[float, float] = (-1.0, 1.0)
    fallback: Fallback = "random"
    per_class: int | None = None
    timeout_s: float | None = None
    decision_grid: int | None = None
    grid_extent: float | None = None

    def identity(self) -> dict[str, Any]:
        """Everything in the protocol that changes a cell's result (timeouts do not).

        Keys added after the first release enter only when set, so cells stored before they
        existed keep their identity.
        """
        d = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "timeout_s"}
        d["minmax_range"] = list(self.minmax_range)
        for key in _OPTIONAL_IDENTITY:
            if d[key] is None:
                del d[key]
        return d


#: protocol keys that enter a cell's identity only when set (see ``Protocol.identity``)
_OPTIONAL_IDENTITY = ("decision_grid", "grid_extent")


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


#: the module-name prefix of loaded plug-in files
PLUGIN_PREFIX = "kernbench_plugin_"


#: the most bytes of a plug-in file kernbench reads (a Python module, not a data file)
PLUGIN_CAP = 1 << 20


@dataclass(frozen=True)
class PluginFile:
    """A spec's plug-in file: its name beside the spec, its code and the code's sha256."""

    name: str
    sha256: str
    code: str

    @classmethod
    def read(cls, path: Path) -> PluginFile:
        """Read ``path`` (already checked to lie inside the spec's tree) through the bounded
        reader: at most :data:`PLUGIN_CAP` bytes of a regular file.

        Raises
        ------
        kernbench.files.reading.NotARegularFile, kernbench.files.reading.FileTooLarge,
        UnicodeDecodeError
        """
        from kernbench.files.reading import read_user_file

        data = read_user_file(path, PLUGIN_CAP, "plug-in file")
        return cls(path.name, hashlib.sha256(data).hexdigest(), data.decode("utf-8"))

    @property
    def stem(self) -> str:
        return Path(self.name).stem

    @property
    def module_name(self) -> str:
        return f"{PLUGIN_PREFIX}{self.stem}_{self.sha256[:16]}"


@dataclass(frozen=True)
class MethodSource:
    """Where a method from outside the package comes from (its provenance).

    Attributes
    ----------
    module : str
        The module defining the class (for a plug-in file, the file's name).
    distribution, version : str or None
        The installed distribution that provides the module, and its version.
    sha256 : str or None
        A plug-in file's sha256 (or, for a module outside any distribution, its source file's).
    code : str or None
        A plug-in file's code, carried to the workers (not part of the provenance record).
    """

    module: str
    distribution: str | None = None
    version: str | None = None
    sha256: str | None = None
    code: str | None = None

    def record(self) -> dict[str, Any]:
        """The provenance as stored with each cell and hashed into its identity."""
        out: dict[str, Any] = {"module": self.module}
        if self.distribution is not None:
            out["distribution"] = self.distribution
            out["version"] = self.version
        if self.sha256 is not None:
            out["sha256"] = self.sha256
        return out


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
