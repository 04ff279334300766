"""``kernbench paper ...``: the paper-specific report steps, under the one command line."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from kernbench.cli import app

ROOT = Path(__file__).resolve().parents[2]
FIG6_CSV = ROOT / "benchmarks" / "results" / "bench_fcd_fig6.csv"

runner = CliRunner()


@pytest.mark.parametrize(
    "step",
    ["exrm-table3", "exrm-equivalence", "multiboost-cw-convergence", "multiboost-cw-fig6"],
)
def test_each_step_has_help(step):
    res = runner.invoke(app, ["paper", step, "--help"])
    assert res.exit_code == 0, res.output
    assert "Example: kernbench paper" in res.output


@pytest.mark.parametrize("step", ["exrm-table3", "exrm-equivalence", "multiboost-cw-convergence"])
def test_a_missing_store_is_one_line_and_exit_2(step, tmp_path):
    res = runner.invoke(app, ["paper", step, str(tmp_path / "none")])
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output
    assert res.stderr.strip().startswith("error:") and len(res.stderr.strip().splitlines()) == 1


def test_fig6_is_drawn_from_the_benchmark_csv(tmp_path):
    out = tmp_path / "figs" / "fig6.png"
    res = runner.invoke(
        app, ["paper", "multiboost-cw-fig6", "--csv", str(FIG6_CSV), "--out", str(out)]
    )
    assert res.exit_code == 0, res.output
    assert res.stdout.strip() == str(out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_an_unknown_step_is_a_usage_error():
    res = runner.invoke(app, ["paper", "nope"])
    assert res.exit_code == 2
