"""End to end: run -> rerun skips -> table; dry-run; jobs; kill + resume; bad specs."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from kernbench.cli import app
from kernbench.store import Store

SPEC = {
    "name": "tiny",
    "datasets": [
        {"name": "twonorm", "options": {"n_train": 60, "n_test": 200}},
        "breast_cancer",
    ],
    "protocol": {
        "n_realisations": 2,
        "train_size": 0.5,
        "cv_folds": 3,
        "seed": 11,
        "preprocess": "minmax",
    },
    "methods": {
        "SVM-Stump": {"estimator": "svm_stump", "grid": {"C": [0.01, 1.0]}},
        "AdaBoost": {"estimator": "adaboost", "grid": {"n_estimators": [5, 20]}},
    },
}
runner = CliRunner()


def write_spec(tmp_path: Path, spec: dict, name: str = "spec.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(spec))
    return path


def errors_by_cell(out: Path) -> dict[tuple, tuple]:
    with Store(out) as st:
        return {
            (r["dataset"], r["realisation"], r["method"]): (r["test_error"], r["params"])
            for r in st.rows()
        }


def test_run_rerun_table_dryrun(tmp_path):
    spec = write_spec(tmp_path, SPEC)
    out = tmp_path / "res"
    res = runner.invoke(app, ["run", str(spec), "--out", str(out), "--jobs", "1"])
    assert res.exit_code == 0, res.output
    with Store(out) as st:
        rows = st.rows()
    assert len(rows) == 8 and {r["status"] for r in rows} == {"done"}
    ada = [r for r in rows if r["method"] == "AdaBoost"]
    assert all(r["params"]["n_estimators"] in (5, 20) for r in ada)
    assert all(len(r["result"]["trace"]["test_error"]) == r["params"]["n_estimators"] for r in ada)
    assert (out / "cells.csv").exists()
    first = {r["cell_id"]: r["finished_at"] for r in rows}

    res = runner.invoke(app, ["run", str(spec), "--out", str(out), "--jobs", "1"])
    assert res.exit_code == 0 and "8 already finished" in res.output
    with Store(out) as st:
        assert {r["cell_id"]: r["finished_at"] for r in st.rows()} == first

    res = runner.invoke(app, ["run", str(spec), "--out", str(out), "--dry-run"])
    assert res.exit_code == 0 and res.output.count("skip") >= 8

    res = runner.invoke(app, ["table", str(out)])
    assert res.exit_code == 0, res.output
    assert "SVM-Stump" in res.output and "twonorm" in res.output and "**" in res.output
    assert (out / "table.md").exists()


def test_jobs_two_gives_the_same_numbers_as_jobs_one(tmp_path):
    spec = write_spec(tmp_path, SPEC)
    a, b = tmp_path / "a", tmp_path / "b"
    assert runner.invoke(app, ["run", str(spec), "--out", str(a), "--jobs", "1"]).exit_code == 0
    assert runner.invoke(app, ["run", str(spec), "--out", str(b), "--jobs", "2"]).exit_code == 0
    assert errors_by_cell(a) == errors_by_cell(b)


def test_only_and_realisations_filter_cells(tmp_path):
    spec = write_spec(tmp_path, SPEC)
    out = tmp_path / "res"
    args = [
        "run",
        str(spec),
        "--out",
        str(out),
        "--jobs",
        "1",
        "--realisations",
        "1",
        "--only",
        "method=AdaBoost",
        "--only",
        "dataset=twonorm",
    ]
    assert runner.invoke(app, args).exit_code == 0
    assert list(errors_by_cell(out)) == [("twonorm", 0, "AdaBoost")]
    bad = runner.invoke(app, ["run", str(spec), "--only", "colour=red"])
    assert bad.exit_code == 2


BAD = [
    (lambda s: s.update(metods=s.pop("methods")), "metods"),
    (lambda s: s["methods"]["AdaBoost"].update(estimator="adabost"), "methods.AdaBoost.estimator"),
    (lambda s: s["datasets"].__setitem__(1, "breast_cancr"), "datasets[1]"),
    (lambda s: s["methods"]["SVM-Stump"]["grid"].update(C=[1, -1]), "methods.SVM-Stump.grid.C[1]"),
    (lambda s: s["methods"]["SVM-Stump"]["grid"].update(C=[]), "methods.SVM-Stump.grid.C"),
    (lambda s: s["methods"]["SVM-Stump"]["grid"].update(C=3), "methods.SVM-Stump.grid.C"),
    (lambda s: s.pop("methods"), "methods"),
]


@pytest.mark.parametrize("change,path", BAD, ids=[p for _, p in BAD])
def test_bad_specs_exit_2_before_any_work(tmp_path, change, path):
    import copy

    spec = copy.deepcopy(SPEC)
    change(spec)
    file = write_spec(tmp_path, spec, "bad.yaml")
    out = tmp_path / "res"
    res = runner.invoke(app, ["run", str(file), "--out", str(out)])
    assert res.exit_code == 2
    assert str(file) in res.output and path in res.output
    assert "Traceback" not in res.output
    assert not out.exists()


def test_kill_midway_then_rerun_computes_only_missing_cells(tmp_path):
    spec = dict(SPEC, protocol=dict(SPEC["protocol"], n_realisations=4))
    file = write_spec(tmp_path, spec)
    out = tmp_path / "res"
    cmd = [sys.executable, "-m", "kernbench", "run", str(file), "--out", str(out), "--jobs", "1"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    done_before = 0
    while time.time() < deadline and proc.poll() is None:
        if (out / "results.sqlite").exists():
            try:
                with sqlite3.connect(out / "results.sqlite") as con:
                    done_before = con.execute("SELECT COUNT(*) FROM cells").fetchone()[0]
            except sqlite3.OperationalError:
                done_before = 0
            if done_before >= 3:
                break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    with Store(out) as st:
        before = {r["cell_id"]: r["finished_at"] for r in st.rows()}
    assert 0 < len(before) < 16, "the kill must land mid-run"
    rerun = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ))
    assert rerun.returncode == 0, rerun.stderr
    with Store(out) as st:
        rows = st.rows()
        assert st.integrity_ok()
    assert len(rows) == 16 and len({r["cell_id"] for r in rows}) == 16
    assert all(r["status"] == "done" and r["attempts"] == 1 for r in rows)
    after = {r["cell_id"]: r["finished_at"] for r in rows}
    assert all(after[c] == t for c, t in before.items()), "finished cells were recomputed"
    assert f"{len(before)} already finished" in rerun.stderr


def test_the_command_keeps_its_exit_status_and_output_when_it_skips_the_teardown(tmp_path):
    """``kernbench`` ends without the interpreter's teardown
    (kernbench.runner.lifecycle.stop.leave): the
    exit status, the whole output into a pipe and the store are those of an ordinary exit."""
    file = write_spec(tmp_path, SPEC)
    out = tmp_path / "res"
    base = [sys.executable, "-m", "kernbench"]
    run = subprocess.run(
        [*base, "run", str(file), "--out", str(out), "--jobs", "1"], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    with Store(out) as st:
        assert st.integrity_ok() and {r["status"] for r in st.rows()} == {"done"}
    table = subprocess.run([*base, "table", str(out)], capture_output=True, text=True)
    inline = CliRunner().invoke(app, ["table", str(out)])
    assert table.returncode == 0 and table.stdout == inline.output
    missing = str(tmp_path / "nope.yaml")
    bad = subprocess.run([*base, "run", missing], capture_output=True, text=True)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1


def test_methods_and_validate(tmp_path):
    res = runner.invoke(app, ["methods"])
    assert res.exit_code == 0 and "svm_stump" in res.output and "C=1.0" in res.output
    res = runner.invoke(app, ["validate", str(write_spec(tmp_path, SPEC))])
    assert res.exit_code == 0 and "8 cells" in res.output


def test_validate_refuses_a_grid_combining_incompatible_parameters(tmp_path):
    """Every grid point is checked against the estimator's constraints between parameters:
    the refused combination is named, exit 2, no traceback."""
    spec = {
        **SPEC,
        "methods": {
            "CGB": {
                "estimator": "cgboost",
                "params": {"validation_fraction": 0.2},
                "grid": {"norm": ["l2", "l1"], "solver": ["cvxpy", "osqp"], "termination": ["TR3"]},
            }
        },
    }
    res = runner.invoke(app, ["validate", str(write_spec(tmp_path, spec))])
    assert res.exit_code == 2, res.output
    assert "methods.CGB.grid" in res.output
    assert "solver: osqp, norm: l1, termination: TR3" in res.output
    assert "Traceback" not in res.output
    spec["methods"]["CGB"]["grid"]["solver"] = ["cvxpy", "auto"]
    assert runner.invoke(app, ["validate", str(write_spec(tmp_path, spec))]).exit_code == 0


def test_plot_kinds_write_pngs_for_a_multiclass_run(tmp_path):
    spec = {
        "name": "mc",
        "datasets": ["iris"],
        "protocol": {"n_realisations": 2, "train_size": 0.75, "cv_folds": 2},
        "methods": {
            "MH": {"estimator": "adaboost_mh", "grid": {"n_estimators": [3, 6]}},
            "ECC": {"estimator": "adaboost_ecc", "params": {"n_estimators": 6}},
        },
    }
    out = tmp_path / "res"
    res = runner.invoke(app, ["run", str(write_spec(tmp_path, spec)), "--out", str(out), "-j", "1"])
    assert res.exit_code == 0, res.output
    for kind in ("trace", "fig3"):
        res = runner.invoke(app, ["plot", str(out), "--kind", kind, "--out", str(tmp_path / kind)])
        assert res.exit_code == 0, res.output
        pngs = sorted((tmp_path / kind).glob("*.png"))
        assert pngs and all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)
    assert runner.invoke(app, ["plot", str(out), "--kind", "pie"]).exit_code == 2


def test_stump_ensembles_record_feature_usage_and_plot_fig5(tmp_path):
    spec = {
        "name": "fig5",
        "datasets": ["breast_cancer"],
        "protocol": {"n_realisations": 2, "train_size": 0.5, "cv_folds": 2},
        "methods": {
            "AdaBoost": {"estimator": "adaboost", "params": {"n_estimators": 10}},
            "CGENS": {"estimator": "cgens", "params": {"max_iter": 10}},
            "SVM": {"estimator": "svm_perc", "params": {"C": 1.0}},
        },
    }
    out = tmp_path / "res"
    res = runner.invoke(app, ["run", str(write_spec(tmp_path, spec)), "--out", str(out), "-j", "1"])
    assert res.exit_code == 0, res.output
    with Store(out) as store:
        rows = store.rows()
    usage = {r["method"]: (r["result"] or {}).get("feature_usage") for r in rows}
    assert len(usage["AdaBoost"]) == len(usage["CGENS"]) == 30  # breast_cancer has 30 features
    assert usage["SVM"] is None
    res = runner.invoke(app, ["plot", str(out), "--kind", "fig5", "--out", str(tmp_path / "f5")])
    assert res.exit_code == 0, res.output
    assert [p.name for p in (tmp_path / "f5").glob("*.png")] == ["fig5_breast_cancer.png"]


def test_reuse_copies_identical_cells_from_another_store_and_computes_the_rest(tmp_path):
    first = tmp_path / "first"
    spec1 = write_spec(tmp_path, SPEC, "one.yaml")
    assert runner.invoke(app, ["run", str(spec1), "--out", str(first), "-j", "1"]).exit_code == 0
    # a second table sharing the SVM-Stump column (same label, grid, data, protocol) and adding one
    two = {
        **SPEC,
        "name": "tiny2",
        "methods": {
            "SVM-Stump": SPEC["methods"]["SVM-Stump"],
            "SVM-Perc": {"estimator": "svm_perc", "grid": {"C": [0.01, 1.0]}},
            "AdaBoost": {"estimator": "adaboost", "grid": {"n_estimators": [5, 10]}},  # differs
        },
    }
    second = tmp_path / "second"
    args = ["run", str(write_spec(tmp_path, two, "two.yaml")), "--out", str(second), "-j", "1"]
    res = runner.invoke(app, [*args, "--reuse", str(first)])
    assert res.exit_code == 0, res.output
    assert "4 reused from --reuse" in res.output and "8 done" in res.output
    with Store(first) as a, Store(second) as b:
        old = {r["cell_id"]: r for r in a.rows()}
        new = b.rows()
    reused = [r for r in new if r["result"].get("reused_from")]
    assert {r["method"] for r in reused} == {"SVM-Stump"} and len(reused) == 4
    for r in reused:
        assert (r["test_error"], r["params"]) == (old[r["cell_id"]]["test_error"], r["params"])
        assert r["result"]["reused_from"] == str(first)
    assert not {r["cell_id"] for r in new if r["method"] == "AdaBoost"} & set(old)
    res = runner.invoke(app, [*args, "--reuse", str(tmp_path / "nowhere")])
    assert res.exit_code == 2 and "--reuse" in res.output


def test_the_command_line_imports_no_heavy_library():
    """`kernbench --help` stays fast: importing the CLI loads neither scikit-learn, scipy nor
    pandas (they are imported by the verbs that need them)."""
    code = (
        "import sys, kernbench.cli.application; "
        "print(sorted(m for m in ('sklearn', 'scipy', 'pandas', 'cvxpy', 'numba') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_run_refuses_zero_threads(tmp_path):
    spec = write_spec(tmp_path, SPEC)
    res = CliRunner().invoke(
        app, ["run", str(spec), "--out", str(tmp_path / "r"), "--threads", "0"]
    )
    assert res.exit_code == 2 and "--threads" in res.output
    assert not (tmp_path / "r").exists()  # refused before any cell


# -- bounds on options and values (issue 35, part 6) ------------------------------------------
@pytest.mark.parametrize("value", ["inf", "1e10", "nan"])
def test_timeout_beyond_the_bound_is_a_usage_error(tmp_path, value):
    spec = write_spec(tmp_path, SPEC)
    res = runner.invoke(app, ["run", str(spec), "--timeout", value, "--dry-run"])
    assert res.exit_code == 2 and "--timeout" in res.output, res.output
    assert "internal error" not in res.output


def test_a_timeout_written_1e12_is_named_as_yaml_reading_a_string(tmp_path):
    spec = write_spec(tmp_path, SPEC)
    spec.write_text(spec.read_text().replace("seed: 11", "seed: 11\n  timeout_s: 1e12"))
    res = runner.invoke(app, ["validate", "--no-data", str(spec)])
    assert res.exit_code == 2, res.output
    assert "protocol.timeout_s" in res.output and "YAML 1.1" in res.output, res.output


def test_an_empty_out_is_refused_not_read_as_the_current_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    spec = write_spec(tmp_path, SPEC)
    res = runner.invoke(app, ["run", str(spec), "--out", "", "--jobs", "1"])
    assert res.exit_code == 2 and "--out" in res.output, res.output
    assert not (tmp_path / "results.sqlite").exists()


def test_jobs_never_start_more_workers_than_cores_or_cells(monkeypatch):
    from kernbench.runner.execution.executor import worker_count

    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    assert worker_count(24, 12) == 4  # capped at the cores
    assert worker_count(-1, 3) == 3  # and at the cells to run
    assert worker_count(-1) == 4 and worker_count(1, 100) == 1 and worker_count(0, 5) == 4
    res = runner.invoke(app, ["run", "x.yaml", "--jobs", "-2"])
    assert res.exit_code == 2 and "--jobs" in res.output


# -- messages (issue 35, part 7) ----------------------------------------------------------------
def test_emoji_codes_in_a_file_name_are_printed_as_written(tmp_path):
    missing = tmp_path / ":x: spec.yaml"
    res = runner.invoke(app, ["validate", str(missing)])
    assert res.exit_code == 2 and ":x: spec.yaml" in res.output, res.output
    assert "\u274c" not in res.output


def test_a_catalog_naming_a_system_file_is_not_quoted_back(tmp_path):
    secret = tmp_path / "passwd"
    secret.write_text("root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1::/:/usr/sbin/nologin\n")
    spec = write_spec(tmp_path, {**SPEC, "catalog": str(secret)})
    res = runner.invoke(app, ["validate", "--no-data", str(spec)])
    assert res.exit_code == 2 and "reads as a str" in res.output, res.output
    assert "root:x" not in res.output and "nologin" not in res.output


def _garble_text_pages(store: Path) -> None:
    """Overwrite the stored cell ids' bytes with invalid UTF-8 (the page structure intact)."""
    con = sqlite3.connect(store)
    ids = [r[0] for r in con.execute("SELECT cell_id FROM cells")]
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    data = bytearray(store.read_bytes())
    for cid in ids:
        at = data.find(cid.encode())
        while at >= 0:
            data[at : at + 4] = b"\xff\xfe\xff\xfe"
            at = data.find(cid.encode(), at + 1)
    store.write_bytes(bytes(data))


def test_a_store_damaged_inside_a_page_names_the_restore_in_every_reading_verb(tmp_path):
    spec = write_spec(tmp_path, {**SPEC, "datasets": ["breast_cancer"], "methods": {
        "AdaBoost": {"estimator": "adaboost", "params": {"n_estimators": 3}}}})  # fmt: skip
    out = tmp_path / "res"
    assert runner.invoke(app, ["run", str(spec), "--out", str(out), "--jobs", "1"]).exit_code == 0
    _garble_text_pages(out / "results.sqlite")
    for args in (
        ["table", str(out)],
        ["status", str(out)],
        ["report", str(out), "--html"],
        ["merge", str(out), "--out", str(tmp_path / "m")],
    ):
        res = runner.invoke(app, args)
        text = res.output.strip()
        assert res.exit_code == 2, (args, text)
        assert len(text.splitlines()) == 1 and "kernbench restore" in text, (args, text)


def test_signal_exit_statuses_are_documented():
    from kernbench.runner.lifecycle.stop import exit_status, reset

    reset()
    assert exit_status() == 130  # an interrupt without a recorded signal: Ctrl-C
    docs = (Path(__file__).resolve().parents[2] / "docs" / "reliability.md").read_text()
    assert "| 130 |" in docs and "| 143 |" in docs


def test_dry_run_estimates_the_run_from_a_pilot(tmp_path, monkeypatch):
    import kernbench.progress.cost as cost
    from kernbench.progress.cost_calibration import CALIBRATION
    from kernbench.progress.status import format_seconds
    from kernbench.runner.execution.executor import worker_count

    monkeypatch.setattr(cost, "machine_load", lambda: None)  # the idle figure only
    spec = write_spec(tmp_path, SPEC)
    out = tmp_path / "res"
    args = ["run", str(spec), "--out", str(out)]
    res = runner.invoke(app, [*args, "--dry-run"])  # before any cell: the cost model's estimate
    text = " ".join(res.output.split())
    assert res.exit_code == 0 and "(from the cost model, calibrated on recorded cells)" in text
    # the pilot: one realisation of every cell
    assert runner.invoke(app, [*args, "--jobs", "1", "--realisations", "1"]).exit_code == 0
    with Store(out) as st:
        pilot = {(r["method"], r["dataset"]): r["cpu_seconds"] for r in st.summaries()}
    # the second realisation's 4 cells: each the pilot's CPU time of its method and dataset
    expected = sum(pilot.values())
    res = runner.invoke(app, [*args, "--jobs", "2", "--realisations", "2", "--dry-run"])
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "the 4 cell(s) to run need" in text
    assert f"≈ {format_seconds(expected)} of CPU (4 from the store's done cells, 0 from" in text
    workers = worker_count(2, 4)  # 2 on a machine with two cores or more
    wall = CALIBRATION["startup_s"] + max(expected / workers, max(pilot.values()))
    assert f"≈ {format_seconds(wall)} at --jobs 2 on an idle machine" in text


BAD_METHOD_SPEC = """
name: bad
datasets: [twonorm]
methods:
  A: {estimator: no_such_estimator}
"""


def test_a_refused_spec_closes_the_dask_cluster_started_for_it(monkeypatch, tmp_path):
    pytest.importorskip("distributed")
    from kernbench.runner.execution import early_workers

    made = []
    start = early_workers.local_cluster

    def recorded(workers):
        made.append(start(workers))
        return made[-1]

    monkeypatch.setattr(early_workers, "local_cluster", recorded)
    bad = tmp_path / "bad.yaml"
    bad.write_text(BAD_METHOD_SPEC)
    res = runner.invoke(app, ["run", str(bad), "--backend", "dask", "--jobs", "1"])
    assert res.exit_code == 2, res.output
    assert len(made) == 1 and made[0].status.name == "closed"
    missing = tmp_path / "missing.yaml"  # refused before any worker starts
    res = runner.invoke(app, ["run", str(missing), "--backend", "dask", "--jobs", "1"])
    assert res.exit_code == 2 and len(made) == 1


def test_a_refused_spec_exits_2_and_leaves_no_worker_behind_once_they_finish(monkeypatch, tmp_path):
    from kernbench.runner.execution import early_workers

    started = []
    real = early_workers.EarlyWorkers

    def recorded(*args, **kwargs):
        started.append(real(*args, **kwargs))
        return started[-1]

    monkeypatch.setattr(early_workers, "EarlyWorkers", recorded)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    bad = tmp_path / "bad.yaml"
    bad.write_text(BAD_METHOD_SPEC)
    for _ in range(2):  # the second run's workers start while the first's may still import
        res = runner.invoke(app, ["run", str(bad), "--jobs", "2"])
        assert res.exit_code == 2, res.output
    assert len(started) == 2
    for early in started:  # left to finish their imports, never deadlocked
        early.join()
    from joblib.externals.loky import reusable_executor

    from kernbench.runner.execution.local_workers import stop_local_workers

    stop_local_workers()

    executor = reusable_executor._executor
    alive = [] if executor is None else [p for p in executor._processes.values() if p.is_alive()]
    assert alive == []


def test_workers_are_started_early_only_for_a_run_that_will_compute(monkeypatch, tmp_path):
    from kernbench.runner.execution import early_workers

    calls = []
    monkeypatch.setattr(early_workers, "start_early", lambda *a, **k: calls.append(a))
    spec = write_spec(tmp_path, SPEC)
    out = tmp_path / "res"
    assert runner.invoke(app, ["run", str(spec), "--out", str(out), "--jobs", "1"]).exit_code == 0
    assert len(calls) == 1  # a fresh results directory
    assert runner.invoke(app, ["run", str(spec), "--out", str(out), "--jobs", "1"]).exit_code == 0
    assert len(calls) == 1  # its store exists: a resumed run may have nothing to compute
    args = ["run", str(spec), "--out", str(out), "--jobs", "1", "--fresh"]
    assert runner.invoke(app, args).exit_code == 0
    assert len(calls) == 2  # --fresh computes every cell again
    assert runner.invoke(app, ["run", str(spec), "--dry-run"]).exit_code == 0
    assert len(calls) == 2
