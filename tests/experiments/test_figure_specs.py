"""The specs behind the paper figures that used to fit models in the report: each loads, plans
its cells and asks for what its plot kind reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernbench.runner.plan.cells import plan_cells
from kernbench.specs.load import load_spec

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"


@pytest.mark.parametrize(
    ("name", "n_cells", "grid"),
    [
        ("lin_li_fig2", 4, 300),
        ("cgens_fig1", 2, 300),
        ("cgens_fig2", 8, None),
        ("cgboost_fig1", 45, 50),
        ("cgboost_fig4", 8, None),
    ],
)
def test_figure_spec_plans_its_cells(name, n_cells, grid):
    spec = load_spec(EXPERIMENTS / f"{name}.yaml")
    assert len(plan_cells(spec)) == n_cells
    assert spec.protocol.decision_grid == grid


def test_cgens_fig2_times_500_columns_of_both_methods_on_growing_sizes():
    spec = load_spec(EXPERIMENTS / "cgens_fig2.yaml")
    sizes = [d.protocol.train_size for d in spec.datasets]
    assert sizes == sorted(sizes) and sizes[-1] == 10000
    assert all(d.options["positive"] == [1, 3, 5, 7, 9] for d in spec.datasets)
    for m in spec.methods:
        assert m.params["max_iter"] == 500 and m.params["tol"] == 0.0 and m.params["C"] == 1.0
