"""User-facing CLI behaviour: filters that say when they match nothing, the help examples."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from typer.testing import CliRunner

from kernbench.cli import app, run

ROOT = Path(__file__).resolve().parents[1]
QUICKSTART = str(ROOT / "experiments" / "quickstart.yaml")
runner = CliRunner()


def test_run_help_example_selects_cells(tmp_path):
    example = next(
        line.split("Example:", 1)[1] for line in run.__doc__.splitlines() if "Example:" in line
    )
    args = shlex.split(example)[1:]  # drop "kernbench"
    assert args[:2] == ["run", "experiments/quickstart.yaml"]
    args[1] = QUICKSTART
    res = runner.invoke(app, [*args, "--dry-run", "--out", str(tmp_path)], terminal_width=200)
    assert res.exit_code == 0, res.output
    assert int(re.search(r": (\d+) cells", res.output).group(1)) > 0


def test_only_matching_nothing_exits_2_with_suggestion(tmp_path):
    res = runner.invoke(
        app, ["run", QUICKSTART, "--out", str(tmp_path), "--only", "dataset=ringnrom"]
    )
    assert res.exit_code == 2
    assert "dataset=ringnrom matches no dataset" in res.output
    assert "did you mean 'ringnorm'?" in res.output
    assert not list(tmp_path.iterdir())  # nothing was run


def test_only_accepts_an_estimator_name(tmp_path):
    res = runner.invoke(
        app,
        ["run", QUICKSTART, "--dry-run", "--only", "method=svm_stump", "--only", "realisation=0"],
        terminal_width=200,
    )
    assert res.exit_code == 0, res.output
    assert res.output.count("svm_stump") == 5 and "SVM-Perc" not in res.output
