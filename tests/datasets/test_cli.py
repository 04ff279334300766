"""The ``kernbench data`` sub-app, exercised directly with Typer's CliRunner."""

from __future__ import annotations

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
    res = runner.invoke(data_app, ["fetch"])
    assert res.exit_code == 2
