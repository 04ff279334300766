"""Datasets: catalogue, raw-format parsers, fetch/mirror/checksum, generators and realisations.

The runner's entry points (docs/DESIGN.md §3)::

    from kernbench.datasets import get_dataset, make_realisation, dataset_fingerprint
    entry = get_dataset("diabetis")              # aliases resolve: -> entry "pima"
    ensure_available(["sonar"])                  # cache / $KERNBENCH_MIRROR / download
    r = make_realisation("sonar", {}, protocol, 0, seed=0)
    r.X_train, r.y_train, r.X_test, r.y_test, r.info

See docs/datasets.md for the catalogue, the protocols and how to add a dataset.
"""

from kernbench.datasets.catalog import (
    DatasetEntry,
    RawFile,
    get_dataset,
    list_datasets,
    register_entry,
    resolve_options,
    validate_options,
)
from kernbench.datasets.fetch import (
    data_home,
    ensure_available,
    fetch_datasets,
    mirror_root,
    verify_cache,
)
from kernbench.datasets.realisation import (
    Realisation,
    RealisationUnavailable,
    available_realisations,
    dataset_fingerprint,
    make_realisation,
)
from kernbench.datasets.recipes import load_pool

__all__ = [
    "DatasetEntry",
    "RawFile",
    "Realisation",
    "RealisationUnavailable",
    "available_realisations",
    "data_home",
    "dataset_fingerprint",
    "ensure_available",
    "fetch_datasets",
    "get_dataset",
    "list_datasets",
    "load_pool",
    "make_realisation",
    "mirror_root",
    "register_entry",
    "resolve_options",
    "validate_options",
    "verify_cache",
]
