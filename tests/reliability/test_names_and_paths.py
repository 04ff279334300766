"""Names and labels match a whole-string pattern, reference files stay beside the spec, and
control or bidirectional characters never reach the terminal raw."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from kernbench.cli import app
from kernbench.errors import SpecError, printable
from kernbench.specs.load import load_spec

runner = CliRunner()
BASE = {"name": "ok", "datasets": ["iris"], "methods": {"ada": {"estimator": "adaboost"}}}


def _write(tmp_path: Path, data: dict, name: str = "spec.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("data", "where"),
    [
        ({**BASE, "name": "evil\n"}, "name"),
        ({**BASE, "datasets": [{"name": "iris", "label": "iris\n"}]}, "datasets[0].label"),
        ({**BASE, "methods": {"ada\n": {"estimator": "adaboost"}}}, "methods"),
    ],
    ids=["name", "dataset label", "method label"],
)
def test_a_trailing_newline_is_not_a_valid_name(data, where, tmp_path):
    with pytest.raises(SpecError, match="not a valid name") as info:
        load_spec(_write(tmp_path, data), check_datasets=False)
    assert info.value.path.startswith(where)
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize("file", ["../../../../../../etc/passwd", "/etc/passwd", "../ref.csv"])
def test_a_reference_file_outside_the_spec_directory_is_a_spec_error(file, tmp_path):
    (tmp_path / "ref.csv").write_text("dataset,method,mean\n", encoding="utf-8")
    specs = tmp_path / "specs"
    specs.mkdir()
    path = _write(specs, {**BASE, "table": {"reference": {"file": file}}})
    with pytest.raises(SpecError, match="outside the spec's directory") as info:
        load_spec(path, check_datasets=False)
    assert info.value.path == "table.reference.file"
    res = runner.invoke(app, ["validate", str(path)])
    assert res.exit_code == 2 and "outside the spec's directory" in res.output


def test_a_reference_file_below_the_spec_directory_is_accepted(tmp_path):
    (tmp_path / "reference").mkdir()
    (tmp_path / "reference" / "r.csv").write_text("dataset,method,mean\n", encoding="utf-8")
    spec = load_spec(
        _write(tmp_path, {**BASE, "table": {"reference": {"file": "reference/r.csv"}}}),
        check_datasets=False,
    )
    assert Path(spec.table.reference) == (tmp_path / "reference" / "r.csv").resolve()


def test_printable_escapes_control_and_bidi_characters():
    assert printable("a\u202eb\u2066c\x1b[31md\x00") == "a\\u202eb\\u2066c\\x1b[31md\\x00"
    assert printable("line 1\nline 2\tx ± é") == "line 1\nline 2\tx ± é"


def test_a_right_to_left_override_in_a_label_is_escaped_in_the_error(tmp_path):
    label = "abc\u202etxt.exe"
    data = {**BASE, "table": {"reference": {"file": "r.csv", "methods": {label: "x"}}}}
    (tmp_path / "r.csv").write_text("dataset,method,mean\n", encoding="utf-8")
    res = runner.invoke(app, ["validate", str(_write(tmp_path, data))])
    assert res.exit_code == 2, res.output
    assert "\u202e" not in res.output and "\\u202e" in res.output, res.output
    with pytest.raises(SpecError) as info:
        load_spec(tmp_path / "spec.yaml", check_datasets=False)
    assert "\u202e" not in str(info.value)  # also for library callers
