"""Bounded cost before any work: YAML merge/alias expansion is refused while loading, and a plan
of too many cells is refused from its count, before a single cell is built."""

from __future__ import annotations

import tracemalloc

import pytest
import yaml
from typer.testing import CliRunner

from kernbench.cli import app
from kernbench.errors import SpecError
from kernbench.runner.plan import cells as plan_module
from kernbench.runner.plan.cells import DEFAULT_MAX_CELLS, TooManyCells, count_cells, plan_cells
from kernbench.specs.load import load_spec, parse_spec

runner = CliRunner()
HEAD = "name: chain\ndatasets: [iris]\nmethods: {a: {estimator: adaboost}}\n"


def merge_chain(size: int = 234_000) -> str:
    """Each mapping merges the previous one: the merged pairs grow quadratically."""
    lines = [HEAD.rstrip("\n"), "x0: &x0 {k0: 0}"]
    i = 1
    while sum(len(line) + 1 for line in lines) < size:
        lines.append(f"x{i}: &x{i} {{<<: *x{i - 1}, k{i}: {i}}}")
        i += 1
    return "\n".join(lines) + "\n"


def merge_doubling(levels: int = 40) -> str:
    """Each mapping merges the previous one twice: the merged pairs double at every level."""
    lines = [HEAD.rstrip("\n"), "y0: &y0 {a: 1, b: 2}"]
    lines += [f"y{i}: &y{i} {{<<: [*y{i - 1}, *y{i - 1}], c{i}: {i}}}" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("make", [merge_chain, merge_doubling], ids=["chain", "doubling"])
def test_merge_key_expansion_is_refused_while_loading(make, tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text(make(), encoding="utf-8")
    assert path.stat().st_size < 256 * 1024  # under the size guard: the budget must catch it
    tracemalloc.start()
    try:
        with pytest.raises(SpecError, match=r"more than 100000 values while loading") as info:
            load_spec(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "merge keys" in str(info.value) and "line" in str(info.value)
    assert peak < 200 * 2**20, f"peak {peak / 2**20:.0f} MiB"


def test_merge_keys_within_the_budget_keep_their_meaning(tmp_path):
    path = tmp_path / "ok.yaml"
    path.write_text(
        "name: merged\ndatasets: [iris]\nmethods:\n"
        "  a: &base {estimator: adaboost, params: {n_estimators: 5}}\n"
        "  b: {<<: *base, params: {n_estimators: 7}}\n"
        "  c: {<<: [{estimator: svm_stump}, {estimator: adaboost, grid: {C: [1.0]}}]}\n",
        encoding="utf-8",
    )
    methods = {m.label: m for m in load_spec(path, check_datasets=False).methods}
    assert methods["b"].estimator == "adaboost" and methods["b"].params == {"n_estimators": 7}
    assert methods["c"].estimator == "svm_stump"  # the first of a merged list wins, as in YAML
    assert methods["c"].grid == {"C": [1.0]}


def _spec(n_realisations: int, n_methods: int, n_datasets: int = 1):
    data = {
        "name": "big",
        "datasets": [  # setosa against the rest: AdaBoost is binary only
            {"name": "iris", "label": f"iris{d}", "options": {"positive": [0]}}
            for d in range(n_datasets)
        ],
        "protocol": {"n_realisations": n_realisations},
        "methods": {f"m{j}": {"estimator": "adaboost"} for j in range(n_methods)},
    }
    return data


@pytest.mark.parametrize(
    ("realisations", "only"),
    [
        (None, None),
        (2, None),
        (None, {"realisation": ["0", "2"]}),
        (None, {"method": ["m1"], "dataset": ["iris1"]}),
    ],
)
def test_count_cells_matches_the_plan(realisations, only):
    spec = parse_spec(_spec(3, 2, n_datasets=2), check_datasets=False)
    cells = plan_cells(spec, realisations=realisations, only=only, fingerprint=lambda n, o: "f")
    assert count_cells(spec, realisations=realisations, only=only) == len(cells)


@pytest.fixture
def no_cells_built(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a cell was built before the count was checked")

    monkeypatch.setattr(plan_module, "cell_identity", refuse)


def test_a_million_cells_are_refused_from_the_count(tmp_path, no_cells_built, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "big.yaml"
    path.write_text(yaml.safe_dump(_spec(100_000, 10)), encoding="utf-8")
    with pytest.raises(TooManyCells) as info:
        plan_cells(load_spec(path), fingerprint=lambda n, o: "f")
    assert info.value.n == 1_000_000 and info.value.limit == DEFAULT_MAX_CELLS
    for args in (["validate"], ["run", "--dry-run"], ["run", "--jobs", "1"]):
        res = runner.invoke(app, [*args, str(path)])
        assert res.exit_code == 2, res.output
        text = " ".join(res.output.split())
        assert "1,000,000 cells" in text and "--max-cells 1000000" in text, text
    assert not (tmp_path / "results").exists()


def test_max_cells_raises_or_lowers_the_limit(tmp_path):
    path = tmp_path / "small.yaml"
    path.write_text(yaml.safe_dump(_spec(2, 2)), encoding="utf-8")
    res = runner.invoke(app, ["validate", str(path), "--max-cells", "3"])
    assert res.exit_code == 2 and "4 cells, more than the limit of 3" in res.output
    res = runner.invoke(app, ["validate", str(path), "--max-cells", "4"])
    assert res.exit_code == 0 and "= 4 cells" in res.output, res.output
