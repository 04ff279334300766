"""The cost model behind the estimates of ``validate`` and ``run --dry-run``: a cell's size,
seconds per method calibrated on recorded cells, the store's times first, the machine's load."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

import kernbench.progress.cost as cost
from kernbench.cli import app
from kernbench.progress.cost import cell_units, plan_cost, seconds_per_cell
from kernbench.progress.cost_calibration import CALIBRATION
from kernbench.runner.plan.cells import plan_cells
from kernbench.specs.load import load_spec

ROOT = Path(__file__).resolve().parents[2]
SPEC = {
    "name": "cost",
    "datasets": [{"name": "twonorm", "options": {"n_train": 50, "n_test": 50, "d": 4}}],
    "protocol": {"n_realisations": 2, "cv_folds": 3},
    "methods": {
        "AB": {"estimator": "adaboost", "grid": {"n_estimators": [10, 100, 1000]}},
        "LP": {"estimator": "lpboost", "grid": {"nu": [0.1, 0.3], "max_iter": [10, 30]}},
        "Tree": {"estimator": "sklearn.tree:DecisionTreeClassifier"},
    },
}


@pytest.fixture
def cells(tmp_path):
    path = tmp_path / "cost.yaml"
    path.write_text(yaml.safe_dump(SPEC))
    return {(c.method.label, c.realisation): c for c in plan_cells(load_spec(path))}


def test_an_iteration_cap_scored_along_one_fit_counts_its_largest_value_once(cells):
    ab = cells["AB", 0]
    assert cell_units(ab.dataset, ab.method, ab.protocol) == 50 * 4 * (1 * 3 + 1) * 1000
    lp = cells["LP", 0]  # LPBoost's max_iter is its path parameter too: nu's 2 values x 3 folds
    assert cell_units(lp.dataset, lp.method, lp.protocol) == 50 * 4 * (2 * 3 + 1) * 30
    tree = cells["Tree", 0]
    assert cell_units(tree.dataset, tree.method, tree.protocol) == 50 * 4


def test_the_calibration_is_the_recorded_benchmark_not_invented():
    """Every constant comes from benchmarks/calibrate_cost_model.py's rows (its CSV, dated log)."""
    path = ROOT / "benchmarks" / "results" / "calibrate_cost_model.csv"
    with path.open(encoding="utf-8") as fh:
        rows = {r["estimator"]: (float(r["c_s"]), float(r["p"])) for r in csv.DictReader(fh)}
    assert rows == {k: tuple(v) for k, v in CALIBRATION["estimators"].items()}
    log = (ROOT / "benchmarks" / "logs" / "cost_model.md").read_text(encoding="utf-8")
    assert f"startup_s = {CALIBRATION['startup_s']}" in log
    grand = load_spec(ROOT / "experiments" / "grand.yaml", check_datasets=False)
    assert {m.estimator for m in grand.methods} <= set(CALIBRATION["estimators"])


def test_before_any_cell_the_model_estimates_and_names_what_it_cannot_calibrate(cells):
    model = plan_cost(list(cells.values()), jobs=2)
    assert model.from_store == 0 and model.cells == 6 and model.cpu_seconds > 0
    assert model.uncalibrated == ["sklearn.tree:DecisionTreeClassifier"]
    assert model.wall_seconds >= CALIBRATION["startup_s"] + model.longest_seconds
    ab = cells["AB", 0]
    expected, known = seconds_per_cell("adaboost", cell_units(ab.dataset, ab.method, ab.protocol))
    assert known and expected > seconds_per_cell("adaboost", 1.0)[0]


def test_the_stores_done_cells_come_first(cells):
    done = cells["AB", 0]
    row = {"cell_id": done.cell_id, "method": "AB", "dataset": done.dataset.label}
    row.update(status="done", started_at=0.0, finished_at=90.0, cpu_seconds=30.0)
    both = plan_cost([cells["AB", 1], cells["LP", 1]], [row], jobs=1)
    assert both.from_store == 1  # AB's second realisation: the first one's CPU, not its wall
    alone = plan_cost([cells["LP", 1]], jobs=1)
    assert both.cpu_seconds == pytest.approx(30.0 + alone.cpu_seconds)


def test_the_machines_load_stretches_the_wall_time(cells, monkeypatch):
    monkeypatch.setattr(cost, "_cores", lambda: 2)
    monkeypatch.setattr(cost, "machine_load", lambda: None)
    idle = plan_cost(list(cells.values()), jobs=2)
    assert idle.loaded_wall_seconds == idle.wall_seconds
    monkeypatch.setattr(cost, "machine_load", lambda: 6.0)
    busy = plan_cost(list(cells.values()), jobs=2)
    assert busy.loaded_wall_seconds == pytest.approx(idle.wall_seconds * (6 + 2) / 2)


def test_validate_prints_an_estimate_before_any_cell_has_run(tmp_path, monkeypatch):
    monkeypatch.setattr(cost, "machine_load", lambda: 7.5)
    monkeypatch.setattr(cost, "_cores", lambda: 2)
    path = tmp_path / "cost.yaml"
    path.write_text(yaml.safe_dump(SPEC))
    res = CliRunner().invoke(app, ["validate", "--no-data", str(path), "--jobs", "2"])
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "estimate, not a measurement: the 6 cell(s) to run need ≈" in text
    assert "of CPU (from the cost model, calibrated on recorded cells)" in text
    assert "at --jobs 2 on an idle machine (2 at once, start-up included)" in text
    assert "at this machine's load (7.5 on 2 cores)" in text
    assert "no recorded cells of sklearn.tree:DecisionTreeClassifier" in text
