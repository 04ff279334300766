"""Run lock: a second run is refused naming the holder, --wait queues, a killed holder's lock is
taken over, forked children do not keep it; ``kernbench table`` reads while a run writes (WAL)."""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time

import pytest
import reliability_harness as rh
from typer.testing import CliRunner

from kernbench.cli import app
from kernbench.store.lock import LOCK_FILE, RunLock, RunLocked, pid_alive, read_holder

runner = CliRunner()

HOLDER = textwrap.dedent(
    """
    import os, sys, time
    from kernbench.store.lock import RunLock
    lock = RunLock(sys.argv[1]).acquire()
    if len(sys.argv) > 3 and sys.argv[3] == "fork":
        ready_r, ready_w = os.pipe()
        if os.fork() == 0:  # a forked child outlives the parent; it must not keep the lock
            os.write(ready_w, b"x")  # the at-fork hooks have run by now
            time.sleep(60)
            os._exit(0)
        os.read(ready_r, 1)  # report "locked" only once the child is really running
    print("locked", flush=True)
    time.sleep(float(sys.argv[2]))
    lock.release()
    """
)


def _hold(directory, seconds: float, *extra: str) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(directory), str(seconds), *extra],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert proc.stdout.readline().strip() == "locked"
    return proc


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def test_second_lock_in_the_same_process_is_refused_and_release_frees_it(tmp_path):
    with RunLock(tmp_path) as first:
        assert read_holder(tmp_path)["pid"] == os.getpid()
        with pytest.raises(RunLocked, match=f"pid {os.getpid()} on host"):
            RunLock(tmp_path).acquire()
        assert first.took_over is None
    assert read_holder(tmp_path) == {}  # a clean release leaves no holder
    with RunLock(tmp_path) as again:
        assert again.took_over is None


def test_run_refused_with_holder_named_exit_2_and_wait_queues(reference_run, tmp_path):
    spec, _, reference = reference_run
    out = tmp_path / "res"
    holder = _hold(out, 4.0)
    try:
        res = runner.invoke(app, ["run", str(spec), "--out", str(out), "--jobs", "1"])
        assert res.exit_code == 2, res.output
        text = " ".join(res.output.split())
        assert f"pid {holder.pid} on host {socket.gethostname()} since" in text
        assert "--wait" in text and "Traceback" not in res.output
        assert not (out / "results.sqlite").exists()  # refused before any work

        t0 = time.monotonic()
        res = runner.invoke(
            app, ["run", str(spec), "--out", str(out), "--jobs", "1", "--only", "realisation=0"]
        )
        assert res.exit_code == 2
        res = runner.invoke(
            app,
            ["run", str(spec), "--out", str(out), "--jobs", "1", "--wait", "--only", "method=svm"],
        )
        assert res.exit_code == 0, res.output
        assert holder.poll() is not None or time.monotonic() - t0 > 3.0
    finally:
        _kill_group(holder)
    table = rh.cell_table(out)
    assert {row[0][2] for row in table.values()} == {"svm"}
    assert all(reference[cid] == row for cid, row in table.items())


def test_stale_lock_of_a_killed_run_is_taken_over(tmp_path):
    holder = _hold(tmp_path, 60.0)
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    assert read_holder(tmp_path)["pid"] == holder.pid and not pid_alive(holder.pid)
    with RunLock(tmp_path) as lock:
        assert lock.took_over is not None and lock.took_over.holder["pid"] == holder.pid
        assert read_holder(tmp_path)["pid"] == os.getpid()


def test_forked_child_of_a_killed_run_does_not_keep_the_lock(tmp_path):
    holder = _hold(tmp_path, 60.0, "fork")
    try:
        os.kill(holder.pid, signal.SIGKILL)  # the parent dies; its forked child lives on
        holder.wait()
        with RunLock(tmp_path) as lock:
            assert lock.took_over.holder["pid"] == holder.pid
    finally:
        _kill_group(holder)


def test_waiting_gives_up_after_its_timeout_naming_the_holder(tmp_path):
    holder = _hold(tmp_path, 30.0)
    try:
        t0 = time.monotonic()
        with pytest.raises(RunLocked, match=f"pid {holder.pid}"):
            RunLock(tmp_path, wait=True, poll_s=0.05, timeout_s=0.5).acquire()
        assert time.monotonic() - t0 >= 0.5
    finally:
        _kill_group(holder)
    assert (tmp_path / LOCK_FILE).exists()


def test_table_reads_while_a_writer_holds_an_exclusive_transaction(reference_run, tmp_path):
    """WAL: readers never wait for the writer. (A rollback journal would block this read.)"""
    _, ref_dir, _ = reference_run
    import shutil

    out = tmp_path / "copy"
    shutil.copytree(ref_dir, out)
    writer = sqlite3.connect(out / "results.sqlite", isolation_level=None, timeout=0.1)
    assert writer.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    writer.execute("BEGIN EXCLUSIVE")
    writer.execute("UPDATE cells SET test_error = 0.999")  # uncommitted
    try:
        done = threading.Event()
        result = {}

        def read() -> None:
            result["res"] = runner.invoke(app, ["table", str(out), "--no-reference"])
            done.set()

        threading.Thread(target=read, daemon=True).start()
        assert done.wait(60), "kernbench table blocked behind the writer"
        res = result["res"]
        assert res.exit_code == 0, res.output
        assert "99.90" not in res.output and "breast_cancer" in res.output
    finally:
        writer.execute("ROLLBACK")
        writer.close()


def test_table_during_a_real_run_in_a_subprocess(reference_run, tmp_path):
    spec, _, _ = reference_run
    out = tmp_path / "live"
    env = rh.child_env(KERNBENCH_FAULT_COMMIT_DELAY="0.5")
    proc = rh.start_run(spec, out, "--jobs", "1", env=env)
    try:
        assert rh.wait_rows(proc, out, 2)
        res = runner.invoke(app, ["table", str(out), "--no-reference"])
        assert res.exit_code == 0, res.output
        assert proc.poll() is None  # the run was still writing
    finally:
        rh.kill_group(proc)
