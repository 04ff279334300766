"""The ``time`` plot kind: training time vs iteration and vs training size, from stored traces."""

from __future__ import annotations

import pytest

from kernbench.report.collect import load_experiment
from kernbench.report.figures_time import common_iteration, time_figures, time_points


@pytest.fixture
def timing_store(make_store, spec_dict, add_cell):
    spec = spec_dict("timing", ["small", "large"], ["CGENS", "LPBoost"], n_realisations=2)
    directory, store = make_store("timing", spec)
    for d, n, scale in (("small", 1000, 1.0), ("large", 10000, 10.0)):
        for m, per_iter in (("CGENS", 0.01), ("LPBoost", 0.1)):
            for r in range(2):
                T = 5 if d == "small" else 4  # the large runs stopped at 4 iterations
                trace = {
                    "iteration": list(range(1, T + 1)),
                    "time_s": [scale * per_iter * k * (1 + r) for k in range(1, T + 1)],
                }
                add_cell(store, d, m, r, 0.1, result={"trace": trace, "n_train": n})
    return directory


def test_time_points_take_every_dataset_at_the_common_iteration(timing_store):
    exp = load_experiment(timing_store)
    assert common_iteration(exp) == 4
    points = time_points(exp)
    # mean over the two realisations (factors 1 and 2) of scale * per_iter * 4
    assert points["CGENS"] == [(1000, pytest.approx(0.06)), (10000, pytest.approx(0.6))]
    assert points["LPBoost"] == [(1000, pytest.approx(0.6)), (10000, pytest.approx(6.0))]


def test_time_figure_has_both_panels(timing_store):
    (fig,) = time_figures(timing_store).values()
    top, bottom = fig.get_axes()
    assert top.get_title() == "large: m = 10000" and len(top.get_lines()) == 2
    assert "at 4 iterations" in bottom.get_ylabel() and len(bottom.get_lines()) == 2


def test_no_traces_no_figure(make_store, spec_dict, add_cell):
    directory, store = make_store("none", spec_dict("none", ["d"], ["M"], n_realisations=1))
    add_cell(store, "d", "M", 0, 0.2)
    assert time_figures(directory) == {}
