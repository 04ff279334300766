"""``kernbench paper ...``: the paper-specific report steps that are not plot kinds.

ExRM/DRM Table 3's averages and the ExRM-PSVM equivalence table (from results stores), and
MultiBoost_cw's convergence check (from a store) and Fig. 6 (from the FCD benchmark's CSV).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kernbench.cli.options import path_value
from kernbench.cli.state import state_of

paper_app = typer.Typer(no_args_is_help=True, add_completion=False)

OUT_MARKDOWN = typer.Option("--out", parser=path_value, help="Also write the markdown here.")


def _show(text: str, out_file: Path | None) -> None:
    """The markdown on stdout, and into ``out_file`` when given."""
    typer.echo(text)
    if out_file is not None:
        from kernbench.files.writing import write_text_file

        out_file.parent.mkdir(parents=True, exist_ok=True)
        write_text_file(out_file, text + "\n")


@paper_app.command("exrm-table3")
def exrm_table3(
    results: Annotated[Path, typer.Argument(help="The exrm_table3 results directory.")],
    out_file: Annotated[Path | None, OUT_MARKDOWN] = None,
) -> None:
    """ExRM Table 3: each method's test error averaged over the datasets, beside the paper's.

    Example: kernbench paper exrm-table3 results/exrm_table3 --out results/exrm_table3_average.md
    """
    from kernbench.report.figures_exrm import average_table
    from kernbench.report.render import rows_markdown

    _show(rows_markdown(average_table(results)), out_file)


@paper_app.command("exrm-equivalence")
def exrm_equivalence(
    results: Annotated[Path, typer.Argument(help="The exrm_equivalence results directory.")],
    out_file: Annotated[Path | None, OUT_MARKDOWN] = None,
) -> None:
    """ExRM_C(λ) beside PSVM(λ/C), at the paper's stopping rule and at the optimum.

    Example: kernbench paper exrm-equivalence results/exrm_equivalence
    """
    from kernbench.report.figures_exrm import equivalence_table
    from kernbench.report.render import rows_markdown

    _show(rows_markdown(equivalence_table(results)), out_file)


@paper_app.command("multiboost-cw-convergence")
def multiboost_cw_convergence(
    results: Annotated[Path, typer.Argument(help="The multiboost_cw results directory.")] = Path(
        "results/multiboost_cw"
    ),
    out_file: Annotated[Path | None, OUT_MARKDOWN] = None,
) -> None:
    """MultiBoost_cw: iterations to a training error of 10 %, 5 %, 0 %; final errors and times.

    Example: kernbench paper multiboost-cw-convergence results/multiboost_cw
    """
    from kernbench.report.figures_multiboost_cw import convergence_report

    _show(convergence_report(results), out_file)


@paper_app.command("multiboost-cw-fig6")
def multiboost_cw_fig6(
    ctx: typer.Context,
    csv: Annotated[
        Path, typer.Option("--csv", help="benchmarks/bench_fcd.py's replay CSV.")
    ] = Path("benchmarks/results/bench_fcd_fig6.csv"),
    out_file: Annotated[
        Path, typer.Option("--out", parser=path_value, help="The PNG to write.")
    ] = Path("results/multiboost_cw_fig6.png"),
) -> None:
    """MultiBoost_cw Figure 6: the objective against iterations and solver time, FCD vs L-BFGS-B.

    Example: kernbench paper multiboost-cw-fig6 --out results/figures/multiboost_cw_fig6.png
    """
    from kernbench.report.figures_multiboost_cw import save_fig6

    state_of(ctx).out.print(str(save_fig6(csv, out_file)), highlight=False)
