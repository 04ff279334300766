"""The longest-first order: the status time model where the store has timed cells, else the
static cost n_train x d x fits x rounds."""

from __future__ import annotations

from pathlib import Path

import yaml

from kernbench.runner.plan.cells import plan_cells
from kernbench.runner.plan.order import longest_first, static_cost
from kernbench.specs.load import load_spec

SPEC = {
    "name": "order",
    "datasets": [
        {"name": "twonorm", "options": {"n_train": 50, "n_test": 50, "d": 4}},
        {"name": "australian"},
    ],
    "protocol": {"n_realisations": 2, "cv_folds": 3, "train_size": 0.5},
    "methods": {
        "AB10": {"estimator": "adaboost", "params": {"n_estimators": 10}},
        "AB1000": {"estimator": "adaboost", "params": {"n_estimators": 1000}},
        "SVM": {"estimator": "svm_stump", "grid": {"C": [0.1, 1.0, 10.0]}},
    },
}


def _cells(tmp_path: Path):
    path = tmp_path / "order.yaml"
    path.write_text(yaml.safe_dump(SPEC), encoding="utf-8")
    return plan_cells(load_spec(path))


def _by_key(cells):
    return {(c.dataset.label, c.realisation, c.method.label): c for c in cells}


def test_static_cost_is_rows_times_features_times_fits_times_rounds(tmp_path):
    cells = _by_key(_cells(tmp_path))
    assert static_cost(cells["twonorm", 0, "AB10"]) == 50 * 4 * 1 * 10
    assert static_cost(cells["twonorm", 0, "SVM"]) == 50 * 4 * (3 * 3 + 1) * 1
    # australian: 690 rows x 14 features in the catalogue, half of the rows to train on
    assert static_cost(cells["australian", 1, "AB1000"]) == 345 * 14 * 1 * 1000


def test_without_history_the_static_cost_orders_the_cells(tmp_path):
    cells = _cells(tmp_path)
    ordered = longest_first(cells)
    costs = [static_cost(c) for c in ordered]
    assert costs == sorted(costs, reverse=True)
    assert sorted(c.cell_id for c in ordered) == sorted(c.cell_id for c in cells)
    # equal costs: grouped by dataset and realisation, so a worker meets the same data again
    first = [(c.dataset.label, c.realisation, c.method.label) for c in ordered[:2]]
    assert first == [("australian", 0, "AB1000"), ("australian", 1, "AB1000")]


def test_done_cells_time_their_peers_and_scale_the_static_cost_of_the_others(tmp_path):
    cells = _cells(tmp_path)
    by_key = _by_key(cells)
    # on twonorm, SVM took 9 s and AB10 1 s: the opposite of what the static costs say
    rows = []
    for (dataset, r, method), seconds in {
        ("twonorm", 0, "SVM"): 9.0,
        ("twonorm", 0, "AB10"): 1.0,
    }.items():
        cell = by_key[dataset, r, method]
        rows.append(
            {
                "cell_id": cell.cell_id,
                "dataset": dataset,
                "method": method,
                "status": "done",
                "started_at": 100.0,
                "finished_at": 100.0 + seconds,
            }
        )
    todo = [c for c in cells if c.realisation == 1]
    ordered = [(c.dataset.label, c.method.label) for c in longest_first(todo, rows)]
    # the model times SVM and AB10 on both sets; AB1000 has no timed cell, so its static cost
    # is put in seconds by the median seconds per unit of the timed cells
    assert ordered.index(("twonorm", "SVM")) < ordered.index(("twonorm", "AB10"))
    assert ordered.index(("australian", "SVM")) < ordered.index(("australian", "AB10"))
    assert ordered[0] == ("australian", "AB1000")
