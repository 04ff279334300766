"""`kernbench status`: progress of a results store, read without changing it.

One small store is built by the runner on embedded data: AdaBoost fails on breast_cancer, twonorm
runs only realisation 0, so the plan of 8 cells holds 4 done, 2 failed and 2 pending cells.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from kernbench.cli import app
from kernbench.progress.status import cell_time_model, format_seconds, progress_of, read_progress
from kernbench.store import STORE_FILE, Store

runner = CliRunner()

SPEC = {
    "name": "progress",
    "datasets": [
        "breast_cancer",
        {"name": "twonorm", "options": {"n_train": 60, "n_test": 100}},
    ],
    "protocol": {"n_realisations": 2, "train_size": 60, "test_size": 100, "cv_folds": 2, "seed": 5},
    "methods": {
        "ada": {"estimator": "adaboost", "params": {"n_estimators": 5}},
        "svm": {"estimator": "svm_stump", "params": {"C": 1.0}},
    },
}
ERROR = "Singular matrix in the restricted master"


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """The store described in the module docstring (built once; tests copy it to change it)."""
    import kernbench.runner.cell.select as select

    root = tmp_path_factory.mktemp("progress")
    spec = root / "progress.yaml"
    spec.write_text(yaml.safe_dump(SPEC), encoding="utf-8")
    out = root / "res"
    args = ["run", str(spec), "--out", str(out), "--jobs", "1"]
    real = select.select_fit_score

    def flaky(est, *a, **kw):
        if type(est).__name__ == "AdaBoost":
            raise np.linalg.LinAlgError(ERROR)
        return real(est, *a, **kw)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(select, "select_fit_score", flaky)
        res = runner.invoke(app, [*args, "--only", "dataset=breast_cancer"])
    assert res.exit_code == 1, res.output  # the AdaBoost cells failed
    res = runner.invoke(app, [*args, "--only", "dataset=twonorm", "--only", "realisation=0"])
    assert res.exit_code == 0, res.output
    (out / "cells.csv").unlink()  # only the store matters here
    return out


@pytest.fixture
def store_dir(built, tmp_path) -> Path:
    copy = tmp_path / "res"
    shutil.copytree(built, copy)
    return copy


def _plan_statuses(directory: Path) -> dict[tuple[str, str], list[str]]:
    """(method, dataset) -> statuses of the recorded plan cells, straight from sqlite."""
    con = sqlite3.connect(directory / STORE_FILE)
    try:
        rows = con.execute(
            "SELECT method, dataset, status FROM cells WHERE cell_id IN (SELECT cell_id FROM plan)"
        ).fetchall()
        (plan_size,) = con.execute("SELECT COUNT(*) FROM plan").fetchone()
    finally:
        con.close()
    out: dict[tuple[str, str], list[str]] = {}
    for method, dataset, status in rows:
        out.setdefault((method, dataset), []).append(status)
    assert plan_size == 8
    return out


def _set_durations(directory: Path, seconds: dict[tuple[str, str, int], float]) -> None:
    """Give the (method, dataset, realisation) cells known start and finish times."""
    con = sqlite3.connect(directory / STORE_FILE)
    with con:
        for (method, dataset, r), s in seconds.items():
            n = con.execute(
                "UPDATE cells SET started_at = 1000.0, finished_at = 1000.0 + ? "
                "WHERE method = ? AND dataset = ? AND realisation = ?",
                (s, method, dataset, r),
            ).rowcount
            assert n == 1
    con.close()


DURATIONS = {
    ("svm", "breast_cancer", 0): 10.0,
    ("svm", "breast_cancer", 1): 20.0,
    ("svm", "twonorm", 0): 100.0,
    ("ada", "twonorm", 0): 40.0,
}
# ada has no done cell on breast_cancer: its 40 s on twonorm scaled by svm's breast_cancer /
# twonorm ratio (log-additive fit: geometric mean √(10·20) over 100), times the smearing factor
# mean(exp(residual)) = (2^-½ + 2^½ + 1 + 1) / 4
ADA_BC = 40.0 * np.sqrt(200.0) / 100.0 * (2**-0.5 + 2**0.5 + 2.0) / 4.0
REMAINING = 2 * ADA_BC + 40.0 + 100.0


def test_counts_per_method_and_dataset_match_the_store(store_dir):
    stored = _plan_statuses(store_dir)
    assert stored == {
        ("svm", "breast_cancer"): ["done", "done"],
        ("ada", "breast_cancer"): ["failed", "failed"],
        ("svm", "twonorm"): ["done"],
        ("ada", "twonorm"): ["done"],
    }
    p = read_progress(store_dir)
    assert p.name == "progress" and p.plan_size == 8
    assert p.counts == {
        "done": 4,
        "skipped": 0,
        "failed": 2,
        "timeout": 0,
        "interrupted": 0,
        "pending": 2,
    }
    assert (p.finished, p.unfinished, p.percent) == (4, 4, 50.0)
    methods = {g.label: g.counts for g in p.by_method}
    assert [g.label for g in p.by_method] == ["ada", "svm"]  # spec order
    assert methods["ada"]["done"] == 1 and methods["ada"]["failed"] == 2
    assert methods["ada"]["pending"] == 1 and methods["svm"]["pending"] == 1
    assert methods["svm"]["done"] == 3 and methods["svm"]["failed"] == 0
    datasets = {
        g.label: (g.counts["done"], g.counts["failed"], g.counts["pending"]) for g in p.by_dataset
    }
    assert datasets == {"breast_cancer": (2, 2, 0), "twonorm": (2, 0, 2)}
    assert [(f.dataset, f.realisation, f.method, f.status) for f in p.failed] == [
        ("breast_cancer", 0, "ada", "failed"),
        ("breast_cancer", 1, "ada", "failed"),
    ]
    assert all(ERROR in f.error and "\n" not in f.error for f in p.failed)


def test_estimate_uses_the_mean_of_the_same_method_and_dataset(store_dir):
    _set_durations(store_dir, DURATIONS)
    p = read_progress(store_dir, jobs=2)
    # remaining: ada/breast_cancer r0, r1 (failed; no done ada cell there: scaled, ADA_BC),
    # ada/twonorm r1 (its own mean, 40 s), svm/twonorm r1 (svm on twonorm: 100 s, not svm's
    # mean over both datasets, (10 + 20 + 100) / 3)
    est = p.estimate
    assert est.cells == 4 and est.unestimated == 0
    assert (est.by_dataset_mean, est.by_scaled, est.by_method_mean) == (2, 2, 0)
    assert est.cell_seconds == pytest.approx(REMAINING)
    assert est.wall_seconds == pytest.approx(REMAINING / 2)
    assert p.cell_seconds == pytest.approx(10 + 20 + 100 + 40)
    assert p.first_start == 1000.0 and p.last_finish > 1100.0  # failed cells keep real times
    groups = {g.label: g for g in p.by_method}
    assert groups["svm"].mean_seconds == pytest.approx(130 / 3)
    assert groups["svm"].estimate_seconds == pytest.approx(100)
    assert groups["ada"].estimate_seconds == pytest.approx(2 * ADA_BC + 40)
    bc = next(g for g in p.by_dataset if g.label == "breast_cancer")
    assert bc.cell_seconds == pytest.approx(30) and bc.estimate_seconds == pytest.approx(2 * ADA_BC)


def testcell_time_model_recovers_a_product_of_method_and_dataset_costs():
    # times that are exactly a method cost times a dataset cost: every missing pair is predicted
    # exactly (no residual, smearing factor 1); a pair in another connected part gets none
    cost_m = {"cgens": 30.0, "svm": 2.0, "ada": 0.5}
    cost_d = {"german": 8.0, "heart": 1.0, "thyroid": 0.25}
    done = [
        (m, d, cost_m[m] * cost_d[d])
        for m, d in [("cgens", "german"), ("cgens", "heart"), ("svm", "heart"), ("svm", "thyroid")]
    ]
    done += [("ada", "thyroid", 0.125), ("ada", "thyroid", 0.125), ("lone", "island", 7.0)]
    est = cell_time_model(done)
    assert est("cgens", "thyroid") == pytest.approx(30.0 * 0.25)
    assert est("svm", "german") == pytest.approx(2.0 * 8.0)
    assert est("ada", "german") == pytest.approx(0.5 * 8.0)
    assert est("cgens", "island") is None and est("lone", "german") is None
    assert est("unseen", "german") is None and est("cgens", "unseen") is None
    assert cell_time_model([])("cgens", "german") is None


def test_no_estimate_for_a_method_without_a_done_cell(store_dir):
    _set_durations(store_dir, DURATIONS)
    with Store(store_dir, readonly=True) as store:
        spec, plan, rows = store.get_meta("spec"), store.plan_ids(), store.summaries()
    for r in rows:  # as if AdaBoost had failed on twonorm too
        if r["method"] == "ada":
            r["status"] = "failed"
    p = progress_of(spec, plan, rows, directory=store_dir)
    est = p.estimate
    assert est.cells == 5 and est.unestimated == 4 and est.unestimated_methods == ["ada"]
    assert est.cell_seconds == pytest.approx(100)  # svm/twonorm r1 alone
    ada = next(g for g in p.by_method if g.label == "ada")
    assert ada.estimate_seconds is None and ada.unestimated == 4


def test_a_store_without_a_recorded_plan_is_counted_by_labels(store_dir):
    with Store(store_dir, readonly=True) as store:
        spec, rows = store.get_meta("spec"), store.summaries()
    p = progress_of(spec, None, rows, directory=store_dir)
    assert p.plan_size == 8 and p.counts["done"] == 4 and p.counts["pending"] == 2
    assert any("predates recorded plans" in n for n in p.notes)
    # a plan the stored spec does not describe: pending cells are counted, not attributed
    p = progress_of({}, {r["cell_id"] for r in rows} | {"x", "y", "z"}, rows, directory=store_dir)
    assert p.counts["pending"] == 3 and (p.estimate.cells, p.estimate.unestimated) == (5, 3)
    assert sum(g.counts["pending"] for g in p.by_method) == 0
    assert any("could not be attributed" in n for n in p.notes)


def test_status_prints_the_table_totals_and_estimate(store_dir):
    _set_durations(store_dir, DURATIONS)
    res = runner.invoke(app, ["status", str(store_dir), "--jobs", "2"])
    assert res.exit_code == 0, res.output
    text = res.stdout
    assert "4 of 8 cells finished (50.0 %), 2 failed, 2 pending" in text
    assert "ada" in text and "svm" in text and "est. remaining" in text
    assert (
        f"≈ {format_seconds(REMAINING)} of cell time, ≈ {format_seconds(REMAINING / 2)} at --jobs 2"
        in text
    )
    assert "2 from the method's times scaled to the dataset" in text
    assert "2 failed or timed-out cell(s): --failed lists them" in text
    res = runner.invoke(app, ["status", str(store_dir), "--by", "dataset", "--failed"])
    assert res.exit_code == 0, res.output
    assert "twonorm" in res.stdout and "breast_cancer" in res.stdout
    assert res.stdout.count(f"LinAlgError: {ERROR}") == 2


def test_json_gives_the_same_numbers(store_dir):
    _set_durations(store_dir, DURATIONS)
    res = runner.invoke(app, ["status", str(store_dir), "--json", "--jobs", "4"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["plan_size"] == 8 and data["finished"] == 4 and data["percent_finished"] == 50.0
    assert data["counts"]["failed"] == 2 and data["counts"]["pending"] == 2
    assert data["by_method"]["svm"]["counts"]["done"] == 3
    assert data["by_dataset"]["twonorm"]["counts"]["pending"] == 2
    assert data["estimate"]["cell_seconds"] == pytest.approx(REMAINING)
    assert data["estimate"]["wall_seconds"] == pytest.approx(REMAINING / 4)
    assert data["estimate"]["by_scaled"] == 2
    assert len(data["failed"]) == 2 and ERROR in data["failed"][0]["error"]


def _snapshot(directory: Path) -> dict[str, tuple[int, int, bytes]]:
    return {
        p.name: (p.stat().st_mtime_ns, p.stat().st_size, p.read_bytes())
        for p in sorted(directory.iterdir())
    }


def test_status_leaves_the_directory_unchanged(store_dir):
    before = _snapshot(store_dir)
    assert not (store_dir / f"{STORE_FILE}-wal").exists()  # no process has the store open
    for args in ([], ["--json"], ["--failed", "--by", "dataset"]):
        res = runner.invoke(app, ["status", str(store_dir), *args])
        assert res.exit_code == 0, res.output
    assert _snapshot(store_dir) == before  # no -wal/-shm left behind, not a byte changed


def test_status_reads_while_a_run_holds_a_write_transaction(store_dir):
    expected = read_progress(store_dir).to_dict()
    writer = sqlite3.connect(store_dir / STORE_FILE, isolation_level=None, timeout=1)
    try:
        writer.execute("PRAGMA journal_mode=WAL")
        writer.execute("BEGIN IMMEDIATE")
        writer.execute("UPDATE cells SET status = 'done' WHERE status = 'failed'")
        main_file = (store_dir / STORE_FILE).read_bytes()
        res = runner.invoke(app, ["status", str(store_dir), "--json"])
        assert res.exit_code == 0, res.output
        assert json.loads(res.stdout)["counts"] == expected["counts"]  # committed state only
        assert (store_dir / STORE_FILE).read_bytes() == main_file
        writer.execute("COMMIT")
        after = json.loads(runner.invoke(app, ["status", str(store_dir), "--json"]).stdout)
        assert after["counts"]["done"] == 6 and after["counts"]["failed"] == 0
    finally:
        writer.close()


def test_a_run_opening_the_store_during_the_read_is_read_through_its_wal(store_dir, monkeypatch):
    """The store is read as an immutable file while no process has it open; a run that opens it
    and commits meanwhile (its cells still in the -wal file) makes status read it again."""
    real = Store.summaries
    writers: list[sqlite3.Connection] = []

    def summaries_while_a_run_starts(self):
        if not writers:
            writer = sqlite3.connect(store_dir / STORE_FILE, isolation_level=None)
            writer.execute("PRAGMA wal_autocheckpoint=0")  # keep the commit in the -wal file
            writer.execute("UPDATE cells SET status = 'done' WHERE status = 'failed'")
            writers.append(writer)
        return real(self)

    monkeypatch.setattr(Store, "summaries", summaries_while_a_run_starts)
    try:
        p = read_progress(store_dir)
    finally:
        for writer in writers:
            writer.close()
    assert len(writers) == 1
    assert p.counts["done"] == 6 and p.counts["failed"] == 0


def _one_line_error(res, *needles: str) -> None:
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output and res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), res.stderr
    for needle in needles:
        assert needle in lines[0]


def test_bad_paths_give_exit_2_and_one_line(tmp_path, store_dir):
    missing = tmp_path / "nowhere"
    _one_line_error(runner.invoke(app, ["status", str(missing)]), "no such file or directory")
    a_file = tmp_path / "notes.txt"
    a_file.write_text("x")
    _one_line_error(runner.invoke(app, ["status", str(a_file)]), "is not a directory")
    empty = tmp_path / "empty"
    empty.mkdir()
    _one_line_error(runner.invoke(app, ["status", str(empty)]), "no results store")
    # a parent of results directories: names them
    _one_line_error(runner.invoke(app, ["status", str(tmp_path)]), str(store_dir))
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    (damaged / STORE_FILE).write_bytes(b"this is not a database" * 100)
    _one_line_error(runner.invoke(app, ["status", str(damaged)]), "damaged", "kernbench restore")
    (damaged / STORE_FILE).write_bytes(b"")
    _one_line_error(runner.invoke(app, ["status", str(damaged)]), "empty (0 bytes)")
    _one_line_error(runner.invoke(app, ["status", str(store_dir), "--by", "colour"]), "--by")
    # the store file itself is accepted for its directory
    res = runner.invoke(app, ["status", str(store_dir / STORE_FILE), "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["plan_size"] == 8


def test_status_loads_no_heavy_library():
    """`kernbench status` stays quick beside a long run: reading the progress imports neither
    pandas, scikit-learn, scipy nor matplotlib."""
    code = (
        "import sys, kernbench.cli.application, kernbench.progress.status; "
        "print(sorted(m for m in ('sklearn', 'scipy', 'pandas', 'matplotlib') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_format_seconds():
    assert [format_seconds(s) for s in (None, 4.25, 42, 725, 3 * 3600 + 720, 53 * 3600)] == [
        "-",
        "4.2 s",
        "42 s",
        "12 min 5 s",
        "3 h 12 min",
        "2 d 5 h",
    ]


def _set_cpu(directory: Path, seconds: dict[tuple[str, str, int], float | None]) -> None:
    """Give the (method, dataset, realisation) cells a recorded CPU time (None: remove it, as in
    a store written before CPU time was recorded)."""
    con = sqlite3.connect(directory / STORE_FILE)
    with con:
        for (method, dataset, r), s in seconds.items():
            where = "WHERE method = ? AND dataset = ? AND realisation = ?"
            if s is None:
                sql = f"UPDATE cells SET result = json_remove(result, '$.cpu_time_s') {where}"
                n = con.execute(sql, (method, dataset, r)).rowcount
            else:
                sql = f"UPDATE cells SET result = json_set(result, '$.cpu_time_s', ?) {where}"
                n = con.execute(sql, (s, method, dataset, r)).rowcount
            assert n == 1
    con.close()


def test_the_run_records_each_cells_cpu_time(store_dir):
    rows = Store(store_dir, readonly=True).summaries()
    finished = [r for r in rows if r["status"] in ("done", "failed")]
    assert len(finished) == 6
    assert all(r["cpu_seconds"] is not None and r["cpu_seconds"] > 0 for r in finished)


def test_cpu_time_is_summed_per_group_and_in_all(store_dir):
    cpu = {
        ("svm", "breast_cancer", 0): 3.0,
        ("svm", "breast_cancer", 1): 5.0,
        ("svm", "twonorm", 0): 40.0,
        ("ada", "twonorm", 0): 7.0,
        # failed cells: not finished (a rerun computes them again), so, as for the cell time,
        # their CPU is not in the sums
        ("ada", "breast_cancer", 0): 0.5,
        ("ada", "breast_cancer", 1): 0.25,
    }
    _set_cpu(store_dir, cpu)
    p = read_progress(store_dir)
    assert p.cpu_seconds == pytest.approx(55.0) and p.cpu_cells == 4
    by_method = {g.label: g.cpu_seconds for g in p.by_method}
    assert by_method == pytest.approx({"ada": 7.0, "svm": 48.0})
    res = runner.invoke(app, ["status", str(store_dir)])
    assert res.exit_code == 0, res.output
    assert f"CPU time of finished cells: {format_seconds(55.0)}\n" in res.stdout
    assert "CPU time" in res.stdout.splitlines()[1] + res.stdout.splitlines()[2]  # a column
    data = json.loads(runner.invoke(app, ["status", str(store_dir), "--json"]).stdout)
    assert data["cpu_seconds"] == pytest.approx(55.0) and data["cpu_cells"] == 4
    assert data["by_method"]["svm"]["cpu_seconds"] == pytest.approx(48.0)


def test_cells_without_a_cpu_time_are_left_out_and_said_so(store_dir):
    _set_cpu(store_dir, {("svm", "twonorm", 0): 40.0, ("ada", "twonorm", 0): None})
    p = read_progress(store_dir)
    assert p.cpu_cells == 3 and p.finished == 4
    assert "(the 3 cells that record it)" in runner.invoke(app, ["status", str(store_dir)]).stdout
    # a store of which no cell records it: no CPU line, "-" in the column
    _set_cpu(
        store_dir,
        {
            k: None
            for k in [
                ("svm", "breast_cancer", 0),
                ("svm", "breast_cancer", 1),
                ("svm", "twonorm", 0),
                ("ada", "breast_cancer", 0),
                ("ada", "breast_cancer", 1),
            ]
        },
    )
    p = read_progress(store_dir)
    assert p.cpu_seconds is None and p.cpu_cells == 0
    assert all(g.cpu_seconds is None for g in p.by_method)
    assert "CPU time of finished" not in runner.invoke(app, ["status", str(store_dir)]).stdout


def test_a_damaged_result_does_not_stop_the_status(store_dir):
    con = sqlite3.connect(store_dir / STORE_FILE)
    with con:
        con.execute(
            "UPDATE cells SET result = '{not json' WHERE method = 'svm' AND realisation = 0"
        )
    con.close()
    p = read_progress(store_dir)
    assert p.finished == 4 and p.cpu_cells == 2  # svm's realisation 0 on both datasets unread


def test_a_fresh_run_going_on_is_shown_instead_of_nothing_remains(store_dir):
    import os
    import time

    from kernbench.store.lock import RunLock
    from kernbench.store.sqlite import ACTIVE_RUN

    with Store(store_dir) as st:
        ids = sorted(st.plan_ids())
    with RunLock(store_dir):  # this process plays the running `run --fresh`
        with Store(store_dir) as st:
            st.set_meta(
                ACTIVE_RUN,
                {"pid": os.getpid(), "started_at": time.time(), "fresh": True, "cells": ids},
            )
        progress = read_progress(store_dir)
        res = runner.invoke(app, ["status", str(store_dir)])
    assert progress.running is not None
    assert progress.running["fresh"] and progress.running["left"] == len(ids)  # none recorded
    assert "--fresh run" in res.output and "nothing remains to run" not in res.output, res.output
    assert read_progress(store_dir).running is None  # the lock released: no run going on


def test_status_estimates_what_the_run_going_on_was_asked_to_do(store_dir):
    """#48: during a run started with --realisations 1, status estimated every unfinished cell
    of the spec (all 260 of uci_stumps') instead of the run's own; it now says both."""
    import os
    import time

    from kernbench.store.lock import RunLock
    from kernbench.store.sqlite import ACTIVE_RUN

    _set_durations(store_dir, DURATIONS)
    with Store(store_dir) as st:
        rows = {(r["dataset"], r["realisation"], r["method"]): r["cell_id"] for r in st.rows()}
    # the run going on was asked for twonorm's realisation 0 again (recorded before it started)
    # and ada on breast_cancer realisation 0 (failed before it started): neither recorded since
    asked = [("twonorm", 0, "svm"), ("breast_cancer", 0, "ada")]
    record = {
        "pid": os.getpid(),
        "started_at": time.time(),
        "fresh": False,
        "cells": [rows[k] for k in asked],
        "keys": [list(k) for k in asked],
    }
    with RunLock(store_dir):
        with Store(store_dir) as st:
            st.set_meta(ACTIVE_RUN, record)
        progress = read_progress(store_dir, jobs=2)
        res = runner.invoke(app, ["status", str(store_dir), "--jobs", "2"])
    run = progress.run_estimate
    assert run is not None and run.cells == 2 and run.unestimated == 0
    assert run.cell_seconds == pytest.approx(100.0 + ADA_BC)  # svm twonorm's mean, ada scaled
    text = " ".join(res.stdout.split())
    assert (
        f"the run going on (pid {os.getpid()}) was asked for 2 cell(s): 2 not yet recorded; "
        f"estimate, not a measurement: ≈ {format_seconds(100.0 + ADA_BC)} of cell time, "
        f"≈ {format_seconds((100.0 + ADA_BC) / 2)} at --jobs 2"
    ) in text
    assert "the whole spec, this run's cells included: estimate, not a measurement" in text
    assert f"≈ {format_seconds(REMAINING)} of cell time" in text  # the whole spec's, as before


def test_a_run_records_the_keys_of_the_cells_it_was_asked_for(tmp_path):
    """What `status` reads to estimate the run going on: each cell's dataset, realisation and
    method beside its id, for the cells this run computes (here --realisations 1 of 2)."""
    from kernbench.runner.options import RunHooks, RunOptions
    from kernbench.runner.run import run_experiment
    from kernbench.specs.load import load_spec
    from kernbench.store.sqlite import ACTIVE_RUN

    spec = tmp_path / "progress.yaml"
    spec.write_text(yaml.safe_dump({**SPEC, "datasets": SPEC["datasets"][1:]}), encoding="utf-8")
    out = tmp_path / "res"
    seen = []

    def on_cell(rec) -> None:
        with Store(out, readonly=True) as st:
            seen.append(st.get_meta(ACTIVE_RUN))

    run_experiment(
        load_spec(spec),
        RunOptions(out_dir=out, jobs=1, realisations=1),
        hooks=RunHooks(on_cell=on_cell),
    )
    record = seen[0]
    assert sorted(map(tuple, record["keys"])) == [("twonorm", 0, "ada"), ("twonorm", 0, "svm")]
    with Store(out) as st:
        ids = {(r["dataset"], r["realisation"], r["method"]): r["cell_id"] for r in st.rows()}
        assert st.get_meta(ACTIVE_RUN) is None  # cleared at the run's end
    assert record["cells"] == [ids[tuple(k)] for k in record["keys"]]


def test_reproduce_profile_counts_what_status_counts(store_dir) -> None:
    """benchmarks/reproduce_profile.py: its rows (by method, and by method × dataset) add up to
    ``kernbench status``'s per-method CPU and cell time, from the same reading code."""
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "reproduce_profile.py"
    spec = importlib.util.spec_from_file_location("reproduce_profile", path)
    tool = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = tool  # its dataclasses look their module up
    spec.loader.exec_module(tool)
    _set_durations(store_dir, DURATIONS)
    status = {g.label: g for g in read_progress(store_dir).by_method if g.finished}
    rows, total = tool.profile(store_dir, by_dataset=False)
    assert {r.method: (r.cells, r.cell) for r in rows} == {
        m: (g.finished, g.cell_seconds) for m, g in status.items()
    }
    split, _ = tool.profile(store_dir, by_dataset=True)
    for m, g in status.items():
        mine = [r for r in split if r.method == m]
        assert sum(r.cells for r in mine) == g.finished
        assert sum(r.cell for r in mine) == pytest.approx(g.cell_seconds)
        assert sum(r.cpu for r in mine) == pytest.approx(g.cpu_seconds or 0.0)
    assert total.finished == read_progress(store_dir).finished
    text = tool.render(rows, [total], top=0, jobs=2, markdown=True)
    assert text.startswith("| spec | method | cells | CPU |")
