"""Crash safety: SIGKILL mid-run and mid-commit, SIGTERM -> ``interrupted``; rerun completes.

Fast versions of benchmarks/fault_harness.py (which runs >= 50 kill trials).
"""

from __future__ import annotations

import signal
import sqlite3

import numpy as np
import reliability_harness as rh


def test_sigkill_mid_commit_and_at_random_then_rerun_matches_uninterrupted(reference_run, tmp_path):
    spec, _, reference = reference_run
    rng = np.random.default_rng(20261126)
    for trial, mode in enumerate(("commit", "random")):
        out = tmp_path / f"trial{trial}"
        result = rh.kill_trial(trial, spec, out, reference, rng, mode=mode, jobs=1)
        check = result.check
        assert check.integrity_ok
        assert check.missing == 0 and check.duplicated == 0 and check.mismatched == 0, check
        assert check.rows == rh.N_CELLS and check.statuses == {"done": rh.N_CELLS}


def test_sigterm_records_cells_in_flight_as_interrupted_and_rerun_retries_them(
    reference_run, tmp_path
):
    spec, _, reference = reference_run
    out = tmp_path / "term"
    # every commit sleeps 1 s inside its transaction, and every cell 2 s before it computes:
    # once the first row is visible, the next cell is in flight for 2 s, so SIGTERM lands while
    # it is (without the cell delay a fast cell could be computed and be mid-commit, done, when
    # the signal came: no cell in flight, seen on a loaded machine)
    env = rh.child_env(KERNBENCH_FAULT_COMMIT_DELAY="1.0", KERNBENCH_FAULT_CELL_DELAY="2.0")
    proc = rh.start_run(spec, out, "--jobs", "1", env=env)
    assert rh.wait_rows(proc, out, 1)
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, stderr.decode()  # 143, documented
    assert b"Traceback" not in stderr and b"interrupted" in stderr
    table = rh.cell_table(out)
    statuses = [row[1] for row in table.values()]
    assert statuses.count("interrupted") == 1 and statuses.count("done") == len(table) - 1
    with sqlite3.connect(out / "results.sqlite") as con:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        cells_csv = (out / "cells.csv").read_text()
    assert "interrupted" in cells_csv

    from kernbench.runner.options import RunOptions
    from kernbench.runner.run import run_experiment
    from kernbench.specs.load import load_spec

    summary = run_experiment(load_spec(spec), RunOptions(out_dir=out, jobs=1))
    assert summary.counts.get("done") == rh.N_CELLS - (len(table) - 1)
    check = rh.check_store(out, reference)
    assert check.ok and check.statuses == {"done": rh.N_CELLS}, check
