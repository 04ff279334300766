"""run_experiment: the same cell values whatever runs the cells, records that arrive together
stored in one transaction, held records stored when a stop comes, cells handed out longest
first."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
import yaml

from kernbench.cells.records import FRAME_COLUMNS, CellRecord
from kernbench.runner import record_sink
from kernbench.runner.execution.inline import InlineExecutor
from kernbench.runner.options import RunOptions
from kernbench.runner.run import run_experiment
from kernbench.specs.load import load_spec
from kernbench.store import Store

SPEC = {
    "name": "same",
    "datasets": [
        {"name": "twonorm", "options": {"n_train": 60, "n_test": 200, "d": 5}},
        {"name": "ringnorm", "options": {"n_train": 60, "n_test": 200, "d": 5}},
    ],
    "protocol": {"n_realisations": 2, "cv_folds": 2, "seed": 5},
    "methods": {
        "AB": {"estimator": "adaboost", "params": {"n_estimators": 30}},
        "SVM": {"estimator": "svm_stump", "grid": {"C": [0.1, 10.0]}},
    },
}
#: cells.csv's columns but the times, which no two runs share
VALUES = tuple(c for c in FRAME_COLUMNS if not c.endswith("_time_s"))


def _spec(tmp_path: Path):
    path = tmp_path / "same.yaml"
    path.write_text(yaml.safe_dump(SPEC), encoding="utf-8")
    return load_spec(path)


def _values(out: Path) -> list[tuple[str, ...]]:
    with (out / "cells.csv").open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    return sorted(tuple(r[c] for c in VALUES) for r in rows)


def test_cells_csv_values_are_identical_at_one_job_two_jobs_and_on_dask(tmp_path):
    pytest.importorskip("distributed")
    spec = _spec(tmp_path)
    runs = {
        "jobs1": {"jobs": 1},
        "jobs2": {"jobs": 2},
        "dask": {"jobs": 2, "backend": "dask"},
    }
    values = {}
    for name, options in runs.items():
        summary = run_experiment(spec, RunOptions(out_dir=tmp_path / name, **options))
        assert summary.ok, summary.failed
        values[name] = _values(tmp_path / name)
    assert len(values["jobs1"]) == 8
    status = VALUES.index("status")
    assert {row[status] for row in values["jobs1"]} == {"done"}
    assert values["jobs2"] == values["jobs1"]
    assert values["dask"] == values["jobs1"]


class _Arrived:
    """Stands in for the backend: yields ready-made records, saying how many more have arrived;
    optionally stops (as a signal would) after ``stop_after`` records."""

    def __init__(self, stop_after: int | None = None) -> None:
        self.stop_after = stop_after
        self.left = 0

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from kernbench.runner.cell.compute import cell_record

        def run(executor, cells):
            for k, cell in enumerate(cells):
                if self.stop_after is not None and k == self.stop_after:
                    executor.in_flight = {c.cell_id: c for c in cells[k:]}
                    raise KeyboardInterrupt
                self.left = len(cells) - k - 1
                yield cell_record(cell, "done", test_error=0.25, result={"cpu_time_s": 0.0})

        monkeypatch.setattr(InlineExecutor, "run", run)
        monkeypatch.setattr(InlineExecutor, "arrived", lambda executor: self.left)


def test_records_that_arrived_together_share_one_transaction(tmp_path, monkeypatch):
    transactions: list[int] = []
    record_many = Store.record_many

    def counting(store: Store, recs):
        recs = list(recs)
        transactions.append(len(recs))
        return record_many(store, recs)

    monkeypatch.setattr(Store, "record_many", counting)
    monkeypatch.setattr(record_sink, "MAX_BATCH", 3)
    _Arrived().install(monkeypatch)
    summary = run_experiment(_spec(tmp_path), RunOptions(out_dir=tmp_path / "r", jobs=1))
    assert summary.counts == {"done": 8}
    assert transactions == [3, 3, 2]  # full batches, then the last records when none is left
    with Store(tmp_path / "r") as store:
        assert set(store.statuses().values()) == {"done"}


def test_a_stop_stores_the_held_records_as_done_and_the_rest_as_interrupted(tmp_path, monkeypatch):
    _Arrived(stop_after=5).install(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        run_experiment(_spec(tmp_path), RunOptions(out_dir=tmp_path / "r", jobs=1))
    with Store(tmp_path / "r") as store:
        statuses = sorted(store.statuses().values())
    assert statuses == ["done"] * 5 + ["interrupted"] * 3


def test_cells_are_handed_out_longest_first(tmp_path, monkeypatch):
    seen: list[list[str]] = []

    def run(executor, cells):
        seen.append([c.method.label for c in cells])
        return iter(())

    monkeypatch.setattr(InlineExecutor, "run", run)
    run_experiment(_spec(tmp_path), RunOptions(out_dir=tmp_path / "r", jobs=1))
    # no history, so the static cost: AdaBoost's 30 rounds against SVM's 2 x 2 + 1 fits
    assert seen == [["AB"] * 4 + ["SVM"] * 4]


def test_record_many_is_all_or_nothing(tmp_path):
    def rec(cell_id: str, realisation) -> CellRecord:
        return CellRecord(
            cell_id=cell_id,
            dataset="d",
            realisation=realisation,
            method="m",
            estimator="e",
            status="done",
        )

    with Store(tmp_path, create=True) as store:
        with pytest.raises(ValueError):
            store.record_many([rec("a", 0), rec("b", "not a number")])
        assert store.statuses() == {}
        assert store.record_many([rec("a", 0), rec("b", 1)]) == [True, True]
        assert store.statuses() == {"a": "done", "b": "done"}
