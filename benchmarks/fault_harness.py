"""Fault harness (issues 6 and 17): kill trials, fuzzed and hostile specs, store and disk faults,
Dask worker and scheduler kills, with a summary table. ``make faults`` runs it (< 10 min, 2 cores).

* **kill trials**: ``kernbench run`` on a 10-cell spec is SIGKILLed at a random moment (half of
  the trials while the driver sleeps inside a store transaction, i.e. mid-commit; jobs 1 and 2),
  then rerun; the store must hold every cell exactly once, with the numbers of an uninterrupted
  run, and pass ``PRAGMA integrity_check``;
* **--fresh interrupts**: ``run --fresh`` on a finished store is stopped by SIGTERM, SIGINT or
  SIGKILL while it recomputes; without any rerun, every cell must still be finished with the
  numbers of the uninterrupted run (a replacement only lands once it has finished);
* **fuzzed specs** (>= 500 mutations + the hostile documents of tests/reliability/spec_fuzz.py:
  YAML tags, alias and merge-key bombs, a million cells, names with newlines, reference files
  outside the spec's directory, bidirectional overrides): every one must exit 2 naming the key
  path (or be a valid spec), never a traceback or exit 3, create nothing, print no raw control
  or bidi character, and stay under 200 MB of Python allocations (tracemalloc peak);
* **store and disk faults**: a 0-byte, corrupted or foreign store, a read-only results directory,
  a full disk (sqlite's own "database or disk is full", ENOSPC on the CSV), a directory named
  cells.csv, ``--out`` naming a file, a non-CSV reference, a ``-wal`` deleted mid-run (restored
  from the backup): each ends in its expected exit code (2 with one line, or 0), never 3;
* **Dask**: on a fresh 2-worker LocalCluster (127.0.0.1) per trial, the busiest worker is
  SIGKILLed after the first cell returns; a scheduler killed mid-run is exit 2 and a rerun
  completes. No cell may be lost.

Writes one row per trial to ``benchmarks/results/fault_harness.csv`` and prints the summary.

Usage: ``python benchmarks/fault_harness.py [--kill-trials 40] [--fresh-trials 12] [--fuzz 500]
[--dask-trials 3] [--scheduler-trials 1]``
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections import Counter
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "reliability"))

import reliability_harness as rh  # noqa: E402
import spec_fuzz as sf  # noqa: E402

RESULTS = HERE / "results" / "fault_harness.csv"
FIELDS = [
    "kind",
    "trial",
    "mode",
    "detail",
    "ok",
    "lost",
    "duplicated",
    "mismatched",
    "exit",
    "peak_mb",
    "seconds",
]
_BIDI = {chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F)}


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
            _row(
                "kill",
                t,
                f"{mode}/jobs={jobs}",
                f"rows at kill {trial.rows_at_kill}/{rh.N_CELLS}"
                + (" (run had ended)" if trial.exit_before_kill is not None else ""),
                c.ok,
                c,
                t0,
            )
        )
        print(f"kill {t:3d} {rows[-1]['mode']:16s} {rows[-1]['detail']:32s} ok={c.ok}", flush=True)
    return rows


def fresh_trials(n: int, root: Path, seed: int) -> list[dict]:
    """``run --fresh`` stopped by SIGTERM, SIGINT or SIGKILL; no rerun before the check."""
    spec = root / "faults.yaml"
    reference = rh.cell_table(root / "reference")
    rng = np.random.default_rng(seed + 1)
    sigs = (signal.SIGTERM, signal.SIGINT, signal.SIGKILL)
    rows = []
    for t in range(n):
        sig, jobs = sigs[t % 3], 1 + (t // 3) % 2
        t0 = time.perf_counter()
        trial = rh.fresh_interrupt_trial(
            spec, root / "reference", root / f"fresh{t}", reference, rng, sig=sig, jobs=jobs
        )
        c = trial.check
        # 128 + sig: stopped by kernbench's handler; -sig: the signal landed while Python was
        # starting, before the handler was installed (a shell shows 128 + sig for both)
        clean = (
            sig == signal.SIGKILL
            or trial.returncode == -sig
            or (trial.returncode == 128 + sig and "Traceback" not in trial.stderr)
        )
        ok = c.ok and c.statuses == {"done": rh.N_CELLS} and clean
        detail = f"{trial.archived_at_signal} replaced before the signal; exit {trial.returncode}"
        rows.append(_row("kill", n + t, f"fresh/{trial.signal}/jobs={jobs}", detail, ok, c, t0))
        print(f"fresh {t:3d} {trial.signal:8s} {detail:40s} ok={ok}", flush=True)
    return rows


def _row(kind, trial, mode, detail, ok, check=None, t0=None, **extra) -> dict:
    row = {
        "kind": kind,
        "trial": trial,
        "mode": mode,
        "detail": detail,
        "ok": bool(ok),
        "lost": check.missing if check else 0,
        "duplicated": check.duplicated if check else 0,
        "mismatched": (check.mismatched + (0 if check.integrity_ok else 1)) if check else 0,
        "exit": "",
        "peak_mb": "",
        "seconds": round(time.perf_counter() - t0, 3) if t0 is not None else 0.0,
    }
    row.update(extra)
    return row


def fuzz_cases(n: int, root: Path, seed: int) -> list[dict]:
    import pytest
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as hypothesis_seed

    rows: list[dict] = []
    root.mkdir(parents=True, exist_ok=True)
    tracemalloc.start()

    def record(text: str, description: str, kind: str) -> None:
        t0 = time.perf_counter()
        tracemalloc.reset_peak()
        with pytest.MonkeyPatch.context() as mp:
            mp.chdir(root)
            outcome = sf.run_case(text, description, root / f"fuzz{len(rows)}", mp)
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        ok = outcome.kind == "accepted" or (
            outcome.kind == "rejected" and sf.names_a_place(outcome)
        )
        raw = any(ch in _BIDI for ch in outcome.message)
        rows.append(
            _row(
                kind,
                len(rows),
                outcome.kind,
                f"{description}: {outcome.key_path or outcome.message[:80]}",
                ok and not (root / "pwned").exists() and not raw and peak <= 200,
                t0=t0,
                mismatched=int(outcome.traceback or outcome.exit_code not in (0, 2)),
                exit=outcome.exit_code,
                peak_mb=round(peak, 1),
            )
        )
        shutil.rmtree(root / f"fuzz{len(rows) - 1}", ignore_errors=True)

    try:
        for description, text in sf.RAW_DOCS:
            record(text, description, "hostile")

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
    finally:
        tracemalloc.stop()
    return rows


# -- store and disk faults -------------------------------------------------------------------
_SMALL = rh.STORE_FAULT_SPEC


@contextlib.contextmanager
def _read_only(directory: Path):
    """Unwritable even for root (the immutable attribute); yields False when impossible."""
    directory.chmod(0o555)
    immutable = False
    try:
        if os.access(directory, os.W_OK):
            done = subprocess.run(["chattr", "+i", str(directory)], capture_output=True)
            immutable = done.returncode == 0
        yield not os.access(directory, os.W_OK)
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(directory)], check=False)
        directory.chmod(0o755)


@contextlib.contextmanager
def _env(**values: str):
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def store_fault_cases(root: Path, spec10: Path, reference: dict) -> list[dict]:
    """Each fault through the CLI in-process; expected exit and one line, never exit 3."""
    import yaml
    from typer.testing import CliRunner

    from kernbench.cli import app

    cli = CliRunner()
    root.mkdir(parents=True, exist_ok=True)
    spec = root / "small.yaml"
    spec.write_text(yaml.safe_dump(_SMALL), encoding="utf-8")
    finished = root / "finished"
    assert cli.invoke(app, ["run", str(spec), "--out", str(finished), "--jobs", "1"]).exit_code == 0
    rows: list[dict] = []

    def fresh_copy(name: str) -> Path:
        out = root / name
        shutil.copytree(finished, out)
        return out

    def case(name: str, args: list, expect: int = 2, needle: str = "") -> None:
        t0 = time.perf_counter()
        res = cli.invoke(app, [str(a) for a in args])
        text = res.output.strip()
        one_line = expect == 0 or (text.startswith("error:") and len(text.splitlines()) == 1)
        ok = res.exit_code == expect and one_line and "Traceback" not in text and needle in text
        rows.append(_row("store-fault", len(rows), name, text[:160], ok, t0=t0, exit=res.exit_code))
        print(f"store {name:38s} exit {res.exit_code} ok={ok}", flush=True)

    empty = root / "empty"
    empty.mkdir()
    (empty / "results.sqlite").touch()
    case("0-byte store: table", ["table", empty], needle="0 bytes")
    case("0-byte store: run --dry-run", ["run", spec, "--out", empty, "--dry-run"])
    case("0-byte store: run", ["run", spec, "--out", empty, "--jobs", "1"])
    rows[-1]["ok"] &= (empty / "results.sqlite").stat().st_size == 0  # never recreated
    bad = fresh_copy("corrupt")
    data = bytearray((bad / "results.sqlite").read_bytes())
    data[4096:] = b"\xa5" * (len(data) - 4096)
    (bad / "results.sqlite").write_bytes(bytes(data))
    case("corrupted page: table", ["table", bad], needle="kernbench restore")
    case("corrupted page: run", ["run", spec, "--out", bad, "--jobs", "1"])
    case("corrupted page: restore", ["restore", bad], expect=0)
    foreign = root / "foreign"
    foreign.mkdir()
    (foreign / "results.sqlite").write_text("notes\n" * 1000, encoding="utf-8")
    case("foreign file as store: run", ["run", spec, "--out", foreign, "--jobs", "1"])
    ro = fresh_copy("readonly")
    (ro / ".kernbench.lock").unlink()
    with _read_only(ro) as effective:
        if effective:
            case("read-only dir: table", ["table", ro, "--no-reference"], expect=0)
            case("read-only dir: run (.kernbench.lock)", ["run", spec, "--out", ro])
    ro2 = fresh_copy("readonly2")  # the lock file exists: the store/CSV writes fail instead
    with _read_only(ro2) as effective:
        if effective:
            case("read-only dir: run (store, cells.csv.tmp)", ["run", spec, "--out", ro2])
    many = dict(_SMALL, protocol={**_SMALL["protocol"], "n_realisations": 40})
    spec40 = root / "small40.yaml"
    spec40.write_text(yaml.safe_dump(many), encoding="utf-8")
    with _env(KERNBENCH_FAULT_MAX_PAGES="12"):
        case(
            "disk full (sqlite)",
            ["run", spec40, "--out", root / "full", "--jobs", "1"],
            needle="database or disk is full",
        )
    case("disk full: space freed, rerun", ["run", spec40, "--out", root / "full"], expect=0)
    with _env(KERNBENCH_FAULT_ENOSPC="1"):
        case(
            "ENOSPC on cells.csv",
            ["run", spec, "--out", root / "enospc", "--jobs", "1"],
            needle="No space left",
        )
    (root / "csvdir" / "cells.csv").mkdir(parents=True)
    case("directory named cells.csv", ["run", spec, "--out", root / "csvdir"])
    case("--out naming a file", ["run", spec, "--out", spec])
    case("--out naming a file, --dry-run", ["run", spec, "--out", spec, "--dry-run"])
    (root / "ref").mkdir()
    (root / "ref" / "ref.csv").write_bytes(bytes(range(256)) * 8)
    ref_spec = root / "ref" / "spec.yaml"
    ref_spec.write_text(
        yaml.safe_dump({**_SMALL, "table": {"reference": {"file": "ref.csv"}}}), encoding="utf-8"
    )
    assert cli.invoke(app, ["run", str(ref_spec), "--out", str(root / "refres")]).exit_code == 0
    case("non-CSV reference file: table", ["table", root / "refres"], needle="no-reference")
    case("restore without a backup", ["restore", empty], needle="no backup")

    t0 = time.perf_counter()
    trial = rh.wal_delete_trial(spec10, root / "wal", reference)
    ok = trial.lost > 0 and trial.run_exit == 2 and trial.restore_exit == 0 and trial.check.ok
    detail = f"{trial.lost} cells gone with the WAL; {trial.restored} back from the backup"
    rows.append(
        _row("store-fault", len(rows), "-wal deleted mid-run, kill, restore", detail, ok,
             trial.check, t0, exit=trial.run_exit)
    )  # fmt: skip
    print(f"store -wal deleted: {detail} ok={ok}", flush=True)
    return rows


# -- Dask ------------------------------------------------------------------------------------
def dask_trials(n: int, n_scheduler: int, root: Path) -> list[dict]:
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        print("dask not installed: skipping the Dask trials (pip install 'kernbench[dask]')")
        return []
    from kernbench.runner.execute import run_experiment
    from kernbench.spec import load_spec

    spec_path = root / "faults.yaml"
    reference = rh.cell_table(root / "reference")
    rows = []
    for t in range(n):
        # a fresh cluster per trial: a worker killed in the previous trial cannot stall this one
        t0 = time.perf_counter()
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
            client.wait_for_workers(2, timeout=120)
            pids = client.run(os.getpid)
            killed: dict = {}

            def kill_busiest(rec, pids=pids, killed=killed, client=client) -> None:
                if killed:
                    return
                busy = client.processing()
                addr = max(pids, key=lambda a: len(busy.get(a, ())))
                killed.update(in_flight=len(busy.get(addr, ())))
                os.kill(pids[addr], signal.SIGKILL)

            out = root / f"dask{t}"
            summary = run_experiment(
                load_spec(spec_path),
                out_dir=out,
                backend="dask",
                scheduler=cluster.scheduler_address,
                on_cell=kill_busiest,
            )
        c = rh.check_store(out, reference)
        detail = f"{killed.get('in_flight', 0)} task(s) on it; {summary.counts}"
        rows.append(
            _row("dask-kill", t, "sigkill busiest worker after 1st cell", detail,
                 c.ok and bool(killed), c, t0)
        )  # fmt: skip
        print(f"dask {t:3d} {detail} ok={rows[-1]['ok']}", flush=True)
    for t in range(n_scheduler):
        t0 = time.perf_counter()
        trial = rh.scheduler_kill_trial(spec_path, root / f"sched{t}", reference)
        clean = trial.exit_code == 2 and "Traceback" not in trial.stderr
        ok = clean and "lost the Dask scheduler" in trial.stderr and trial.check.ok
        detail = f"exit {trial.exit_code}, {trial.rows_at_kill} rows at the kill; rerun ok"
        rows.append(
            _row("dask-kill", n + t, "sigkill scheduler mid-run", detail, ok, trial.check, t0,
                 exit=trial.exit_code)
        )  # fmt: skip
        print(f"scheduler {t:3d} {detail} ok={ok}", flush=True)
    return rows


def summarise(rows: list[dict]) -> list[list[str]]:
    table = []
    for kind in ("kill", "hostile", "fuzz", "store-fault", "dask-kill"):
        part = [r for r in rows if r["kind"] == kind]
        if not part:
            continue
        if kind == "store-fault":
            modes = Counter(f"exit {r['exit']}" for r in part)
        elif kind == "dask-kill":
            modes = Counter("scheduler" if "scheduler" in r["mode"] else "worker" for r in part)
        else:
            modes = Counter(r["mode"].split("/")[0] for r in part)
        peaks = [r["peak_mb"] for r in part if r["peak_mb"] != ""]
        exits = Counter(r["exit"] for r in part if r["exit"] != "")
        table.append(
            [
                kind,
                str(len(part)),
                str(sum(r["lost"] for r in part)),
                str(sum(r["duplicated"] for r in part)),
                str(sum(r["mismatched"] for r in part)),
                str(sum(not r["ok"] for r in part)),
                str(exits.get(3, 0)),
                f"{max(peaks):.1f}" if peaks else "-",
                ", ".join(f"{m}: {c}" for m, c in sorted(modes.items()))[:60],
                f"{sum(r['seconds'] for r in part):.0f}",
            ]
        )
    return table


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kill-trials", type=int, default=40)
    parser.add_argument("--fresh-trials", type=int, default=12)
    parser.add_argument("--fuzz", type=int, default=500)
    parser.add_argument("--dask-trials", type=int, default=3)
    parser.add_argument("--scheduler-trials", type=int, default=1)
    parser.add_argument("--no-store-faults", action="store_true")
    parser.add_argument("--seed", type=int, default=20261126)
    args = parser.parse_args()
    os.environ.setdefault("KERNBENCH_PROGRESS", "0")
    start = time.perf_counter()
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="kernbench-faults-") as tmp:
        root = Path(tmp)
        rows += fuzz_cases(args.fuzz, root / "fuzz", args.seed)
        rows += kill_trials(args.kill_trials, root, args.seed)
        rows += fresh_trials(args.fresh_trials, root, args.seed)
        if not args.no_store_faults:
            reference = rh.cell_table(root / "reference")
            rows += store_fault_cases(root / "store", root / "faults.yaml", reference)
        if args.dask_trials or args.scheduler_trials:
            rows += dask_trials(args.dask_trials, args.scheduler_trials, root)
    total = time.perf_counter() - start
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    with RESULTS.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    header = [
        "check",
        "trials",
        "cells lost",
        "duplicated",
        "mismatched/tracebacks",
        "failed",
        "exit 3",
        "peak MB",
        "outcomes",
        "total s",
    ]
    table = summarise(rows)
    widths = [max(len(h), *(len(r[i]) for r in table)) for i, h in enumerate(header)]
    print()
    print(" | ".join(h.ljust(w) for h, w in zip(header, widths)))
    print("-|-".join("-" * w for w in widths))
    for r in table:
        print(" | ".join(c.ljust(w) for c, w in zip(r, widths)))
    failed = [r for r in rows if not r["ok"]]
    for r in failed[:20]:
        print(f"FAILED {r['kind']} {r['trial']} {r['mode']}: {r['detail']}")
    print(f"\n{len(rows)} trials, {len(failed)} failed, total {total:.0f} s ({total / 60:.1f} min)")
    print(f"per-trial rows: {RESULTS}")
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())
