"""``python -m kernbench.report PAPER ...``: the entry of the paper-specific report steps."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kernbench.report.__main__ import main


def test_unknown_or_missing_paper_is_a_usage_error(capsys):
    assert main(["nope"]) == 2
    assert main([]) == 2
    assert "exrm, multiboost_cw" in capsys.readouterr().err


@pytest.mark.parametrize("paper", ["exrm", "multiboost_cw"])
def test_each_paper_dispatches_to_its_module(paper, capsys):
    with pytest.raises(SystemExit) as stop:  # argparse's --help exits 0
        main([paper, "--help"])
    assert stop.value.code == 0
    assert "usage:" in capsys.readouterr().out


def test_runs_as_a_module_without_runpy_warning():
    # running a figure module by -m used to warn: the package had imported it already
    proc = subprocess.run(
        [sys.executable, "-W", "error::RuntimeWarning", "-m", "kernbench.report", "exrm", "-h"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "table3" in proc.stdout
