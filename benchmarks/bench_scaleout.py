"""Scale-out: one table run at W = 1, 2, 4, … workers, locally (loky) and on a Dask LocalCluster.

Each run is the user's command in a fresh process, into a fresh results directory:
``kernbench run SPEC --jobs W --realisations R [--only ...] [--backend dask] [--threads T]``, so
worker start, imports and compiled-kernel loads are inside the wall time, as a user pays them.
Per run: the wall time, the speed-up over W = 1 of the same backend and over local W = 1
(``speedup_vs_local1``), the efficiency (speed-up over local W = 1 ÷ W), the cells' CPU (the sum of
each cell's ``cpu_time_s``, which counts the cell's threads, not its host's) and its ratio to
local W = 1, the run's CPU (driver, workers and scheduler: every process the command started),
the threads each cell got, and whether every cell's test error equals local W = 1's
(``identical``).

W runs over 1, 2, 4, … up to the cores this process may use, plus the core count itself, so the
script runs unchanged on a larger machine (``--workers 1,2,16`` picks others).

``--repeats N`` runs the whole sequence N times, one after the other (W = 1, 2, … then again), each
repeat against its own local W = 1, and ends with each configuration's median efficiency and
cells' CPU ratio: on a shared or virtual machine one run's wall times move by several per cent
from one minute to the next.

- default: ``lin_li_table1.yaml --realisations 4`` (336 cells, about 200 s of cell CPU);
- ``--quick``: the same spec, 1 realisation, the twonorm and ringnorm data sets (24 cells, about
  20 s of cell CPU): a check that the script works, not a measurement of scale-out.

Usage: ``python benchmarks/bench_scaleout.py [--quick] [--backends local,dask] [--workers 1,2]
[--dask-workers 2] [--threads T]``; writes ``benchmarks/results/bench_scaleout.csv`` (``--out``
to change).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _results import write_csv_with_machine

from kernbench.solvers.threads import available_cores

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).parent / "results" / "bench_scaleout.csv"
QUICK_ONLY = ["dataset=twonorm", "dataset=ringnorm"]


def become_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants (Linux): the Dask workers are
    forked by a fork server that outlives the command by a moment, so only a subreaper collects
    their CPU time into ``RUSAGE_CHILDREN``. False where that is not possible (the run's CPU then
    misses those processes)."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def reap_orphans(limit_s: float = 60.0) -> None:
    """Wait for the command's orphaned descendants to end (see :func:`become_subreaper`)."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return  # none left
        if pid == 0:
            time.sleep(0.05)
    print(f"processes the command started were still running after {limit_s:.0f} s")


def worker_counts(cores: int) -> list[int]:
    """1, 2, 4, … below ``cores``, then ``cores``."""
    counts, w = [], 1
    while w < cores:
        counts.append(w)
        w *= 2
    return counts + [cores]


def read_cells(store: Path) -> dict[tuple[str, int, str], tuple[str, float | None, float]]:
    """(dataset, realisation, method) -> (status, test error, cell CPU seconds)."""
    con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        rows = con.execute(
            "SELECT dataset, realisation, method, status, test_error, result FROM cells"
        ).fetchall()
    finally:
        con.close()
    out = {}
    for dataset, r, method, status, test_error, result in rows:
        cpu = float(json.loads(result or "{}").get("cpu_time_s") or 0.0)
        out[(dataset, int(r), method)] = (status, test_error, cpu)
    return out


def run_once(
    spec: str,
    backend: str,
    workers: int,
    realisations: int,
    only: list[str],
    threads: int | None,
    workdir: Path,
) -> tuple[float, float, dict]:
    out = workdir / f"{backend}-{workers}"
    cmd = [sys.executable, "-m", "kernbench", "run", spec, "--out", str(out)]
    cmd += ["--jobs", str(workers), "--realisations", str(realisations)]
    cmd += [f"--only={o}" for o in only]
    if backend == "dask":
        cmd += ["--backend", "dask"]
    if threads is not None:
        cmd += ["--threads", str(threads)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    reap_orphans()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    run_cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return wall, run_cpu, read_cells(out / "results.sqlite")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", default="experiments/lin_li_table1.yaml")
    parser.add_argument("--realisations", type=int, default=4)
    parser.add_argument("--only", action="append", default=[], help="as kernbench run --only")
    parser.add_argument("--quick", action="store_true", help="1 realisation, 2 data sets")
    parser.add_argument("--backends", default="local,dask")
    parser.add_argument("--workers", default="", help="comma-separated W (default 1, 2, 4, …)")
    parser.add_argument("--dask-workers", default="", help="W for Dask (default: --workers)")
    parser.add_argument("--threads", type=int, default=None, help="kernbench run --threads")
    parser.add_argument("--repeats", type=int, default=1, help="run the sequence N times")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    if not become_subreaper():
        print("not a subreaper here: the run's CPU misses processes that outlive the command")
    if args.quick:
        args.realisations, args.only = 1, args.only or QUICK_ONLY
    cores = available_cores()
    counts = [int(w) for w in args.workers.split(",") if w] or worker_counts(cores)
    dask_counts = [int(w) for w in args.dask_workers.split(",") if w] or counts
    backends = [b for b in args.backends.split(",") if b]
    rows: list[dict[str, object]] = []
    runs = [
        (repeat, backend, w)
        for repeat in range(args.repeats)
        for backend in backends
        for w in (dask_counts if backend == "dask" else counts)
    ]
    base: dict[str, tuple[float, dict]] = {}
    with tempfile.TemporaryDirectory(prefix="bench_scaleout_") as tmp:
        for repeat, backend, w in runs:
            if (backend, w) == (backends[0], (dask_counts if backend == "dask" else counts)[0]):
                base = {}  # each repeat against its own W = 1
            with tempfile.TemporaryDirectory(dir=tmp) as work:
                wall, run_cpu, cells = run_once(
                    args.spec, backend, w, args.realisations, args.only, args.threads, Path(work)
                )
            cpu = sum(c for _, _, c in cells.values())
            base.setdefault(backend, (wall, cells))
            base.setdefault("local1", base[backend])
            ref_wall, ref_cells = base["local1"]
            ref_cpu = sum(c for _, _, c in ref_cells.values())
            same = {k: v[:2] for k, v in cells.items()} == {k: v[:2] for k, v in ref_cells.items()}
            threads = args.threads or max(cores // w, 1)
            row = {
                "repeat": repeat,
                "spec": Path(args.spec).name,
                "realisations": args.realisations,
                "only": " ".join(args.only),
                "backend": backend,
                "workers": w,
                "threads_per_cell": threads,
                "cells": len(cells),
                "failed": sum(s != "done" for s, _, _ in cells.values()),
                "wall_s": round(wall, 2),
                "speedup": round(base[backend][0] / wall, 2),
                "speedup_vs_local1": round(ref_wall / wall, 2),
                "efficiency": round(ref_wall / wall / w, 2),
                "cells_cpu_s": round(cpu, 1),
                "cpu_vs_local1": round(cpu / ref_cpu, 2) if ref_cpu else "",
                "run_cpu_s": round(run_cpu, 1),
                "identical": same,
            }
            rows.append(row)
            print(
                f"#{repeat} {backend:>5} W={w:<3} threads/cell={threads:<2} "
                f"wall {wall:7.1f} s  "
                f"speed-up {row['speedup_vs_local1']:5.2f}x  efficiency "
                f"{row['efficiency']:4.2f}  cells' CPU {cpu:7.1f} s "
                f"({row['cpu_vs_local1']}x)  run's CPU {run_cpu:7.1f} s  identical {same}",
                flush=True,
            )
    if args.repeats > 1:
        for backend, w in dict.fromkeys((r["backend"], r["workers"]) for r in rows):
            mine = [r for r in rows if (r["backend"], r["workers"]) == (backend, w)]
            eff = statistics.median(float(r["efficiency"]) for r in mine)
            cpu = statistics.median(float(r["cpu_vs_local1"] or 1.0) for r in mine)
            print(
                f"median of {len(mine)}: {backend:>5} W={w:<3} efficiency {eff:4.2f}  "
                f"cells' CPU {cpu:4.2f}x local W=1"
            )
    write_csv_with_machine(args.out, rows, cores=cores)


if __name__ == "__main__":
    main()
