"""A plug-in cannot hurt the run: a method that exits, interrupts, moves the working directory,
changes the environment or draws from the global generators fails or changes its own cell only.
The run goes on, writes where it was told, and exits 0 only when every planned cell is done."""

from __future__ import annotations

import pytest
import reliability_harness as rh

#: (flags, what they exercise): in the driver (a plug-in cell runs in a child there), on loky's
#: workers, and in a timed cell's child
JOBS = {
    "jobs1": ("--jobs", "1"),
    "jobs2": ("--jobs", "2"),
    "timeout": ("--jobs", "1", "--timeout", "120"),
}


@pytest.mark.parametrize(
    "mode",
    [
        "jobs1",  # the root cause in every process: tests/runner/cell/test_state.py
        pytest.param("jobs2", marks=pytest.mark.slow),
        pytest.param("timeout", marks=pytest.mark.slow),
    ],
)
def test_a_method_that_exits_or_interrupts_fails_its_cell_and_the_run_goes_on(tmp_path, mode):
    spec = rh.write_plugin_spec(tmp_path, rh.EXIT_ACTS)
    out = tmp_path / "out"
    done = rh.run_cli("run", str(spec), "--out", str(out), *JOBS[mode])
    assert done.returncode == 1, done.stderr  # not 0: three planned cells did not finish
    assert "3 cell(s) did not finish" in done.stderr
    assert (out / "cells.csv").is_file()
    statuses = rh.statuses_by_method(out)
    assert statuses == {"exit": ["failed"], "os_exit": ["failed"], "interrupt": ["failed"],
                        "ada": ["done"]}  # fmt: skip
    errors = rh.errors_by_method(out)
    assert "sys.exit(0)" in errors["exit"][0]
    assert "KeyboardInterrupt" in errors["interrupt"][0]
    assert "without a stop signal" in errors["interrupt"][0]
    again = rh.run_cli("run", str(spec), "--out", str(out), *JOBS[mode])  # a rerun: the same
    assert again.returncode == 1, again.stderr
    assert rh.statuses_by_method(out) == statuses


def test_a_method_that_moves_the_working_directory_cannot_move_the_run(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "results" / "other").mkdir(parents=True)
    (elsewhere / "results" / "other" / "cells.csv").write_text("precious\n")
    spec = rh.write_plugin_spec(tmp_path / "spec", ("chdir",), realisations=2)
    env = rh.child_env(HOSTILE_DIR=str(elsewhere))
    done = rh.run_cli("run", str(spec), "--out", "results/other", "--jobs", "1", cwd=tmp_path,
                      env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (elsewhere / "results" / "other" / "cells.csv").read_text() == "precious\n"
    assert sorted(p.name for p in (elsewhere / "results" / "other").iterdir()) == ["cells.csv"]
    assert (tmp_path / "results" / "other" / "cells.csv").is_file()
    assert rh.statuses_by_method(tmp_path / "results" / "other") == {
        "chdir": ["done", "done"], "ada": ["done", "done"]
    }  # fmt: skip


@pytest.mark.slow  # fast: tests/runner/cell/test_state.py (one process, cells in any order)
def test_a_cell_drawing_from_the_global_generator_gets_the_same_numbers_everywhere(tmp_path):
    spec = rh.write_plugin_spec(tmp_path, ("none", "env"), realisations=2)
    tables = {}
    for mode in JOBS:
        done = rh.run_cli("run", str(spec), "--out", str(tmp_path / mode), *JOBS[mode])
        assert done.returncode == 0, done.stderr
        tables[mode] = {cid: row[2] for cid, row in rh.cell_table(tmp_path / mode).items()}
    assert tables["jobs1"] == tables["jobs2"] == tables["timeout"]
