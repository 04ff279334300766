"""Store durability: ``run`` checks the store at start and keeps a consistent backup from which
``kernbench restore`` rebuilds it — also after the ``-wal`` file was deleted mid-run and the
driver killed, which used to lose every committed cell without a warning."""

from __future__ import annotations

import shutil
import sqlite3

import reliability_harness as rh
from typer.testing import CliRunner

from kernbench.cli import app
from kernbench.store.backup import BACKUP_FILE

runner = CliRunner()


def _done(out) -> int:
    return sum(1 for row in rh.cell_table(out).values() if row[1] == "done")


def test_wal_deleted_mid_run_then_driver_killed_restore_brings_cells_back(reference_run, tmp_path):
    spec, _, reference = reference_run
    trial = rh.wal_delete_trial(spec, tmp_path / "res", reference)
    assert trial.lost > 0  # the committed cells lived in the deleted WAL
    assert trial.run_exit == 2, trial.run_output  # refused, not silently recomputed over
    assert "kernbench restore" in trial.run_output and "-wal" in trial.run_output
    assert trial.restore_exit == 0
    assert trial.restored >= 4  # every cell committed before the last backup is back
    assert any(p.name.startswith("results.sqlite.damaged-") for p in (tmp_path / "res").iterdir())
    assert trial.check.ok, trial.check  # and the rerun completed the rest


def test_corrupted_store_is_refused_at_start_and_restored_from_the_backup(reference_run, tmp_path):
    spec, _, reference = reference_run
    out = tmp_path / "res"
    res = runner.invoke(app, ["run", str(spec), "--out", str(out), "--jobs", "1"])
    assert res.exit_code == 0, res.output
    backup = sqlite3.connect(out / BACKUP_FILE)
    try:  # the backup taken at exit is complete and self-contained
        assert backup.execute("SELECT COUNT(*) FROM cells").fetchone()[0] == rh.N_CELLS
        assert backup.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    finally:
        backup.close()
    path = out / "results.sqlite"
    data = bytearray(path.read_bytes())
    data[4096:] = b"\x5a" * (len(data) - 4096)
    path.write_bytes(bytes(data))

    res = runner.invoke(app, ["run", str(spec), "--out", str(out), "--jobs", "1"])
    assert res.exit_code == 2 and "kernbench restore" in res.output, res.output
    res = runner.invoke(app, ["restore", str(out)])
    assert res.exit_code == 0, res.output
    check = rh.check_store(out, reference)
    assert check.ok and check.statuses == {"done": rh.N_CELLS}, check


def test_restore_without_a_backup_is_a_clear_error(tmp_path):
    (tmp_path / "res").mkdir()
    res = runner.invoke(app, ["restore", str(tmp_path / "res")])
    assert res.exit_code == 2 and "no backup" in res.output, res.output


def test_a_deleted_store_with_a_backup_is_not_silently_started_afresh(reference_run, tmp_path):
    spec, reference_dir, reference = reference_run
    out = tmp_path / "res"
    shutil.copytree(reference_dir, out)
    for name in ("results.sqlite", "results.sqlite-wal", "results.sqlite-shm"):
        (out / name).unlink(missing_ok=True)  # the store is gone, its backup is not
    res = runner.invoke(app, ["run", str(spec), "--out", str(out), "--jobs", "1"])
    assert res.exit_code == 2 and "kernbench restore" in res.output, res.output
    assert runner.invoke(app, ["restore", str(out)]).exit_code == 0
    check = rh.check_store(out, reference)
    assert check.ok and check.statuses == {"done": rh.N_CELLS}, check
