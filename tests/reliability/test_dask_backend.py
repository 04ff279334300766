"""Dask backend on a loopback LocalCluster (2 workers): same numbers as the local backend; a worker
SIGKILLed mid-run loses no cell; a missing extra or bad address is a clear exit 2."""

from __future__ import annotations

import importlib.util
import os
import signal

import pytest
import reliability_harness as rh
from typer.testing import CliRunner

from kernbench.cli import app
from kernbench.runner.execution.dask_client import DASK_MISSING

runner = CliRunner()


def test_dask_gives_the_same_numbers_as_local(cluster, reference_run, tmp_path):
    spec, _, reference = reference_run
    res = runner.invoke(
        app,
        ["run", str(spec), "--out", str(tmp_path / "d"), "--backend", "dask"]
        + ["--scheduler", cluster.scheduler_address],
    )
    assert res.exit_code == 0, res.output
    assert rh.cell_table(tmp_path / "d") == reference


def test_worker_killed_mid_run_loses_nothing(cluster, reference_run, tmp_path):
    from dask.distributed import Client

    from kernbench.runner.options import RunHooks, RunOptions
    from kernbench.runner.run import run_experiment
    from kernbench.specs.load import load_spec

    spec, _, reference = reference_run
    killed: dict[str, object] = {}
    with Client(cluster.scheduler_address) as client:
        client.wait_for_workers(2, timeout=120)
        pids = client.run(os.getpid)

        def kill_busiest_worker(rec) -> None:
            if killed:
                return
            busy = client.processing()
            addr = max(pids, key=lambda a: len(busy.get(a, ())))
            killed.update(addr=addr, in_flight=len(busy.get(addr, ())))
            os.kill(pids[addr], signal.SIGKILL)

        summary = run_experiment(
            load_spec(spec),
            RunOptions(out_dir=tmp_path / "k", backend="dask", scheduler=cluster.scheduler_address),
            hooks=RunHooks(on_cell=kill_busiest_worker),
        )
        client.wait_for_workers(2, timeout=120)  # the nanny restarted it: leave the cluster whole
    assert killed, "no worker was killed"
    assert summary.ok and summary.counts == {"done": rh.N_CELLS}
    check = rh.check_store(tmp_path / "k", reference)
    assert check.ok and check.statuses == {"done": rh.N_CELLS}, check


def test_missing_dask_extra_is_exit_2_naming_the_install_command(
    reference_run, tmp_path, monkeypatch
):
    spec, _, _ = reference_run
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "distributed" else real(name, *a),
    )
    out = tmp_path / "none"
    res = runner.invoke(app, ["run", str(spec), "--out", str(out), "--backend", "dask"])
    assert res.exit_code == 2
    assert DASK_MISSING in " ".join(res.output.split()) and "Traceback" not in res.output
    assert not out.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--backend", "dask", "--scheduler", "localhost"], "tcp://127.0.0.1:8786"),
        (["--backend", "spark"], "'spark' is not one of"),
        (["--scheduler", "tcp://127.0.0.1:8786"], "--scheduler needs --backend dask"),
    ],
)
def test_bad_backend_options_are_exit_2(args, message, reference_run, tmp_path):
    spec, _, _ = reference_run
    out = tmp_path / "none"
    res = runner.invoke(app, ["run", str(spec), "--out", str(out), *args])
    assert res.exit_code == 2 and message in " ".join(res.output.split()), res.output
    assert not out.exists()


def test_workers_of_another_kernbench_version_are_refused_before_any_work(
    cluster, reference_run, tmp_path, monkeypatch
):
    import kernbench

    spec, _, _ = reference_run
    monkeypatch.setattr(kernbench, "__version__", "99.0.0")  # the driver differs from the workers
    out = tmp_path / "v"
    res = runner.invoke(
        app,
        ["run", str(spec), "--out", str(out), "--backend", "dask"]
        + ["--scheduler", cluster.scheduler_address],
    )
    assert res.exit_code == 2, res.output
    text = " ".join(res.output.split())
    assert "Traceback" not in res.output and "Dask worker tcp://127.0.0.1:" in text, text
    assert "99.0.0" in text and "install the same kernbench on every worker" in text
    assert not (out / "results.sqlite").exists()  # refused before anything was written


@pytest.mark.slow
def test_scheduler_killed_mid_run_is_exit_2_and_keeps_finished_cells(reference_run, tmp_path):
    pytest.importorskip("distributed")
    spec, _, reference = reference_run
    trial = rh.scheduler_kill_trial(spec, tmp_path, reference)
    assert trial.exit_code == 2, trial.stderr
    assert "Traceback" not in trial.stderr and "lost the Dask scheduler" in trial.stderr
    assert trial.check.ok, trial.check  # after restarting and rerunning: every cell, once


def test_workers_that_cannot_import_a_plugin_module_are_refused_before_any_work(
    cluster, tmp_path, monkeypatch
):
    import sys
    import types

    import yaml
    from sklearn.neighbors import NearestCentroid

    # a module only this driver process has: the workers cannot import it
    module = types.ModuleType("driver_only_plugin")
    module.Centroid = type("Centroid", (NearestCentroid,), {"__module__": "driver_only_plugin"})
    monkeypatch.setitem(sys.modules, "driver_only_plugin", module)
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        yaml.safe_dump(
            {
                "name": "plugin-on-dask",
                "protocol": {"n_realisations": 1, "train_size": 0.5, "cv_folds": 2},
                "datasets": ["twonorm"],
                "methods": {"C": {"estimator": "driver_only_plugin:Centroid"}},
            }
        )
    )
    out = tmp_path / "p"
    res = runner.invoke(
        app,
        ["run", str(spec), "--out", str(out), "--backend", "dask"]
        + ["--scheduler", cluster.scheduler_address],
    )
    assert res.exit_code == 2, res.output
    text = " ".join(res.output.split())
    assert "Traceback" not in res.output and "cannot import the plug-in module" in text, text
    assert "'driver_only_plugin'" in text and "install it on every worker" in text
