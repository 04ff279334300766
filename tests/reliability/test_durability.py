"""Store durability: ``run`` checks the store at start and keeps a consistent backup from which
``kernbench restore`` rebuilds it — also after the ``-wal`` file was deleted mid-run and the
driver killed, which used to lose every committed cell without a warning."""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import time

import reliability_harness as rh
from typer.testing import CliRunner

from kernbench.cli import app
from kernbench.store.backup import BACKUP_FILE

runner = CliRunner()


def _done(out) -> int:
    return sum(1 for row in rh.cell_table(out).values() if row[1] == "done")


def test_wal_deleted_mid_run_then_driver_killed_restore_brings_cells_back(reference_run, tmp_path):
    spec, _, reference = reference_run
    out = tmp_path / "res"
    env = rh.child_env(KERNBENCH_FAULT_COMMIT_DELAY="0.2", KERNBENCH_BACKUP_EVERY="2")
    proc = rh.start_run(spec, out, "--jobs", "1", env=env)
    assert rh.wait_rows(proc, out, 4), proc.communicate()
    (out / "results.sqlite-wal").unlink()  # what a user must never do
    time.sleep(1.0)  # a few more commits (and backups) into the unlinked WAL
    with contextlib.suppress(ProcessLookupError):
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    rh.kill_group(proc)
    assert (out / BACKUP_FILE).is_file()
    lost = rh.N_CELLS - _done(out)
    assert lost > 0  # the committed cells lived in the deleted WAL

    res = runner.invoke(app, ["run", str(spec), "--out", str(out), "--jobs", "1"])
    assert res.exit_code == 2, res.output  # refused, not silently recomputed over
    assert "kernbench restore" in res.output and "-wal" in res.output, res.output

    res = runner.invoke(app, ["restore", str(out)])
    assert res.exit_code == 0, res.output
    restored = _done(out)
    assert restored >= 4, restored  # every cell committed before the last backup is back
    assert any(p.name.startswith("results.sqlite.damaged-") for p in out.iterdir())

    res = runner.invoke(app, ["run", str(spec), "--out", str(out), "--jobs", "1"])
    assert res.exit_code == 0, res.output
    assert f"{restored} already finished" in res.output
    check = rh.check_store(out, reference)
    assert check.ok, check


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
