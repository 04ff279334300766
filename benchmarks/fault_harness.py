"""Fault harness (issues 6, 17, 35 and 46): kill trials, fuzzed and hostile specs, store and disk
faults, Dask worker and scheduler kills, signals in compiled code, killed local workers, silent
schedulers, huge and endless inputs, planted symlinks, with a summary table. ``make faults`` runs
it (about 25 min on an idle 2-core machine; ``--only-edges`` runs the issue-35 families alone).

* **kill trials**: ``kernbench run`` on a 10-cell spec is SIGKILLed at a random moment (half of
  the trials while the driver sleeps inside a store transaction, i.e. mid-commit; jobs 1 and 2),
  then rerun; the store must hold every cell exactly once, with the numbers of an uninterrupted
  run, and pass ``PRAGMA integrity_check``;
* **--fresh interrupts**: ``run --fresh`` on a finished store is stopped by SIGTERM, SIGINT or
  SIGKILL while it recomputes; without any rerun, every cell must still be finished with the
  numbers of the uninterrupted run (a replacement only lands once it has finished);
* **fuzzed specs** (>= 500 mutations + the hostile documents of tests/reliability/spec_fuzz.py:
  YAML tags, alias and merge-key bombs, a million cells, names with newlines, reference files
  outside the spec's directory, bidirectional overrides): every one must exit 2 naming the key
  path (or be a valid spec), never a traceback or exit 3, create nothing, print no raw control
  or bidi character, and stay under 200 MB of Python allocations (tracemalloc peak);
* **store and disk faults**: a 0-byte, corrupted or foreign store, a read-only results directory,
  a full disk (sqlite's own "database or disk is full", ENOSPC on the CSV), a directory named
  cells.csv, ``--out`` naming a file, a non-CSV reference, a ``-wal`` deleted mid-run (restored
  from the backup): each ends in its expected exit code (2 with one line, or 0), never 3;
* **Dask**: on a fresh 2-worker LocalCluster (127.0.0.1) per trial, the busiest worker is
  SIGKILLed after the first cell returns; a scheduler killed mid-run is exit 2 and a rerun
  completes. No cell may be lost;
* **signals** (>= 20): SIGTERM to the driver or its process group while AdaBoost-Perc cells run
  numba's RCD loop, ``--jobs 1`` and ``2``: exit 143, no cell ``failed``, stopped within 2 s plus
  the longest cell; **worker kills** (>= 5): one loky worker SIGKILLed mid-cell: the run finishes
  (exit 1) with that cell ``failed`` (``WorkerDied``) and every other cell done, unchanged;
* **silent schedulers**: a port that never answers and ``python -m http.server`` as
  ``--scheduler``: exit 2 within 30 s; **huge inputs**: ``/dev/zero``, a 3 GB sparse file and a
  FIFO as spec, ``catalog:``, ``$KERNBENCH_CATALOG`` and reference CSV: exit 2, one line, < 200 MB,
  <= 1 s of CPU beyond the verb's start-up; **planted symlinks** at every file a verb writes: no
  target changed.

Writes one row per trial to ``benchmarks/results/fault_harness.csv`` and prints the summary.

* **plug-ins** (issue 46): methods whose ``fit`` calls ``sys.exit``, ``os._exit``, raises
  ``KeyboardInterrupt``, moves the working directory, changes the environment, ``sys.path`` or a
  signal handler, or draws from the global ``numpy.random``, at ``--jobs 1``, ``--jobs 2``, with
  ``--timeout`` and on Dask: exit 1 (never 0) with those cells ``failed``, every other cell done
  with the same numbers in every mode, nothing written outside the results directory;
* **PID-only signals** (issue 46, >= 10 per mode): SIGTERM or SIGINT to the main process alone
  at a random moment, ``--jobs 1``, ``--jobs 2`` and Dask: exit 128 + signal within the grace
  period, no process left, no traceback, a rerun completes; and SIGKILL of the main process:
  no process it started alive 5 s later.

Usage: ``python benchmarks/fault_harness.py [--kill-trials 40] [--fresh-trials 12] [--fuzz 500]
[--dask-trials 3] [--scheduler-trials 1] [--sigterm-trials 20] [--worker-kills 5] [--only-edges]
[--no-edges] [--pid-signal-trials 10] [--only-plugins]``
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import logging
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from collections import Counter
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "reliability"))

import reliability_harness as rh  # noqa: E402
import spec_fuzz as sf  # noqa: E402

RESULTS = HERE / "results" / "fault_harness.csv"
FIELDS = [
    "kind",
    "trial",
    "mode",
    "detail",
    "ok",
    "lost",
    "duplicated",
    "mismatched",
    "exit",
    "peak_mb",
    "seconds",
]
_BIDI = {chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F)}


def kill_trials(n: int, root: Path, seed: int) -> list[dict]:
    spec = rh.write_spec(root)
    reference = rh.run_reference(spec, root / "reference")
    rng = np.random.default_rng(seed)
    rows = []
    for t in range(n):
        mode = "commit" if t % 2 == 0 else "random"
        jobs = 1 if t % 4 < 2 else 2
        t0 = time.perf_counter()
        trial = rh.kill_trial(t, spec, root / f"kill{t}", reference, rng, mode=mode, jobs=jobs)
        c = trial.check
        rows.append(
            _row(
                "kill",
                t,
                f"{mode}/jobs={jobs}",
                f"rows at kill {trial.rows_at_kill}/{rh.N_CELLS}"
                + (" (run had ended)" if trial.exit_before_kill is not None else ""),
                c.ok,
                c,
                t0,
            )
        )
        print(f"kill {t:3d} {rows[-1]['mode']:16s} {rows[-1]['detail']:32s} ok={c.ok}", flush=True)
    return rows


def fresh_trials(n: int, root: Path, seed: int) -> list[dict]:
    """``run --fresh`` stopped by SIGTERM, SIGINT or SIGKILL; no rerun before the check."""
    spec = root / "faults.yaml"
    reference = rh.cell_table(root / "reference")
    rng = np.random.default_rng(seed + 1)
    sigs = (signal.SIGTERM, signal.SIGINT, signal.SIGKILL)
    rows = []
    for t in range(n):
        sig, jobs = sigs[t % 3], 1 + (t // 3) % 2
        t0 = time.perf_counter()
        trial = rh.fresh_interrupt_trial(
            spec, root / "reference", root / f"fresh{t}", reference, rng, sig=sig, jobs=jobs
        )
        c = trial.check
        # 128 + sig: stopped by kernbench's handler; -sig: the signal landed while Python was
        # starting, before the handler was installed (a shell shows 128 + sig for both); 0: every
        # cell was replaced and the run had ended before the signal landed
        clean = (
            sig == signal.SIGKILL
            or trial.returncode == -sig
            or (trial.returncode == 128 + sig and "Traceback" not in trial.stderr)
            or (trial.returncode == 0 and trial.archived_at_signal == rh.N_CELLS)
        )
        ok = c.ok and c.statuses == {"done": rh.N_CELLS} and clean
        detail = f"{trial.archived_at_signal} replaced before the signal; exit {trial.returncode}"
        rows.append(_row("kill", n + t, f"fresh/{trial.signal}/jobs={jobs}", detail, ok, c, t0))
        print(f"fresh {t:3d} {trial.signal:8s} {detail:40s} ok={ok}", flush=True)
    return rows


def _row(kind, trial, mode, detail, ok, check=None, t0=None, **extra) -> dict:
    row = {
        "kind": kind,
        "trial": trial,
        "mode": mode,
        "detail": detail,
        "ok": bool(ok),
        "lost": check.missing if check else 0,
        "duplicated": check.duplicated if check else 0,
        "mismatched": (check.mismatched + (0 if check.integrity_ok else 1)) if check else 0,
        "exit": "",
        "peak_mb": "",
        "seconds": round(time.perf_counter() - t0, 3) if t0 is not None else 0.0,
    }
    row.update(extra)
    return row


def fuzz_cases(n: int, root: Path, seed: int) -> list[dict]:
    import pytest
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as hypothesis_seed

    rows: list[dict] = []
    root.mkdir(parents=True, exist_ok=True)
    tracemalloc.start()

    def record(text: str, description: str, kind: str) -> None:
        t0 = time.perf_counter()
        tracemalloc.reset_peak()
        with pytest.MonkeyPatch.context() as mp:
            mp.chdir(root)
            outcome = sf.run_case(text, description, root / f"fuzz{len(rows)}", mp)
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        ok = outcome.kind == "accepted" or (
            outcome.kind == "rejected" and sf.names_a_place(outcome)
        )
        raw = any(ch in _BIDI for ch in outcome.message)
        rows.append(
            _row(
                kind,
                len(rows),
                outcome.kind,
                f"{description}: {outcome.key_path or outcome.message[:80]}",
                ok and not (root / "pwned").exists() and not raw and peak <= 200,
                t0=t0,
                mismatched=int(outcome.traceback or outcome.exit_code not in (0, 2)),
                exit=outcome.exit_code,
                peak_mb=round(peak, 1),
            )
        )
        shutil.rmtree(root / f"fuzz{len(rows) - 1}", ignore_errors=True)

    try:
        for description, text in sf.RAW_DOCS:
            record(text, description, "hostile")

        @settings(
            max_examples=n,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @hypothesis_seed(seed)
        @given(sf.mutated_specs())
        def run(case: tuple[str, str]) -> None:
            record(case[0], case[1], "fuzz")

        run()
    finally:
        tracemalloc.stop()
    return rows


# -- store and disk faults -------------------------------------------------------------------
_SMALL = rh.STORE_FAULT_SPEC


@contextlib.contextmanager
def _read_only(directory: Path):
    """Unwritable even for root (the immutable attribute); yields False when impossible."""
    directory.chmod(0o555)
    immutable = False
    try:
        if os.access(directory, os.W_OK):
            done = subprocess.run(["chattr", "+i", str(directory)], capture_output=True)
            immutable = done.returncode == 0
        yield not os.access(directory, os.W_OK)
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(directory)], check=False)
        directory.chmod(0o755)


@contextlib.contextmanager
def _env(**values: str):
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def store_fault_cases(root: Path, spec10: Path, reference: dict) -> list[dict]:
    """Each fault through the CLI in-process; expected exit and one line, never exit 3."""
    import yaml
    from typer.testing import CliRunner

    from kernbench.cli import app

    cli = CliRunner()
    root.mkdir(parents=True, exist_ok=True)
    spec = root / "small.yaml"
    spec.write_text(yaml.safe_dump(_SMALL), encoding="utf-8")
    finished = root / "finished"
    assert cli.invoke(app, ["run", str(spec), "--out", str(finished), "--jobs", "1"]).exit_code == 0
    rows: list[dict] = []

    def fresh_copy(name: str) -> Path:
        out = root / name
        shutil.copytree(finished, out)
        return out

    def case(name: str, args: list, expect: int = 2, needle: str = "") -> None:
        t0 = time.perf_counter()
        res = cli.invoke(app, [str(a) for a in args])
        text = res.output.strip()
        one_line = expect == 0 or (text.startswith("error:") and len(text.splitlines()) == 1)
        ok = res.exit_code == expect and one_line and "Traceback" not in text and needle in text
        rows.append(_row("store-fault", len(rows), name, text[:160], ok, t0=t0, exit=res.exit_code))
        print(f"store {name:38s} exit {res.exit_code} ok={ok}", flush=True)

    empty = root / "empty"
    empty.mkdir()
    (empty / "results.sqlite").touch()
    case("0-byte store: table", ["table", empty], needle="0 bytes")
    case("0-byte store: run --dry-run", ["run", spec, "--out", empty, "--dry-run"])
    case("0-byte store: run", ["run", spec, "--out", empty, "--jobs", "1"])
    rows[-1]["ok"] &= (empty / "results.sqlite").stat().st_size == 0  # never recreated
    bad = fresh_copy("corrupt")
    data = bytearray((bad / "results.sqlite").read_bytes())
    data[4096:] = b"\xa5" * (len(data) - 4096)
    (bad / "results.sqlite").write_bytes(bytes(data))
    case("corrupted page: table", ["table", bad], needle="kernbench restore")
    case("corrupted page: run", ["run", spec, "--out", bad, "--jobs", "1"])
    case("corrupted page: restore", ["restore", bad], expect=0)
    foreign = root / "foreign"
    foreign.mkdir()
    (foreign / "results.sqlite").write_text("notes\n" * 1000, encoding="utf-8")
    case("foreign file as store: run", ["run", spec, "--out", foreign, "--jobs", "1"])
    ro = fresh_copy("readonly")
    (ro / ".kernbench.lock").unlink()
    with _read_only(ro) as effective:
        if effective:
            case("read-only dir: table", ["table", ro, "--no-reference"], expect=0)
            case("read-only dir: run (.kernbench.lock)", ["run", spec, "--out", ro])
    ro2 = fresh_copy("readonly2")  # the lock file exists: the store/CSV writes fail instead
    with _read_only(ro2) as effective:
        if effective:
            case("read-only dir: run (store, cells.csv.tmp)", ["run", spec, "--out", ro2])
    many = dict(_SMALL, protocol={**_SMALL["protocol"], "n_realisations": 40})
    spec40 = root / "small40.yaml"
    spec40.write_text(yaml.safe_dump(many), encoding="utf-8")
    with _env(KERNBENCH_FAULT_MAX_PAGES="12"):
        case(
            "disk full (sqlite)",
            ["run", spec40, "--out", root / "full", "--jobs", "1"],
            needle="database or disk is full",
        )
    case("disk full: space freed, rerun", ["run", spec40, "--out", root / "full"], expect=0)
    with _env(KERNBENCH_FAULT_ENOSPC="1"):
        case(
            "ENOSPC on cells.csv",
            ["run", spec, "--out", root / "enospc", "--jobs", "1"],
            needle="No space left",
        )
    (root / "csvdir" / "cells.csv").mkdir(parents=True)
    case("directory named cells.csv", ["run", spec, "--out", root / "csvdir"])
    case("--out naming a file", ["run", spec, "--out", spec])
    case("--out naming a file, --dry-run", ["run", spec, "--out", spec, "--dry-run"])
    (root / "ref").mkdir()
    (root / "ref" / "ref.csv").write_bytes(bytes(range(256)) * 8)
    ref_spec = root / "ref" / "spec.yaml"
    ref_spec.write_text(
        yaml.safe_dump({**_SMALL, "table": {"reference": {"file": "ref.csv"}}}), encoding="utf-8"
    )
    assert cli.invoke(app, ["run", str(ref_spec), "--out", str(root / "refres")]).exit_code == 0
    case("non-CSV reference file: table", ["table", root / "refres"], needle="no-reference")
    case("restore without a backup", ["restore", empty], needle="no backup")

    t0 = time.perf_counter()
    trial = rh.wal_delete_trial(spec10, root / "wal", reference)
    ok = trial.lost > 0 and trial.run_exit == 2 and trial.restore_exit == 0 and trial.check.ok
    detail = f"{trial.lost} cells gone with the WAL; {trial.restored} back from the backup"
    rows.append(
        _row("store-fault", len(rows), "-wal deleted mid-run, kill, restore", detail, ok,
             trial.check, t0, exit=trial.run_exit)
    )  # fmt: skip
    print(f"store -wal deleted: {detail} ok={ok}", flush=True)
    return rows


# -- Dask ------------------------------------------------------------------------------------
def dask_trials(n: int, n_scheduler: int, root: Path) -> list[dict]:
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        print("dask not installed: skipping the Dask trials (pip install 'kernbench[dask]')")
        return []
    from kernbench.runner.options import RunHooks, RunOptions
    from kernbench.runner.run import run_experiment
    from kernbench.specs.load import load_spec

    spec_path = root / "faults.yaml"
    reference = rh.cell_table(root / "reference")
    rows = []
    for t in range(n):
        # a fresh cluster per trial: a worker killed in the previous trial cannot stall this one
        t0 = time.perf_counter()
        with (
            LocalCluster(
                n_workers=2,
                threads_per_worker=1,
                host="127.0.0.1",
                dashboard_address=None,
                silence_logs=logging.ERROR,
            ) as cluster,
            Client(cluster) as client,
        ):
            client.wait_for_workers(2, timeout=120)
            pids = client.run(os.getpid)
            killed: dict = {}

            def kill_busiest(rec, pids=pids, killed=killed, client=client) -> None:
                if killed:
                    return
                busy = client.processing()
                addr = max(pids, key=lambda a: len(busy.get(a, ())))
                killed.update(in_flight=len(busy.get(addr, ())))
                os.kill(pids[addr], signal.SIGKILL)

            out = root / f"dask{t}"
            summary = run_experiment(
                load_spec(spec_path),
                RunOptions(out_dir=out, backend="dask", scheduler=cluster.scheduler_address),
                hooks=RunHooks(on_cell=kill_busiest),
            )
        c = rh.check_store(out, reference)
        detail = f"{killed.get('in_flight', 0)} task(s) on it; {summary.counts}"
        rows.append(
            _row("dask-kill", t, "sigkill busiest worker after 1st cell", detail,
                 c.ok and bool(killed), c, t0)
        )  # fmt: skip
        print(f"dask {t:3d} {detail} ok={rows[-1]['ok']}", flush=True)
    for t in range(n_scheduler):
        t0 = time.perf_counter()
        trial = rh.scheduler_kill_trial(spec_path, root / f"sched{t}", reference)
        clean = trial.exit_code == 2 and "Traceback" not in trial.stderr
        ok = clean and "lost the Dask scheduler" in trial.stderr and trial.check.ok
        detail = f"exit {trial.exit_code}, {trial.rows_at_kill} rows at the kill; rerun ok"
        rows.append(
            _row("dask-kill", n + t, "sigkill scheduler mid-run", detail, ok, trial.check, t0,
                 exit=trial.exit_code)
        )  # fmt: skip
        print(f"scheduler {t:3d} {detail} ok={ok}", flush=True)
    return rows


# -- issue 35: signals, dead workers, silent schedulers, huge inputs, planted symlinks ---------
# A child's peak RSS (``ru_maxrss`` from ``wait4``) includes the peak of the process it was
# forked from: Linux carries the forking process's high-water mark across fork and exec. Forked
# straight from this harness (hundreds of MB after a full run's families), every child would
# "use" that much. So the command runs under a small launcher that forks it and reports the
# child's own usage: the launcher's peak is the harness's, the command's is its own.
_LAUNCHER = """
import os, subprocess, sys
proc = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(proc.pid, 0)
with open(sys.argv[1], "w") as fh:
    fh.write(f"{usage.ru_utime + usage.ru_stime} {usage.ru_maxrss}")
code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
"""


def _timed(argv: list[str], env: dict | None = None, cwd: Path | None = None, limit_s=120.0):
    """Run ``argv`` under the launcher; (exit status, wall s, CPU s, peak RSS MB, stderr) of the
    command itself (a command ended by signal N exits 128 + N)."""
    with tempfile.NamedTemporaryFile("r", suffix=".usage", delete=False) as fh:
        usage_file = fh.name
    t0 = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-c", _LAUNCHER, usage_file, *argv], stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, env=env, cwd=cwd, start_new_session=True,
    )  # fmt: skip
    killer = threading.Timer(limit_s, lambda: os.killpg(proc.pid, signal.SIGKILL))
    killer.start()
    try:
        err_bytes = proc.stderr.read() if proc.stderr else b""
        status = proc.wait()
    finally:
        killer.cancel()
    wall = time.monotonic() - t0
    err = err_bytes.decode(errors="replace")
    if proc.stderr:
        proc.stderr.close()
    try:
        cpu_text, rss_text = Path(usage_file).read_text().split()
        cpu, rss_mb = float(cpu_text), int(rss_text) / 1024
    except ValueError:  # killed before the command ended: nothing measured
        cpu, rss_mb = float("nan"), float("nan")
    finally:
        Path(usage_file).unlink(missing_ok=True)
    return status, wall, cpu, rss_mb, err


def sigterm_trials(n: int, root: Path, seed: int) -> list[dict]:
    """SIGTERM while AdaBoost-Perc cells run numba's compiled RCD loop (jobs 1 and 2; to the
    driver, or to its process group as SLURM does): exit 143, no cell failed, stopped within
    2 s plus the longest cell."""
    root.mkdir(parents=True, exist_ok=True)
    spec = rh.write_perc_spec(root)
    rh.start_run(spec, root / "perc-ref", "--jobs", "1").communicate()
    with sqlite3.connect(root / "perc-ref" / "results.sqlite") as con:
        longest = con.execute("SELECT MAX(finished_at - started_at) FROM cells").fetchone()[0]
    rng = np.random.default_rng(seed + 35)
    rows = []
    for t in range(n):
        jobs, group = 1 + t % 2, bool((t // 2) % 2)
        t0 = time.perf_counter()
        trial = rh.sigterm_trial(spec, root / f"term{t}", rng, jobs=jobs, group=group)
        failed = trial.statuses.get("failed", 0)
        in_time = trial.stop_s <= 2.0 + longest
        ok = trial.returncode == 143 and failed == 0 and in_time and "Traceback" not in trial.stderr
        detail = (
            f"exit {trial.returncode}, stopped {trial.stop_s:.2f} s after the signal (longest "
            f"cell {longest:.1f} s); {trial.statuses}"
        )
        rows.append(
            _row("signal", t, f"SIGTERM {trial.target}/jobs={jobs}", detail, ok, t0=t0,
                 exit=trial.returncode, mismatched=failed)
        )  # fmt: skip
        print(f"sigterm {t:3d} {rows[-1]['mode']:24s} {detail} ok={ok}", flush=True)
    return rows


def worker_kill_trials(n: int, root: Path, seed: int) -> list[dict]:
    """SIGKILL one loky worker mid-cell (as the OOM killer does): the run finishes (exit 1), the
    killed cell is recorded as failed, every other cell done with the reference numbers."""
    spec = root / "faults.yaml"
    reference = rh.cell_table(root / "reference")
    rng = np.random.default_rng(seed + 36)
    rows = []
    for t in range(n):
        t0 = time.perf_counter()
        trial = rh.worker_kill_trial(spec, root / f"worker{t}", reference, rng)
        c = trial.check
        failed = trial.statuses.get("failed", 0)
        died = sum("WorkerDied" in (e or "") for e in trial.errors)
        ok = (
            trial.killed == 1
            and trial.returncode == 1
            and failed == died == 1
            and trial.statuses.get("done", 0) == rh.N_CELLS - 1
            and c.mismatched == 1  # the failed cell only: every done cell has its numbers
            and c.duplicated == 0
            and c.integrity_ok
        )
        detail = f"exit {trial.returncode}; {trial.statuses}; {died} recorded as WorkerDied"
        rows.append(
            _row("worker-kill", t, "sigkill a loky worker", detail, ok, t0=t0,
                 exit=trial.returncode)
        )  # fmt: skip
        print(f"worker {t:3d} {detail} ok={ok}", flush=True)
    return rows


def silent_scheduler_cases(root: Path) -> list[dict]:
    """A port that accepts and never answers, and an HTTP server, as --scheduler: exit 2 within
    30 s with a one-line message."""
    root.mkdir(parents=True, exist_ok=True)
    spec = rh.write_spec(root)
    rows = []
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    http = subprocess.Popen(
        [sys.executable, "-m", "http.server", "0", "--bind", "127.0.0.1"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    http_port = int(http.stdout.readline().split("port ")[1].split()[0])
    try:
        for name, port in (
            ("silent listener", listener.getsockname()[1]),
            ("HTTP server", http_port),
        ):
            t0 = time.perf_counter()
            code, wall, cpu, rss, err = _timed(
                rh.kernbench_argv("run", str(spec), "--out", str(root / name.replace(" ", "-")),
                                  "--backend", "dask", "--scheduler", f"tcp://127.0.0.1:{port}"),
                env=rh.child_env(), limit_s=300,
            )  # fmt: skip
            one_line = err.strip().startswith("error:") and len(err.strip().splitlines()) == 1
            ok = code == 2 and wall <= 30 and one_line
            detail = f"exit {code} in {wall:.1f} s (CPU {cpu:.1f} s): {err.strip()[:90]}"
            rows.append(_row("scheduler", len(rows), name, detail, ok, t0=t0, exit=code))
            print(f"scheduler {name:16s} {detail} ok={ok}", flush=True)
    finally:
        listener.close()
        http.kill()
        http.wait()
    return rows


def huge_input_cases(root: Path) -> list[dict]:
    """/dev/zero, a 3 GB sparse file and a FIFO as spec, catalogue (``catalog:`` and
    $KERNBENCH_CATALOG) and reference CSV: exit 2 with one line, < 200 MB, nothing read past
    the cap. Wall time is reported beside the CPU time (the interpreter's start-up included)."""
    import yaml

    root.mkdir(parents=True, exist_ok=True)
    small = root / "small.yaml"
    small.write_text(yaml.safe_dump(_SMALL), encoding="utf-8")
    ref_dir = root / "refspec"
    ref_dir.mkdir()
    (ref_dir / "ref.csv").write_text("dataset,method,mean\nbreast_cancer,ada,1.0\n")
    ref_spec = ref_dir / "spec.yaml"
    ref_spec.write_text(
        yaml.safe_dump({**_SMALL, "table": {"reference": {"file": "ref.csv"}}}), encoding="utf-8"
    )
    done = subprocess.run(
        rh.kernbench_argv("run", str(ref_spec), "--out", str(root / "refres"), "--jobs", "1"),
        env=rh.child_env(), capture_output=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    # each verb's own start-up (its imports: pandas and matplotlib for `table`), measured on a
    # path that does not exist: the verb starts, imports what it needs and stops at once
    base = {
        verb: _timed(rh.kernbench_argv(verb, str(root / "absent")), rh.child_env())
        for verb in ("validate", "table")
    }
    print(f"baselines (exit, wall, CPU, MB): {[b[:4] for b in base.values()]}", flush=True)
    rows = []

    def make(kind: str, path: Path) -> None:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        if kind == "/dev/zero":
            path.symlink_to("/dev/zero")
        elif kind == "3 GB sparse":
            with path.open("wb") as fh:
                fh.truncate(3 * 10**9)
        else:
            os.mkfifo(path)

    for kind in ("/dev/zero", "3 GB sparse", "FIFO"):
        cases = []
        spec = root / f"spec-{len(rows)}.yaml"
        make(kind, spec)
        cases.append(("spec", rh.kernbench_argv("validate", "--no-data", str(spec)), None))
        cat = root / f"cat-{len(rows)}.yaml"
        make(kind, cat)
        with_cat = root / f"with-cat-{len(rows)}.yaml"
        with_cat.write_text(yaml.safe_dump({**_SMALL, "catalog": cat.name}), encoding="utf-8")
        cases.append(("catalog:", rh.kernbench_argv("validate", "--no-data", str(with_cat)), None))
        env_cat = {"KERNBENCH_CATALOG": str(cat)}
        cases.append(("KERNBENCH_CATALOG", rh.kernbench_argv("validate", "--no-data", str(small)),
                      env_cat))  # fmt: skip
        make(kind, ref_dir / "ref.csv")
        cases.append(("reference CSV", rh.kernbench_argv("table", str(root / "refres")), None))
        for what, argv, extra in cases:
            t0 = time.perf_counter()
            code, wall, cpu, rss, err = _timed(argv, env=rh.child_env(**(extra or {})), limit_s=60)
            text = err.strip()
            one_line = text.startswith("error:") and len(text.splitlines()) == 1
            _, base_wall, base_cpu, _, _ = base[argv[3]]
            extra_cpu, extra_wall = cpu - base_cpu, wall - base_wall
            ok = code == 2 and one_line and rss < 200 and extra_cpu <= 1.0 and wall <= 30
            detail = (
                f"exit {code}, {wall:.2f} s wall ({extra_wall:+.2f} s), {cpu:.2f} s CPU "
                f"({extra_cpu:+.2f} s over the verb's start-up), {rss:.0f} MB: {text[:80]}"
            )
            rows.append(_row("huge-input", len(rows), f"{kind} as {what}", detail, ok, t0=t0,
                             exit=code, peak_mb=round(rss, 1)))  # fmt: skip
            print(f"input {kind:12s} as {what:18s} {detail} ok={ok}", flush=True)
    return rows


# -- issue 46: plug-ins that try to hurt the run, stops sent to the main process alone -------
#: where plug-in cells run: the driver (a plug-in cell in its child), loky, a timed child, Dask
_PLUGIN_MODES = {
    "jobs=1": ("--jobs", "1"),
    "jobs=2": ("--jobs", "2"),
    "timeout": ("--jobs", "1", "--timeout", "120"),
    "dask": ("--jobs", "2", "--backend", "dask"),
}


def _has_dask() -> bool:
    import importlib.util

    return importlib.util.find_spec("distributed") is not None


def plugin_cases(root: Path) -> list[dict]:
    """Plug-ins whose ``fit`` calls ``sys.exit``, ``os._exit``, raises ``KeyboardInterrupt``,
    ``os.chdir``-s elsewhere, changes the environment, ``sys.path`` or a signal handler, and draws
    from the global ``numpy.random``, at every ``--jobs``, with ``--timeout`` and on Dask: the
    exiting cells fail (exit 1, never 0), every other cell is done with the same numbers in every
    mode, nothing is written outside the results directory, no traceback on the terminal."""
    root.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []
    modes = {k: v for k, v in _PLUGIN_MODES.items() if k != "dask" or _has_dask()}
    elsewhere = root / "elsewhere"
    (elsewhere / "results" / "hostile").mkdir(parents=True)
    (elsewhere / "results" / "hostile" / "cells.csv").write_text("precious\n")
    env = rh.child_env(HOSTILE_DIR=str(elsewhere), HOSTILE_KEEP="kept")
    exits = rh.write_plugin_spec(root / "exits", rh.EXIT_ACTS)
    states = rh.write_plugin_spec(root / "states", rh.STATE_ACTS, realisations=2)
    numbers: dict[str, dict] = {}
    for mode, flags in modes.items():
        t0 = time.perf_counter()
        out = root / "exits" / mode
        done = rh.run_cli("run", str(exits), "--out", str(out), *flags, env=env)
        statuses = rh.statuses_by_method(out)
        want = {act: ["failed"] for act in rh.EXIT_ACTS} | {"ada": ["done"]}
        ok = done.returncode == 1 and statuses == want and "Traceback" not in done.stderr
        detail = f"exit {done.returncode}; {statuses}; traceback: {'Traceback' in done.stderr}"
        rows.append(_row("plugin", len(rows), f"exit, os._exit, interrupt/{mode}", detail, ok,
                         t0=t0, exit=done.returncode,
                         lost=sum(s not in ("done", "failed") for v in statuses.values()
                                  for s in v)))  # fmt: skip
        print(f"plugin exits {mode:8s} {detail} ok={ok}", flush=True)
        t0 = time.perf_counter()
        work = root / f"cwd-{mode}"
        work.mkdir()
        done = rh.run_cli("run", str(states), "--out", "results/hostile", *flags, cwd=work, env=env)
        out = work / "results" / "hostile"
        statuses = rh.statuses_by_method(out)
        untouched = (
            sorted(p.name for p in (elsewhere / "results" / "hostile").iterdir()) == ["cells.csv"]
            and (elsewhere / "results" / "hostile" / "cells.csv").read_text() == "precious\n"
        )
        numbers[mode] = {cid: row[2] for cid, row in rh.cell_table(out).items()}
        same = numbers[mode] == numbers[next(iter(modes))]
        all_done = all(s == "done" for v in statuses.values() for s in v)
        ok = done.returncode == 0 and all_done and untouched and same
        ok = ok and "Traceback" not in done.stderr
        detail = (
            f"exit {done.returncode}; {sum(map(len, statuses.values()))} cells "
            f"{'all done' if all_done else statuses}; outside writes: "
            f"{'none' if untouched else 'SOME'}; numbers as jobs=1: {same}; traceback: "
            f"{'Traceback' in done.stderr}"
        )
        rows.append(_row("plugin", len(rows), f"chdir, env, path, signal, RNG/{mode}", detail,
                         ok, t0=t0, exit=done.returncode,
                         mismatched=int(not same) + int(not untouched)))  # fmt: skip
        print(f"plugin state {mode:8s} {detail} ok={ok}", flush=True)
    return rows


def pid_signal_trials(n: int, root: Path, seed: int) -> list[dict]:
    """SIGTERM or SIGINT to the main process alone (as ``docker stop`` and Kubernetes send it)
    at a random moment (start-up, early workers, running, close), ``--jobs 1``, ``--jobs 2`` and
    Dask, ``n`` trials each: exit 128 + signal within the grace period, no process left behind,
    no traceback, no cell ``failed``; a rerun completes every cell with the reference numbers."""
    from kernbench.runner.lifecycle.stop import STOP_GRACE_S

    root.mkdir(parents=True, exist_ok=True)
    spec = rh.write_spec(root)
    reference = rh.cell_table(root.parent / "reference")
    rng = np.random.default_rng(seed + 46)
    rows: list[dict] = []
    modes = [("jobs=1", ("--jobs", "1")), ("jobs=2", ("--jobs", "2"))]
    if _has_dask():
        modes.append(("dask", ("--jobs", "2", "--backend", "dask")))
    # each cell sleeps first, so that a run outlasts the 0-10 s window the signal is drawn from
    # (10 cells: one worker about 12 s; two workers, or Dask with its start-up, about 15 s)
    delays = {"jobs=1": "1", "jobs=2": "2.5", "dask": "2.5"}
    for mode, flags in modes:
        env = rh.child_env(KERNBENCH_FAULT_CELL_DELAY=delays[mode])
        for t in range(n):
            sig = (signal.SIGTERM, signal.SIGINT)[t % 2]
            after = float(rng.uniform(0.0, 10.0))
            out = root / f"pid-{mode}-{t}"
            t0 = time.perf_counter()
            trial = rh.pid_signal_trial(spec, out, *flags, after_s=after, sig=sig, env=env,
                                        limit_s=120)  # fmt: skip
            rerun = rh.run_cli("run", str(spec), "--out", str(out), *flags)
            c = rh.check_store(out, reference)
            # -sig: the signal landed while Python itself was starting, before kernbench's
            # handler was installed (nothing started, nothing written; a shell shows 128 + sig);
            # 0: the run had finished before the signal landed
            early = trial.returncode == -sig and not trial.statuses
            ended = (
                early
                or trial.returncode == 128 + sig
                or (trial.returncode == 0 and not trial.statuses.get("interrupted"))
            )
            ok = (
                ended
                and trial.stop_s <= STOP_GRACE_S
                and not trial.children_left
                and (early or "Traceback" not in trial.stderr)
                and trial.statuses.get("failed", 0) == 0
                and rerun.returncode == 0
                and c.ok
            )
            detail = (
                f"{signal.Signals(sig).name} {trial.phase}: exit {trial.returncode} in "
                f"{trial.stop_s:.2f} s; left {len(trial.children_left)}; {trial.statuses}; "
                f"traceback: {'Traceback' in trial.stderr}; rerun exit {rerun.returncode}"
            )
            rows.append(_row("pid-signal", len(rows), f"{signal.Signals(sig).name}/{mode}",
                             detail, ok, c, t0, exit=trial.returncode))  # fmt: skip
            print(f"pid-signal {mode:7s} {detail} ok={ok}", flush=True)
            if not ok and trial.stderr:  # what the run printed, to find out why (the log keeps it)
                print(trial.stderr[-3000:], flush=True)
    for mode, flags in modes[1:]:  # SIGKILL: no process it started outlives it
        for t in range(max(1, n // 5)):
            t0 = time.perf_counter()
            out = root / f"orphan-{mode}-{t}"
            trial = rh.orphan_trial(spec, out, *flags, wait_for=3 if mode == "dask" else 2)
            ok = not trial.left and len(trial.started) >= 2 and trial.gone_s <= 5.0
            detail = (
                f"{len(trial.started)} processes below the run; {len(trial.left)} alive "
                f"{trial.gone_s:.2f} s after its SIGKILL"
            )
            rows.append(_row("pid-signal", len(rows), f"SIGKILL orphans/{mode}", detail, ok,
                             t0=t0))  # fmt: skip
            print(f"orphans {mode:7s} {detail} ok={ok}", flush=True)
    return rows


#: every file a verb writes in a results directory, with the verb that writes it
_WRITTEN = (
    ("run", ".kernbench.lock"),
    ("run", "results.sqlite"),
    ("run", "results.sqlite-wal"),
    ("run", "results.sqlite-shm"),
    ("run", "results.sqlite.new"),
    ("run", "cells.csv"),
    ("run", "cells.csv.tmp"),
    ("run", "results.backup.sqlite"),
    ("run", "results.backup.sqlite.tmp"),
    ("table", "table.md"),
    ("table", "table.md.tmp"),
    ("table --out", "mine.md"),
    ("report", "report.html"),
    ("report", "../index.html"),
    ("plot", "figures/trace_ada.png"),
    ("merge", ".kernbench.lock"),
    ("merge", "results.sqlite"),
    ("merge", "cells.csv"),
    ("restore", "results.sqlite.restore"),
    ("restore", "results.sqlite"),
)


def symlink_cases(root: Path) -> list[dict]:
    """A symlink planted at each file a verb writes, pointing at a file outside: the verb must
    leave the target unchanged (it replaces the link or refuses with exit 2, never writes
    through it). The count of targets changed must be 0."""
    import hashlib

    import yaml

    root.mkdir(parents=True, exist_ok=True)
    spec = root / "small.yaml"
    spec.write_text(yaml.safe_dump(_SMALL), encoding="utf-8")
    finished = root / "tree" / "finished"
    argv = rh.kernbench_argv("run", str(spec), "--out", str(finished), "--jobs", "1")
    assert subprocess.run(argv, env=rh.child_env(), capture_output=True).returncode == 0
    rows = []
    for i, (verb, name) in enumerate(_WRITTEN):
        t0 = time.perf_counter()
        case = root / f"case{i}" / "res"
        fresh_dir = verb == "run" and name.startswith("results.sqlite")
        if fresh_dir:  # the store's own files: planted before the first run creates them
            case.mkdir(parents=True)
        else:
            shutil.copytree(finished, case)
        victim = root / f"victim{i}.txt"
        victim.write_bytes(b"precious\n" * 100)
        before = hashlib.sha256(victim.read_bytes()).hexdigest()
        link = (case / name).resolve() if name.startswith("..") else case / name
        link.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            link.unlink()
        link.symlink_to(victim)
        args = {
            "run": ["run", str(spec), "--out", str(case), "--jobs", "1", "--fresh"],
            "table": ["table", str(case)],
            "table --out": ["table", str(case), "--out", str(case / "mine.md")],
            "report": ["report", str(case.parent), "--html"],
            "plot": ["plot", str(case), "--kind", "trace"],
            "merge": ["merge", str(finished), "--out", str(case)],
            "restore": ["restore", str(case)],
        }[verb]
        done = subprocess.run(rh.kernbench_argv(*args), env=rh.child_env(), capture_output=True)
        changed = hashlib.sha256(victim.read_bytes()).hexdigest() != before or victim.is_symlink()
        err = done.stderr.decode(errors="replace").strip()
        clean = done.returncode in (0, 1) or (done.returncode == 2 and err.startswith("error:"))
        ok = not changed and clean and "Traceback" not in err
        detail = (
            f"exit {done.returncode}; target {'CHANGED' if changed else 'unchanged'}: {err[:80]}"
        )
        rows.append(_row("symlink", i, f"{verb}: {name}", detail, ok, t0=t0,
                         exit=done.returncode, mismatched=int(changed)))  # fmt: skip
        print(f"symlink {verb:12s} {name:28s} {detail} ok={ok}", flush=True)
    return rows


def summarise(rows: list[dict]) -> list[list[str]]:
    table = []
    kinds = ("kill", "hostile", "fuzz", "store-fault", "dask-kill", "signal", "worker-kill",
             "scheduler", "huge-input", "symlink", "plugin", "pid-signal")  # fmt: skip
    for kind in kinds:
        part = [r for r in rows if r["kind"] == kind]
        if not part:
            continue
        if kind in ("store-fault", "signal", "worker-kill", "scheduler", "huge-input", "symlink",
                    "plugin", "pid-signal"):  # fmt: skip
            modes = Counter(f"exit {r['exit']}" if r["exit"] != "" else "killed" for r in part)
        elif kind == "dask-kill":
            modes = Counter("scheduler" if "scheduler" in r["mode"] else "worker" for r in part)
        else:
            modes = Counter(r["mode"].split("/")[0] for r in part)
        peaks = [r["peak_mb"] for r in part if r["peak_mb"] != ""]
        exits = Counter(r["exit"] for r in part if r["exit"] != "")
        table.append(
            [
                kind,
                str(len(part)),
                str(sum(r["lost"] for r in part)),
                str(sum(r["duplicated"] for r in part)),
                str(sum(r["mismatched"] for r in part)),
                str(sum(not r["ok"] for r in part)),
                str(exits.get(3, 0)),
                f"{max(peaks):.1f}" if peaks else "-",
                ", ".join(f"{m}: {c}" for m, c in sorted(modes.items())),
                f"{sum(r['seconds'] for r in part):.0f}",
            ]
        )
    return table


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kill-trials", type=int, default=40)
    parser.add_argument("--fresh-trials", type=int, default=12)
    parser.add_argument("--fuzz", type=int, default=500)
    parser.add_argument("--dask-trials", type=int, default=3)
    parser.add_argument("--scheduler-trials", type=int, default=1)
    parser.add_argument("--no-store-faults", action="store_true")
    parser.add_argument("--sigterm-trials", type=int, default=20)
    parser.add_argument("--worker-kills", type=int, default=5)
    parser.add_argument("--no-edges", action="store_true", help="skip schedulers/inputs/symlinks")
    parser.add_argument(
        "--only-edges", action="store_true", help="only the signal, worker, scheduler, input and "
        "symlink families (issue 35)"
    )  # fmt: skip
    parser.add_argument("--pid-signal-trials", type=int, default=10, help="per mode (>= 10)")
    parser.add_argument(
        "--only-plugins", action="store_true", help="only the plug-in and PID-only signal "
        "families (issue 46)"
    )  # fmt: skip
    parser.add_argument("--seed", type=int, default=20261126)
    args = parser.parse_args()
    os.environ.setdefault("KERNBENCH_PROGRESS", "0")
    start = time.perf_counter()
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="kernbench-faults-") as tmp:
        root = Path(tmp)
        if args.only_edges or args.only_plugins:
            rh.run_reference(rh.write_spec(root), root / "reference")
        else:
            rows += fuzz_cases(args.fuzz, root / "fuzz", args.seed)
            rows += kill_trials(args.kill_trials, root, args.seed)
            rows += fresh_trials(args.fresh_trials, root, args.seed)
            if not args.no_store_faults:
                reference = rh.cell_table(root / "reference")
                rows += store_fault_cases(root / "store", root / "faults.yaml", reference)
            if args.dask_trials or args.scheduler_trials:
                rows += dask_trials(args.dask_trials, args.scheduler_trials, root)
        if not args.only_plugins:
            rows += sigterm_trials(args.sigterm_trials, root / "signals", args.seed)
            rows += worker_kill_trials(args.worker_kills, root, args.seed)
            if not args.no_edges:
                rows += silent_scheduler_cases(root / "schedulers")
                rows += huge_input_cases(root / "inputs")
                rows += symlink_cases(root / "symlinks")
        if not args.only_edges:
            rows += plugin_cases(root / "plugins")
            rows += pid_signal_trials(args.pid_signal_trials, root / "pid", args.seed)
    total = time.perf_counter() - start
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    with RESULTS.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    header = [
        "check",
        "trials",
        "cells lost",
        "duplicated",
        "mismatched/tracebacks",
        "failed",
        "exit 3",
        "peak MB",
        "outcomes",
        "total s",
    ]
    table = summarise(rows)
    widths = [max(len(h), *(len(r[i]) for r in table)) for i, h in enumerate(header)]
    print()
    print(" | ".join(h.ljust(w) for h, w in zip(header, widths)))
    print("-|-".join("-" * w for w in widths))
    for r in table:
        print(" | ".join(c.ljust(w) for c, w in zip(r, widths)))
    failed = [r for r in rows if not r["ok"]]
    for r in failed[:20]:
        print(f"FAILED {r['kind']} {r['trial']} {r['mode']}: {r['detail']}")
    print(f"\n{len(rows)} trials, {len(failed)} failed, total {total:.0f} s ({total / 60:.1f} min)")
    print(f"per-trial rows: {RESULTS}")
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())
