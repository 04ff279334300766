"""The fixed cost of a cell: a cell that does nothing, through the real runner, local and Dask.

The cell fits scikit-learn's ``DummyClassifier`` (no grid) on a 20-row twonorm sample, so what
it costs is the runner's own: handing the cell to a worker, building the realisation, the
record, its way back, the store transaction and the progress line. Each configuration runs
:func:`kernbench.runner.run.run_experiment` in this process twice, with ``--small`` and
``--large`` cells, into fresh results directories; the difference of the two wall times over
the difference of the cell counts is the cost of one more cell, free of the start-up (worker
start, imports, a method's warm-up) that both runs pay once: loky keeps its workers between
runs of one process, the Dask configuration runs on one LocalCluster kept for its runs, and an
untimed run first warms the workers. Printed per configuration: that
marginal wall time per cell, the same times the workers (the worker time one cell holds), and
the marginal CPU per cell of every process of the run (driver, workers, a Dask scheduler): on a
loaded machine the wall figures mostly measure the wait for a core, the CPU figure does not.

Configurations: ``local`` with ``--jobs 1`` (cells inline in the driver) and ``--jobs 2``
(loky workers), ``dask`` with a 2-worker LocalCluster (``--backends`` and ``--workers`` pick
others). Targets: ≤ 20 ms per cell local and ≤ 50 ms on Dask.

Usage: ``python benchmarks/bench_noop_cell.py [--small 20] [--large 220] [--backends local,dask]
[--workers 1,2]``; writes ``benchmarks/results/bench_noop_cell.csv`` (``--out`` to change).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import tempfile
import time
from pathlib import Path

from _results import write_csv_with_machine

from kernbench.runner.execution.dask_client import dask_client

RESULTS = Path(__file__).parent / "results" / "bench_noop_cell.csv"
SPEC = """\
name: noop
datasets:
  - {{name: twonorm, options: {{n_train: 20, n_test: 20}}, protocol: {{preprocess: null}}}}
protocol: {{realisations: random, n_realisations: {n}, seed: 0, cv_folds: 2}}
methods:
  Dummy: {{estimator: "sklearn.dummy:DummyClassifier"}}
"""


def tree_cpu() -> float:
    """CPU seconds of this process, its live descendants (loky's workers) and its reaped
    children (a finished Dask cluster's workers)."""
    import psutil  # a dependency of dask.distributed

    spent = time.process_time()
    for child in psutil.Process().children(recursive=True):
        try:
            times = child.cpu_times()
        except psutil.Error:
            continue
        spent += times.user + times.system
    reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
    return spent + reaped.ru_utime + reaped.ru_stime


def timed_run(
    workdir: Path, n: int, backend: str, workers: int, scheduler: str | None = None
) -> tuple[float, float]:
    """Wall and CPU seconds (:func:`tree_cpu`) of one ``kernbench run`` of ``n`` no-op cells
    (all of them done)."""
    from kernbench.runner.options import RunOptions
    from kernbench.runner.run import run_experiment
    from kernbench.specs.load import load_spec

    spec_path = workdir / f"noop-{n}.yaml"
    spec_path.write_text(SPEC.format(n=n))
    out = Path(tempfile.mkdtemp(prefix=f"{backend}-{workers}-{n}-", dir=workdir))  # fresh
    spec = load_spec(spec_path)
    start, cpu = time.perf_counter(), tree_cpu()
    summary = run_experiment(
        spec, RunOptions(out_dir=out, jobs=workers, backend=backend, scheduler=scheduler)
    )
    wall, cpu = time.perf_counter() - start, tree_cpu() - cpu
    done = summary.counts.get("done", 0)
    if done != n:
        raise SystemExit(f"{backend} --jobs {workers}: {done} of {n} cells done")
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=20, help="cells of the short run")
    parser.add_argument("--large", type=int, default=220, help="cells of the long run")
    parser.add_argument("--backends", default="local,dask")
    parser.add_argument("--workers", default="1,2", help="local --jobs values (Dask: the largest)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    counts = [int(w) for w in args.workers.split(",") if w]
    configs = []
    for backend in (b for b in args.backends.split(",") if b):
        configs += (
            [(backend, w) for w in counts] if backend == "local" else [(backend, max(counts))]
        )
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_noop_") as tmp:
        for backend, workers in configs:
            with contextlib.ExitStack() as stack:
                scheduler = None
                if backend == "dask":  # one cluster for the three runs, as loky keeps its pool
                    client = stack.enter_context(dask_client(None, workers))  # a LocalCluster
                    scheduler = client.scheduler.address
                runs = [
                    timed_run(Path(tmp), n, backend, workers, scheduler)
                    for n in (args.small, args.small, args.large)  # the first warms the workers
                ]
            (small, small_cpu), (large, large_cpu) = runs[1:]
            per_cell = (large - small) / (args.large - args.small)
            cpu_per_cell = (large_cpu - small_cpu) / (args.large - args.small)
            row = {
                "backend": backend,
                "workers": workers,
                "small_cells": args.small,
                "large_cells": args.large,
                "small_wall_s": round(small, 3),
                "large_wall_s": round(large, 3),
                "ms_per_cell": round(1e3 * per_cell, 2),
                "worker_ms_per_cell": round(1e3 * per_cell * workers, 2),
                "cpu_ms_per_cell": round(1e3 * cpu_per_cell, 2),
            }
            rows.append(row)
            print(
                f"{backend:>5} workers={workers}  {row['ms_per_cell']:7.2f} ms per cell "
                f"({row['worker_ms_per_cell']:.2f} ms of worker time, {row['cpu_ms_per_cell']:.2f} "
                f"ms of CPU in all processes); runs of {args.small} and "
                f"{args.large} cells: {small:.2f} s, {large:.2f} s",
                flush=True,
            )
    write_csv_with_machine(args.out, rows, cpu_count=os.cpu_count())


if __name__ == "__main__":
    main()
