"""User-facing CLI behaviour: filters that say when they match nothing, the help examples."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import yaml
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


def _catalogue_with_a_mirrored_file(tmp_path: Path) -> tuple[Path, Path]:
    """A user catalogue whose one file lives only in a mirror directory (not beside it)."""
    import hashlib

    mirror = tmp_path / "mirror"
    data = mirror / "my-set" / "d.csv"
    data.parent.mkdir(parents=True)
    data.write_text("".join(f"{i},{i % 3},{'a' if i % 2 else 'b'}\n" for i in range(20)))
    sha = hashlib.sha256(data.read_bytes()).hexdigest()
    entry = {
        "name": "my-set",
        "task": "binary",
        "d": 2,
        "classes": 2,
        "files": [{"path": "my-set/d.csv", "sha256": sha}],
        "recipe": {"kind": "table", "file": "my-set/d.csv", "label_column": -1, "positive": ["a"]},
    }
    catalogue = tmp_path / "cat" / "my_datasets.yaml"
    catalogue.parent.mkdir()
    catalogue.write_text(yaml.safe_dump({"datasets": [entry]}))
    return catalogue, mirror


def test_validate_several_specs_checks_data_offline(tmp_path, monkeypatch):
    catalogue, mirror = _catalogue_with_a_mirrored_file(tmp_path)
    monkeypatch.setenv("KERNBENCH_CATALOG", str(catalogue))
    monkeypatch.setenv("KERNBENCH_DATA", str(tmp_path / "cache"))
    monkeypatch.delenv("KERNBENCH_MIRROR", raising=False)
    spec = tmp_path / "mine.yaml"
    spec.write_text(
        yaml.safe_dump(
            {
                "name": "mine",
                "datasets": ["my-set"],
                "protocol": {"n_realisations": 2, "cv_folds": 2},
                "methods": {"A": {"estimator": "adaboost"}},
            }
        )
    )
    res = runner.invoke(app, ["validate", QUICKSTART, str(spec)])
    assert res.exit_code == 2
    assert "quickstart.yaml: ok — 5 datasets × 5 realisations × 4 methods = 100 cells" in res.output
    assert f"error: {spec}: dataset(s) my-set not in the cache" in res.output
    assert "run `kernbench data fetch my-set`" in res.output
    assert "`kernbench data fetch my-set --mirror DIR`" in res.output
    assert "Traceback" not in res.output
    assert runner.invoke(app, ["validate", "--no-data", str(spec)]).exit_code == 0
    monkeypatch.setenv("KERNBENCH_MIRROR", str(mirror))
    res = runner.invoke(app, ["validate", QUICKSTART, str(spec)])
    assert res.exit_code == 0, res.output
    assert res.output.count("data available") == 2


def test_table_on_a_missing_path_says_it_is_missing(tmp_path):
    missing = tmp_path / "no-such-results"
    res = runner.invoke(app, ["table", str(missing)])
    assert res.exit_code == 2 and f"{missing}: no such file or directory" in res.output
    res = runner.invoke(app, ["table", str(tmp_path)])  # exists, holds no store
    assert res.exit_code == 2 and f"no results store at or below {tmp_path}" in res.output
