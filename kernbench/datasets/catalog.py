"""The dataset catalogue: typed entries read from the package data file ``catalog.yaml``.

The catalogue is data, not code: every dataset kernbench knows is one YAML entry (name, aliases,
task, size, label mapping, raw files with sha256 and download sources, the recipe that turns raw
files into ``(X, y)``, predefined realisations, substitutions). This module reads and looks it up.

Besides the package's catalogue, :func:`get_dataset` knows the entries of a user catalogue named by
``$KERNBENCH_CATALOG`` and the entries registered in this process with :func:`register_entry` (a
spec's ``catalog:`` file and its ``file:`` datasets; see :mod:`kernbench.datasets.user`).
"""

from __future__ import annotations

import difflib
import functools
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import yaml

from kernbench.errors import DataError

__all__ = [
    "DatasetEntry",
    "RawFile",
    "get_dataset",
    "list_datasets",
    "register_entry",
    "validate_options",
    "resolve_options",
]


@dataclass(frozen=True)
class RawFile:
    """One raw file of a dataset, as laid out in the mirror / cache.

    Attributes
    ----------
    path : str
        Path relative to the cache (and mirror) root, e.g. ``"sonar/sonar.all-data"``.
    sha256 : str or None
        Checksum of the stored file; ``None`` where no checksum is published for a file that is
        not in the project's mirror (the paper's own data sets): such a file is used unverified,
        and ``kernbench data info`` says so.
    content_sha256 : str or None
        For compressed files: checksum of the decompressed content (what a ``decompressed`` source
        serves).
    sources : tuple of dict
        Download sources tried in order: ``url``, optional ``decompressed`` (the URL serves the
        uncompressed content), ``member`` and ``archive_sha256`` (one member of a zip/wheel).
    """

    path: str
    sha256: str | None
    bytes: int | None = None
    format: str | None = None
    content_sha256: str | None = None
    sources: tuple[dict[str, Any], ...] = ()
    provenance: str | None = None


@dataclass(frozen=True)
class DatasetEntry:
    """A catalogue entry (see ``kernbench/datasets/catalog.yaml`` and docs/datasets.md).

    ``predefined`` describes the realisations used with ``realisations: predefined``:
    ``{"kind": "ida", ...}`` (IDA split files), ``{"kind": "alias", "dataset": "ida-german"}``
    (another entry's realisations), ``{"kind": "substitute", "sizes": [n_train, n_test]}`` (no
    files exist: seeded random splits of the pooled data, flagged) or ``{"kind": "fixed", ...}``
    (one standard train/test partition). ``None``: the dataset has no predefined realisations.
    """

    name: str
    title: str
    task: str
    n: int | None
    d: int
    classes: int
    source: str
    description: str
    labels: str
    encoding: str
    missing: str
    recipe: dict[str, Any]
    aliases: tuple[str, ...] = ()
    class_counts: dict[str, int] | None = None
    url: str | None = None
    citation: str | None = None
    files: tuple[RawFile, ...] = ()
    requires: tuple[str, ...] = ()
    options: dict[str, dict[str, Any]] = field(default_factory=dict)
    predefined: dict[str, Any] | None = None
    substitution: str | None = None
    papers: tuple[str, ...] = ()
    #: False for the papers' own data sets that the offline mirror does not hold (downloaded by
    #: users with internet access; the reproduction specs use stand-ins for them by default)
    mirrored: bool = True
    #: where the entry comes from: ``kernbench`` (the package's catalogue), a user catalogue file
    #: or a spec file (``file:`` datasets)
    origin: str = "kernbench"
    #: the validated entry as a mapping, for entries from outside the package (workers rebuild
    #: the entry from it, see :func:`register_entry`)
    raw: dict[str, Any] | None = field(default=None, compare=False, repr=False)

    @property
    def is_generated(self) -> bool:
        """True for synthetic datasets drawn fresh per realisation."""
        return self.recipe["kind"] == "generator"

    @property
    def is_embedded(self) -> bool:
        """True when no file has to be obtained (generators and scikit-learn's bundled data)."""
        return not self.all_files()

    def all_files(self, predefined: bool = True) -> tuple[RawFile, ...]:
        """Every raw file this entry may read: its own, its ``requires``, and (with
        ``predefined``) its predefined source; ``predefined=False`` is what a random-split
        protocol needs (a generated twonorm then needs no file at all)."""
        out: dict[str, RawFile] = {f.path: f for f in self.files}
        deps = list(self.requires)
        if predefined and self.predefined and self.predefined.get("kind") == "alias":
            deps.append(self.predefined["dataset"])
        for dep in deps:
            for f in get_dataset(dep).all_files(predefined):
                out.setdefault(f.path, f)
        return tuple(out.values())

    def predefined_entry(self) -> DatasetEntry:
        """The entry whose realisations ``predefined`` means (follows ``kind: alias``)."""
        if self.predefined and self.predefined.get("kind") == "alias":
            return get_dataset(self.predefined["dataset"])
        return self


_GLOBAL_OPTIONS: dict[str, dict[str, Any]] = {
    "label_noise": {
        "type": "float",
        "default": 0.0,
        "min": 0.0,
        "max": 1.0,
        "doc": "fraction of training labels flipped (exactly round(fraction * n_train))",
    },
}


#: options of every multi-class entry: a binary task from chosen classes (one-vs-rest or one-vs-one)
_BINARISE_OPTIONS: dict[str, dict[str, Any]] = {
    "positive": {
        "type": "classes",
        "default": None,
        "doc": "class names mapped to +1 (the others, or `negative`, to -1); null = multi-class",
    },
    "negative": {
        "type": "classes",
        "default": None,
        "doc": "class names mapped to -1 (with `positive`); rows of unlisted classes are dropped",
    },
}


def _class_key(label: str) -> tuple[int, float | str]:
    try:
        return (0, float(label))
    except ValueError:
        return (1, label)


def _check_classes(name: str, key: str, value: Any) -> list[str] | None:
    """A non-empty list of distinct class names of dataset ``name`` (sorted, as strings)."""
    where = f"dataset {name!r}: option {key!r}"
    if value is None:
        return None
    if isinstance(value, str | int) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, list | tuple) or not value:
        raise DataError(f"{where} must be a non-empty list of class names, got {value!r}")
    labels: list[str] = []
    for v in value:
        if isinstance(v, bool) or not isinstance(v, str | int):
            raise DataError(f"{where}: class names are strings or integers, got {v!r}")
        labels.append(str(v))
    if len(set(labels)) != len(labels):
        raise DataError(f"{where} lists a class twice: {value!r}")
    known = get_dataset(name).class_counts
    if known:
        unknown = [v for v in labels if v not in known]
        if unknown:
            names = ", ".join(sorted(known, key=_class_key))
            raise DataError(f"{where}: unknown class {unknown[0]!r} (classes: {names})")
    return sorted(labels, key=_class_key)


def _check_binarise(name: str, out: dict[str, Any]) -> None:
    pos, neg = out.get("positive"), out.get("negative")
    where = f"dataset {name!r}"
    if neg is not None and pos is None:
        raise DataError(f"{where}: option 'negative' needs 'positive' (the classes mapped to +1)")
    if pos is None:
        return
    if neg is not None and set(pos) & set(neg):
        raise DataError(
            f"{where}: classes {sorted(set(pos) & set(neg))} are both positive and negative"
        )
    known = get_dataset(name).class_counts
    if known and neg is None and set(pos) == set(known):
        raise DataError(f"{where}: option 'positive' lists every class; no class is left for -1")


def _entry_from_dict(
    raw: dict[str, Any], origin: str = "kernbench", keep_raw: bool = False
) -> DatasetEntry:
    """A :class:`DatasetEntry` from a catalogue mapping; optional keys take their defaults (the
    required ones are listed in :data:`kernbench.datasets.user.REQUIRED_KEYS`)."""
    files = tuple(
        RawFile(
            path=f["path"],
            sha256=f.get("sha256"),
            bytes=f.get("bytes"),
            format=f.get("format"),
            content_sha256=f.get("content_sha256"),
            sources=tuple(f.get("sources", ())),
            provenance=f.get("provenance"),
        )
        for f in raw.get("files", ())
    )
    return DatasetEntry(
        name=raw["name"],
        title=raw.get("title") or raw["name"],
        task=raw["task"],
        n=raw.get("n"),
        d=raw["d"],
        classes=raw["classes"],
        source=raw.get("source") or "user",
        description=raw.get("description") or "-",
        labels=raw.get("labels") or _default_labels(raw),
        encoding=raw.get("encoding") or "-",
        missing=raw.get("missing") or "-",
        recipe=raw["recipe"],
        aliases=tuple(raw.get("aliases", ())),
        class_counts=raw.get("class_counts"),
        url=raw.get("url"),
        citation=raw.get("citation"),
        files=files,
        requires=tuple(raw.get("requires", ())),
        options={
            **_GLOBAL_OPTIONS,
            **(_BINARISE_OPTIONS if raw["task"] == "multiclass" else {}),
            **raw.get("options", {}),
        },
        predefined=raw.get("predefined"),
        substitution=raw.get("substitution"),
        papers=tuple(raw.get("papers", ())),
        mirrored=bool(raw.get("mirrored", True)),
        origin=origin,
        raw=raw if keep_raw else None,
    )


def _default_labels(raw: dict[str, Any]) -> str:
    positive = raw.get("recipe", {}).get("positive")
    if raw.get("task") == "binary" and positive:
        return "+1 = " + ", ".join(map(str, positive)) + "; -1 = the rest"
    return "-"


def _package_entries() -> list[tuple[dict[str, Any], str]]:
    text = resources.files("kernbench.datasets").joinpath("catalog.yaml").read_text("utf-8")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    doc = yaml.load(text, Loader=loader)  # noqa: S506 - a SafeLoader
    return [(raw, "kernbench") for raw in doc["datasets"]]


@functools.lru_cache(maxsize=8)
def _catalogue_for(user_file: str | None) -> tuple[dict[str, DatasetEntry], dict[str, str]]:
    raws = _package_entries()
    if user_file:
        from kernbench.datasets.user_catalogue import load_catalogue_file

        raws += [(raw, user_file) for raw in load_catalogue_file(user_file)]
    entries: dict[str, DatasetEntry] = {}
    names: dict[str, str] = {}
    for raw, origin in raws:
        entry = _entry_from_dict(raw, origin, keep_raw=origin != "kernbench")
        for key in (entry.name, *entry.aliases):
            if key.lower() in names:
                where = "catalog.yaml" if origin == "kernbench" else origin
                raise DataError(f"{where}: name {key!r} is used twice")
            names[key.lower()] = entry.name
        entries[entry.name] = entry
    return entries, names


#: entries registered in this process (a spec's ``catalog:`` file and ``file:`` datasets)
_REGISTERED: dict[str, DatasetEntry] = {}
#: called when a registered entry is replaced (the recipes' caches subscribe on import)
ON_ENTRY_CHANGED: list[Callable[[], None]] = []


def _catalogue() -> tuple[dict[str, DatasetEntry], dict[str, str]]:
    """Package entries plus those of ``$KERNBENCH_CATALOG`` (name -> entry, lower name -> name)."""
    return _catalogue_for(os.environ.get("KERNBENCH_CATALOG") or None)


def register_entry(raw: dict[str, Any], origin: str) -> DatasetEntry:
    """Make a validated catalogue mapping known to :func:`get_dataset` in this process.

    Used for a spec's ``catalog:`` entries and ``file:`` datasets; the runner calls it again in
    each worker with the mapping carried by the cell (:attr:`DatasetSpec.entry`). Registering the
    same mapping again is a no-op; a changed mapping replaces the entry and drops parsed data
    cached under its name.

    Raises
    ------
    DataError
        The name or an alias is already a catalogue dataset.
    """
    entries, names = _catalogue()
    known = names.get(raw["name"].lower())
    if known is not None and entries[known].raw == raw:  # e.g. from $KERNBENCH_CATALOG already
        return entries[known]
    for key in (raw["name"], *raw.get("aliases", ())):
        if key.lower() in names:
            raise DataError(
                f"dataset name {key!r} is already in the catalogue ({names[key.lower()]!r}); "
                "give your dataset another name"
            )
        other = _registered_name(key)
        if other is not None and other != raw["name"]:
            raise DataError(f"dataset name {key!r} is already used by dataset {other!r}")
    old = _REGISTERED.get(raw["name"])
    if old is not None and old.raw == raw:
        return old
    entry = _entry_from_dict(raw, origin, keep_raw=True)
    _REGISTERED[entry.name] = entry
    if old is not None:
        for callback in ON_ENTRY_CHANGED:
            callback()
    return entry


def _registered_name(key: str) -> str | None:
    key = key.lower()
    for entry in _REGISTERED.values():
        if key in (entry.name.lower(), *(a.lower() for a in entry.aliases)):
            return entry.name
    return None


def list_datasets() -> list[DatasetEntry]:
    """Every catalogue entry (the package's, then ``$KERNBENCH_CATALOG``'s), in file order."""
    return list(_catalogue()[0].values())


def get_dataset(name: str) -> DatasetEntry:
    """The catalogue entry for ``name`` (a name or an alias, case-insensitive).

    Raises
    ------
    DataError
        Unknown name; the message suggests the closest names (``did you mean 'sonar'?``).
    """
    entries, names = _catalogue()
    key = str(name).lower()
    if key in names:
        return entries[names[key]]
    registered = _registered_name(key)
    if registered is not None:
        return _REGISTERED[registered]
    known = [*names, *(e.name for e in _REGISTERED.values())]
    close = difflib.get_close_matches(key, known, n=3, cutoff=0.6)
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    raise DataError(f"unknown dataset {name!r}{hint} (`kernbench data list` shows all)")


def _check_value(name: str, key: str, spec: dict[str, Any], value: Any) -> Any:
    kind = spec["type"]
    where = f"dataset {name!r}: option {key!r}"
    if kind == "classes":
        return _check_classes(name, key, value)
    if value is None and spec.get("default", 0) is None:
        return None
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int | float) or int(value) != value:
            raise DataError(f"{where} must be an integer, got {value!r}")
        value = int(value)
    elif kind == "float":
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            raise DataError(f"{where} must be a number, got {value!r}")
        value = float(value)
    elif kind == "bool":
        if not isinstance(value, bool):
            raise DataError(f"{where} must be true or false, got {value!r}")
    elif kind == "str":
        if not isinstance(value, str):
            raise DataError(f"{where} must be a string, got {value!r}")
    if "choices" in spec and value not in spec["choices"]:
        raise DataError(f"{where} must be one of {spec['choices']}, got {value!r}")
    if "min" in spec and value < spec["min"]:
        raise DataError(f"{where} must be >= {spec['min']}, got {value!r}")
    if "max" in spec and value >= spec["max"] and kind == "float":
        raise DataError(f"{where} must be < {spec['max']}, got {value!r}")
    return value


def validate_options(name: str, options: dict[str, Any] | None) -> None:
    """Check a dataset's options against its catalogue entry.

    Raises
    ------
    DataError
        Naming the bad key (with a suggestion) or the bad value and what is expected.
    """
    resolve_options(name, options)


def resolve_options(name: str, options: dict[str, Any] | None) -> dict[str, Any]:
    """Validated options with the catalogue defaults filled in (sorted by key)."""
    entry = get_dataset(name)
    options = dict(options or {})
    out: dict[str, Any] = {}
    for key, value in options.items():
        if key not in entry.options:
            close = difflib.get_close_matches(str(key), list(entry.options), n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            known = ", ".join(sorted(entry.options))
            raise DataError(
                f"dataset {entry.name!r}: unknown option {key!r}{hint} (known options: {known})"
            )
        out[key] = _check_value(entry.name, key, entry.options[key], value)
    for key, spec in entry.options.items():
        out.setdefault(key, spec.get("default"))
    _check_binarise(entry.name, out)
    return dict(sorted(out.items()))
