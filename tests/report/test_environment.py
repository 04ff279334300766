"""The environment line of a table and its warning when cells came from different versions."""

from typer.testing import CliRunner

from kernbench.cli import app
from kernbench.report.tables import build_table
from kernbench.runner.cell import versions
from kernbench.store.environment import Environments

HERE = {
    "kernbench": "0.1.0",
    "python": "3.11.7",
    "numpy": "2.4.6",
    "scipy": "1.17.1",
    "scikit-learn": "1.9.1",
    "machine": "x86_64",
    "cpu": "Some CPU",
    "blas": "openblas 0.3.31 SkylakeX",
}


def test_one_environment_is_named_and_not_warned_about():
    envs = Environments([HERE, dict(HERE)])
    assert not envs.mixed and envs.warning() is None
    line = envs.describe()
    assert line.startswith("Computed with kernbench 0.1.0, python 3.11.7, numpy 2.4.6")
    assert line.endswith("on x86_64, Some CPU, openblas 0.3.31 SkylakeX.")


def test_different_library_versions_are_warned_about_with_counts():
    older = {**HERE, "numpy": "2.3.0"}
    envs = Environments([HERE, HERE, older, None])
    assert envs.mixed and envs.unrecorded == 1
    warning = envs.warning()
    assert "2 environments" in warning and "numpy 2.4.6 in 2, 2.3.0 in 1" in warning
    assert "scipy" not in warning  # only what differs
    assert "numpy 2.4.6" in envs.describe()  # the most common one is named


def test_another_machine_alone_is_named_not_warned_about():
    other = {**HERE, "cpu": "Other CPU", "blas": "openblas 0.3.31 Haswell"}
    envs = Environments([HERE, other, other])
    assert envs.warning() is None
    assert "Other CPU, openblas 0.3.31 Haswell (2 cells); x86_64, Some CPU" in envs.describe()


def test_cells_record_the_machine_and_the_blas_kernel():
    recorded = versions()
    for key in ("numpy", "scipy", "scikit-learn", "numba", "highspy", "cvxpy", "machine"):
        assert recorded[key], key
    recorded["numpy"] = "changed"  # a copy: the cached record is not changed by its users
    assert versions()["numpy"] != "changed"


def test_table_notes_and_cli_warn_in_one_line(make_store, spec_dict, add_cell):
    directory, store = make_store("mixed", spec_dict("mixed", ["d"], ["M"], n_realisations=2))
    add_cell(store, "d", "M", 0, 0.1, result={"versions": HERE})
    add_cell(store, "d", "M", 1, 0.2, result={"versions": {**HERE, "scikit-learn": "1.8.0"}})
    store.close()
    notes = build_table(directory).notes
    assert any(
        n.startswith("Warning: the cells of this table come from 2 environments") for n in notes
    )
    assert any(n.startswith("Computed with kernbench 0.1.0") for n in notes)
    res = CliRunner().invoke(app, ["table", str(directory)])
    assert res.exit_code == 0, res.output
    warned = [line for line in res.stderr.splitlines() if line.startswith("warning:")]
    assert len(warned) == 1 and "scikit-learn 1.9.1 in 1, 1.8.0 in 1" in warned[0]
