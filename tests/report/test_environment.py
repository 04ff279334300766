"""The environment line of a table and its warning when cells came from different environments."""

import os
import subprocess
import sys

from typer.testing import CliRunner

from kernbench.cli import app
from kernbench.report.tables import build_table
from kernbench.runner.cell.compute import numeric_environment, versions
from kernbench.store.environment import Environments

HERE = {
    "kernbench": "0.1.0",
    "python": "3.11.7",
    "numpy": "2.4.6",
    "scipy": "1.17.1",
    "scikit-learn": "1.9.1",
    "machine": "x86_64",
    "cpu": "Some CPU",
    "blas": "openblas 0.3.31 (SkylakeX)",
    "simd": "X86_V2 X86_V3 X86_V4",
    "numba_cpu": "skylake-avx512",
}


def test_one_environment_is_named_and_not_warned_about():
    envs = Environments([HERE, dict(HERE)])
    assert not envs.mixed and envs.warning() is None
    line = envs.describe()
    assert line.startswith("Computed with kernbench 0.1.0, python 3.11.7, numpy 2.4.6")
    assert line.endswith(
        "on x86_64, Some CPU, openblas 0.3.31 (SkylakeX), numba for skylake-avx512."
    )


def test_different_library_versions_are_warned_about_with_counts():
    older = {**HERE, "numpy": "2.3.0"}
    envs = Environments([HERE, HERE, older, None])
    assert envs.mixed and envs.unrecorded == 1
    warning = envs.warning()
    assert "2 environments" in warning and "numpy 2.4.6 in 2, 2.3.0 in 1" in warning
    assert "scipy" not in warning  # only what differs
    assert "numpy 2.4.6" in envs.describe()  # the most common one is named


def test_other_numerics_are_warned_about_another_cpu_model_alone_is_not():
    # the same versions under OpenBLAS's Haswell kernels fit other CGENS and AdaTree models
    haswell = {**HERE, "blas": "openblas 0.3.31 (Haswell)"}
    warning = Environments([HERE, HERE, haswell]).warning()
    assert "blas openblas 0.3.31 (SkylakeX) in 2, openblas 0.3.31 (Haswell) in 1" in warning
    renamed = {**HERE, "cpu": "Another name for the same kind"}
    envs = Environments([HERE, renamed, renamed])
    assert envs.warning() is None
    assert "Another name for the same kind, openblas 0.3.31 (SkylakeX)" in envs.describe()
    assert "(2 cells); x86_64, Some CPU" in envs.describe()


def test_cells_record_versions_and_the_numeric_environment():
    recorded = versions()
    for key in ("numpy", "scipy", "scikit-learn", "numba", "highspy", "cvxpy", "machine"):
        assert recorded[key], key
    for key in ("blas", "simd", "numba_cpu"):
        assert recorded[key] not in ("", "unknown"), key
    assert "openblas" in recorded["blas"].lower() or "mkl" in recorded["blas"].lower()
    recorded["numpy"] = "changed"  # a copy: the cached record is not changed by its users
    assert versions()["numpy"] != "changed"


def test_the_numeric_environment_follows_the_blas_kernel_and_the_numba_target():
    probe = (
        "from kernbench.runner.cell.compute import numeric_environment as e; "
        "print(e()['blas']); print(e()['numba_cpu'])"
    )
    env = {**os.environ, "OPENBLAS_CORETYPE": "Haswell", "NUMBA_CPU_NAME": "generic"}
    out = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert "Haswell" in out[0] and out[1] == "generic"
    assert out != [numeric_environment()["blas"], numeric_environment()["numba_cpu"]]


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
