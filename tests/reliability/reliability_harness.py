"""Fault-injection helpers shared by tests/reliability and benchmarks/fault_harness.py.

A *kill trial* starts ``kernbench run`` on a small multi-cell spec as a subprocess, SIGKILLs the
driving process at a random moment (optionally while it sleeps inside a store transaction:
``KERNBENCH_FAULT_COMMIT_DELAY``), reruns, and compares the store with an uninterrupted run: every
cell exactly once, identical numbers, ``PRAGMA integrity_check`` ok.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

#: embedded data only (scikit-learn's breast_cancer): no download, no mirror needed
SPEC: dict[str, Any] = {
    "name": "faults",
    "datasets": ["breast_cancer"],
    "protocol": {
        "realisations": "random",
        "train_size": 80,
        "test_size": 200,
        "n_realisations": 5,
        "cv_folds": 2,
        "seed": 3,
    },
    "methods": {
        "ada": {"estimator": "adaboost", "grid": {"n_estimators": [5, 20]}},
        "svm": {"estimator": "svm_stump", "grid": {"C": [0.1, 10.0]}},
    },
}
N_CELLS = 10

#: the smallest spec for the store and disk fault cases (2 realisations of one 3-round AdaBoost)
STORE_FAULT_SPEC: dict[str, Any] = {
    "name": "storefaults",
    "datasets": ["breast_cancer"],
    "protocol": {
        "realisations": "random",
        "train_size": 60,
        "test_size": 100,
        "n_realisations": 2,
        "cv_folds": 2,
        "seed": 1,
    },
    "methods": {"ada": {"estimator": "adaboost", "params": {"n_estimators": 3}}},
}


def write_spec(directory: Path, **protocol: Any) -> Path:
    spec = {**SPEC, "protocol": {**SPEC["protocol"], **protocol}}
    path = Path(directory) / "faults.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return path


def kernbench_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "kernbench", *args]


def child_env(**extra: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **extra}
    env.pop("KERNBENCH_FAULT_COMMIT_DELAY", None)
    env.update(extra)
    return env


def run_reference(spec_path: Path, out_dir: Path) -> dict[str, tuple]:
    """An uninterrupted in-process run; returns its cell table."""
    from kernbench.runner.options import RunOptions
    from kernbench.runner.run import run_experiment
    from kernbench.specs.load import load_spec

    summary = run_experiment(load_spec(spec_path), RunOptions(out_dir=out_dir, jobs=1))
    assert summary.ok, summary.failed
    return cell_table(out_dir)


def cell_table(out_dir: Path) -> dict[str, tuple]:
    """``cell_id -> (key, status, test_error, train_error, params JSON)`` read-only."""
    path = Path(out_dir) / "results.sqlite"
    if not path.exists():
        return {}
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
    try:
        rows = con.execute(
            "SELECT cell_id, dataset, realisation, method, status, test_error, train_error, params "
            "FROM cells"
        ).fetchall()
    finally:
        con.close()
    return {r[0]: ((r[1], r[2], r[3]), r[4], r[5], r[6], r[7]) for r in rows}


def count_plan(out_dir: Path) -> int:
    """Cells in the store's plan (0 while the store is not there yet)."""
    path = Path(out_dir) / "results.sqlite"
    if not path.exists():
        return 0
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
        try:
            return con.execute("SELECT COUNT(*) FROM plan").fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error:
        return 0


def count_rows(out_dir: Path) -> int:
    try:
        return len(cell_table(out_dir))
    except sqlite3.Error:  # mid-creation: schema not there yet
        return 0


@dataclass
class StoreCheck:
    """The store after a kill and a rerun, compared with the uninterrupted reference."""

    rows: int
    missing: int
    duplicated: int
    mismatched: int
    integrity_ok: bool
    statuses: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return (
            self.missing == 0
            and self.duplicated == 0
            and self.mismatched == 0
            and (self.integrity_ok)
        )


def check_store(out_dir: Path, reference: dict[str, tuple]) -> StoreCheck:
    table = cell_table(out_dir)
    con = sqlite3.connect(Path(out_dir) / "results.sqlite")
    try:
        integrity = con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        # a duplicate is a second row for the same (dataset, realisation, method)
        duplicated = con.execute(
            "SELECT COALESCE(SUM(n - 1), 0) FROM (SELECT COUNT(*) AS n FROM cells "
            "GROUP BY dataset, realisation, method)"
        ).fetchone()[0]
    finally:
        con.close()
    statuses: dict[str, int] = {}
    for row in table.values():
        statuses[row[1]] = statuses.get(row[1], 0) + 1
    missing = sum(1 for cid in reference if cid not in table or table[cid][1] != "done")
    mismatched = sum(1 for cid, row in table.items() if reference.get(cid) != row)
    return StoreCheck(len(table), missing, int(duplicated), mismatched, integrity, statuses)


@dataclass
class KillTrial:
    """One kill: when it landed, what the store held then, and the check after the rerun."""

    trial: int
    mode: str
    jobs: int
    killed_after_rows: int
    delay_s: float
    exit_before_kill: int | None
    rows_at_kill: int
    check: StoreCheck


def _as_from_a_terminal() -> None:
    # a harness started in the background (nohup, `&`) ignores SIGINT, and children inherit
    # that; a run started from a terminal has Ctrl-C's default disposition
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_run(spec_path: Path, out_dir: Path, *extra: str, env: dict[str, str] | None = None):
    return subprocess.Popen(
        kernbench_argv("run", str(spec_path), "--out", str(out_dir), *extra),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env if env is not None else child_env(),
        start_new_session=True,  # so the trial can clean up the run's worker processes
        preexec_fn=_as_from_a_terminal,  # noqa: PLW1509 (the harness starts no threads first)
    )


def wait_rows(proc: subprocess.Popen, out_dir: Path, n: int, limit_s: float = 300.0) -> bool:
    """Wait until the store holds ``n`` rows; False when the run ended first."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if count_rows(out_dir) >= n:
            return True
        if proc.poll() is not None:
            return False
        time.sleep(0.02)
    raise TimeoutError(f"no {n} rows in {out_dir} after {limit_s} s")


def kill_group(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()


def kill_trial(
    trial: int,
    spec_path: Path,
    out_dir: Path,
    reference: dict[str, tuple],
    rng: Any,
    *,
    mode: str = "random",
    jobs: int = 1,
) -> KillTrial:
    """SIGKILL ``kernbench run`` at a random moment, rerun in-process, check the store.

    ``mode="commit"`` makes each commit sleep inside its transaction so the kill lands mid-commit;
    ``mode="random"`` kills at a random delay after a random number of committed cells (0 = also
    during start-up).
    """
    from kernbench.runner.options import RunOptions
    from kernbench.runner.run import run_experiment
    from kernbench.specs.load import load_spec

    env = child_env()
    delay_max = 0.15  # a cell takes ~0.1 s: kill around the next few cells
    if mode == "commit":
        env["KERNBENCH_FAULT_COMMIT_DELAY"] = "0.3"
        delay_max = 0.3
    k = int(rng.integers(0, N_CELLS))
    delay = float(rng.uniform(0.0, delay_max))
    proc = start_run(spec_path, out_dir, "--jobs", str(jobs), env=env)
    reached = wait_rows(proc, out_dir, k)
    if reached:
        time.sleep(delay)
    exit_before = proc.poll()
    rows_at_kill = count_rows(out_dir)
    with contextlib.suppress(ProcessLookupError):
        os.kill(proc.pid, signal.SIGKILL)  # the driver only, as a real kill would
    proc.wait()
    time.sleep(0.05)
    kill_group(proc)  # then sweep up any worker it left behind
    summary = run_experiment(load_spec(spec_path), RunOptions(out_dir=out_dir, jobs=1))
    assert summary.ok, summary.failed
    return KillTrial(
        trial, mode, jobs, k, delay, exit_before, rows_at_kill, check_store(out_dir, reference)
    )


def count_history(out_dir: Path) -> int:
    """Rows archived in the store's ``history`` (0 before the table exists)."""
    path = Path(out_dir) / "results.sqlite"
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
        try:
            return int(con.execute("SELECT COUNT(*) FROM history").fetchone()[0])
        finally:
            con.close()
    except sqlite3.Error:
        return 0


def wait_history(proc: subprocess.Popen, out_dir: Path, n: int, limit_s: float = 300.0) -> bool:
    """Wait until ``n`` rows were archived (a ``--fresh`` run replaced ``n`` cells)."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if count_history(out_dir) >= n:
            return True
        if proc.poll() is not None:
            return False
        time.sleep(0.02)
    raise TimeoutError(f"no {n} archived rows in {out_dir} after {limit_s} s")


@dataclass
class SchedulerKill:
    """A Dask run whose scheduler was SIGKILLed mid-run, and the store after a local rerun."""

    exit_code: int | None
    stderr: str
    rows_at_kill: int
    seconds: float
    check: StoreCheck


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_listening(port: int, limit_s: float) -> None:
    """Wait until something accepts connections on 127.0.0.1:``port``."""
    import socket

    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1.0).close()
            return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"nothing listens on port {port} after {limit_s:g} s")


def scheduler_kill_trial(
    spec_path: Path, root: Path, reference: dict[str, tuple], limit_s: float = 180.0
) -> SchedulerKill:
    """Run on a scheduler + 1 worker (separate processes), SIGKILL the scheduler after the
    first committed cell, wait for ``kernbench run`` to give up, then rerun locally."""
    from kernbench.runner.options import RunOptions
    from kernbench.runner.run import run_experiment
    from kernbench.specs.load import load_spec

    root = Path(root)
    out = root / "sched"
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = child_env(KERNBENCH_FAULT_CELL_DELAY="1.0")  # cells in flight when the kill lands
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": env}
    sched = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1"]
        + ["--port", str(port), "--no-dashboard"],
        start_new_session=True,
        **quiet,
    )
    worker = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_worker", address]
        + ["--nworkers", "2", "--nthreads", "1", "--no-dashboard"],  # 1 thread: joblib inline
        start_new_session=True,
        **quiet,
    )
    _wait_listening(port, limit_s)  # a loaded machine imports the scheduler slowly
    t0 = time.monotonic()
    try:
        proc = start_run(spec_path, out, "--backend", "dask", "--scheduler", address)
        wait_rows(proc, out, 1, limit_s)
        rows = count_rows(out)
        os.kill(sched.pid, signal.SIGKILL)
        try:
            _, err = proc.communicate(timeout=limit_s)
        except subprocess.TimeoutExpired:
            kill_group(proc)
            raise
    finally:
        for p in (sched, worker):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    seconds = time.monotonic() - t0
    summary = run_experiment(load_spec(spec_path), RunOptions(out_dir=out, jobs=1))
    assert summary.ok, summary.failed
    return SchedulerKill(
        proc.returncode, err.decode(errors="replace"), rows, seconds, check_store(out, reference)
    )


@dataclass
class WalDeleteTrial:
    """A run whose ``-wal`` was deleted mid-run before the driver was killed, then restored."""

    lost: int
    run_exit: int
    run_output: str
    restore_exit: int
    restored: int
    check: StoreCheck


def done_count(out_dir: Path) -> int:
    return sum(1 for row in cell_table(out_dir).values() if row[1] == "done")


def wal_delete_trial(spec_path: Path, out: Path, reference: dict[str, tuple]) -> WalDeleteTrial:
    """Delete ``results.sqlite-wal`` under a running ``kernbench run`` (backups every 2 cells),
    SIGKILL it, then: ``run`` (must refuse), ``kernbench restore``, ``run`` (must complete)."""
    from typer.testing import CliRunner

    from kernbench.cli import app

    env = child_env(KERNBENCH_FAULT_COMMIT_DELAY="0.2", KERNBENCH_BACKUP_EVERY="2")
    proc = start_run(spec_path, out, "--jobs", "1", env=env)
    if not wait_rows(proc, out, 4):
        raise RuntimeError(proc.communicate())
    (out / "results.sqlite-wal").unlink()  # what a user must never do
    time.sleep(1.0)  # a few more commits (and backups) into the unlinked WAL
    with contextlib.suppress(ProcessLookupError):
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    kill_group(proc)
    lost = N_CELLS - done_count(out)
    cli = CliRunner()
    refused = cli.invoke(app, ["run", str(spec_path), "--out", str(out), "--jobs", "1"])
    restored = cli.invoke(app, ["restore", str(out)])
    n_restored = done_count(out)
    rerun = cli.invoke(app, ["run", str(spec_path), "--out", str(out), "--jobs", "1"])
    assert rerun.exit_code == 0, rerun.output
    return WalDeleteTrial(
        lost,
        refused.exit_code,
        refused.output,
        restored.exit_code,
        n_restored,
        check_store(out, reference),
    )


@dataclass
class FreshTrial:
    """``run --fresh`` on a finished store, stopped by a signal; the store must keep every
    finished cell with the numbers of the uninterrupted run (no rerun needed)."""

    signal: str
    archived_at_signal: int
    returncode: int | None
    stderr: str
    check: StoreCheck


def fresh_interrupt_trial(
    spec_path: Path,
    reference_dir: Path,
    out: Path,
    reference: dict[str, tuple],
    rng: Any,
    sig: int = signal.SIGTERM,
    jobs: int = 1,
) -> FreshTrial:
    import shutil

    shutil.copytree(reference_dir, out)
    env = child_env(KERNBENCH_FAULT_COMMIT_DELAY="0.3")
    proc = start_run(spec_path, out, "--fresh", "--jobs", str(jobs), env=env)
    if wait_history(proc, out, int(rng.integers(0, N_CELLS // 2))):
        time.sleep(float(rng.uniform(0.0, 0.3)))
    archived = count_history(out)
    with contextlib.suppress(ProcessLookupError):
        os.kill(proc.pid, sig)  # the driver, as Ctrl-C / kill / the OOM killer would
    try:
        proc.wait(timeout=120)  # not communicate: workers of a killed driver keep the pipes
    finally:
        time.sleep(0.05)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)  # sweep up any worker it left behind
        _, err = proc.communicate()
    return FreshTrial(
        signal.Signals(sig).name,
        archived,
        proc.returncode,
        err.decode(errors="replace") if err else "",
        check_store(out, reference),
    )


# -- signals inside compiled code, killed workers (issue 35) ---------------------------------
#: AdaBoost-Perc cells: nearly all their time is spent in numba's compiled RCD loop
PERC_SPEC: dict[str, Any] = {
    "name": "perc",
    "datasets": ["breast_cancer"],
    "protocol": {
        "realisations": "random",
        "train_size": 300,
        "test_size": 200,
        "n_realisations": 6,
        "cv_folds": 2,
        "seed": 5,
    },
    "methods": {
        "perc": {
            "estimator": "adaboost",
            "params": {"weak_learner": "perceptron", "n_estimators": 40, "max_run": 3000},
        }
    },
}


def write_perc_spec(directory: Path) -> Path:
    path = Path(directory) / "perc.yaml"
    path.write_text(yaml.safe_dump(PERC_SPEC, sort_keys=False), encoding="utf-8")
    return path


def loky_workers(proc: subprocess.Popen) -> list[int]:
    """Pids of the loky worker processes of a running ``kernbench run``."""
    import psutil

    pids = []
    with contextlib.suppress(psutil.Error):
        for child in psutil.Process(proc.pid).children(recursive=True):
            with contextlib.suppress(psutil.Error):
                if "popen_loky" in " ".join(child.cmdline()):
                    pids.append(child.pid)
    return pids


@dataclass
class SignalTrial:
    signal: str
    target: str
    returncode: int | None
    stop_s: float
    statuses: dict[str, int]
    stderr: str


def sigterm_trial(
    spec_path: Path, out: Path, rng: Any, jobs: int = 1, group: bool = False
) -> SignalTrial:
    """SIGTERM ``kernbench run`` (the driver, or its whole process group as SLURM does) while
    compiled loops run; return the exit status, the seconds from the signal to the exit and the
    statuses recorded."""
    proc = start_run(spec_path, out, "--jobs", str(jobs))
    deadline = time.monotonic() + 120  # the run has started once its store has the plan
    while count_plan(out) == 0 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    wait_rows(proc, out, int(rng.integers(0, 3)))
    time.sleep(float(rng.uniform(0.3, 1.5)))  # well inside a cell: its compiled loops run
    t0 = time.monotonic()
    with contextlib.suppress(ProcessLookupError):
        if group:
            os.killpg(proc.pid, signal.SIGTERM)
        else:
            os.kill(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=300)
    finally:
        stop_s = time.monotonic() - t0
        time.sleep(0.05)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        _, err = proc.communicate()
    statuses: dict[str, int] = {}
    for _, status, *_ in cell_table(out).values() if (out / "results.sqlite").exists() else []:
        statuses[status] = statuses.get(status, 0) + 1
    return SignalTrial(
        "SIGTERM",
        "group" if group else "driver",
        proc.returncode,
        stop_s,
        statuses,
        err.decode(errors="replace") if err else "",
    )


@dataclass
class WorkerKillTrial:
    returncode: int | None
    killed: int
    statuses: dict[str, int]
    errors: list[str]
    check: StoreCheck
    stderr: str


def worker_kill_trial(
    spec_path: Path, out: Path, reference: dict[str, tuple], rng: Any
) -> WorkerKillTrial:
    """SIGKILL one loky worker of ``kernbench run --jobs 2`` while it computes a cell (as the
    OOM killer would); the run must finish, the cell recorded as failed, the others done."""
    env = child_env(KERNBENCH_FAULT_CELL_DELAY="1.5")  # every cell is in flight for 1.5 s at least
    proc = start_run(spec_path, out, "--jobs", "2", env=env)
    wait_rows(proc, out, int(rng.integers(1, 4)))  # from then on both workers compute cells
    deadline = time.monotonic() + 120
    while not loky_workers(proc) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(float(rng.uniform(0.3, 1.0)))
    workers = loky_workers(proc)
    killed = 0
    if workers:
        with contextlib.suppress(ProcessLookupError):
            os.kill(workers[int(rng.integers(0, len(workers)))], signal.SIGKILL)
            killed = 1
    try:
        proc.wait(timeout=300)
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        _, err = proc.communicate()
    table = cell_table(out)
    statuses: dict[str, int] = {}
    for _, status, *_ in table.values():
        statuses[status] = statuses.get(status, 0) + 1
    with sqlite3.connect(out / "results.sqlite") as con:
        errors = [r[0] for r in con.execute("SELECT error FROM cells WHERE status != 'done'")]
    return WorkerKillTrial(
        proc.returncode,
        killed,
        statuses,
        errors,
        check_store(out, reference),
        err.decode(errors="replace") if err else "",
    )


# -- plug-ins that try to hurt the run, and stops sent to the main process alone ---------------

#: a plug-in file whose method does one hostile thing in ``fit`` (its ``act`` parameter) and
#: predicts from the global ``numpy.random`` (so a cell's numbers show the generator's state)
HOSTILE_PLUGIN = """
import os
import signal
import sys

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from kernbench.methods import register


@register("hostile")
class Hostile(ClassifierMixin, BaseEstimator):
    def __init__(self, act="none"):
        self.act = act

    def fit(self, X, y):
        act = self.act
        if act == "exit":
            sys.exit(0)
        if act == "os_exit":
            os._exit(0)
        if act == "interrupt":
            raise KeyboardInterrupt
        if act == "chdir":
            os.chdir(os.environ["HOSTILE_DIR"])
        if act == "env":
            os.environ["HOSTILE_MARK"] = "set by a cell"
            os.environ.pop("HOSTILE_KEEP", None)
        if act == "path":
            sys.path.insert(0, "/nonexistent-hostile")
        if act == "signal":
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        self.classes_ = np.unique(y)
        self.draw_ = np.random.rand()
        return self

    def predict(self, X):
        # from the global generator: the cell's test error depends on its state
        rng = np.random.rand(len(X)) < 0.5
        return np.where(rng, self.classes_[0], self.classes_[-1])
"""

#: hostile acts whose cell must fail while the run goes on
EXIT_ACTS = ("exit", "os_exit", "interrupt")
#: hostile acts that change the process's state and must not reach other cells or the run (a
#: signal handler, "signal", can be set only in a main thread: not on Dask, whose cells run in
#: worker threads; tests/runner/cell/test_state.py checks it)
STATE_ACTS = ("chdir", "env", "path", "none")


def write_plugin_spec(
    directory: Path, acts: tuple[str, ...], *, realisations: int = 1, name: str = "hostile"
) -> Path:
    """A spec beside :data:`HOSTILE_PLUGIN` with one method per act (labelled by the act) and
    an honest AdaBoost, on embedded data."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "hostile.py").write_text(HOSTILE_PLUGIN, encoding="utf-8")
    methods: dict[str, Any] = {
        act: {"estimator": "hostile", "params": {"act": act}} for act in acts
    }
    methods["ada"] = {"estimator": "adaboost", "params": {"n_estimators": 3}}
    spec = {
        "name": name,
        "plugins": ["hostile.py"],
        "datasets": ["breast_cancer"],
        "protocol": {**STORE_FAULT_SPEC["protocol"], "n_realisations": realisations},
        "methods": methods,
    }
    path = directory / f"{name}.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return path


def run_cli(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None, limit_s: float = 600
) -> subprocess.CompletedProcess:
    """``kernbench ARGS`` as a subprocess (its own session), with a bound on a hang."""
    return subprocess.run(
        kernbench_argv(*args),
        cwd=cwd,
        env=env if env is not None else child_env(),
        capture_output=True,
        text=True,
        timeout=limit_s,
        start_new_session=True,
    )


def statuses_by_method(out_dir: Path) -> dict[str, list[str]]:
    """``method label -> [status, ...]`` of a store (read-only)."""
    found: dict[str, list[str]] = {}
    for (_, _, method), status, *_ in cell_table(out_dir).values():
        found.setdefault(method, []).append(status)
    return found


def errors_by_method(out_dir: Path) -> dict[str, list[str]]:
    with sqlite3.connect(f"file:{Path(out_dir) / 'results.sqlite'}?mode=ro", uri=True) as con:
        rows = con.execute("SELECT method, error FROM cells WHERE status != 'done'").fetchall()
    found: dict[str, list[str]] = {}
    for method, error in rows:
        found.setdefault(method, []).append(error or "")
    return found


def process_tree(pid: int) -> list[int]:
    """The pids of every process below ``pid``."""
    import psutil

    with contextlib.suppress(psutil.Error):
        return [p.pid for p in psutil.Process(pid).children(recursive=True)]
    return []


def alive(pids: list[int]) -> list[int]:
    """Those of ``pids`` still running (a zombie waiting for its reaper counts as ended)."""
    import psutil

    out = []
    for pid in pids:
        with contextlib.suppress(psutil.Error):
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                out.append(pid)
    return out


def wait_gone(pids: list[int], limit_s: float) -> tuple[list[int], float]:
    """Wait until none of ``pids`` runs (at most ``limit_s``); the ones left and the seconds."""
    t0 = time.monotonic()
    left = alive(pids)
    while left and time.monotonic() - t0 < limit_s:
        time.sleep(0.05)
        left = alive(left)
    return left, time.monotonic() - t0


@dataclass
class PidSignalTrial:
    """A stop signal sent to the main process alone, as ``docker stop`` and Kubernetes send it."""

    phase: str
    returncode: int | None
    stop_s: float
    children_left: list[int]
    statuses: dict[str, int]
    stderr: str


class _PipeReader:
    """Drain a process's standard output and error in threads of their own (kept: the error)."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self._err = bytearray()
        self._threads = [
            threading.Thread(target=self._drain, args=(proc.stdout, None), daemon=True),
            threading.Thread(target=self._drain, args=(proc.stderr, self._err), daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    @staticmethod
    def _drain(stream, keep: bytearray | None) -> None:
        if stream is None:
            return
        for chunk in iter(lambda: stream.read1(65536), b""):
            if keep is not None:
                keep += chunk

    def stderr(self, limit_s: float = 10.0) -> bytes:
        for thread in self._threads:
            thread.join(limit_s)  # ends at EOF: every holder of the pipe has ended
        return bytes(self._err)


def pid_signal_trial(
    spec_path: Path,
    out: Path,
    *extra: str,
    after_s: float,
    sig: int = signal.SIGTERM,
    rows: int = 0,
    env: dict[str, str] | None = None,
    limit_s: float = 120.0,
) -> PidSignalTrial:
    """Start ``kernbench run``, wait ``after_s`` seconds after ``rows`` rows are stored (0: after
    the start), send ``sig`` to its main process only, and wait (at most ``limit_s``) for it to
    end. Returns the exit status, the seconds from the signal to the end, and which of the
    processes it had started were still running 10 s after it ended."""
    proc = start_run(spec_path, out, *extra, env=env)
    phase = f"{after_s:.1f} s after the start"
    if rows:
        wait_rows(proc, out, rows)
        phase = f"{after_s:.1f} s after {rows} row(s)"
    time.sleep(after_s)
    if proc.poll() is not None:  # a fast machine: the trial would test no stop at all
        phase += " (the run had already ended: give its cells a delay)"
    started = process_tree(proc.pid)
    t0 = time.monotonic()
    with contextlib.suppress(ProcessLookupError):
        os.kill(proc.pid, sig)
    # the pipes are read while waiting: a run that writes more than a pipe holds (64 KiB) must
    # not block on its own standard error and pass for a hang
    reader = _PipeReader(proc)
    try:
        proc.wait(timeout=limit_s)
        stop_s = time.monotonic() - t0
    except subprocess.TimeoutExpired:
        stop_s = float("inf")
    started += [p for p in process_tree(proc.pid) if p not in started]
    left, _ = wait_gone(started, 10.0) if proc.poll() is not None else (alive(started), 0.0)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    for pid in left:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    proc.wait()
    err = reader.stderr()
    statuses: dict[str, int] = {}
    for _, status, *_ in cell_table(out).values():
        statuses[status] = statuses.get(status, 0) + 1
    return PidSignalTrial(
        phase,
        proc.returncode if stop_s != float("inf") else None,
        stop_s,
        left,
        statuses,
        err.decode(errors="replace") if err else "",
    )


@dataclass
class OrphanTrial:
    """SIGKILL of the main process: which processes it started outlive it, and for how long."""

    started: list[int]
    left: list[int]
    gone_s: float


def orphan_trial(
    spec_path: Path, out: Path, *extra: str, env: dict[str, str] | None = None, wait_for: int = 2
) -> OrphanTrial:
    """Start ``kernbench run``, wait until it has ``wait_for`` processes below it and a cell in
    flight, SIGKILL its main process, and wait (at most 30 s) for every process it started to
    end. The run's own session is killed afterwards, whatever is left."""
    env = env if env is not None else child_env(KERNBENCH_FAULT_CELL_DELAY="3")
    proc = start_run(spec_path, out, *extra, env=env)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if len(process_tree(proc.pid)) >= wait_for and count_plan(out):
            break
        time.sleep(0.1)
    time.sleep(1.0)  # the workers have taken cells
    started = process_tree(proc.pid)
    with contextlib.suppress(ProcessLookupError):
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    left, gone_s = wait_gone(started, 30.0)
    for pid in left:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()
    return OrphanTrial(started, left, gone_s)
