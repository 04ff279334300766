"""Per-cell limits: a killable child per timed cell; timeouts and failures are recorded, the run
goes on and exits 1 with a summary, a rerun retries them."""

from __future__ import annotations

import dataclasses
import math
import os
import time

import numpy as np
import pytest
import reliability_harness as rh
import yaml
from typer.testing import CliRunner

from kernbench.cli import app
from kernbench.runner.execution.isolation import (
    CellTimeout,
    ChildDied,
    call_with_timeout,
    close_children,
)
from kernbench.store.lock import pid_alive

runner = CliRunner()


def test_child_returns_the_value_and_reraises_the_exception():
    assert call_with_timeout(math.sqrt, (6.25,), 30) == 2.5
    big = call_with_timeout(np.arange, (10**6,), 30)  # a large result travels intact
    np.testing.assert_array_equal(big, np.arange(10**6))
    with pytest.raises(ValueError, match="math domain error"):
        call_with_timeout(math.sqrt, (-1.0,), 30)
    # what the call prints goes to stderr, never into the result channel
    assert call_with_timeout(print, ("noise on stdout",), 30) is None


def test_timeout_kills_the_child_and_everything_it_started(tmp_path):
    pidfile = tmp_path / "grandchild.pid"
    t0 = time.monotonic()
    with pytest.raises(CellTimeout, match="time limit of 0.5 s"):
        call_with_timeout(os.system, (f"sleep 60 & echo $! > {pidfile}; wait",), 0.5)
    assert time.monotonic() - t0 < 30
    grandchild = int(pidfile.read_text())
    deadline = time.monotonic() + 10
    while pid_alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not pid_alive(grandchild)


def test_a_crashing_child_is_reported_not_hung():
    with pytest.raises(ChildDied, match="SIGABRT"):
        call_with_timeout(os.abort, (), 30)


def test_one_child_serves_the_calls_and_is_replaced_only_when_lost(tmp_path, monkeypatch):
    close_children()
    first = call_with_timeout(os.getpid, (), 30)
    assert first != os.getpid()
    assert call_with_timeout(os.getpid, (), 30) == first  # reused: no new interpreter
    with pytest.raises(ValueError):
        call_with_timeout(math.sqrt, (-1.0,), 30)
    assert call_with_timeout(os.getpid, (), 30) == first  # an exception keeps it
    with pytest.raises(CellTimeout):
        call_with_timeout(time.sleep, (5,), 0.3)
    assert _wait_dead(first)
    second = call_with_timeout(os.getpid, (), 30)  # killed at the limit: a new one
    assert second != first
    os.kill(second, 9)  # lost while idle: the next call starts a new child, transparently
    _wait_dead(second)
    third = call_with_timeout(os.getpid, (), 30)
    assert third not in (first, second)
    with pytest.raises(ChildDied, match="SIGABRT"):
        call_with_timeout(os.abort, (), 30)
    fourth = call_with_timeout(os.getpid, (), 30)
    assert fourth != third
    # a child started under another environment or directory is not reused
    monkeypatch.setenv("KERNBENCH_TEST_MARK", "1")
    assert call_with_timeout(os.getenv, ("KERNBENCH_TEST_MARK",), 30) == "1"
    fifth = call_with_timeout(os.getpid, (), 30)
    assert fifth != fourth and _wait_dead(fourth)
    monkeypatch.chdir(tmp_path)
    assert call_with_timeout(os.getcwd, (), 30) == str(tmp_path)
    sixth = call_with_timeout(os.getpid, (), 30)
    assert sixth != fifth
    close_children()  # a run is over: the child ends
    assert _wait_dead(sixth)


def _wait_dead(pid: int, limit_s: float = 10.0) -> bool:
    deadline = time.monotonic() + limit_s
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not pid_alive(pid)


def _spec(tmp_path, **protocol):
    spec = {
        **rh.SPEC,
        "protocol": {**rh.SPEC["protocol"], "n_realisations": 1, **protocol},
        "methods": {
            "fast": {"estimator": "svm_stump", "grid": {"C": [0.1, 10.0]}},
            "slow": {"estimator": "adaboost", "params": {"n_estimators": 3000}},
        },
    }
    spec["protocol"]["train_size"] = 400
    spec["protocol"]["test_size"] = 100
    path = tmp_path / "limits.yaml"
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    return path


def test_slow_cell_times_out_run_continues_exits_1_and_rerun_retries(tmp_path):
    spec = _spec(tmp_path, timeout_s=0.3)  # the spec's limit, used when --timeout is not given
    out = tmp_path / "res"
    args = ["run", str(spec), "--out", str(out), "--jobs", "1"]
    res = runner.invoke(app, [*args, "--only", "method=slow"])
    assert res.exit_code == 1, res.output
    text = " ".join(res.output.split())
    assert "1 timeout" in text and "slow: CellTimeout: exceeded the time limit of 0.3 s" in text
    assert "rerun the same command" in text
    # a rerun retries the timed-out cell (--timeout overrides the spec; still too short)
    res = runner.invoke(app, [*args, "--timeout", "0.2", "--only", "method=slow"])
    assert res.exit_code == 1 and "limit of 0.2 s" in " ".join(res.output.split())
    # the fast cell through the same child-process path: done, same numbers as in-process
    res = runner.invoke(app, [*args, "--timeout", "300", "--only", "method=fast"])
    assert res.exit_code == 0, res.output
    inline = tmp_path / "inline"
    from kernbench.runner.options import RunOptions
    from kernbench.runner.run import run_experiment
    from kernbench.specs.load import load_spec

    s = load_spec(spec)
    untimed = dataclasses.replace(s, protocol=dataclasses.replace(s.protocol, timeout_s=None))
    summary = run_experiment(untimed, RunOptions(out_dir=inline, jobs=1, only={"method": ["fast"]}))
    assert summary.ok and summary.counts == {"done": 1}
    timed, plain = rh.cell_table(out), rh.cell_table(inline)
    statuses = {row[0][2]: row[1] for row in timed.values()}
    assert statuses == {"slow": "timeout", "fast": "done"}
    (fast_id,) = plain
    assert timed[fast_id] == plain[fast_id]
    frame = __import__("pandas").read_csv(out / "cells.csv").set_index("method")
    assert frame.loc["slow", "attempts"] == 2 and frame.loc["fast", "attempts"] == 1


def test_numerical_failure_is_recorded_with_the_solver_reason_and_retried(
    reference_run, tmp_path, monkeypatch
):
    spec, _, reference = reference_run
    out = tmp_path / "res"
    import kernbench.runner.cell.select as select

    real = select.select_fit_score

    def flaky(est, *args, **kwargs):
        if type(est).__name__ == "AdaBoost":
            raise np.linalg.LinAlgError("Singular matrix in the restricted master")
        return real(est, *args, **kwargs)

    monkeypatch.setattr(select, "select_fit_score", flaky)
    res = runner.invoke(app, ["run", str(spec), "--out", str(out), "--jobs", "1"])
    assert res.exit_code == 1, res.output
    text = " ".join(res.output.split())
    n_ada = rh.N_CELLS // 2
    assert f"{n_ada} cell(s) did not finish" in text
    assert "LinAlgError: Singular matrix in the restricted master" in text
    table = rh.cell_table(out)
    assert sorted(row[1] for row in table.values()) == ["done"] * n_ada + ["failed"] * n_ada

    monkeypatch.setattr(select, "select_fit_score", real)
    res = runner.invoke(app, ["run", str(spec), "--out", str(out), "--jobs", "1"])
    assert res.exit_code == 0, res.output
    assert f"{n_ada} done" in " ".join(res.output.split())
    check = rh.check_store(out, reference)
    assert check.ok and check.statuses == {"done": rh.N_CELLS}
