"""Combine the results stores of one experiment run on several machines (``kernbench merge``).

Cells are matched by identity (``cell_id``: the hash of everything that changes a result), so the
same cell computed twice is one cell. For each identity the merged store keeps

* a ``done`` (or ``skipped``) row over any unfinished one (``failed``, ``timeout``, ...);
* among unfinished rows, the most recent;
* among finished rows, the first in argument order (an existing ``--out`` store counts first) —
  and when two finished rows disagree on the numbers (test/train error, a regressor's test/train
  RMSE, chosen parameters, status),
  the pair is reported as a **conflict**: the same inputs gave different results somewhere (a
  different BLAS, a nondeterministic solver, an edited working tree under an unchanged version).
  The copy not kept goes to the merged store's ``history``, its reason naming its source.

Only stores of the same experiment (spec ``name``) can be merged. The merged store keeps the
first store's spec and its recorded plan, so its tables show that spec's cells, as ``kernbench
table`` does for any store (a warning names the stores whose specs differ).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kernbench.cells.identity import dumps
from kernbench.cells.records import FINAL_STATUSES
from kernbench.errors import KernbenchError
from kernbench.store.lock import RunLock
from kernbench.store.sqlite import STORE_FILE, Store

#: the numbers two finished copies of a cell must agree on
COMPARED = ("status", "test_error", "train_error", "test_rmse", "train_rmse", "params")
#: of those, the ones a row keeps in its ``result`` (a regressor's errors)
_IN_RESULT = ("test_rmse", "train_rmse")


@dataclass
class Conflict:
    """One cell identity whose finished copies disagree."""

    cell_id: str
    key: tuple[str, int, str]
    kept: tuple[str, dict[str, Any]]
    other: tuple[str, dict[str, Any]]
    #: the whole row not kept (the merged store keeps it in ``history``)
    dropped: dict[str, Any] = field(default_factory=dict)

    def describe(self) -> str:
        dataset, r, method = self.key
        (src_a, a), (src_b, b) = self.kept, self.other
        diffs = ", ".join(f"{k}: {a[k]!r} vs {b[k]!r}" for k in COMPARED if a[k] != b[k])
        return f"{dataset} / r={r} / {method} ({self.cell_id[:12]}): {diffs} [{src_a} vs {src_b}]"


@dataclass
class MergeReport:
    """What a merge read, kept and found."""

    out_dir: Path
    sources: list[Path]
    rows_read: int = 0
    cells: int = 0
    duplicates: int = 0
    finished: int = 0
    conflicts: list[Conflict] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.conflicts


def _numbers(row: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for k in COMPARED:
        if k in _IN_RESULT:
            out[k] = (row.get("result") or {}).get(k)
        else:
            out[k] = dumps(row[k]) if k == "params" else row[k]
    return out


def _rank(row: dict[str, Any]) -> int:
    return 1 if row["status"] in FINAL_STATUSES else 0


def _comparable_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """The spec minus what legitimately differs between machines (file paths)."""
    out = {k: v for k, v in spec.items() if k != "path"}
    table = dict(out.get("table") or {})
    table.pop("reference", None)
    out["table"] = table
    return out


def merge_stores(
    sources: list[str | os.PathLike[str]],
    out_dir: str | os.PathLike[str],
    *,
    wait: bool = False,
) -> MergeReport:
    """Merge results directories into ``out_dir`` (created, or merged into if it exists).

    Parameters
    ----------
    sources : list of path
        Results directories (each holding ``results.sqlite``) of the same experiment.
    out_dir : path
        Destination results directory; locked like a run while the merge writes.
    wait : bool
        Wait for a run holding ``out_dir``'s lock instead of refusing.

    Returns
    -------
    MergeReport
        ``conflicts`` lists cell identities whose finished copies disagree (the CLI exits 1).

    Raises
    ------
    KernbenchError
        A source is not a results store, ``out_dir`` is also a source, or the stores belong to
        different experiments.
    """
    out = Path(out_dir)
    paths = [Path(s) for s in sources]
    if not paths:
        raise KernbenchError("merge needs at least one results directory")
    for p in paths:
        if not (p / STORE_FILE).is_file():
            raise KernbenchError(f"{p} is not a results directory (no {STORE_FILE})")
        if out.exists() and p.resolve() == out.resolve():
            raise KernbenchError(f"--out {out} is also a source; choose a new directory")
    names = {}
    for p in paths:  # refuse before the lock creates anything
        with Store(p) as store:
            names[str(p)] = (store.get_meta("spec") or {}).get("name")
    if len(set(names.values())) > 1:
        listed = ", ".join(f"{path}: {name!r}" for path, name in names.items())
        raise KernbenchError(f"cannot merge different experiments ({listed})")
    report = MergeReport(out_dir=out, sources=paths)
    with RunLock(out, wait=wait):
        inputs: list[tuple[str, Path]] = []
        if (out / STORE_FILE).is_file():
            inputs.append((f"{out} (existing)", out))
        inputs += [(str(p), p) for p in paths]
        chosen: dict[str, tuple[str, dict[str, Any]]] = {}
        spec: dict[str, Any] | None = None
        plan: set[str] | None = None
        origins = []
        for label, path in inputs:
            with Store(path) as store:
                their_spec = store.get_meta("spec") or {}
                their_plan = store.plan_ids()
                rows = store.rows()
                origins.append(
                    {
                        "path": str(path.resolve()),
                        "cells": len(rows),
                        "provenance": store.get_meta("provenance"),
                    }
                )
            first = spec is None
            spec = _check_same_experiment(spec, their_spec, label, report)
            if first:
                plan = their_plan
            elif their_plan is not None and plan is not None and their_plan != plan:
                report.warnings.append(
                    f"{label}: its spec's cells differ from the first store's; the merged store "
                    "keeps every cell, and its tables show the first store's spec"
                )
            report.rows_read += len(rows)
            for row in rows:
                _offer(chosen, label, row, report)
        with Store(out, create=True) as target:
            if plan is not None:
                target.set_plan(spec, plan)
            else:
                target.set_meta("spec", spec)
            target.set_meta("merged_from", origins)
            target.set_meta("merged_at", time.time())
            if target.get_meta("created_at") is None:
                target.set_meta("created_at", time.time())
            target.put_rows([row for _, row in chosen.values()])
            if report.conflicts:  # the copies not kept stay on record, with where they came from
                target.archive(
                    (c.dropped, f"merge conflict: the copy from {c.other[0]} (not kept; the "
                     f"merged store keeps {c.kept[0]}'s)")
                    for c in report.conflicts
                )  # fmt: skip
            target.export_csv()
        report.cells = len(chosen)
        report.finished = sum(1 for _, row in chosen.values() if _rank(row))
    return report


def _check_same_experiment(
    spec: dict[str, Any] | None, theirs: dict[str, Any], label: str, report: MergeReport
) -> dict[str, Any]:
    if spec is None:
        return theirs
    if spec.get("name") != theirs.get("name"):
        raise KernbenchError(
            f"cannot merge different experiments: {spec.get('name')!r} and "
            f"{theirs.get('name')!r} ({label})"
        )
    if _comparable_spec(spec) != _comparable_spec(theirs):
        report.warnings.append(
            f"{label}: its spec differs from the first store's (kept the first); cells are still "
            "matched by identity, so only identical cells are deduplicated"
        )
    return spec


def _offer(
    chosen: dict[str, tuple[str, dict[str, Any]]],
    label: str,
    row: dict[str, Any],
    report: MergeReport,
) -> None:
    cid = row["cell_id"]
    if cid not in chosen:
        chosen[cid] = (label, row)
        return
    report.duplicates += 1
    kept_label, kept = chosen[cid]
    if _rank(row) > _rank(kept):
        chosen[cid] = (label, row)
    elif _rank(row) == _rank(kept) == 0:
        if (row["finished_at"] or 0) > (kept["finished_at"] or 0):
            chosen[cid] = (label, row)
    elif _rank(row) == _rank(kept) == 1:
        a, b = _numbers(kept), _numbers(row)
        if a != b:
            report.conflicts.append(
                Conflict(
                    cell_id=cid,
                    key=(row["dataset"], row["realisation"], row["method"]),
                    kept=(kept_label, a),
                    other=(label, b),
                    dropped=row,
                )
            )
