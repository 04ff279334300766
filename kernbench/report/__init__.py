"""Reports from a results store: paper-style tables, statistics and figures.

``build_table`` / ``render_table`` / ``write_table_md`` back ``kernbench table``;
``plot_traces`` backs ``kernbench plot`` (kinds in ``PLOT_KINDS``: ``trace``, ``fig3``, ``fig5``,
``multiboost_cw``);
``summary_frame`` gives the numbers behind a table as a DataFrame.
"""

from kernbench.report.figures import PLOT_KINDS, plot_traces, trace_figures
from kernbench.report.figures_features import fig5_figures
from kernbench.report.figures_multiboost_cw import multiboost_cw_figures
from kernbench.report.figures_multiclass import multiclass_figures
from kernbench.report.reference import Published, ReferenceMatchError, load_reference
from kernbench.report.render import render_table, table_frame
from kernbench.report.tables import (
    Cell,
    Table,
    build_table,
    build_tables,
    summary_frame,
    write_table_md,
)

# the extra kinds register here: figures_multiclass builds on figures (no import cycle)
PLOT_KINDS["fig3"] = multiclass_figures
PLOT_KINDS["fig5"] = fig5_figures
PLOT_KINDS["multiboost_cw"] = multiboost_cw_figures

__all__ = [
    "PLOT_KINDS",
    "Cell",
    "Published",
    "ReferenceMatchError",
    "Table",
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
