"""Reports from a results store: paper-style tables, statistics and figures.

``build_table`` / ``render_table`` / ``write_table_md`` back ``kernbench table``;
``plot_traces`` backs ``kernbench plot``: every figure module below registers its kinds in
``PLOT_KINDS`` with ``@plot_kind`` when imported; ``summary_frame`` gives the numbers behind a
table as a DataFrame. Reports read stores only; nothing here fits a model.
"""

# --- figure modules (each registers its plot kinds); keep one import per line, sorted ---
from kernbench.report import (  # noqa: F401
    cd_diagram,
    figures_boundary,
    figures_cgboost,
    figures_exrm,
    figures_features,
    figures_multiboost_cw,
    figures_multiclass,
    figures_time,
)
from kernbench.report.collect import Selection
from kernbench.report.figures import trace_figures
from kernbench.report.plot_kinds import PLOT_KINDS, plot_kind, plot_traces
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
    "Published",
    "ReferenceMatchError",
    "Selection",
    "Table",
    "TableCell",
    "build_table",
    "build_tables",
    "load_reference",
    "plot_kind",
    "plot_traces",
    "render_table",
    "summary_frame",
    "table_frame",
    "trace_figures",
    "write_table_md",
]
