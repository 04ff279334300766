"""The plot kinds are one table: every row names a builder that exists, and listing or checking the
kinds imports no figure module."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from kernbench.report.plot_kinds import PLOT_KIND_TABLE, PLOT_KINDS

REPORT = Path(__file__).resolve().parents[2] / "kernbench" / "report"


@pytest.mark.parametrize("kind", sorted(PLOT_KIND_TABLE))
def test_every_row_names_its_builder(kind):
    row = PLOT_KIND_TABLE[kind]
    builder = PLOT_KINDS[kind]
    assert callable(builder)
    assert (builder.__module__, builder.__name__) == (row.module, row.builder)
    assert builder.plot_help == row.help  # what `kernbench plot --kind list` prints
    assert row.help and "\n" not in row.help


def test_the_mapping_is_the_table():
    assert list(PLOT_KINDS) == list(PLOT_KIND_TABLE) and len(PLOT_KINDS) == len(PLOT_KIND_TABLE)
    assert "trace" in PLOT_KINDS and "nope" not in PLOT_KINDS
    with pytest.raises(KeyError):
        PLOT_KINDS["nope"]


def test_listing_the_kinds_imports_no_figure_module():
    code = (
        "import sys\n"
        "from kernbench.report import PLOT_KINDS\n"
        "assert 'cd' in PLOT_KINDS and sorted(PLOT_KINDS)\n"
        "print(sorted(m for m in sys.modules if m.startswith('kernbench.report.figures_')"
        " or m == 'kernbench.report.cd_diagram'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_every_public_figure_builder_of_the_package_is_in_the_table():
    """A builder left out of the table would be a figure no command can draw."""
    named = {(row.module, row.builder) for row in PLOT_KIND_TABLE.values()}
    for path in sorted(REPORT.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            is_builder = isinstance(node, ast.FunctionDef) and (
                node.name.endswith("_figures") or node.name.endswith("_diagram")
            )
            if is_builder and not node.name.startswith("_"):
                assert (f"kernbench.report.{path.stem}", node.name) in named, node.name
