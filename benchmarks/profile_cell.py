"""One cell of a spec under cProfile: where a reproduction's costliest cells spend their time.

Plans the spec's cells with the runner's own code, keeps those matching ``--only`` (as
``kernbench run --only``; realisation 0 unless given), and runs each in this process through
:func:`kernbench.runner.cell.compute.run_cell` (realisation, preprocessing, CV selection, refit,
test)
under cProfile; prints the cell's CPU, test error and chosen parameters and the top functions by
own time (``--sort cumulative`` for the call tree). A method that ``take``s a parameter from
another cell (CGENS-Fourier and RFF take SVM-RBF's γ) gets it with ``--take NAME=VALUE``.
``--no-profile`` runs the cells without cProfile and prints only their CPU, test error and chosen
parameters (cProfile adds 15-35 % to the CPU of the column-generation cells).

    OMP_NUM_THREADS=1 python benchmarks/profile_cell.py experiments/lin_li_table2.yaml \\
        --only method=SVM-Gauss --only dataset=german [--top 25] [--out profile.txt]
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import io
import pstats
import time
from pathlib import Path

from kernbench.runner.cell.compute import run_cell
from kernbench.runner.plan.cells import parse_only, plan_cells
from kernbench.specs.load import load_spec


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("spec", type=Path)
    parser.add_argument("--only", action="append", default=[])
    parser.add_argument("--take", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--sort", default="tottime")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--no-profile", action="store_true", help="time the cells only")
    args = parser.parse_args()
    only = parse_only(args.only)
    only.setdefault("realisation", ["0"])
    cells = plan_cells(load_spec(args.spec), only=only)
    report = io.StringIO()
    for cell in cells:
        if args.take:
            taken = {k: float(v) for k, v in (t.split("=", 1) for t in args.take)}
            cell = dataclasses.replace(cell, taken=tuple(sorted(taken.items())))
        prof = None if args.no_profile else cProfile.Profile()
        cpu = time.process_time()
        if prof is not None:
            prof.enable()
        rec = run_cell(cell)
        if prof is not None:
            prof.disable()
        cpu = time.process_time() - cpu
        print(
            f"== {cell.method.label} on {cell.dataset.label}, realisation {cell.realisation}: "
            f"{rec.status}, CPU {cpu:.2f} s ({'not ' if prof is None else ''}profiled), "
            f"test error {rec.test_error}, params {rec.params}",
            file=report,
        )
        if prof is not None:
            pstats.Stats(prof, stream=report).sort_stats(args.sort).print_stats(args.top)
    print(report.getvalue())
    if args.out:
        args.out.write_text(report.getvalue(), encoding="utf-8")


if __name__ == "__main__":
    main()
