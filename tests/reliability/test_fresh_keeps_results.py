"""``run --fresh`` never loses a finished number: an interrupt keeps every finished row.

Reproduces the fault where SIGTERM during ``run --fresh`` overwrote finished cells as
``interrupted`` (4 of 12 lost their numbers in one trial).
"""

from __future__ import annotations

import shutil
import signal

import reliability_harness as rh

from kernbench.store import Store


def test_sigterm_during_fresh_keeps_every_finished_cell(reference_run, tmp_path):
    spec, reference_dir, reference = reference_run
    out = tmp_path / "fresh"
    shutil.copytree(reference_dir, out)
    # each cell sleeps 1 s before computing, so the SIGTERM sent once two cells are switched lands
    # with the third in flight (a commit delay alone left that to the race between the signal and
    # the next cell's start, and `make test-portable` once found no cell in flight)
    env = rh.child_env(KERNBENCH_FAULT_COMMIT_DELAY="0.2", KERNBENCH_FAULT_CELL_DELAY="1")
    proc = rh.start_run(spec, out, "--fresh", "--jobs", "1", env=env)
    assert rh.wait_history(proc, out, 2)  # two cells recomputed and switched
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, stderr.decode()  # 143, documented
    assert b"Traceback" not in stderr

    check = rh.check_store(out, reference)
    assert check.ok and check.statuses == {"done": rh.N_CELLS}, check
    with Store(out) as store:
        reasons = [row["reason"] for row in store.history()]
    assert reasons.count("replaced by a newer finished row") >= 2
    # the cell in flight at the interrupt was archived as an attempt, its finished row kept
    assert any(r.startswith("attempt did not finish") for r in reasons)


def test_failing_fresh_recomputation_keeps_the_finished_row(tmp_path):
    from kernbench.store import CellRecord

    with Store(tmp_path / "s", create=True) as store:
        done = CellRecord("c", "d", 0, "M", "m", "done", test_error=0.2, train_error=0.1)
        store.record(done)
        failed = CellRecord("c", "d", 0, "M", "m", "failed", error="boom")
        assert store.record(failed) is False
        (row,) = store.rows()
        assert (row["status"], row["test_error"], row["attempts"]) == ("done", 0.2, 2)
        newer = CellRecord("c", "d", 0, "M", "m", "done", test_error=0.3, train_error=0.1)
        assert store.record(newer) is True
        (row,) = store.rows()
        assert (row["status"], row["test_error"], row["attempts"]) == ("done", 0.3, 3)
        history = store.history()
    assert [(h["status"], h["test_error"]) for h in history] == [("failed", None), ("done", 0.2)]
