"""Fig. 2 of the CGENS paper from the benchmark CSV (kernbench.report.figures_cgens)."""

from __future__ import annotations

import numpy as np
import pytest

from kernbench.report.figures_cgens import feature_frequencies, fig2_from_csv, read_timing_csv
from kernbench.weak.stumps import Stump

CSV = """method,n_train,iterations,time_s,repeats,ratio_vs_cgens_liblinear
CGENS (liblinear bias),10000,100,2.5,1,1.0
CGENS (liblinear bias),10000,250,9.0,1,1.0
LPBoost (cvxpy/HiGHS),10000,100,300.0,1,120.0
LPBoost (cvxpy/HiGHS),2000,100,40.0,1,
"""


def test_timing_csv_groups_by_method_and_size(tmp_path):
    path = tmp_path / "bench.csv"
    path.write_text(CSV)
    curves = read_timing_csv(path)
    assert curves == {
        "CGENS (liblinear bias) (m = 10000)": {100: 2.5, 250: 9.0},
        "LPBoost (cvxpy/HiGHS) (m = 10000)": {100: 300.0},
        "LPBoost (cvxpy/HiGHS) (m = 2000)": {100: 40.0},
    }
    png = fig2_from_csv(path, tmp_path / "fig2.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_feature_frequencies_average_the_per_run_feature_usage():
    runs = [[Stump(0, 0.5, 1), Stump(2, 0.1, -1), Stump(0, -np.inf, 1)], [Stump(1, 0.0, 1)]]
    np.testing.assert_allclose(feature_frequencies(runs, 3), [1 / 6, 1 / 2, 1 / 6])
    with pytest.raises(ValueError, match="stumps"):
        feature_frequencies([[object()]], 3)
