"""Datasets: catalogue, raw-format parsers, fetch/mirror/checksum, generators and realisations.

The runner's entry points (docs/DESIGN.md §3)::

    from kernbench.datasets import get_dataset, make_realisation, dataset_fingerprint
    entry = get_dataset("diabetis")              # aliases resolve: -> entry "pima"
    ensure_available(["sonar"])                  # cache / $KERNBENCH_MIRROR / download
    r = make_realisation("sonar", {}, protocol, 0, seed=0)
    r.X_train, r.y_train, r.X_test, r.y_test, r.info

See docs/datasets.md for the catalogue, the protocols and how to add a dataset.
"""

import importlib
from typing import Any

#: public name -> the submodule defining it; imported on first use, so that importing
#: ``kernbench.datasets`` (and the command line, ``kernbench --help``) stays cheap
_EXPORTS = {
    **dict.fromkeys(
        (
            "DatasetEntry",
            "RawFile",
            "get_dataset",
            "list_datasets",
            "register_entry",
            "resolve_options",
            "validate_options",
        ),
        "catalog",
    ),
    **dict.fromkeys(
        ("data_home", "ensure_available", "fetch_datasets", "mirror_root", "verify_cache"), "fetch"
    ),
    **dict.fromkeys(
        (
            "Realisation",
            "RealisationUnavailable",
            "available_realisations",
            "dataset_fingerprint",
            "make_realisation",
        ),
        "realisation",
    ),
    "load_pool": "recipes",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kernbench.datasets' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"kernbench.datasets.{module}"), name)
    globals()[name] = value
    return value


__all__ = [  # noqa: F822 (resolved by __getattr__)
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
