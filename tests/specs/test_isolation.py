"""A table shows the cells of one spec, never another spec's numbers from the same store.

Reproduces the fault where editing a spec, running it into the same ``--out``, reverting and
running again made ``kernbench table`` show the edited spec's numbers.
"""

from __future__ import annotations

import copy
from pathlib import Path

import yaml
from typer.testing import CliRunner

from kernbench.cli import app
from kernbench.report import build_table

SPEC = {
    "name": "iso",
    "datasets": [{"name": "twonorm", "options": {"n_train": 60, "n_test": 300}}],
    "protocol": {"n_realisations": 2, "cv_folds": 2, "seed": 5},
    "methods": {"AdaBoost": {"estimator": "adaboost", "params": {"n_estimators": 20}}},
}
runner = CliRunner()


def _write(path: Path, spec: dict) -> Path:
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    return path


def _run(spec: Path, out: Path) -> str:
    res = runner.invoke(app, ["run", str(spec), "--out", str(out), "--jobs", "1"])
    assert res.exit_code == 0, res.output
    return res.output


def _means(out: Path, **kw) -> dict[str, float]:
    table = build_table(out, reference=False, **kw)
    return {d: table.cell(d, m).mean for d in table.datasets for m in table.methods}


def test_edit_run_revert_run_shows_the_original_numbers(tmp_path):
    out = tmp_path / "res"
    original = _write(tmp_path / "a.yaml", SPEC)
    _run(original, out)
    before = _means(out)

    edited = copy.deepcopy(SPEC)
    edited["methods"]["AdaBoost"]["params"]["n_estimators"] = 1  # a much weaker model
    edited_path = _write(tmp_path / "b.yaml", edited)
    output = _run(edited_path, out)
    assert "2 cell(s) of another spec" in output  # the original's cells: warned, kept
    after_edit = _means(out)
    assert after_edit != before

    output = _run(original, out)  # revert: every cell is already finished
    assert "2 already finished" in output and "2 cell(s) of another spec" in output
    assert _means(out) == before
    table = build_table(out, reference=False)
    assert any("2 stored cell(s) of other specs" in note for note in table.notes)


def test_two_specs_sharing_out_and_table_spec(tmp_path):
    out = tmp_path / "shared"
    first = _write(tmp_path / "first.yaml", SPEC)
    other = copy.deepcopy(SPEC)
    other["name"] = "iso2"
    other["methods"]["AdaBoost"]["params"]["n_estimators"] = 3
    second = _write(tmp_path / "second.yaml", other)
    _run(first, out)
    first_means = _means(out)
    _run(second, out)
    second_means = _means(out)
    assert second_means != first_means

    res = runner.invoke(app, ["table", str(out), "--no-reference", "--spec", str(first)])
    assert res.exit_code == 0, res.output
    shown = f"{first_means['twonorm']:.2f}"
    assert shown in res.output and f"{second_means['twonorm']:.2f}" not in res.output
    res = runner.invoke(app, ["plot", str(out), "--spec", str(first), "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output


def test_table_on_a_missing_path_says_it_is_missing(tmp_path):
    res = runner.invoke(app, ["table", str(tmp_path / "nope")])
    assert res.exit_code == 2 and "no such file or directory" in res.output


def test_table_reads_the_specs_format_and_takes_value(tmp_path):
    spec = copy.deepcopy(SPEC)
    spec["table"] = {"format": "csv"}
    out = tmp_path / "res"
    _run(_write(tmp_path / "csv.yaml", spec), out)
    res = runner.invoke(app, ["table", str(out), "--no-reference"])
    assert res.exit_code == 0 and res.output.startswith("dataset,method"), res.output
    res = runner.invoke(app, ["table", str(out), "--format", "md", "--value", "fit_time_s"])
    assert res.exit_code == 0 and "Fit time (s)" in res.output, res.output
    res = runner.invoke(app, ["table", str(out), "--value", "speed"])
    assert res.exit_code == 2 and "--value" in res.output
