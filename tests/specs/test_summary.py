"""``kernbench validate`` and ``run --dry-run`` show the composed spec in one screen: data sets,
methods, protocol and cells, and what an extending spec keeps of its base."""

from __future__ import annotations

import yaml
from typer.testing import CliRunner

from kernbench.cli import app

runner = CliRunner()
KEEP = {
    "extends": "grand",
    "name": "mine",
    "keep": {"datasets": ["heart", "sonar", "pima"], "methods": ["AdaBoost", "SVM-Gauss"]},
    "methods": {"HGB": {"estimator": "sklearn.ensemble:HistGradientBoostingClassifier"}},
    "protocol": {"n_realisations": 2},
}


def test_validate_shows_what_an_extending_spec_keeps_and_adds(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump(KEEP))
    res = runner.invoke(app, ["validate", "--no-data", str(path)], terminal_width=200)
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert "3 datasets × 2 realisations × 3 methods = 18 cells" in lines[0]
    assert "  data sets (3): heart, diabetes (pima), sonar" in lines
    assert any(x.startswith("  methods (3): AdaBoost (adaboost), SVM-Gauss") for x in lines)
    assert "  from grand: keeps 3 of its 26 data sets and 2 of its 14 methods; adds HGB" in lines
    assert any(x.startswith("  protocol: 2 realisations (random splits, seed 0)") for x in lines)
    assert len(lines) <= 24  # one screen


def test_dry_run_shows_the_composed_spec_too(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump(KEEP))
    args = ["run", str(path), "--dry-run", "--out", str(tmp_path / "r"), "--realisations", "1"]
    res = runner.invoke(app, args, terminal_width=200)
    assert res.exit_code == 0, res.output
    kept = "  from grand: keeps 3 of its 26 data sets and 2 of its 14 methods; adds HGB"
    assert kept in res.output and "the spec (all 18 cells, before --realisations" in res.output


def test_a_long_list_is_cut_with_a_count():
    from kernbench.errors import cut_list

    assert cut_list(range(40), 30).endswith("29 and 10 more")
    assert cut_list(range(6), 5) == "0, 1, 2, 3, 4, 5"  # "and 1 more" is no shorter
