"""``kernbench merge``: stores from several machines combine into one, deduplicated by cell
identity; disagreeing finished copies are conflicts (exit 1); a split run merges into the full
run."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

import kernbench
from kernbench.cli import app
from kernbench.errors import KernbenchError
from kernbench.store import CellRecord, Store
from kernbench.store.merge import merge_stores

runner = CliRunner()


def _rec(cid: str, status: str = "done", err: float | None = 0.25, **kw) -> CellRecord:
    return CellRecord(
        cell_id=cid,
        dataset="sonar",
        realisation=int(cid[-1]),
        method="SVM",
        estimator="svm_stump",
        status=status,
        test_error=err if status == "done" else None,
        train_error=0.1 if status == "done" else None,
        params={"C": 1.0} if status == "done" else {},
        result={"fit_time_s": 0.5, "host": kw.pop("host", "a"), **kw.pop("extra", {})},
        finished_at=kw.pop("finished_at", 100.0),
        **kw,
    )


def _store(directory: Path, records: list[CellRecord], name: str = "exp") -> Path:
    with Store(directory, create=True) as st:
        st.set_meta("spec", {"name": name, "path": f"/{directory.name}/x.yaml", "table": {}})
        st.set_meta("provenance", {"git": None, "driver_host": directory.name})
        for rec in records:
            st.record(rec)
    return directory


def _rows(directory: Path) -> dict[str, dict]:
    with Store(directory) as st:
        return {r["cell_id"]: r for r in st.rows()}


def test_union_dedup_and_unfinished_copies_lose_to_finished(tmp_path):
    a = _store(tmp_path / "a", [_rec("c0"), _rec("c1", "failed"), _rec("c2", "timeout")])
    b = _store(
        tmp_path / "b",
        [_rec("c0"), _rec("c1"), _rec("c2", "interrupted", finished_at=200.0), _rec("c3")],
    )
    report = merge_stores([a, b], tmp_path / "m")
    assert report.ok and report.rows_read == 7 and report.duplicates == 3
    assert report.cells == 4 and report.finished == 3
    rows = _rows(tmp_path / "m")
    assert {k: r["status"] for k, r in rows.items()} == {
        "c0": "done",
        "c1": "done",  # b's finished copy beats a's failure
        "c2": "interrupted",  # among unfinished copies, the most recent
        "c3": "done",
    }
    assert rows["c1"]["test_error"] == 0.25 and rows["c1"]["params"] == {"C": 1.0}
    with Store(tmp_path / "m") as st:
        assert st.integrity_ok()
        assert [o["cells"] for o in st.get_meta("merged_from")] == [3, 4]
        assert st.get_meta("spec")["name"] == "exp"
    assert (tmp_path / "m" / "cells.csv").read_text().count("\n") == 5


def test_attempts_and_timestamps_are_kept(tmp_path):
    a = _store(tmp_path / "a", [_rec("c0", "failed"), _rec("c0", finished_at=123.5)])
    merge_stores([a], tmp_path / "m")
    row = _rows(tmp_path / "m")["c0"]
    assert row["attempts"] == 2 and row["finished_at"] == 123.5


def test_conflicting_numbers_are_reported_first_copy_kept_exit_1(tmp_path):
    a = _store(tmp_path / "a", [_rec("c0", err=0.25), _rec("c1")])
    b = _store(tmp_path / "b", [_rec("c0", err=0.30), _rec("c1")])
    report = merge_stores([a, b], tmp_path / "m")
    assert not report.ok and len(report.conflicts) == 1
    text = report.conflicts[0].describe()
    assert "sonar / r=0 / SVM" in text and "test_error: 0.25 vs 0.3" in text
    assert _rows(tmp_path / "m")["c0"]["test_error"] == 0.25

    res = runner.invoke(app, ["merge", str(a), str(b), "--out", str(tmp_path / "m2")])
    assert res.exit_code == 1 and "1 conflict(s)" in res.output, res.output


def test_regressors_rmse_disagreement_is_a_conflict(tmp_path):
    # a regressor's cell has no error rates: its numbers are the RMSEs in ``result``
    reg = {"err": None}
    a = _store(tmp_path / "a", [_rec("c0", extra={"test_rmse": 0.5, "train_rmse": 0.4}, **reg)])
    b = _store(tmp_path / "b", [_rec("c0", extra={"test_rmse": 0.6, "train_rmse": 0.4}, **reg)])
    report = merge_stores([a, b], tmp_path / "m")
    assert len(report.conflicts) == 1
    assert "test_rmse: 0.5 vs 0.6" in report.conflicts[0].describe()
    same = _store(tmp_path / "c", [_rec("c0", extra={"test_rmse": 0.5, "train_rmse": 0.4}, **reg)])
    assert merge_stores([a, same], tmp_path / "m2").ok


def test_merging_into_an_existing_store_is_incremental(tmp_path):
    a = _store(tmp_path / "a", [_rec("c0")])
    b = _store(tmp_path / "b", [_rec("c1")])
    merge_stores([a], tmp_path / "m")
    report = merge_stores([b], tmp_path / "m")
    assert report.cells == 2 and set(_rows(tmp_path / "m")) == {"c0", "c1"}


@pytest.mark.parametrize("case", ["other experiment", "out is a source", "not a store"])
def test_refusals_exit_2(case, tmp_path):
    a = _store(tmp_path / "a", [_rec("c0")])
    b = _store(tmp_path / "b", [_rec("c1")], name="other" if case == "other experiment" else "exp")
    out = {"out is a source": a}.get(case, tmp_path / "m")
    sources = [a, tmp_path / "empty"] if case == "not a store" else [a, b]
    (tmp_path / "empty").mkdir()
    with pytest.raises(KernbenchError):
        merge_stores(sources, out)
    res = runner.invoke(app, ["merge", *map(str, sources), "--out", str(out)])
    assert res.exit_code == 2 and "Traceback" not in res.output
    if case != "out is a source":
        assert not (tmp_path / "m").exists()


def test_split_run_on_two_machines_merges_into_the_full_run(tmp_path):
    """End to end: realisations split across two 'machines' == one full run, cell for cell."""
    spec = {
        "name": "split",
        "datasets": ["breast_cancer"],
        "protocol": {"train_size": 60, "test_size": 100, "n_realisations": 2, "cv_folds": 2},
        "methods": {"ada": {"estimator": "adaboost", "grid": {"n_estimators": [3, 6]}}},
    }
    path = tmp_path / "split.yaml"
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    from kernbench.runner.options import RunOptions
    from kernbench.runner.run import run_experiment
    from kernbench.specs.load import load_spec

    s = load_spec(path)
    run_experiment(s, RunOptions(out_dir=tmp_path / "full", jobs=1))
    run_experiment(s, RunOptions(out_dir=tmp_path / "host0", jobs=1, only={"realisation": ["0"]}))
    run_experiment(s, RunOptions(out_dir=tmp_path / "host1", jobs=1, only={"realisation": ["1"]}))
    res = runner.invoke(
        app,
        ["merge", str(tmp_path / "host0"), str(tmp_path / "host1"), "--out", str(tmp_path / "m")],
    )
    assert res.exit_code == 0, res.output
    keep = ("status", "test_error", "train_error", "params")
    merged, full = _rows(tmp_path / "m"), _rows(tmp_path / "full")
    assert {k: [r[c] for c in keep] for k, r in merged.items()} == {
        k: [r[c] for c in keep] for k, r in full.items()
    }
    # provenance: versions, platform, seeds and (in a checkout) the git sha of every cell
    for row in merged.values():
        res_ = row["result"]
        assert res_["versions"]["kernbench"] == kernbench.__version__
        assert res_["versions"]["platform"] and res_["seeds"]["learner"] is not None
        git = res_["provenance"]["git"]
        root = Path(kernbench.__file__).resolve().parents[1]
        if (root / ".git").exists():  # a commit of this checkout: HEAD or (others commit) older
            ancestor = subprocess.run(
                ["git", "-C", str(root), "merge-base", "--is-ancestor", git["sha"], "HEAD"],
                capture_output=True,
            )
            assert len(git["sha"]) == 40 and ancestor.returncode == 0, git
            assert isinstance(git["dirty"], bool)
        else:
            assert git is None


def test_merged_store_keeps_the_first_stores_plan(tmp_path):
    a = _store(tmp_path / "a", [_rec("c0"), _rec("c1")])
    b = _store(tmp_path / "b", [_rec("c0"), _rec("x2")])
    spec = {"name": "exp", "table": {}}
    with Store(a) as st:
        st.set_plan(spec, ["c0", "c1"])
    with Store(b) as st:
        st.set_plan(spec, ["c0", "x2"])
    report = merge_stores([a, b], tmp_path / "m")
    assert any("cells differ" in w for w in report.warnings)
    with Store(tmp_path / "m") as st:
        assert st.plan_ids() == {"c0", "c1"}
        assert {r["cell_id"] for r in st.rows()} == {"c0", "c1", "x2"}  # every cell kept


def test_a_conflict_keeps_the_dropped_copy_in_history(tmp_path):
    a = _store(tmp_path / "a", [_rec("c0", err=0.25)])
    b = _store(tmp_path / "b", [_rec("c0", err=0.30)])
    merge_stores([a, b], tmp_path / "m")
    with Store(tmp_path / "m") as st:
        history = st.history()
        kept = st.row("c0")
    assert kept["test_error"] == 0.25
    assert [h["test_error"] for h in history] == [0.30]  # the other copy, not lost
    assert "merge conflict" in history[0]["reason"] and str(b) in history[0]["reason"]
