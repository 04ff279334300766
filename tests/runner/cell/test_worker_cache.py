"""A worker's cache of prepared realisations (bitwise a fresh build, a copy per cell, bounded)
and its once-per-method warm-up."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from kernbench.datasets import make_realisation
from kernbench.runner.cell import worker_cache
from kernbench.runner.cell.preprocess import fit_scaler
from kernbench.runner.plan.cells import plan_cells
from kernbench.specs.load import load_spec

SPEC = {
    "name": "cache",
    "datasets": [
        {"name": "australian"},
        {"name": "twonorm", "options": {"n_train": 40, "n_test": 40}},
    ],
    "protocol": {"n_realisations": 3, "preprocess": "minmax", "cv_folds": 2},
    "methods": {
        "AB": {"estimator": "adaboost", "params": {"n_estimators": 5}},
        "AB7": {"estimator": "adaboost", "params": {"n_estimators": 7}},
    },
}


@pytest.fixture
def cells(tmp_path: Path):
    path = tmp_path / "cache.yaml"
    path.write_text(yaml.safe_dump(SPEC), encoding="utf-8")
    worker_cache.clear()
    yield plan_cells(load_spec(path))
    worker_cache.clear()


def _fresh(cell):
    real = make_realisation(
        cell.dataset.name,
        dict(cell.dataset.options),
        cell.protocol,
        cell.realisation,
        seed=cell.protocol.seed,
    )
    scale = fit_scaler(real.X_train, cell.protocol.preprocess, cell.protocol.minmax_range)
    return scale(real.X_train), real.y_train, scale(real.X_test), real.y_test


def test_a_cached_realisation_is_bitwise_a_fresh_build_and_each_cell_gets_a_copy(cells):
    first, second = (c for c in cells if c.dataset.label == "australian" and c.realisation == 1)
    a = worker_cache.prepared_realisation(first)
    a.X_train[:] = 7.0  # a method writing into its input
    b = worker_cache.prepared_realisation(second)  # the other method, the same realisation
    assert len(worker_cache._CACHE) == 1
    for got, want in zip((b.X_train, b.y_train, b.X_test, b.y_test), _fresh(second), strict=True):
        assert got.dtype == want.dtype and got.flags.c_contiguous == want.flags.c_contiguous
        assert got.tobytes() == want.tobytes()


def test_the_cache_keeps_the_most_recently_used_within_its_bytes(cells, monkeypatch):
    keys = {}
    for c in cells:
        keys.setdefault((c.dataset.label, c.realisation), c)
    one = worker_cache.prepared_realisation(keys["australian", 0]).nbytes
    monkeypatch.setattr(worker_cache, "MAX_CACHE_BYTES", int(2.5 * one))
    worker_cache.prepared_realisation(keys["australian", 1])
    worker_cache.prepared_realisation(keys["australian", 0])  # used again: now the newest
    worker_cache.prepared_realisation(keys["australian", 2])  # the oldest (australian 1) goes
    kept = list(worker_cache._CACHE)
    assert kept == [worker_cache.realisation_key(keys["australian", r]) for r in (0, 2)]
    monkeypatch.setattr(worker_cache, "MAX_CACHE_BYTES", one - 1)  # larger than the cache
    worker_cache.prepared_realisation(keys["australian", 1])
    assert list(worker_cache._CACHE) == kept  # neither kept nor evicting the others


def test_a_method_is_warmed_once_per_process_and_setting(cells, monkeypatch):
    fits = []

    class Probe:
        def __init__(self, n_estimators: int = 5) -> None:
            self.n_estimators = n_estimators

        def get_params(self, deep: bool = True):
            return {"n_estimators": self.n_estimators}

        def set_params(self, **params):
            self.__dict__.update(params)
            return self

        def fit(self, X, y):
            fits.append((X.shape, tuple(np.unique(y))))
            return self

    ab, ab7 = (next(c for c in cells if c.method.label == m) for m in ("AB", "AB7"))
    data = worker_cache.prepared_realisation(ab)
    for cell in (ab, ab, ab7, ab):
        worker_cache.warm_method(cell, Probe(), data.X_train, data.y_train)
    n = worker_cache.WARM_ROWS_PER_CLASS
    assert fits == [((2 * n, data.X_train.shape[1]), (-1, 1))] * 2
