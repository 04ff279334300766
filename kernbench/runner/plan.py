"""Spec -> cells. A cell is (dataset, realisation, method) with a stable identity hash."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import kernbench
from kernbench.errors import KernbenchError
from kernbench.identity import digest
from kernbench.seeds import derive_seed
from kernbench.spec_types import DatasetSpec, MethodSpec, Protocol, Spec

#: the cell filters ``--only KEY=VALUE`` accepts
ONLY_KEYS = ("dataset", "method", "realisation")
#: the most cells a plan may have unless ``--max-cells`` raises it
DEFAULT_MAX_CELLS = 100_000


class TooManyCells(KernbenchError):
    """A spec that plans more cells than the limit (checked before any cell is built)."""

    def __init__(self, name: str, n: int, limit: int) -> None:
        self.n = n
        self.limit = limit
        super().__init__(
            f"{name}: the spec plans {n:,} cells, more than the limit of {limit:,}; check "
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
) -> str:
    """sha256 over everything that changes a cell's result (SHA hex, 64 characters).

    Besides the spec entries and the package version, an estimator class may declare
    ``_result_revision`` (an int, bumped when a change of its code changes its results for the same
    parameters); a non-zero revision enters the hash, so stored cells of the older code are rerun
    while every other estimator's cells keep their identity.
    """
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
    revision = _result_revision(method.estimator)
    if revision:
        payload["revision"] = revision
    return digest(payload)


def _result_revision(estimator: str) -> int:
    """The estimator's ``_result_revision`` (0 if it has none or is not registered)."""
    from kernbench.methods import get_method  # the runner imports the methods anyway

    try:
        return int(getattr(get_method(estimator), "_result_revision", 0))
    except KeyError:
        return 0


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
        n_real = (ds.protocol or spec.protocol).n_realisations
        if realisations is not None:
            n_real = min(n_real, realisations)
        if "realisation" in only:  # the values that are some str(r), r < n_real
            n_real = sum(
                1
                for v in set(only["realisation"])
                if v.isdigit() and str(int(v)) == v and int(v) < n_real
            )
        total += n_real * n_methods
    return total


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
        ``{"dataset": [...], "method": [...], "realisation": [...]}`` filters (``--only``); dataset
        and method match labels; realisation is 0-based.
    fingerprint : callable, optional
        ``(name, options) -> str``; defaults to :func:`kernbench.datasets.dataset_fingerprint`.
    max_cells : int, optional
        Refuse (:class:`TooManyCells`) a plan of more cells, counted before any is built; None
        lifts the limit.
    """
    check_cell_count(spec, max_cells, realisations=realisations, only=only)
    if fingerprint is None:
        from kernbench.datasets import dataset_fingerprint as fingerprint
    only = {k: [str(v) for v in vs] for k, vs in (only or {}).items() if vs}
    seed = spec.protocol.seed
    cells: list[Cell] = []
    for ds in spec.datasets:
        if "dataset" in only and ds.label not in only["dataset"]:
            continue
        protocol = ds.protocol or spec.protocol
        n_real = protocol.n_realisations
        if realisations is not None:
            n_real = min(n_real, realisations)
        fp = fingerprint(ds.name, ds.options)
        for r in range(n_real):
            if "realisation" in only and str(r) not in only["realisation"]:
                continue
            for m in spec.methods:
                if "method" in only and m.label not in only["method"]:
                    continue
                cells.append(
                    Cell(
                        cell_id=cell_identity(ds, r, m, protocol, fp),
                        dataset=ds,
                        realisation=r,
                        method=m,
                        protocol=protocol,
                        cv_seed=derive_seed(seed, ds.label, r, "cv"),
                        learner_seed=derive_seed(seed, ds.label, r, m.label),
                        fingerprint=fp,
                    )
                )
    return cells


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
