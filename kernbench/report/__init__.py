"""Reports from a results store: paper-style tables, statistics and figures.

``build_table`` / ``render_table`` / ``write_table_md`` back ``kernbench table``;
``plot_traces`` backs ``kernbench plot``: ``PLOT_KINDS`` maps each plot kind of the one table in
:mod:`kernbench.report.plot_kinds` to its builder, importing the figure module on first use;
``summary_frame`` gives the numbers behind a table as a DataFrame. Reports read stores only;
nothing here fits a model.
"""

from kernbench.report.collect import Selection
from kernbench.report.figures import trace_figures
from kernbench.report.plot_kinds import PLOT_KIND_TABLE, PLOT_KINDS, PlotKind, plot_traces
from kernbench.report.reference import Published, ReferenceMatchError, load_reference
from kernbench.report.render import render_table, table_frame
from kernbench.report.tables import (
    Table,
    TableCell,
    build_table,
    build_tables,
    summary_frame,
    write_table_md,
)

__all__ = [
    "PLOT_KINDS",
    "PLOT_KIND_TABLE",
    "PlotKind",
    "Published",
    "ReferenceMatchError",
    "Selection",
    "Table",
    "TableCell",
    "build_table",
    "build_tables",
    "load_reference",
    "plot_traces",
    "render_table",
    "summary_frame",
    "table_frame",
    "trace_figures",
    "write_table_md",
]
