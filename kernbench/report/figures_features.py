"""Shen & Liu Fig. 5: how often each input feature is used by the selected weak learners.

Stump ensembles (AdaBoost, CGENS, LPBoost, ... with ``weak_learner="stump"``) expose
``feature_usage_``: the fraction of their weak learners that split on each feature. The runner
stores it in every finished cell (``result["feature_usage"]``); this module averages it over the
finished realisations and draws one bar group per method, features numbered from 1 as in the paper.
``kernbench plot RESULTS --kind fig5`` writes one PNG per dataset.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import numpy as np
from matplotlib.figure import Figure

from kernbench.report.collect import Experiment, as_experiment


def usage_by_method(exp: Experiment, dataset: str) -> dict[str, np.ndarray]:
    """Mean ``feature_usage`` over the finished realisations, per method that recorded it.

    Parameters
    ----------
    exp : Experiment
        From :func:`kernbench.report.collect.load_experiment`.
    dataset : str
        A dataset label of the experiment.

    Returns
    -------
    dict
        ``{method label: ndarray of shape (D,)}`` in the spec's method order; methods without a
        recorded usage (kernel machines, perceptron ensembles, failed cells) are left out.
    """
    out: dict[str, np.ndarray] = {}
    for method in exp.methods:
        rows = exp.rows.get((dataset, method), {})
        usages = [
            np.asarray(row["result"]["feature_usage"], dtype=np.float64)
            for _, row in sorted(rows.items())
            if row.get("status") == "done" and (row.get("result") or {}).get("feature_usage")
        ]
        if usages and len({u.size for u in usages}) == 1:
            out[method] = np.mean(usages, axis=0)
    return out


def fig5_figure(freqs: Mapping[str, np.ndarray], title: str = "") -> Figure:
    """Grouped bars of per-feature selection frequencies, one colour per method.

    Parameters
    ----------
    freqs : mapping
        ``{method: ndarray of shape (D,)}``, all of the same length D.
    title : str
        Axes title.
    """
    fig = Figure(figsize=(11, 3.5))
    ax = fig.subplots()
    D = len(next(iter(freqs.values())))
    width = 0.8 / len(freqs)
    for k, (name, f) in enumerate(freqs.items()):
        ax.bar(np.arange(1, D + 1) + (k - (len(freqs) - 1) / 2) * width, f, width, label=name)
    ax.set_xlabel("feature #")
    ax.set_ylabel("selection frequency")
    ax.set_xlim(0, D + 1)
    if title:
        ax.set_title(title, fontsize=9)
    ax.legend()
    return fig


def fig5_figures(source: Experiment | str | os.PathLike[str]) -> dict[str, Figure]:
    """A Fig. 5 panel per dataset with stored feature usage (``kernbench plot --kind fig5``)."""
    exp = as_experiment(source)
    figures: dict[str, Figure] = {}
    for dataset in exp.datasets:
        freqs = usage_by_method(exp, dataset)
        if freqs:
            title = f"{dataset}: fraction of the weak learners using each feature (mean of runs)"
            figures[dataset] = fig5_figure(freqs, title)
    return figures
