"""The newcomer's path through the README: set-up, the Quickstart commands exactly as written,
then a spec of one's own naming a LIBSVM file written by scikit-learn and a CSV file.

The end-to-end test cannot run `make quickstart` itself: that would install this checkout into
the environment the tests run in. It stands in for it with the package already installed here:
a `.venv/bin/activate` that puts a `kernbench` command of this interpreter on `PATH`, as the
virtual environment `make quickstart` creates does, and a first quickstart run as the make target
does. Everything after that is the README's own text, run by a shell in a temporary directory.
(`.ci/bare-machine` runs the real `make quickstart` and the activation in a clean clone.)
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent


def _blocks(text: str, heading: str) -> list[str]:
    """The command lines (comments stripped) of the first bash block under ``## heading``."""
    section = text.split(f"## {heading}", 1)[1]
    block = section.split("```bash", 1)[1].split("```", 1)[0]
    lines = [line.split("#", 1)[0].strip() for line in block.strip().splitlines()]
    return [line for line in lines if line]


def readme_setup() -> list[str]:
    return _blocks((ROOT / "README.md").read_text(encoding="utf-8"), "Set-up")


def readme_quickstart() -> list[str]:
    return _blocks((ROOT / "README.md").read_text(encoding="utf-8"), "Quickstart")


def test_readme_puts_kernbench_on_path_before_its_first_kernbench_command():
    setup = readme_setup()
    assert setup[0] == "make quickstart"
    assert setup[1] == ". .venv/bin/activate"  # the line make's own message points to
    assert all(line.startswith("kernbench ") for line in readme_quickstart())
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = makefile.split("\nquickstart:", 1)[1].split("\n\n", 1)[0]
    assert "'. $(VENV)/bin/activate' (the README's next line)" in recipe
    assert "python3 -m venv $(VENV)" in makefile  # the venv that provides bin/activate


def _fake_venv(directory: Path) -> None:
    """``.venv/bin/activate`` putting a ``kernbench`` of this interpreter (and checkout) on PATH."""
    bin_dir = directory / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    shim = bin_dir / "kernbench"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m kernbench "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR)
    (bin_dir / "activate").write_text(f'PATH="{bin_dir}:$PATH"; export PATH\n')


OWN_SPEC = """\
name: mine
datasets:
  - {name: dumped, file: data/dumped.libsvm}
  - {name: table, file: data/table.csv, positive: yes-class}
protocol: {n_realisations: 2, train_size: 0.6, cv_folds: 2, seed: 1}
methods:
  AdaBoost: {estimator: adaboost, grid: {n_estimators: [5, 10]}}
"""


def _own_data(directory: Path) -> None:
    from sklearn.datasets import dump_svmlight_file

    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 4))
    X[rng.random(X.shape) < 0.3] = 0.0  # sparse, column 0 included: zero-based indices
    y = np.where(X[:, 0] + X[:, 1] > 0, 1, -1)
    (directory / "data").mkdir()
    dump_svmlight_file(X, y, str(directory / "data" / "dumped.libsvm"))
    labels = np.where(y > 0, "yes-class", "no-class")
    rows = ["a,b,c,d,label"] + [
        ",".join(f"{v:.5f}" for v in x) + f",{lab}" for x, lab in zip(X, labels, strict=True)
    ]
    (directory / "data" / "table.csv").write_text("\n".join(rows) + "\n")
    (directory / "mine.yaml").write_text(OWN_SPEC)


@pytest.mark.slow
def test_readme_commands_then_own_libsvm_and_csv_with_the_installed_package(tmp_path):
    work = tmp_path / "kernbench"
    shutil.copytree(ROOT / "experiments", work / "experiments")
    _fake_venv(work)
    _own_data(work)
    setup = readme_setup()
    make_lines = [line for line in setup if line.startswith("make ")]
    shell_lines = [line for line in setup if not line.startswith("make ")]
    assert shell_lines == [". .venv/bin/activate"]
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "KERNBENCH_DATA": str(tmp_path / "cache"),
        "MPLBACKEND": "Agg",
    }
    env.pop("KERNBENCH_PROGRESS", None)
    env["PATH"] = os.pathsep.join(  # a shell where kernbench is not yet on PATH
        d
        for d in env.get("PATH", "").split(os.pathsep)
        if d and not (Path(d) / "kernbench").exists()
    )
    script = [
        "set -e",
        # what `make quickstart` does once kernbench is installed
        ".venv/bin/kernbench run experiments/quickstart.yaml --jobs 2",
        ".venv/bin/kernbench table results/quickstart",
        "! command -v kernbench",  # not on PATH before the README's activation line
        *shell_lines,
        *readme_quickstart(),
        "kernbench validate mine.yaml",
        "kernbench run mine.yaml --jobs 2",
        "kernbench table results/mine",
    ]
    assert make_lines[0] == "make quickstart"
    res = subprocess.run(
        ["bash", "-c", "\n".join(script)],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert (work / "results" / "quickstart" / "table.md").is_file()
    assert list((work / "results" / "quickstart" / "figures").glob("*.png"))
    table = (work / "results" / "mine" / "table.md").read_text(encoding="utf-8")
    assert re.search(r"\| dumped \|", table) and re.search(r"\| table \|", table), table
    assert "mine: 4 cells planned, 0 already finished; this run: 4 done" in res.stderr
