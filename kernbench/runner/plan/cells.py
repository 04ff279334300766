"""Spec -> cells. A cell is (dataset, realisation, method) with a stable identity hash."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import kernbench
from kernbench.cells.identity import digest, dumps
from kernbench.cells.seeds import derive_seed
from kernbench.errors import KernbenchError, UsageError
from kernbench.runner.plan.revisions import result_revision
from kernbench.specs.types import DatasetSpec, MethodSpec, Protocol, Spec

#: the cell filters ``--only KEY=VALUE`` accepts
ONLY_KEYS = ("dataset", "method", "realisation")
#: the most cells a plan may have unless ``--max-cells`` raises it
DEFAULT_MAX_CELLS = 100_000


class TooManyCells(KernbenchError):
    """A spec that plans more cells than the limit (checked before any cell is built)."""

    def __init__(self, name: str, n: int, limit: int, selected: int | None = None) -> None:
        self.n = n
        self.limit = limit
        self.selected = selected
        some = (
            f" ({selected:,} of them selected by --realisations/--only; the limit counts the "
            "whole spec, whose plan the store records)"
            if selected is not None and selected != n
            else ""
        )
        super().__init__(
            f"{name}: the spec plans {n:,} cells{some}, more than the limit of {limit:,}; check "
            f"n_realisations, datasets and methods, or raise the limit with --max-cells {n}"
        )


@dataclass(frozen=True)
class Cell:
    """One unit of work and everything that determines its result."""

    cell_id: str
    dataset: DatasetSpec
    realisation: int
    method: MethodSpec
    protocol: Protocol
    cv_seed: int
    learner_seed: int
    fingerprint: str
    #: the identity of the cell whose chosen parameters this one takes (``method.take``)
    source_id: str | None = None
    #: those parameters as (name, value) pairs, filled in by the runner once the source finished
    taken: tuple[tuple[str, Any], ...] = ()

    @property
    def key(self) -> tuple[str, int, str]:
        return (self.dataset.label, self.realisation, self.method.label)


def cell_identity(
    dataset: DatasetSpec,
    realisation: int,
    method: MethodSpec,
    protocol: Protocol,
    fingerprint: str,
    version: str | None = None,
    source_id: str | None = None,
) -> str:
    """sha256 over everything that changes a cell's result (SHA hex, 64 characters).

    Besides the spec entries and the package version, the method's result revision
    (:data:`kernbench.runner.plan.revisions.REVISIONS`: bumped when a change of its code changes its
    results, for all parameter settings or some) enters the hash when it is non-zero, so stored
    cells of the older code are rerun while every other cell keeps its identity. A method that
    takes parameters from another (``take``) adds that rule and the source cell's identity
    ``source_id``: when the source cell changes, so does this one.
    """
    return digest(
        _identity_payload(dataset, realisation, method, protocol, fingerprint, version, source_id)
    )


def _identity_payload(
    dataset: DatasetSpec,
    realisation: Any,
    method: MethodSpec,
    protocol: Protocol,
    fingerprint: str,
    version: str | None,
    source_id: str | None,
) -> dict[str, Any]:
    """The mapping whose canonical JSON :func:`cell_identity` hashes."""
    payload = {
        "dataset": {"name": dataset.name, "label": dataset.label, "options": dataset.options},
        "fingerprint": fingerprint,
        "realisation": realisation,
        "method": {
            "label": method.label,
            "estimator": method.estimator,
            "params": method.params,
            "grid": method.grid,
        },
        "protocol": protocol.identity(),
        "version": version if version is not None else kernbench.__version__,
    }
    if method.source is not None:  # a plug-in: its distribution and version, or file sha256
        payload["plugin"] = method.source.record()
    revision = result_revision(method.estimator, method.params, method.grid)
    if revision:
        payload["revision"] = revision
    if method.take is not None:
        payload["take"] = {
            "from": method.take.source,
            "params": {k: list(v) for k, v in method.take.params.items()},
            "source_cell": source_id,
        }
    return payload


#: stand-ins for the realisation and the source cell in an :class:`_IdentityTemplate`; the NUL
#: characters (``\u0000`` in JSON) keep them apart from the text of any practical spec, and a
#: template in which either occurs more than once is not used
_REALISATION_MARK = "\x00kernbench:realisation\x00"
_SOURCE_MARK = "\x00kernbench:source_cell\x00"


@dataclass(frozen=True)
class _IdentityTemplate:
    """The canonical JSON of one (dataset, method)'s identity payload, cut where the realisation
    and (for a method with ``take``) the source cell's identity go.

    The payload differs across realisations only in those two values, so each realisation's
    identity is a splice and one sha256, equal to :func:`cell_identity` by construction: the JSON
    of an ``int`` is its decimal ``str``, and the stand-ins' JSON occurs exactly once in the text
    (checked by :meth:`build`).
    """

    head: str
    #: the text between the realisation and the source cell (None: the method takes nothing)
    middle: str | None
    tail: str

    @classmethod
    def build(
        cls, dataset: DatasetSpec, method: MethodSpec, protocol: Protocol, fingerprint: str
    ) -> _IdentityTemplate | None:
        """The template, or None when a stand-in's JSON occurs other than once, or out of order
        (the caller then computes each identity with :func:`cell_identity`)."""
        takes = method.take is not None
        source = _SOURCE_MARK if takes else None
        payload = _identity_payload(
            dataset, _REALISATION_MARK, method, protocol, fingerprint, None, source
        )
        text = dumps(payload)
        marks = [dumps(_REALISATION_MARK)] + ([dumps(_SOURCE_MARK)] if takes else [])
        if any(text.count(mark) != 1 for mark in marks):
            return None
        head, rest = text.split(marks[0])
        if not takes:
            return cls(head, None, rest)
        if marks[1] not in rest:  # the source cell precedes the realisation
            return None
        middle, tail = rest.split(marks[1])
        return cls(head, middle, tail)

    def identity(self, realisation: int, source_id: str | None = None) -> str:
        """:func:`cell_identity` of this dataset and method at ``realisation`` (an ``int``)."""
        if self.middle is None:
            text = f"{self.head}{realisation:d}{self.tail}"
        else:
            text = f"{self.head}{realisation:d}{self.middle}{dumps(source_id)}{self.tail}"
        return hashlib.sha256(text.encode()).hexdigest()


def count_cells(
    spec: Spec,
    *,
    realisations: int | None = None,
    only: Mapping[str, Sequence[str]] | None = None,
) -> int:
    """How many cells :func:`plan_cells` would build, computed without building any."""
    only = {k: [str(v) for v in vs] for k, vs in (only or {}).items() if vs}
    n_methods = sum(1 for m in spec.methods if "method" not in only or m.label in only["method"])
    total = 0
    for ds in spec.datasets:
        if "dataset" in only and ds.label not in only["dataset"]:
            continue
        n_real = _n_realisations(ds, spec, realisations)
        if "realisation" in only:  # the values that are some str(r), r < n_real
            n_real = sum(1 for v in set(only["realisation"]) if _index_below(v, n_real))
        total += n_real * n_methods
    return total


def _n_realisations(ds: DatasetSpec, spec: Spec, cap: int | None) -> int:
    """The realisations of ``ds`` (its protocol's, else the spec's), at most ``cap``."""
    n_real = (ds.protocol or spec.protocol).n_realisations
    return n_real if cap is None else min(n_real, cap)


def _index_below(value: str, n: int) -> bool:
    """Whether ``value`` is some ``str(r)`` with ``0 <= r < n``."""
    return value.isdigit() and str(int(value)) == value and int(value) < n


def check_cell_count(
    spec: Spec,
    max_cells: int | None,
    *,
    realisations: int | None = None,
    only: Mapping[str, Sequence[str]] | None = None,
) -> int:
    """The number of cells of the plan; :class:`TooManyCells` when it exceeds ``max_cells``."""
    n = count_cells(spec, realisations=realisations, only=only)
    if max_cells is not None and n > max_cells:
        raise TooManyCells(spec.name, n, max_cells)
    return n


def plan_cells(
    spec: Spec,
    *,
    realisations: int | None = None,
    only: Mapping[str, Sequence[str]] | None = None,
    fingerprint: Callable[[str, dict], str] | None = None,
    max_cells: int | None = DEFAULT_MAX_CELLS,
) -> list[Cell]:
    """Expand a spec into cells, dataset-major (all methods of one realisation together).

    Parameters
    ----------
    spec : Spec
    realisations : int, optional
        Cap on the number of realisations per dataset (``--realisations``).
    only : mapping, optional
        ``{"dataset": [...], "method": [...], "realisation": [...]}`` filters (``--only``); a
        dataset value matches a label or a catalogue name (or alias), a method value a label or an
        estimator name; realisation is 0-based.
    fingerprint : callable, optional
        ``(name, options) -> str``; defaults to :func:`kernbench.datasets.dataset_fingerprint`.
    max_cells : int, optional
        Refuse (:class:`TooManyCells`) a plan of more cells, counted before any is built; None
        lifts the limit.

    Raises
    ------
    UsageError
        A filter value that selects nothing (with "did you mean" over labels and names).
    """
    check_cell_count(spec, max_cells, realisations=realisations, only=only)
    if fingerprint is None:
        from kernbench.datasets import dataset_fingerprint as fingerprint
    only = {k: [str(v) for v in vs] for k, vs in (only or {}).items() if vs}
    datasets = _select_datasets(spec, only.get("dataset"))
    methods = _select_methods(spec, only.get("method"))
    _check_realisations(spec, datasets, realisations, only.get("realisation"))
    ordered = _sources_first(spec.methods)
    cells: list[Cell] = []
    for ds in datasets:
        protocol = ds.protocol or spec.protocol
        fp = fingerprint(ds.name, ds.options)
        templates = {m.label: _IdentityTemplate.build(ds, m, protocol, fp) for m in ordered}
        for r in range(_n_realisations(ds, spec, realisations)):
            if "realisation" in only and str(r) not in only["realisation"]:
                continue
            ids = _identities(ds, r, ordered, templates, protocol, fp)
            cv_seed = derive_seed(spec.protocol.seed, ds.label, r, "cv")
            cells.extend(
                Cell(
                    cell_id=ids[m.label],
                    dataset=ds,
                    realisation=r,
                    method=m,
                    protocol=protocol,
                    cv_seed=cv_seed,
                    learner_seed=derive_seed(spec.protocol.seed, ds.label, r, m.label),
                    fingerprint=fp,
                    source_id=ids[m.take.source] if m.take is not None else None,
                )
                for m in methods
            )
    return cells


def _identities(
    ds: DatasetSpec,
    r: int,
    ordered: Sequence[MethodSpec],
    templates: Mapping[str, _IdentityTemplate | None],
    protocol: Protocol,
    fp: str,
) -> dict[str, str]:
    """Every method's cell identity on realisation ``r`` of ``ds`` (``ordered``: sources first,
    so that a cell taking parameters hashes its source's identity)."""
    ids: dict[str, str] = {}
    for m in ordered:
        source = ids[m.take.source] if m.take is not None else None
        template = templates[m.label]
        ids[m.label] = (
            template.identity(r, source)
            if template is not None
            else cell_identity(ds, r, m, protocol, fp, source_id=source)
        )
    return ids


def _sources_first(methods: Sequence[MethodSpec]) -> list[MethodSpec]:
    """The methods ordered so that every ``take`` source comes before the methods taking from it
    (the spec parser has refused cycles)."""
    by_label = {m.label: m for m in methods}
    done: dict[str, MethodSpec] = {}

    def visit(m: MethodSpec) -> None:
        if m.label in done:
            return
        if m.take is not None:
            visit(by_label[m.take.source])
        done[m.label] = m

    for m in methods:
        visit(m)
    return list(done.values())


def _canonical_dataset(name: str) -> str | None:
    """The catalogue's canonical name for ``name`` (an alias resolves), or None if unknown."""
    from kernbench.datasets import get_dataset
    from kernbench.errors import DataError

    try:
        return get_dataset(name).name
    except DataError:
        return None


def _no_match(key: str, value: str, what: str, choices: list[str], spec: Spec) -> UsageError:
    from kernbench.errors import cut_list
    from kernbench.specs.load import _suggest

    shown = cut_list(dict.fromkeys(choices), 12)
    return UsageError(
        "--only",
        f"{key}={value} matches no {what} of {spec.name!r}{_suggest(value, choices)} "
        f"({what}s: {shown})",
    )


def _select_datasets(spec: Spec, values: Sequence[str] | None) -> list[DatasetSpec]:
    """The spec's datasets whose label, name or catalogue name is one of ``values``."""
    if not values:
        return list(spec.datasets)
    chosen: set[int] = set()
    for value in values:
        canonical = _canonical_dataset(value)
        hits = {
            i
            for i, ds in enumerate(spec.datasets)
            if value in (ds.label, ds.name)
            or (canonical is not None and canonical == _canonical_dataset(ds.name))
        }
        if not hits:
            choices = [name for ds in spec.datasets for name in (ds.label, ds.name)]
            raise _no_match("dataset", value, "dataset", choices, spec)
        chosen |= hits
    return [ds for i, ds in enumerate(spec.datasets) if i in chosen]


def _select_methods(spec: Spec, values: Sequence[str] | None) -> list[MethodSpec]:
    """The spec's methods whose label or estimator name is one of ``values``."""
    if not values:
        return list(spec.methods)
    chosen: set[str] = set()
    for value in values:
        hits = {m.label for m in spec.methods if value in (m.label, m.estimator)}
        if not hits:
            choices = [name for m in spec.methods for name in (m.label, m.estimator)]
            raise _no_match("method", value, "method", choices, spec)
        chosen |= hits
    return [m for m in spec.methods if m.label in chosen]


def _check_realisations(
    spec: Spec,
    datasets: Sequence[DatasetSpec],
    cap: int | None,
    values: Sequence[str] | None,
) -> None:
    """Every ``realisation=K`` must be an index some selected dataset plans (0-based)."""
    counts = [(ds.protocol or spec.protocol).n_realisations for ds in datasets]
    most = min(max(counts, default=0), cap) if cap is not None else max(counts, default=0)
    for value in values or ():
        if not (value.isdigit() and int(value) < most) or str(int(value)) != value:
            raise UsageError(
                "--only",
                f"realisation={value} matches no realisation of {spec.name!r} "
                f"(0-based indices 0..{most - 1} are planned)",
            )


def parse_only(items: Sequence[str]) -> dict[str, list[str]]:
    """Parse ``--only KEY=VALUE`` options; raises ``ValueError`` with the accepted keys."""
    out: dict[str, list[str]] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not value.strip():
            raise ValueError(f"--only expects KEY=VALUE, got {item!r}")
        if key not in ONLY_KEYS:
            raise ValueError(f"--only key {key!r} unknown (expected one of {', '.join(ONLY_KEYS)})")
        out.setdefault(key, []).append(value.strip())
    return out
