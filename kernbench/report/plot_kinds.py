"""The plot kinds of ``kernbench plot``: each registers itself with :func:`plot_kind`.

A kind is a builder ``(experiment) -> {name: Figure}`` that reads one loaded results store
(:class:`kernbench.report.collect.Experiment`, or a results directory that it loads) and draws
what the store holds; it never fits a model. ``kernbench.report`` imports every figure module, so
the registry is complete once the package is imported (as ``kernbench.methods`` does for methods).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TypeAlias

from matplotlib.figure import Figure

from kernbench.errors import KernbenchError
from kernbench.files.writing import replace_file
from kernbench.report.collect import Experiment, Selection, load_experiment

PlotBuilder: TypeAlias = Callable[[Experiment | str | os.PathLike[str]], dict[str, Figure]]

#: ``kind -> builder`` for ``kernbench plot --kind``
PLOT_KINDS: dict[str, PlotBuilder] = {}


def plot_kind(name: str, help: str = "") -> Callable[[PlotBuilder], PlotBuilder]:
    """Register a figure builder as the plot kind ``name`` (``help``: one line for ``--help``)."""

    def deco(builder: PlotBuilder) -> PlotBuilder:
        if builder.__module__ == "__main__":  # a figure module run as a script: registered already
            return builder
        if name in PLOT_KINDS and PLOT_KINDS[name] is not builder:
            raise ValueError(f"plot kind {name!r} registered twice")
        PLOT_KINDS[name] = builder
        builder.plot_help = help or (builder.__doc__ or "").strip().split("\n")[0]
        return builder

    return deco


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "dataset"


def plot_traces(
    results_dir: str | os.PathLike[str],
    out_dir: str | os.PathLike[str] | None = None,
    *,
    kind: str = "trace",
    dpi: int = 120,
    selection: Selection | None = None,
) -> list[Path]:
    """Draw plot kind ``kind`` from one results store; write one PNG per figure, return paths.

    Parameters
    ----------
    results_dir : path
        A results directory holding ``results.sqlite``.
    out_dir : path, optional
        Where to write ``<kind>_<name>.png`` (default ``<results_dir>/figures``).
    kind : str
        A registered plot kind (``PLOT_KINDS``); ``"trace"``: train/test error vs iteration, one
        line per method, mean over realisations, plus time vs iteration when recorded.
    dpi : int
    selection : Selection, optional
        The spec whose cells to draw (default: the spec last run into the store).

    Raises
    ------
    kernbench.errors.KernbenchError
        For an unknown ``kind`` or a missing store.
    """
    if kind not in PLOT_KINDS:
        raise KernbenchError(f"unknown plot kind {kind!r}; expected one of {sorted(PLOT_KINDS)}")
    exp = load_experiment(results_dir, selection)
    out = Path(out_dir) if out_dir is not None else Path(results_dir) / "figures"
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, fig in PLOT_KINDS[kind](exp).items():
        path = out / f"{kind}_{_slug(name)}.png"
        replace_file(path, lambda tmp, fig=fig: fig.savefig(tmp, dpi=dpi, format="png"))
        paths.append(path)
    return paths
