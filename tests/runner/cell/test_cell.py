"""One cell's record: its warnings (counted, kept off the terminal, summarised by ``run``) and
its CPU time."""

from __future__ import annotations

import csv
import warnings

import yaml
from typer.testing import CliRunner

from kernbench.cli import app
from kernbench.runner.cell.compute import MAX_WARNINGS, warning_summary
from kernbench.store import Store

SPEC = {
    "name": "warns",
    "datasets": [{"name": "twonorm", "options": {"n_train": 60, "n_test": 100, "d": 5}}],
    "protocol": {"n_realisations": 1, "cv_folds": 3, "seed": 3},
    "methods": {
        # one LIBLINEAR iteration cannot converge: scikit-learn warns at every fit
        "RFF": {
            "estimator": "rff_svm",
            "params": {"n_components": 20, "max_iter": 1},
            "grid": {"C": [1.0, 100.0]},
        },
        "AdaBoost": {"estimator": "adaboost", "grid": {"n_estimators": [5]}},
    },
}


def test_summary_counts_distinct_warnings_and_drops_the_hidden_categories():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            warnings.warn("solver did not converge\nsecond line", RuntimeWarning, stacklevel=1)
        warnings.warn("old API", DeprecationWarning, stacklevel=1)
        warnings.warn("other", UserWarning, stacklevel=1)
        for k in range(2 * MAX_WARNINGS):
            warnings.warn(f"distinct {k}", UserWarning, stacklevel=1)
    summary = warning_summary(caught)
    assert summary[0] == {
        "category": "RuntimeWarning",
        "message": "solver did not converge",
        "count": 3,
    }
    assert len(summary) == MAX_WARNINGS
    assert all(w["category"] != "DeprecationWarning" for w in summary)


def test_a_cells_warnings_are_recorded_and_summarised_not_printed(tmp_path):
    path = tmp_path / "warns.yaml"
    path.write_text(yaml.safe_dump(SPEC), encoding="utf-8")
    out = tmp_path / "res"
    res = CliRunner().invoke(app, ["run", str(path), "--out", str(out), "--jobs", "1"])
    assert res.exit_code == 0, res.output
    assert "ConvergenceWarning" in res.output and "1 cell(s) warned" in res.output
    assert "warnings.warn(" not in res.output  # nothing printed by the warnings module itself
    with Store(out) as store:
        rows = {r["method"]: r for r in store.rows()}
    (w,) = rows["RFF"]["result"]["warnings"]
    assert w["category"] == "ConvergenceWarning" and w["count"] == 7  # 2 C x 3 folds + refit
    assert "warnings" not in rows["AdaBoost"]["result"]
    with open(out / "cells.csv", newline="", encoding="utf-8") as f:
        by_method = {r["method"]: r["warnings"] for r in csv.DictReader(f)}
    assert by_method["RFF"].startswith("ConvergenceWarning×7: ")
    assert by_method["AdaBoost"] == ""


def test_a_cell_records_its_cpu_time_without_its_waits(tmp_path, monkeypatch):
    import time

    import numpy as np

    import kernbench.datasets  # noqa: F401 - imported before the cell: their import is CPU too
    import kernbench.runner.cell.select as select
    from kernbench.methods import AdaBoost

    rng = np.random.default_rng(0)  # compiled kernels loaded (or compiled) before the cell too
    AdaBoost(n_estimators=2).fit(rng.standard_normal((20, 3)), np.repeat([-1, 1], 10))

    real = select.select_fit_score

    def waits(*args, **kwargs):  # a cell that waits 1.5 s (as for a core, or stopped)
        time.sleep(1.5)
        return real(*args, **kwargs)

    monkeypatch.setattr(select, "select_fit_score", waits)
    spec = {**SPEC, "methods": {"AdaBoost": SPEC["methods"]["AdaBoost"]}}
    path = tmp_path / "cpu.yaml"
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    out = tmp_path / "res"
    res = CliRunner().invoke(app, ["run", str(path), "--out", str(out), "--jobs", "1"])
    assert res.exit_code == 0, res.output
    assert "s of CPU)" in res.output  # the run's summary line sums its cells' CPU
    with Store(out) as store:
        (row,) = store.rows()
    wall = row["finished_at"] - row["started_at"]
    cpu = row["result"]["cpu_time_s"]
    assert wall >= 1.5
    assert 0.0 < cpu < wall - 1.0  # the sleep is wall time, not CPU time
    with open(out / "cells.csv", newline="", encoding="utf-8") as f:
        (exported,) = csv.DictReader(f)
    assert float(exported["cpu_time_s"]) == cpu


def test_a_cell_records_the_nu_its_fit_used(tmp_path):
    """LPBoost's and DRM's ν at or below the ν floor is raised: the record keeps the chosen ν in
    ``params`` and the ν the refit used in ``result["fitted"]`` (``fitted.nu`` in cells.csv);
    a method without such an attribute records no ``fitted``."""
    import numpy as np

    from kernbench.methods import DRM, LPBoost

    rng = np.random.default_rng(0)  # rounded features under heavy label noise: ν_min > 0.6
    X = np.round(rng.standard_normal((200, 3)))
    y = np.where(X[:, 0] + 2 * rng.standard_normal(200) > 0, 1, 0)
    data = tmp_path / "noisy.csv"
    np.savetxt(data, np.c_[X, y], delimiter=",", fmt="%g")
    spec = {
        "name": "fitted",
        "datasets": [{"name": "noisy", "file": "noisy.csv"}],
        "protocol": {"realisations": "random", "n_realisations": 1, "train_size": 0.5,
                     "cv_folds": 2, "seed": 1},
        "methods": {
            "LPBoost": {"estimator": "lpboost", "params": {"max_iter": 20},
                        "grid": {"nu": [0.1, 0.3]}},
            "DRM": {"estimator": "drm", "params": {"n_components": 2}},
            "AdaBoost": {"estimator": "adaboost", "params": {"n_estimators": 5}},
        },
    }  # fmt: skip
    path = tmp_path / "fitted.yaml"
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    out = tmp_path / "res"
    res = CliRunner().invoke(app, ["run", str(path), "--out", str(out), "--jobs", "1"])
    assert res.exit_code == 0, res.output
    with Store(out) as store:
        rows = {r["method"]: r for r in store.rows()}
    for method, cls in (("LPBoost", LPBoost), ("DRM", DRM)):
        chosen = rows[method]["params"].get("nu", cls().nu)
        used = rows[method]["result"]["fitted"]["nu"]
        assert used > max(chosen, 0.6)  # raised above the floor of the training part
    assert "fitted" not in rows["AdaBoost"]["result"]
    with open(out / "cells.csv", newline="", encoding="utf-8") as f:
        exported = {r["method"]: r for r in csv.DictReader(f)}
    assert float(exported["DRM"]["fitted.nu"]) == rows["DRM"]["result"]["fitted"]["nu"]
    assert float(exported["LPBoost"]["fitted.nu"]) == rows["LPBoost"]["result"]["fitted"]["nu"]
    assert exported["AdaBoost"]["fitted.nu"] == ""
