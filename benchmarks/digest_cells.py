"""Digests of the cell values a checkout computes, to show that a change moved no number.

Runs each paper spec (and ``grand``) at one realisation, on a subset that finishes in minutes,
with the checkout given by ``--code`` (a source tree, put first on ``PYTHONPATH``), then writes
one digest per cell of its value columns: status, errors, RMSE, model size, iterations, train
and test sizes, split and the chosen grid values. Times, cell ids, attempts, warnings and error
texts are left out (a refactor may rename a message; it must not move a number).

Two checkouts compared::

    python benchmarks/digest_cells.py run --code /path/before --out /tmp/digests/before
    python benchmarks/digest_cells.py run --code /path/after --out /tmp/digests/after
    python benchmarks/digest_cells.py compare /tmp/digests/before /tmp/digests/after

A spec stops after ``--spec-limit`` seconds (its cells done by then are compared; a cell done on
one side only is counted as not compared, never as a difference). Rerunning ``run`` resumes.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

#: (spec, --only filters): one realisation each; the filter keeps a spec to minutes on 2 cores
SUBSETS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("cgboost_fig1", ()),
    ("cgboost_table2", ("dataset=Ionosphere",)),
    ("cgboost_table5", ("dataset=letter-1k",)),
    ("cgens_fig1", ()),
    ("cgens_fig2", ("dataset=pendigits-1k",)),
    ("exrm_equivalence", ("dataset=heart",)),
    ("exrm_fig1_convergence", ()),
    ("exrm_fig1_lambda", ()),
    ("exrm_fig1_time", ()),
    ("exrm_table1", ("dataset=heart",)),
    ("exrm_table2", ("dataset=heart",)),
    ("exrm_table3", ("dataset=heart",)),
    ("lin_li_fig2", ()),
    ("lin_li_table1", ("dataset=heart",)),
    ("lin_li_table2", ("dataset=heart",)),
    ("multiboost_cw", ("dataset=wine",)),
    ("multiclass_uci", ("dataset=wine",)),
    ("spam_stumps", ()),
    ("uci_fourier_perceptron", ("dataset=heart",)),
    ("uci_stumps", ("dataset=heart",)),
    ("grand", ("dataset=heart",)),
)

#: columns that may differ between two runs of the same code (times, identities, texts)
_NOT_VALUES = {
    "fit_time_s",
    "predict_time_s",
    "select_time_s",
    "cpu_time_s",
    "cell_id",
    "attempts",
    "warnings",
    "error",
    "estimator",
}


def cell_digests(cells_csv: Path) -> dict[str, str]:
    """``dataset/realisation/method`` → sha256 of the done cell's value columns."""
    out: dict[str, str] = {}
    if not cells_csv.exists():
        return out
    with cells_csv.open(newline="") as f:
        for row in csv.DictReader(f):
            if row.get("status") != "done":
                continue
            key = f"{row['dataset']}/{row['realisation']}/{row['method']}"
            values = {k: v for k, v in sorted(row.items()) if k not in _NOT_VALUES and v != ""}
            out[key] = hashlib.sha256(json.dumps(values, sort_keys=True).encode()).hexdigest()
    return out


def run(code: Path, out: Path, spec_limit: float, jobs: int, specs: list[str] | None) -> int:
    env = dict(os.environ, PYTHONPATH=str(code.resolve()), OMP_NUM_THREADS="1")
    out.mkdir(parents=True, exist_ok=True)
    index = out / "digests.json"  # kept across calls: a call with --spec updates its specs only
    digests: dict[str, dict[str, str]] = json.loads(index.read_text()) if index.exists() else {}
    for spec, only in SUBSETS:
        if specs and spec not in specs:
            continue
        store = out / spec
        spec_file = code / "experiments" / f"{spec}.yaml"
        argv = [sys.executable, "-m", "kernbench", "run", str(spec_file)]
        argv += ["--out", str(store), "--realisations", "1", "--jobs", str(jobs)]
        for item in only:
            argv += ["--only", item]
        t0 = time.monotonic()
        try:
            done = subprocess.run(argv, env=env, cwd=code, capture_output=True, timeout=spec_limit)
            rc: int | str = done.returncode
        except subprocess.TimeoutExpired:
            rc = "time limit"
        digests[spec] = cell_digests(store / "cells.csv")
        print(f"{spec}: {len(digests[spec])} cells done, exit {rc}, {time.monotonic() - t0:.0f} s")
        index.write_text(json.dumps(digests, indent=1, sort_keys=True))
    return 0


def compare(before: Path, after: Path) -> int:
    a = json.loads((before / "digests.json").read_text())
    b = json.loads((after / "digests.json").read_text())
    differing = 0
    print("| spec | compared | identical | differing | done on one side only |")
    print("|---|---:|---:|---:|---:|")
    for spec in sorted(set(a) | set(b)):
        da, db = a.get(spec, {}), b.get(spec, {})
        both = sorted(set(da) & set(db))
        same = sum(da[k] == db[k] for k in both)
        differing += len(both) - same
        one_side = len(set(da) ^ set(db))
        print(f"| {spec} | {len(both)} | {same} | {len(both) - same} | {one_side} |")
        for k in both:
            if da[k] != db[k]:
                print(f"  differs: {spec} {k}")
    return 1 if differing else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="verb", required=True)
    r = sub.add_parser("run", help="run the subsets with one checkout and write digests.json")
    r.add_argument("--code", type=Path, required=True, help="the checkout (source tree) to run")
    r.add_argument("--out", type=Path, required=True)
    r.add_argument("--spec-limit", type=float, default=900.0, help="seconds per spec")
    r.add_argument("--jobs", type=int, default=2)
    r.add_argument("--spec", action="append", help="only these specs (repeatable)")
    c = sub.add_parser("compare", help="compare two digests.json folders")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.verb == "run":
        return run(args.code, args.out, args.spec_limit, args.jobs, args.spec)
    return compare(args.before, args.after)


if __name__ == "__main__":
    raise SystemExit(main())
