"""Calibration of :mod:`kernbench.progress.cost`, written by
``benchmarks/calibrate_cost_model.py`` on 2026-11-29 (the log:
``benchmarks/logs/cost_model.md``); do not edit by hand.

``estimators``: CPU seconds of a cell, ``c × size ** p``, fitted to the cells recorded in
``experiments/values/*.csv``; ``per_cell_s``: the runner's own cost per cell
(``bench_noop_cell_idle.csv``); ``startup_s``: a run's start-up at ``--jobs 2``.
"""

CALIBRATION = {
    "estimators": {
        "ada_svm": (0.0005496, 0.327),
        "ada_tree": (0.0004325, 0.422),
        "adaboost": (0.00241, 0.186),
        "bag_svm": (9.651e-05, 0.539),
        "bag_tree": (0.001208, 0.343),
        "cgens": (0.0003941, 0.521),
        "drm": (0.372, 0.057),
        "exrm": (0.001281, 0.216),
        "lpboost": (0.001384, 0.381),
        "psvm": (0.001305, 0.182),
        "rff_svm": (0.5411, 0.0),
        "svm_gauss": (0.02614, 0.088),
        "svm_perc": (0.007848, 0.12),
        "svm_stump": (0.008259, 0.116),
    },
    "per_cell_s": 0.0073,
    "startup_s": 9.24,
}
