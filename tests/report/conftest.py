"""Synthetic results stores for the report tests (no runner involved)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kernbench.store import CellRecord, Store

_counter = itertools.count()


def _spec_dict(
    name: str,
    datasets: list[str],
    methods: list[str],
    *,
    n_realisations: int = 5,
    table: dict[str, Any] | None = None,
    protocol: dict[str, Any] | None = None,
    estimators: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A stored spec as ``spec_to_dict`` writes it (only the keys the report reads matter)."""
    estimators = estimators or {}
    base_table = {
        "value": "test_error",
        "spread": "std",
        "format": "md",
        "reference": None,
        "reference_methods": {},
        "reference_datasets": {},
        "significance": 0.05,
    }
    base_protocol = {
        "realisations": "random",
        "n_realisations": n_realisations,
        "fallback": "random",
        "seed": 0,
        "cv_folds": 3,
    }
    return {
        "name": name,
        "title": f"Synthetic {name}",
        "path": f"/nowhere/{name}.yaml",
        "datasets": [{"name": d, "label": d, "options": {}} for d in datasets],
        "methods": [
            {"label": m, "estimator": estimators.get(m, m.lower()), "params": {}, "grid": {}}
            for m in methods
        ],
        "protocol": {**base_protocol, **(protocol or {})},
        "table": {**base_table, **(table or {})},
    }


def _add_cell(
    store: Store,
    dataset: str,
    method: str,
    realisation: int,
    test_error: float | None,
    *,
    status: str = "done",
    estimator: str | None = None,
    result: dict[str, Any] | None = None,
    error: str | None = None,
    finished_at: float | None = None,
) -> None:
    """Record one synthetic cell (a unique cell id each call)."""
    store.record(
        CellRecord(
            cell_id=f"cell-{next(_counter)}",
            dataset=dataset,
            realisation=realisation,
            method=method,
            estimator=estimator or method.lower(),
            status=status,
            test_error=test_error if status == "done" else None,
            train_error=None if test_error is None or status != "done" else test_error / 2,
            result=result or {},
            error=error,
            finished_at=finished_at if finished_at is not None else 1000.0 + next(_counter),
        )
    )


@pytest.fixture
def make_store(tmp_path: Path) -> Callable[..., tuple[Path, Store]]:
    """``make_store(name, spec)`` -> (directory, open Store); closed after the test."""
    opened: list[Store] = []

    def make(name: str, spec: dict[str, Any] | None) -> tuple[Path, Store]:
        directory = tmp_path / name
        store = Store(directory, create=True)
        if spec is not None:
            store.set_meta("spec", spec)
        opened.append(store)
        return directory, store

    yield make
    for store in opened:
        store.close()


@pytest.fixture
def spec_dict() -> Callable[..., dict[str, Any]]:
    """The stored-spec builder (see ``_spec_dict``)."""
    return _spec_dict


@pytest.fixture
def add_cell() -> Callable[..., None]:
    """The synthetic-cell recorder (see ``_add_cell``)."""
    return _add_cell


# copied from experiments/reference/lin_li_table1.csv (twonorm, twonorm-n, threenorm; the long
# `note` column left out)
LIN_LI_ROWS = """\
dataset,method,paper_header,T,metric,mean,spread,spread_kind,n_runs
twonorm,SVM-Stump,SVM-Stump,,test_error_pct,2.86,0.04,stderr,100
twonorm,AdaBoost-Stump,AB-Stump T=100,100,test_error_pct,5.06,0.06,stderr,100
twonorm,AdaBoost-Stump,AB-Stump T=1000,1000,test_error_pct,4.97,0.06,stderr,100
twonorm,SVM-Perc,SVM-Perc,,test_error_pct,2.55,0.03,stderr,100
twonorm,AdaBoost-Perc,AB-Perc T=100,100,test_error_pct,3.08,0.05,stderr,100
twonorm,AdaBoost-Perc,AB-Perc T=1000,1000,test_error_pct,3.00,0.04,stderr,100
twonorm-n,SVM-Stump,SVM-Stump,,test_error_pct,3.08,0.06,stderr,100
twonorm-n,AdaBoost-Stump,AB-Stump T=100,100,test_error_pct,12.6,0.14,stderr,100
twonorm-n,AdaBoost-Stump,AB-Stump T=1000,1000,test_error_pct,15.5,0.17,stderr,100
twonorm-n,SVM-Perc,SVM-Perc,,test_error_pct,2.76,0.05,stderr,100
twonorm-n,AdaBoost-Perc,AB-Perc T=100,100,test_error_pct,5.93,0.08,stderr,100
twonorm-n,AdaBoost-Perc,AB-Perc T=1000,1000,test_error_pct,4.31,0.07,stderr,100
threenorm,SVM-Stump,SVM-Stump,,test_error_pct,17.7,0.10,stderr,100
threenorm,AdaBoost-Stump,AB-Stump T=100,100,test_error_pct,21.8,0.09,stderr,100
threenorm,AdaBoost-Stump,AB-Stump T=1000,1000,test_error_pct,22.9,0.12,stderr,100
threenorm,SVM-Perc,SVM-Perc,,test_error_pct,14.6,0.08,stderr,100
threenorm,AdaBoost-Perc,AB-Perc T=100,100,test_error_pct,18.2,0.12,stderr,100
threenorm,AdaBoost-Perc,AB-Perc T=1000,1000,test_error_pct,16.7,0.09,stderr,100
"""


@pytest.fixture
def lin_li_csv(tmp_path: Path) -> Path:
    """A reference CSV with real rows of Lin & Li's Table I (T=100 and T=1000 AdaBoost rows)."""
    path = tmp_path / "lin_li_table1.csv"
    path.write_text(LIN_LI_ROWS, encoding="utf-8")
    return path
