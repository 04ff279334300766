"""The local pool: its records, and how many of them are waiting, told without joblib's private
attributes."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
import yaml

from kernbench.runner.execution.local_pool import LocalPoolExecutor
from kernbench.runner.execution.local_workers import stop_local_workers
from kernbench.runner.plan.cells import plan_cells
from kernbench.specs.load import load_spec

SPEC = {
    "name": "pool",
    "datasets": [{"name": "twonorm", "options": {"n_train": 30, "n_test": 50, "d": 3}}],
    "protocol": {"n_realisations": 4, "cv_folds": 2, "seed": 3},
    "methods": {"Dummy": {"estimator": "sklearn.dummy:DummyClassifier"}},
}


def _cells(tmp_path: Path):
    path = tmp_path / "pool.yaml"
    path.write_text(yaml.safe_dump(SPEC), encoding="utf-8")
    return plan_cells(load_spec(path))


def test_records_that_finished_while_the_consumer_was_busy_count_as_arrived(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    cells = _cells(tmp_path)
    executor = LocalPoolExecutor(jobs=2)
    assert executor.arrived() == 0  # no call running
    seen, waiting = [], []
    try:
        with executor:
            for rec in executor.run(cells):
                seen.append(rec.cell_id)
                if len(seen) == 1:  # busy: the other cells finish meanwhile
                    deadline = time.monotonic() + 60
                    while executor.arrived() == 0 and time.monotonic() < deadline:
                        time.sleep(0.05)
                    waiting.append(executor.arrived())
                assert rec.status == "done", rec.error
    finally:
        stop_local_workers()
    assert sorted(seen) == sorted(c.cell_id for c in cells)
    assert 1 <= waiting[0] <= len(cells) - 1  # counted, never more than what is left
    assert executor.arrived() == 0 and executor.in_flight == {}


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_wave_of_one_cell_runs_inline(tmp_path, monkeypatch, jobs):
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    cell = _cells(tmp_path)[0]
    executor = LocalPoolExecutor(jobs=jobs)
    with executor:
        records = list(executor.run([cell]))
    assert [r.cell_id for r in records] == [cell.cell_id] and records[0].status == "done"
    assert executor.in_flight == {}
