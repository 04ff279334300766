"""Calibrate the run-time estimate of ``kernbench validate`` / ``run --dry-run``.

Writes ``kernbench/progress/cost_calibration.py`` from three measurements:

* per estimator, CPU seconds per cell ``c × size ** p`` (size:
  :func:`kernbench.progress.cost.cell_units`),
  fitted on the logs to the mean CPU time of each (spec, dataset, method) in the shipped values
  files ``experiments/values/*.csv`` (each cell's ``cpu_s``, recorded with
  ``kernbench verify SPEC --record``), the cells located by planning their spec;
* the runner's own cost per cell: ``worker_ms_per_cell`` of the idle ``--jobs 2`` row of
  ``benchmarks/results/bench_noop_cell_idle.csv`` (``bench_noop_cell.py``);
* the start-up of a run (interpreter, imports, workers, a method's warm-up): ``kernbench run``
  of a one-cell spec at ``--jobs 2``, its wall time less the cell's, the median of ``--repeats``.

The per-fit rows are written to ``benchmarks/results/calibrate_cost_model.csv``. Needs the
values files' data sets (the mirror: ``KERNBENCH_MIRROR``).

    python benchmarks/calibrate_cost_model.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import csv
import datetime
import math
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from kernbench.progress.cost import cell_units
from kernbench.runner.plan.cells import plan_cells
from kernbench.specs.load import load_spec
from kernbench.specs.shipped import resolve_spec
from kernbench.store import Store

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import write_csv  # noqa: E402

ONE_CELL = """\
name: startup
datasets: [iris]
protocol: {n_realisations: 1, cv_folds: 1}
methods:
  Tree: {estimator: "sklearn.tree:DecisionTreeClassifier", params: {max_depth: 2}}
"""


def recorded_cells() -> dict[str, list[tuple[float, float]]]:
    """``estimator -> [(size, mean CPU seconds)]``, one entry per (spec, dataset, method)."""
    groups: dict[tuple[str, str, str, str], list[tuple[float, float]]] = defaultdict(list)
    for values in sorted((ROOT / "experiments" / "values").glob("*.csv")):
        spec = load_spec(resolve_spec(values.stem))
        cells = {c.cell_id[:16]: c for c in plan_cells(spec, max_cells=None)}
        with values.open(encoding="utf-8") as fh:
            rows = csv.DictReader(line for line in fh if not line.startswith("#"))
            for row in rows:
                cell = cells.get(row["cell"])
                if cell is None or not row.get("cpu_s"):
                    continue
                key = (values.stem, cell.dataset.label, cell.method.label, row["estimator"])
                size = cell_units(cell.dataset, cell.method, cell.protocol)
                groups[key].append((size, float(row["cpu_s"])))
    out: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for (_, _, _, estimator), pairs in groups.items():
        out[estimator].append((pairs[0][0], statistics.fmean(t for _, t in pairs)))
    return out


def fit(points: list[tuple[float, float]]) -> tuple[float, float]:
    """``(c, p)`` of ``c × size ** p``: least squares on the logs (times below 5 ms, the values
    files' resolution, count as 5 ms), ``p`` kept in [0, 1], ``c`` times the mean of the
    exponentiated residuals (Duan's smearing: the mean time, not the geometric one)."""
    x = np.log([size for size, _ in points])
    y = np.log(np.maximum([t for _, t in points], 0.005))
    p = float(np.clip(np.polyfit(x, y, 1)[0], 0.0, 1.0)) if len(set(x)) > 1 else 0.0
    a = float(np.mean(y - p * x))
    smear = float(np.mean(np.exp(y - a - p * x)))
    return math.exp(a) * smear, p


def per_cell_seconds() -> float:
    path = ROOT / "benchmarks" / "results" / "bench_noop_cell_idle.csv"
    with path.open(encoding="utf-8") as fh:
        row = next(r for r in csv.DictReader(fh) if r["backend"] == "local" and r["workers"] == "2")
    return float(row["worker_ms_per_cell"]) / 1000.0


def startup_seconds(repeats: int) -> list[float]:
    """Wall time of ``kernbench run`` on a one-cell spec, less the cell's own, per repeat."""
    found = []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as tmp:
            spec = Path(tmp) / "startup.yaml"
            spec.write_text(ONE_CELL, encoding="utf-8")
            out = Path(tmp) / "results"
            cmd = [sys.executable, "-m", "kernbench", "run", str(spec), "--jobs", "2"]
            t0 = time.perf_counter()
            subprocess.run([*cmd, "--out", str(out)], check=True, capture_output=True)
            wall = time.perf_counter() - t0
            with Store(out, readonly=True) as store:
                (row,) = store.summaries()
            found.append(wall - (row["finished_at"] - row["started_at"]))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--out", default=str(ROOT / "kernbench" / "progress" / "cost_calibration.py")
    )
    args = parser.parse_args()
    cells = recorded_cells()
    estimators = {}
    rows = []
    for estimator, points in sorted(cells.items()):
        c, p = fit(points)
        estimators[estimator] = (float(f"{c:.4g}"), round(p, 3))
        sizes = [s for s, _ in points]
        rows.append(
            {
                "estimator": estimator,
                "groups": len(points),
                "c_s": f"{c:.4g}",
                "p": round(p, 3),
                "size_min": min(sizes),
                "size_max": max(sizes),
                "mean_cpu_s": round(statistics.fmean(t for _, t in points), 4),
            }
        )
    write_csv(ROOT / "benchmarks" / "results" / "calibrate_cost_model.csv", rows)
    per_cell = per_cell_seconds()
    starts = startup_seconds(args.repeats)
    startup = statistics.median(starts)
    shown = [round(s, 2) for s in starts]
    print(f"per cell {per_cell:.4f} s; start-up {startup:.2f} s (repeats {shown})")
    today = datetime.date.today().isoformat()
    lines = "".join(f'        "{name}": ({a!r}, {k!r}),\n' for name, (a, k) in estimators.items())
    text = f'''"""Calibration of :mod:`kernbench.progress.cost`, written by
``benchmarks/calibrate_cost_model.py`` on {today} (the log:
``benchmarks/logs/cost_model.md``); do not edit by hand.

``estimators``: CPU seconds of a cell, ``c × size ** p``, fitted to the cells recorded in
``experiments/values/*.csv``; ``per_cell_s``: the runner's own cost per cell
(``bench_noop_cell_idle.csv``); ``startup_s``: a run's start-up at ``--jobs 2``.
"""

CALIBRATION = {{
    "estimators": {{
{lines}    }},
    "per_cell_s": {round(per_cell, 4)!r},
    "startup_s": {round(startup, 2)!r},
}}
'''
    Path(args.out).write_text(text, encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
