"""Fault harness (issue 6): kill trials, fuzzed specs and Dask worker kills, with a summary table.

* **kill trials** (>= 50): ``kernbench run`` on a 10-cell spec is SIGKILLed at a random moment (half
  of the trials while the driver sleeps inside a store transaction, i.e. mid-commit; jobs 1 and 2),
  then rerun; the store must hold every cell exactly once, with the numbers of an uninterrupted
  run, and pass ``PRAGMA integrity_check``;
* **fuzzed specs** (>= 500 mutations + the malicious documents of tests/reliability/spec_fuzz.py):
  every one must exit 2 naming the key path (or be a valid spec), never a traceback or exit 3, and
  create nothing;
* **Dask worker kills**: on a 2-worker LocalCluster (127.0.0.1) the busiest worker is SIGKILLed
  after the first cell returns; no cell may be lost.

Writes one row per trial to ``benchmarks/results/fault_harness.csv`` and prints the summary.

Usage: ``python benchmarks/fault_harness.py [--kill-trials 50] [--fuzz 500] [--dask-trials 5]``
"""

from __future__ import annotations

import argparse
import csv
import logging
import os
import signal
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "reliability"))

import reliability_harness as rh  # noqa: E402
import spec_fuzz as sf  # noqa: E402

RESULTS = HERE / "results" / "fault_harness.csv"
FIELDS = ["kind", "trial", "mode", "detail", "ok", "lost", "duplicated", "mismatched", "seconds"]


def kill_trials(n: int, root: Path, seed: int) -> list[dict]:
    spec = rh.write_spec(root)
    reference = rh.run_reference(spec, root / "reference")
    rng = np.random.default_rng(seed)
    rows = []
    for t in range(n):
        mode = "commit" if t % 2 == 0 else "random"
        jobs = 1 if t % 4 < 2 else 2
        t0 = time.perf_counter()
        trial = rh.kill_trial(t, spec, root / f"kill{t}", reference, rng, mode=mode, jobs=jobs)
        c = trial.check
        rows.append(
            {
                "kind": "kill",
                "trial": t,
                "mode": f"{mode}/jobs={jobs}",
                "detail": f"rows at kill {trial.rows_at_kill}/{rh.N_CELLS}"
                + (" (run had ended)" if trial.exit_before_kill is not None else ""),
                "ok": c.ok,
                "lost": c.missing,
                "duplicated": c.duplicated,
                "mismatched": c.mismatched + (0 if c.integrity_ok else 1),
                "seconds": round(time.perf_counter() - t0, 2),
            }
        )
        print(f"kill {t:3d} {rows[-1]['mode']:16s} {rows[-1]['detail']:32s} ok={c.ok}", flush=True)
    return rows


def fuzz_cases(n: int, root: Path, seed: int) -> list[dict]:
    import pytest
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as hypothesis_seed

    rows: list[dict] = []
    root.mkdir(parents=True, exist_ok=True)

    def record(text: str, description: str, kind: str) -> None:
        t0 = time.perf_counter()
        with pytest.MonkeyPatch.context() as mp:
            mp.chdir(root)
            outcome = sf.run_case(text, description, root / f"fuzz{len(rows)}", mp)
        ok = outcome.kind == "accepted" or (
            outcome.kind == "rejected" and sf.names_a_place(outcome)
        )
        rows.append(
            {
                "kind": kind,
                "trial": len(rows),
                "mode": outcome.kind,
                "detail": f"{description}: {outcome.key_path or outcome.message[:80]}",
                "ok": ok and not (root / "pwned").exists(),
                "lost": 0,
                "duplicated": 0,
                "mismatched": int(outcome.traceback or outcome.exit_code not in (0, 2)),
                "seconds": round(time.perf_counter() - t0, 3),
            }
        )

    for description, text in sf.RAW_DOCS:
        record(text, description, "malicious")

    @settings(
        max_examples=n,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @hypothesis_seed(seed)
    @given(sf.mutated_specs())
    def run(case: tuple[str, str]) -> None:
        record(case[0], case[1], "fuzz")

    run()
    return rows


def dask_trials(n: int, root: Path) -> list[dict]:
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        print("dask not installed: skipping the worker-kill trials (pip install 'kernbench[dask]')")
        return []
    from kernbench.runner.execute import run_experiment
    from kernbench.spec import load_spec

    spec_path = rh.write_spec(root)
    reference = rh.cell_table(root / "reference")
    rows = []
    with (
        LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            host="127.0.0.1",
            dashboard_address=None,
            silence_logs=logging.ERROR,
        ) as cluster,
        Client(cluster) as client,
    ):
        for t in range(n):
            client.wait_for_workers(2, timeout=300)
            pids = client.run(os.getpid)
            killed: dict = {}

            def kill_busiest(rec, pids=pids, killed=killed) -> None:
                if killed:
                    return
                busy = client.processing()
                addr = max(pids, key=lambda a: len(busy.get(a, ())))
                killed.update(in_flight=len(busy.get(addr, ())))
                os.kill(pids[addr], signal.SIGKILL)

            t0 = time.perf_counter()
            out = root / f"dask{t}"
            summary = run_experiment(
                load_spec(spec_path),
                out_dir=out,
                backend="dask",
                scheduler=cluster.scheduler_address,
                on_cell=kill_busiest,
            )
            c = rh.check_store(out, reference)
            rows.append(
                {
                    "kind": "dask-worker-kill",
                    "trial": t,
                    "mode": "sigkill busiest worker after 1st cell",
                    "detail": f"{killed.get('in_flight', 0)} task(s) on it; {summary.counts}",
                    "ok": c.ok and bool(killed),
                    "lost": c.missing,
                    "duplicated": c.duplicated,
                    "mismatched": c.mismatched,
                    "seconds": round(time.perf_counter() - t0, 2),
                }
            )
            print(f"dask {t:3d} {rows[-1]['detail']} ok={rows[-1]['ok']}", flush=True)
    return rows


def summarise(rows: list[dict]) -> list[list[str]]:
    table = []
    for kind in ("kill", "malicious", "fuzz", "dask-worker-kill"):
        part = [r for r in rows if r["kind"] == kind]
        if not part:
            continue
        modes = Counter(r["mode"] for r in part)
        table.append(
            [
                kind,
                str(len(part)),
                str(sum(r["lost"] for r in part)),
                str(sum(r["duplicated"] for r in part)),
                str(sum(r["mismatched"] for r in part)),
                str(sum(not r["ok"] for r in part)),
                ", ".join(f"{m}: {c}" for m, c in sorted(modes.items())),
                f"{np.median([r['seconds'] for r in part]):.2f}",
            ]
        )
    return table


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kill-trials", type=int, default=50)
    parser.add_argument("--fuzz", type=int, default=500)
    parser.add_argument("--dask-trials", type=int, default=5)
    parser.add_argument("--seed", type=int, default=20261126)
    args = parser.parse_args()
    os.environ.setdefault("KERNBENCH_PROGRESS", "0")
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="kernbench-faults-") as tmp:
        root = Path(tmp)
        rows += fuzz_cases(args.fuzz, root / "fuzz", args.seed)
        rows += kill_trials(args.kill_trials, root, args.seed)
        if args.dask_trials:
            rows += dask_trials(args.dask_trials, root)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    with RESULTS.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    header = [
        "check",
        "trials",
        "cells lost",
        "cells duplicated",
        "mismatched/tracebacks",
        "failed",
        "outcomes",
        "median s",
    ]
    table = summarise(rows)
    widths = [max(len(h), *(len(r[i]) for r in table)) for i, h in enumerate(header)]
    print()
    print(" | ".join(h.ljust(w) for h, w in zip(header, widths)))
    print("-|-".join("-" * w for w in widths))
    for r in table:
        print(" | ".join(c.ljust(w) for c, w in zip(r, widths)))
    print(f"\nper-trial rows: {RESULTS}")
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
