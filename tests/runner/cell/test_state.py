"""What a cell's method changes in its process is put back, and its global generators start from
the cell's seed: a plug-in reaches neither the next cell nor the run (see issue 46)."""

from __future__ import annotations

# ruff: noqa: NPY002 - the legacy global generator is what these tests are about
import os
import random
import signal
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "reliability"))

import reliability_harness as rh  # noqa: E402

from kernbench.runner.cell.compute import run_cell  # noqa: E402
from kernbench.runner.plan.cells import plan_cells  # noqa: E402
from kernbench.specs.load import load_spec  # noqa: E402


def hostile_cell(folder: Path, act: str):
    spec = load_spec(rh.write_plugin_spec(folder, (act,)))
    return next(c for c in plan_cells(spec) if c.method.label == act)


@pytest.mark.parametrize(
    ("act", "words"),
    [("exit", "the method called sys.exit(0)"), ("interrupt", "without a stop signal")],
)
def test_a_method_that_exits_or_interrupts_fails_its_cell(tmp_path, act, words):
    rec = run_cell(hostile_cell(tmp_path, act))  # returns: neither reaches the caller
    assert rec.status == "failed"
    assert words in rec.error


def test_what_a_method_changes_in_its_process_is_put_back(tmp_path, monkeypatch):
    monkeypatch.setenv("HOSTILE_DIR", str(tmp_path))
    monkeypatch.setenv("HOSTILE_KEEP", "kept")
    monkeypatch.chdir(Path(__file__).parent)
    handler = signal.getsignal(signal.SIGTERM)
    path = list(sys.path)
    for act in ("chdir", "env", "path", "signal"):
        rec = run_cell(hostile_cell(tmp_path / act, act))
        assert rec.status == "done", rec.error
    assert os.getcwd() == str(Path(__file__).parent)
    assert "HOSTILE_MARK" not in os.environ
    assert os.environ["HOSTILE_KEEP"] == "kept"
    assert sys.path == path
    assert signal.getsignal(signal.SIGTERM) is handler


def test_a_cell_draws_the_same_from_the_global_generators_whatever_ran_before(tmp_path):
    cell = hostile_cell(tmp_path, "none")
    np.random.seed(1)
    first = run_cell(cell)
    np.random.rand(17)  # another cell, or the process's own use, moved the generator on
    random.random()
    second = run_cell(cell)
    assert first.status == second.status == "done"
    assert first.test_error == second.test_error


def test_the_callers_generators_and_directory_are_left_as_they_were(tmp_path):
    from kernbench.runner.cell.state import cell_state

    np.random.seed(5)
    random.seed(5)
    expected = (np.random.rand(), random.random())
    np.random.seed(5)
    random.seed(5)
    cwd = os.getcwd()
    with cell_state(123):
        np.random.rand(100)
        random.random()
        os.chdir(tmp_path)
        os.environ["KERNBENCH_CELL_STATE_TEST"] = "1"
    assert (np.random.rand(), random.random()) == expected
    assert os.getcwd() == cwd
    assert "KERNBENCH_CELL_STATE_TEST" not in os.environ


def test_a_directory_removed_under_the_cell_does_not_break_the_way_back(tmp_path):
    from kernbench.runner.cell.state import cell_state

    cwd = os.getcwd()
    gone = tmp_path / "gone"
    gone.mkdir()
    with cell_state(0):
        os.chdir(gone)
        gone.rmdir()
    assert os.getcwd() == cwd
