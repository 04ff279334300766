"""The plot kinds of ``kernbench plot``, in one table: :data:`PLOT_KIND_TABLE`.

A kind is a builder ``(experiment) -> {name: Figure}`` that reads one loaded results store
(:class:`kernbench.report.collect.Experiment`, or a results directory that it loads) and draws
what the store holds; it never fits a model. The table names each kind's builder by module and
function; :data:`PLOT_KINDS` imports a builder's module the first time that kind is asked for, so
listing the kinds or checking a name imports no figure module.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias

from matplotlib.figure import Figure

from kernbench.errors import KernbenchError
from kernbench.files.writing import replace_file
from kernbench.report.collect import Experiment, Selection, load_experiment

PlotBuilder: TypeAlias = Callable[[Experiment | str | os.PathLike[str]], dict[str, Figure]]


@dataclass(frozen=True)
class PlotKind:
    """Where a plot kind's builder lives (``module``, ``builder``), and one line of ``help``."""

    module: str
    builder: str
    help: str


_R = "kernbench.report."

#: every plot kind: ``kind -> PlotKind`` (a new kind is a builder in a module of this package and
#: one row here)
PLOT_KIND_TABLE: dict[str, PlotKind] = {
    "cd": PlotKind(
        _R + "cd_diagram",
        "cd_diagram",
        "critical-difference diagram of the average ranks over data sets (Nemenyi)",
    ),
    "bayes": PlotKind(
        _R + "cd_diagram",
        "bayes_diagram",
        "Bayesian signed-rank posteriors of the best-ranked method against each other"
        " (rope 1 point)",
    ),
    "boundary": PlotKind(
        _R + "figures_boundary",
        "boundary_figures",
        "decision boundaries of 2-D data, a panel per method (Lin & Li Fig. 2)",
    ),
    "boundary_trace": PlotKind(
        _R + "figures_boundary",
        "boundary_trace_figures",
        "one boundary beside train/test error vs iteration (CGENS Fig. 1)",
    ),
    "cgboost_fig1": PlotKind(
        _R + "figures_cgboost",
        "cgboost_fig1_figures",
        "Bi, Zhang & Bennett Fig. 1: toy regression, target and models",
    ),
    "cgboost_fig2": PlotKind(
        _R + "figures_cgboost",
        "cgboost_fig2_figures",
        "Bi, Zhang & Bennett Fig. 2: termination rules along the columns",
    ),
    "cgboost_fig3": PlotKind(
        _R + "figures_cgboost",
        "cgboost_fig3_figures",
        "Bi, Zhang & Bennett Fig. 3: stratified vs regular column generation",
    ),
    "cgboost_fig4": PlotKind(
        _R + "figures_cgboost",
        "cgboost_fig4_figures",
        "Bi, Zhang & Bennett Fig. 4: validation error along CG for several C",
    ),
    "exrm_fig1": PlotKind(
        _R + "figures_exrm",
        "exrm_fig1_figures",
        "Guo, Wang & Ling Fig. 1: effect of λ, convergence, time vs N",
    ),
    "fig3": PlotKind(
        _R + "figures_multiclass",
        "multiclass_figures",
        "Shen & Liu Fig. 3: multi-class test error and training time vs iteration",
    ),
    "fig5": PlotKind(
        _R + "figures_features",
        "fig5_figures",
        "Shen & Liu Fig. 5: fraction of stumps using each feature",
    ),
    "multiboost_cw": PlotKind(
        _R + "figures_multiboost_cw",
        "multiboost_cw_figures",
        "Lin et al. Figs 1-2: test error and training time vs iteration",
    ),
    "time": PlotKind(
        _R + "figures_time",
        "time_figures",
        "training time vs iteration and vs training size (Shen & Liu Fig. 2)",
    ),
    "trace": PlotKind(
        _R + "figures",
        "trace_figures",
        "train/test error (and time) vs iteration per dataset, mean of runs",
    ),
}


class _Builders(Mapping[str, PlotBuilder]):
    """``kind -> builder`` over :data:`PLOT_KIND_TABLE`, importing a builder's module on first use.

    A builder carries its kind's help line as ``plot_help`` (``kernbench plot --kind list``).
    """

    def __getitem__(self, kind: str) -> PlotBuilder:
        row = PLOT_KIND_TABLE[kind]
        builder = getattr(importlib.import_module(row.module), row.builder)
        builder.plot_help = row.help  # type: ignore[attr-defined]
        return builder

    def __iter__(self) -> Iterator[str]:
        return iter(PLOT_KIND_TABLE)

    def __len__(self) -> int:
        return len(PLOT_KIND_TABLE)

    def __contains__(self, kind: object) -> bool:
        return kind in PLOT_KIND_TABLE


#: ``kind -> builder`` for ``kernbench plot --kind``
PLOT_KINDS: Mapping[str, PlotBuilder] = _Builders()


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
