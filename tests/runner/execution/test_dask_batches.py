"""Dask batches: sizes from the run's own cell times, a failing cell inside a batch, a task that
killed its workers split up, the same values as ``--jobs 1``, and a resume after a stop mid-run."""

from __future__ import annotations

import csv
from functools import partial
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from kernbench.cells.records import FRAME_COLUMNS
from kernbench.runner.execution.cell_task import compute_cell
from kernbench.runner.execution.dask_batches import (
    BATCH_TARGET_S,
    MAX_BATCH_CELLS,
    DaskBatches,
    batch_size,
    compute_batch,
)
from kernbench.runner.execution.lost_workers import note_pid
from kernbench.runner.options import RunHooks, RunOptions
from kernbench.runner.plan.cells import plan_cells
from kernbench.runner.run import run_experiment
from kernbench.specs.load import load_spec
from kernbench.store import Store

SPEC = {
    "name": "batches",
    "datasets": [{"name": "twonorm", "options": {"n_train": 30, "n_test": 50, "d": 3}}],
    "protocol": {"n_realisations": 12, "cv_folds": 2, "seed": 3},
    "methods": {
        "Dummy": {"estimator": "sklearn.dummy:DummyClassifier"},
        "AB": {"estimator": "adaboost", "params": {"n_estimators": 5}},
        # fails in every cell: the constant strategy needs a constant when it fits
        "Broken": {
            "estimator": "sklearn.dummy:DummyClassifier",
            "params": {"strategy": "constant"},
        },
    },
}
N_CELLS = 36
#: cells.csv's columns but the times, which no two runs share, and the attempts (a resumed run's)
VALUES = tuple(c for c in FRAME_COLUMNS if not c.endswith("_time_s") and c != "attempts")


def _spec(tmp_path: Path):
    path = tmp_path / "batches.yaml"
    path.write_text(yaml.safe_dump(SPEC), encoding="utf-8")
    return load_spec(path)


def _values(out: Path) -> dict[str, tuple[str, ...]]:
    with (out / "cells.csv").open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    return {r["cell_id"]: tuple(r[c] for c in VALUES) for r in rows}


def _comparable(rec) -> tuple:
    """A record's values, without its times and host facts."""
    return (rec.cell_id, rec.status, rec.test_error, rec.train_error, rec.params)


# -- batch sizes ----------------------------------------------------------------------------------
def test_the_first_tasks_take_one_cell_each():
    assert batch_size([], remaining=1000, tasks=4) == 1


def test_short_cells_fill_a_batch_of_about_the_target_time():
    assert batch_size([0.1, 0.1, 0.1], remaining=1000, tasks=4) == round(BATCH_TARGET_S / 0.1)
    assert batch_size([0.1, 0.1, 30.0], remaining=1000, tasks=4) == round(BATCH_TARGET_S / 0.1)
    assert batch_size([1e-4], remaining=1000, tasks=4) == MAX_BATCH_CELLS
    assert batch_size([0.0], remaining=1000, tasks=4) == MAX_BATCH_CELLS


def test_long_cells_go_one_per_task():
    assert batch_size([2.0, 3.0], remaining=1000, tasks=4) == 1


def test_batches_shrink_towards_the_end_of_the_run():
    # 20 cells left, 4 tasks in flight: at most 20 // 8 = 2 per task, then one
    assert batch_size([1e-3], remaining=20, tasks=4) == 2
    assert batch_size([1e-3], remaining=7, tasks=4) == 1
    assert batch_size([1e-3], remaining=0, tasks=4) == 1


# -- a batch on its worker ------------------------------------------------------------------------
def test_a_failing_cell_inside_a_batch_is_failed_and_the_rest_complete(tmp_path):
    cells = plan_cells(_spec(tmp_path), realisations=2)
    by_method = {c.method.label: c for c in cells if c.realisation == 0}
    raising = [c for c in cells if c.realisation == 1 and c.method.label == "AB"][0]
    batch = [by_method["Dummy"], by_method["Broken"], raising, by_method["AB"]]

    def compute(cell):
        if cell.cell_id == raising.cell_id:
            raise RuntimeError("escaped the cell")
        return compute_cell(cell, None, 1)

    marks = tmp_path / "marks"
    marks.mkdir()
    records = compute_batch(batch, compute, str(marks))
    assert [r.cell_id for r in records] == [c.cell_id for c in batch]
    assert [r.status for r in records] == ["done", "failed", "failed", "done"]
    assert "Constant" in records[1].error  # the method's own failure, recorded by the cell
    assert records[2].error == "RuntimeError: escaped the cell" and records[2].traceback
    assert list(marks.iterdir()) == []  # every finished cell's note forgotten
    # the cells that completed are those of a cell run alone
    for rec, cell in ((records[0], batch[0]), (records[3], batch[3])):
        assert _comparable(rec) == _comparable(compute_cell(cell, None, 1))


# -- a task that killed its workers ---------------------------------------------------------------
def _killed(batch):
    from distributed.scheduler import KilledWorker

    exc = KilledWorker("kernbench-cells-x", SimpleNamespace(address="tcp://127.0.0.1:1"), 3)
    return SimpleNamespace(status="error", exception=lambda: exc)


@pytest.mark.parametrize("noted", [[1], [], [0, 2]])
def test_a_task_that_killed_its_workers_fails_the_noted_cell_and_reruns_the_others(tmp_path, noted):
    pytest.importorskip("distributed")
    cells = plan_cells(_spec(tmp_path), realisations=1)
    marks = tmp_path / "marks"
    marks.mkdir()
    for i in noted:
        note_pid(str(marks), cells[i].cell_id)
    submitted = []
    batches = DaskBatches(client=None, compute=compute_cell, in_flight={})
    failed = batches._records(_killed(cells), None, list(cells), str(marks), submitted.append)
    named = [cells[i] for i in noted] if len(noted) == 1 else []  # several or none: unknown
    assert [r.cell_id for r in failed] == [c.cell_id for c in named]
    assert all(r.status == "failed" and r.error.startswith("WorkerDied") for r in failed)
    assert submitted == [[c] for c in cells if c not in named]  # one per task
    assert not any(marks.iterdir())


def test_a_task_of_one_cell_that_killed_its_workers_is_that_cells_failure(tmp_path):
    pytest.importorskip("distributed")
    cell = plan_cells(_spec(tmp_path), realisations=1)[0]
    submitted = []
    batches = DaskBatches(client=None, compute=compute_cell, in_flight={})
    failed = batches._records(_killed([cell]), None, [cell], str(tmp_path), submitted.append)
    assert [(r.cell_id, r.status) for r in failed] == [(cell.cell_id, "failed")]
    assert submitted == []


def test_a_task_that_raised_fails_its_cells(tmp_path):
    cells = plan_cells(_spec(tmp_path), realisations=1)
    future = SimpleNamespace(status="error", exception=lambda: ValueError("cannot unpickle"))
    batches = DaskBatches(client=None, compute=compute_cell, in_flight={})
    failed = batches._records(future, None, list(cells), str(tmp_path), None)
    assert [(r.status, r.error) for r in failed] == [
        ("failed", "ValueError: cannot unpickle")
    ] * len(cells)


# -- on a cluster ---------------------------------------------------------------------------------
class _Spy:
    """A client that notes the cells of each task it submits."""

    def __init__(self, client) -> None:
        self._client = client
        self.batches: list[int] = []

    def submit(self, fn, cells, *args, **kwargs):
        self.batches.append(len(cells))
        return self._client.submit(fn, cells, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._client, name)


def test_batches_on_a_cluster_give_the_records_of_cells_run_one_by_one(cluster, tmp_path):
    from dask.distributed import Client

    cells = plan_cells(_spec(tmp_path))
    alone = {c.cell_id: _comparable(compute_cell(c, None, 1)) for c in cells}
    in_flight: dict = {}
    with Client(cluster.scheduler_address) as client:
        spy = _Spy(client)
        records = list(
            DaskBatches(spy, partial(compute_cell, timeout_s=None, threads=1), in_flight).run(cells)
        )
    assert sorted(r.cell_id for r in records) == sorted(alone)  # each cell once
    assert {r.cell_id: _comparable(r) for r in records} == alone
    assert in_flight == {}
    assert spy.batches[:4] == [1, 1, 1, 1]  # 2 threads x 2 tasks, before any cell was timed
    assert max(spy.batches) > 1 and sum(spy.batches) == N_CELLS


def test_a_dask_run_stores_the_values_of_jobs_1_and_resumes_after_a_stop(cluster, tmp_path):
    spec = _spec(tmp_path)
    summary = run_experiment(spec, RunOptions(out_dir=tmp_path / "jobs1", jobs=1))
    reference = _values(tmp_path / "jobs1")
    assert summary.counts == {"done": 24, "failed": 12}

    seen = []

    def stop_after_ten(rec) -> None:
        seen.append(rec.cell_id)
        if len(seen) == 10:
            raise KeyboardInterrupt  # as the stop signal's handler does

    out = tmp_path / "dask"
    with pytest.raises(KeyboardInterrupt):
        run_experiment(
            spec,
            RunOptions(out_dir=out, backend="dask", scheduler=cluster.scheduler_address),
            hooks=RunHooks(on_cell=stop_after_ten),
        )
    with Store(out) as store:
        first = {r["cell_id"]: r for r in store.rows()}
    stored = {i for i, r in first.items() if r["status"] in ("done", "failed")}
    finished = {i for i, r in first.items() if r["status"] == "done"}  # failed: retried
    assert set(seen) <= stored and len(stored) < N_CELLS
    assert {r["status"] for i, r in first.items() if i not in stored} == {"interrupted"}

    summary = run_experiment(
        spec, RunOptions(out_dir=out, backend="dask", scheduler=cluster.scheduler_address)
    )
    assert summary.skipped_done == len(finished)  # the finished cells are not computed again
    assert sum(summary.counts.values()) == N_CELLS - len(finished)
    assert _values(out) == reference
    with Store(out) as store:
        again = {r["cell_id"]: r for r in store.rows()}
    assert all(again[i]["finished_at"] == first[i]["finished_at"] for i in finished)
