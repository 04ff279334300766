"""A binarised multi-class spec and a regression spec, each run end to end through the CLI.

The numbers in the store are checked against an independent refit of the same estimator on the
same realisation (the runner's split, preprocessing and seeds), not against constants.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import yaml
from typer.testing import CliRunner

from kernbench.cli import app
from kernbench.datasets import make_realisation
from kernbench.methods import CGBoost, CGBoostRegressor
from kernbench.specs.load import load_spec
from kernbench.store import Store

runner = CliRunner()


def _run(tmp_path: Path, spec: dict) -> tuple[Path, list[dict], str]:
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    out = tmp_path / "res"
    res = runner.invoke(app, ["run", str(path), "--out", str(out), "--jobs", "1"])
    assert res.exit_code == 0, res.output
    with Store(out) as st:
        rows = st.rows()
    table = runner.invoke(app, ["table", str(out)])
    assert table.exit_code == 0, table.output
    return path, rows, table.output


def test_binarised_digits_spec_runs_and_matches_a_refit(tmp_path):
    spec = {
        "name": "binarised",
        "datasets": [
            {"name": "digits", "label": "digits-odd", "options": {"positive": [1, 3, 5, 7, 9]}}
        ],
        "protocol": {"n_realisations": 1, "train_size": 300, "test_size": 300, "cv_folds": 1},
        "methods": {
            "mix": {"estimator": "cgboost", "params": {"kernels": ["linear", "rbf"], "norm": "l1"}}
        },
    }
    path, rows, table = _run(tmp_path, spec)
    (row,) = rows
    assert row["status"] == "done"
    assert row["result"]["split_info"]["options"]["positive"] == ["1", "3", "5", "7", "9"]
    s = load_spec(path)
    real = make_realisation("digits", s.datasets[0].options, s.protocol, 0, seed=0)
    assert set(np.unique(real.y_train)) == {-1, 1}
    est = CGBoost(kernels=["linear", "rbf"], norm="l1").fit(real.X_train, real.y_train)
    err = float(np.mean(est.predict(real.X_test) != real.y_test))
    assert row["test_error"] == err < 0.2  # odd vs even digits: far better than chance
    assert "digits-odd" in table and "Test error" in table


def test_regression_spec_records_rmse_and_tabulates_it(tmp_path):
    params = {"kernels": ["linear", "rbf"], "norm": "l1", "epsilon": 0.05, "C": 10.0}
    spec = {
        "name": "regression",
        "datasets": [
            {"name": "cgboost-toy", "options": {"n_train": 40, "n_test": 300}},
            {"name": "diabetes-efron", "options": {}},
        ],
        "protocol": {
            "n_realisations": 1,
            "train_size": 0.5,
            "cv_folds": 2,
            "seed": 3,
            "preprocess": "standardize",
            "decision_grid": None,
        },
        "methods": {
            "mixture": {"estimator": "cgboost_regressor", "params": params},
            "linear": {
                "estimator": "cgboost_regressor",
                "params": {"kernels": ["linear"], "norm": "l1", "C": 10.0},
                "grid": {"epsilon": [0.05, 5.0]},
            },
        },
    }
    path, rows, table = _run(tmp_path, spec)
    assert len(rows) == 4 and {r["status"] for r in rows} == {"done"}
    s = load_spec(path)
    assert s.table.value == "test_rmse"  # the default of an all-regression spec
    for r in rows:
        res = r["result"]
        assert r["test_error"] is None and r["train_error"] is None and res["metric"] == "rmse"
        ds = next(d for d in s.datasets if d.label == r["dataset"])
        real = make_realisation(ds.name, ds.options, s.protocol, 0, seed=3)
        mu, sd = real.X_train.mean(0), real.X_train.std(0)
        sd[sd == 0] = 1.0
        Xtr, Xte = (real.X_train - mu) / sd, (real.X_test - mu) / sd
        kernels = ["linear"] if r["method"] == "linear" else params["kernels"]
        est = CGBoostRegressor(**{**params, "kernels": kernels, **r["params"]})
        est.fit(Xtr, real.y_train)
        rmse = float(np.sqrt(np.mean((est.predict(Xte) - real.y_test) ** 2)))
        np.testing.assert_allclose(res["test_rmse"], rmse, rtol=1e-9)
        baseline = float(np.sqrt(np.mean((real.y_test - real.y_train.mean()) ** 2)))
        assert res["test_rmse"] < baseline  # better than predicting the training mean
        trace = res["trace"]  # staged RMSE along the final fit ends at the recorded value
        np.testing.assert_allclose(trace["test_error"][-1], res["test_rmse"], rtol=1e-9)
        if r["method"] == "linear":  # epsilon chosen by 2-fold CV on the RMSE
            assert r["params"]["epsilon"] in (0.05, 5.0) and len(res["cv"]) == 2
    assert "Test RMSE" in table and "diabetes-efron" in table and "cgboost-toy" in table


def test_regression_spec_refuses_an_error_rate_table(tmp_path):
    spec = {
        "name": "bad",
        "datasets": ["cgboost-toy"],
        "protocol": {"n_realisations": 1, "cv_folds": 1},
        "methods": {"m": {"estimator": "cgboost_regressor"}},
        "table": {"value": "test_error"},
    }
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    res = runner.invoke(app, ["run", str(path), "--out", str(tmp_path / "r"), "--dry-run"])
    assert res.exit_code != 0 and "test_rmse" in res.output
