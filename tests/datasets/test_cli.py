"""The ``kernbench data`` sub-app, exercised directly with Typer's CliRunner."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from kernbench.datasets import data_home, list_datasets
from kernbench.datasets.cli import data_app
from kernbench.errors import DataError

runner = CliRunner()


def test_list_shows_every_dataset():
    res = runner.invoke(data_app, ["list"], terminal_width=200)
    assert res.exit_code == 0, res.output
    for entry in list_datasets():
        assert entry.name in res.output
    assert "embedded" in res.output


def test_info_shows_the_full_entry():
    res = runner.invoke(data_app, ["info", "diabetis"])
    assert res.exit_code == 0, res.output
    for text in ("pima", "substitute 468/300", "Pima", "label_noise", "sha256"):
        assert text in res.output


def test_unknown_name_is_a_data_error_with_suggestion():
    res = runner.invoke(data_app, ["info", "sonr"])
    assert isinstance(res.exception, DataError)
    assert "did you mean 'sonar'" in str(res.exception)


def test_fetch_from_mirror_then_verify(mirror):
    res = runner.invoke(data_app, ["fetch", "sonar", "heart", "--mirror", str(mirror)])
    assert res.exit_code == 0, res.output
    assert (data_home() / "sonar" / "sonar.all-data").is_file()
    res = runner.invoke(data_app, ["verify"])
    assert res.exit_code == 0 and "2 ok, 0 corrupt" in res.output
    path = data_home() / "sonar" / "sonar.all-data"
    path.write_bytes(path.read_bytes().replace(b"R", b"M", 1))
    res = runner.invoke(data_app, ["verify"])
    assert res.exit_code == 1 and "CORRUPT sonar/sonar.all-data" in res.output


def test_fetch_needs_names():
    from kernbench.cli import app

    res = runner.invoke(app, ["data", "fetch"])
    assert res.exit_code == 2 and "give dataset names or --all" in res.output


# -- through the main app: one error handler, exit 2, one line, no traceback ---------------------
BAD_DATA_COMMANDS = [
    (["data", "info", "sonr"], "did you mean 'sonar'"),
    (["data", "fetch", "sonr"], "did you mean 'sonar'"),
    (["data", "fetch", "sonar"], "KERNBENCH_MIRROR"),  # offline (conftest), no mirror
    (["data", "fetch", "liver", "--mirror", "/nonexistent"], "'/nonexistent' is not a directory"),
]


@pytest.mark.parametrize(("args", "message"), BAD_DATA_COMMANDS, ids=lambda a: " ".join(a))
def test_data_errors_exit_2_with_one_line_and_no_traceback(args, message, monkeypatch):
    from kernbench.cli import app

    monkeypatch.delenv("KERNBENCH_MIRROR", raising=False)
    res = runner.invoke(app, args)
    assert res.exit_code == 2, res.output
    assert isinstance(res.exception, SystemExit)  # handled, not a library exception escaping
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], res.output
    assert "Traceback" not in res.output


def test_data_error_in_a_real_process_prints_no_traceback(tmp_path):
    env = {**os.environ, "KERNBENCH_DATA": str(tmp_path), "KERNBENCH_OFFLINE": "1"}
    env.pop("KERNBENCH_MIRROR", None)
    proc = subprocess.run(
        [sys.executable, "-m", "kernbench", "data", "info", "sonr"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("error: unknown dataset 'sonr'")
    assert "Traceback" not in proc.stderr + proc.stdout
