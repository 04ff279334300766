"""Run cells through joblib and record each one in the store as it finishes.

Workers compute; only the driving process writes the store, committing each finished cell as it
arrives (cells that arrived together share one transaction), so a killed run loses only the cells
in flight and those in the driver's hands, and a rerun skips every finished cell. A cell that raises
is recorded as ``failed`` with its message and traceback while the run goes on.
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import kernbench
from kernbench.cells.records import FINAL_STATUSES, CellRecord
from kernbench.errors import KernbenchError, StoreError, UsageError
from kernbench.runner.backends import BackendError, CellExecutor
from kernbench.runner.cell import cell_record, git_revision
from kernbench.runner.order import longest_first
from kernbench.runner.plan import DEFAULT_MAX_CELLS, Cell, plan_cells
from kernbench.runner.stop import signals_stop
from kernbench.spec.load import spec_to_dict
from kernbench.spec.types import MethodSpec, Spec
from kernbench.store import CSV_FILE, STORE_FILE, Store
from kernbench.store.backup import backup_every, backup_store, check_store
from kernbench.store.lock import RunLock, describe_holder
from kernbench.store.sqlite import ACTIVE_RUN

#: at most this many finished records share one store transaction
MAX_BATCH = 64


@dataclass
class RunSummary:
    """What a run did: counts by status of the cells it planned, and where it wrote."""

    out_dir: Path
    planned: int = 0
    skipped_done: int = 0
    reused: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    failed: list[tuple[str, int, str, str]] = field(default_factory=list)
    seconds: float = 0.0
    #: CPU seconds of this run's cells (each worker's own, summed; not the driver's)
    cpu_seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    #: (category, message) -> number of this run's cells that raised that warning
    warned: Counter[tuple[str, str]] = field(default_factory=Counter)

    @property
    def ok(self) -> bool:
        return not self.failed


def default_out_dir(spec: Spec) -> Path:
    return Path("results") / spec.name


def check_out_dir(out: Path) -> None:
    """Refuse, before any work, a results directory that cannot take a run's files."""
    if out.exists() and not out.is_dir():
        raise UsageError("--out", f"{out} is a file, not a results directory; choose another path")
    for name in (STORE_FILE, CSV_FILE):
        if (out / name).is_dir():
            raise StoreError(
                f"{out / name} is a directory where kernbench writes a file; move it away"
            )


def cell_statuses(spec: Spec, out_dir: Path, cells: Sequence[Cell]) -> dict[str, str]:
    """Status of each planned cell in the store (``pending`` when never recorded)."""
    check_out_dir(out_dir)
    if not (out_dir / STORE_FILE).exists():
        return {c.cell_id: "pending" for c in cells}
    with Store(out_dir) as store:
        known = store.statuses()
    return {c.cell_id: known.get(c.cell_id, "pending") for c in cells}


def run_experiment(
    spec: Spec,
    *,
    out_dir: str | os.PathLike[str] | None = None,
    jobs: int = -1,
    fresh: bool = False,
    realisations: int | None = None,
    only: Mapping[str, Sequence[str]] | None = None,
    on_cell: Callable[[CellRecord], None] | None = None,
    on_start: Callable[[int], None] | None = None,
    on_data: Callable[[str], None] | None = None,
    backend: str = "local",
    scheduler: str | None = None,
    timeout_s: float | None = None,
    wait: bool = False,
    reuse: Sequence[str | os.PathLike[str]] = (),
    max_cells: int | None = DEFAULT_MAX_CELLS,
    threads: int | None = None,
    cell_ids: Collection[str] | None = None,
) -> RunSummary:
    """Run every planned cell that is not finished; record each as it completes.

    Parameters
    ----------
    spec : Spec
    out_dir : path, optional
        Defaults to ``results/<spec.name>``.
    jobs : int
        joblib ``n_jobs`` (-1: all cores). Workers compute; this process writes.
    fresh : bool
        Recompute finished cells too. A new result replaces the stored one only once it has
        finished (the old row moves to the store's history); an interrupted or failed
        recomputation leaves the finished result in place.
    realisations, only
        Plan filters (see :func:`kernbench.runner.plan.plan_cells`).
    cell_ids : collection of str, optional
        Run only the planned cells with these identities (and the cells they take parameters
        from); ``kernbench verify`` reruns a sample of cells so.
    on_cell, on_start : callables, optional
        Progress hooks: ``on_start(n_to_run)`` once, ``on_cell(record)`` after each recorded cell.
    on_data : callable, optional
        Given a line before each missing dataset is downloaded (see
        :func:`kernbench.datasets.ensure_available`).
    backend, scheduler : str, optional
        ``"local"`` (joblib/loky) or ``"dask"`` (a ``dask.distributed`` scheduler address, or a
        LocalCluster on 127.0.0.1); see :class:`kernbench.runner.backends.CellExecutor`.
    timeout_s : float, optional
        Per-cell wall-clock limit; overrides ``spec.protocol.timeout_s``. A cell over it is killed
        and recorded as ``timeout``.
    wait : bool
        Queue behind another run holding the directory's lock instead of refusing (exit 2).
    reuse : sequence of paths
        Other results directories: a cell to run whose identity is stored there as ``done`` is
        copied instead of computed (``result["reused_from"]`` names the source). The identity
        covers data, realisation, method label, parameters, grid, protocol and version, so only
        the very same computation is taken (e.g. the SVM columns shared by Lin & Li's two tables).
    max_cells : int, optional
        Refuse a spec that plans more cells (``--max-cells``; see
        :func:`kernbench.runner.plan.plan_cells`).
    threads : int, optional
        Threads of each cell's compiled kernels (``--threads``; None: the cores ÷ the cells run
        at once, 1 on a remote Dask scheduler). Results are the same for any count.

    SIGINT/SIGTERM stop the run: the cells in flight are recorded as ``interrupted`` (a rerun
    retries them; never ``failed``, whatever the signal broke inside a cell) and
    ``KeyboardInterrupt`` propagates (see :mod:`kernbench.runner.stop`).
    """
    from kernbench.datasets import ensure_available

    # absolute now: nothing that later changes the working directory moves where the run writes
    out = Path(os.path.abspath(out_dir if out_dir is not None else default_out_dir(spec)))
    check_out_dir(out)
    t0 = time.perf_counter()
    whole = plan_cells(spec, max_cells=max_cells)  # the store's plan, whatever this run runs
    plan_ids = [c.cell_id for c in whole]
    filtered = realisations is not None or any((only or {}).values())
    cells = plan_cells(spec, realisations=realisations, only=only) if filtered else whole
    if cell_ids is not None:
        cells = [c for c in cells if c.cell_id in cell_ids]
    for predefined in (False, True):
        names = {
            c.dataset.name for c in cells if (c.protocol.realisations == "predefined") is predefined
        }
        if names:
            ensure_available(sorted(names), predefined=predefined, report=on_data)
    shown = Path(out_dir) if out_dir is not None else default_out_dir(spec)
    summary = RunSummary(out_dir=shown, planned=len(cells))  # as the caller named it
    limit = timeout_s if timeout_s is not None else spec.protocol.timeout_s
    executor = CellExecutor(
        backend, jobs=jobs, scheduler=scheduler, timeout_s=limit, threads=threads
    )
    provenance = {"git": git_revision(), "driver_host": socket.gethostname()}
    with executor, RunLock(out, wait=wait) as lock, Store(out, create=True) as store:
        if lock.took_over is not None:
            gone = describe_holder(lock.took_over.holder)
            summary.notes.append(f"took over the lock of a run that is gone ({gone})")
        check_store(store)  # quick_check, and no finished cell of the backup missing
        known = store.statuses()
        others = len(known.keys() - set(plan_ids))
        if others:
            summary.notes.append(
                f"{out} also holds {others} cell(s) of another spec (or of an earlier version of "
                f"this one); tables and figures now show only the cells of {spec.name!r}"
            )
        store.set_plan(spec_to_dict(spec), plan_ids)
        store.set_meta("kernbench_version", kernbench.__version__)
        store.set_meta("provenance", provenance)
        if store.get_meta("created_at") is None:
            store.set_meta("created_at", time.time())
        todo = [c for c in cells if fresh or known.get(c.cell_id) not in FINAL_STATUSES]
        summary.skipped_done = len(cells) - len(todo)
        todo = _with_sources(todo, whole, known)
        if reuse and todo and not fresh:
            taken = _reuse_finished(store, todo, reuse, out)
            summary.reused = len(taken)
            todo = [c for c in todo if c.cell_id not in taken]
        if on_start is not None:
            on_start(len(todo))
        store.set_meta(  # for `kernbench status` while this run goes on (cleared at its end)
            ACTIVE_RUN,
            {
                "pid": os.getpid(),
                "started_at": time.time(),
                "fresh": fresh,
                "cells": [c.cell_id for c in todo],
                "keys": [[c.dataset.label, c.realisation, c.method.label] for c in todo],
            },
        )

        every, since_backup = backup_every(), 0
        held: list[CellRecord] = []  # arrived, not yet stored: see `flush`

        def flush() -> None:
            """Store the held records in one transaction, then count and report them."""
            nonlocal since_backup
            if not held:
                return
            for rec in held:
                rec.result.setdefault("provenance", provenance)
            kept = store.record_many(held)
            batch = list(held)
            held.clear()
            for rec, replaced in zip(batch, kept, strict=True):
                since_backup += rec.status in FINAL_STATUSES
                summary.counts[rec.status] = summary.counts.get(rec.status, 0) + 1
                summary.cpu_seconds += float(rec.result.get("cpu_time_s") or 0.0)
                summary.warned.update(
                    (w["category"], w["message"]) for w in rec.result.get("warnings") or ()
                )
                if rec.status not in FINAL_STATUSES:
                    why = "" if replaced else " (its earlier finished result is kept)"
                    summary.failed.append(
                        (rec.dataset, rec.realisation, rec.method, (rec.error or "") + why)
                    )
                if on_cell is not None:
                    on_cell(rec)
            if since_backup >= every:
                backup_store(store)
                since_backup = 0

        def record(rec: CellRecord, more: int = 0) -> None:
            """Hold ``rec`` while ``more`` records have already arrived behind it (up to
            :data:`MAX_BATCH`), so that records arriving together share one transaction; never
            hold one while the next record means waiting."""
            held.append(rec)
            if more <= 0 or len(held) >= MAX_BATCH:
                flush()

        methods = {m.label: m for m in spec.methods}
        timed = store.summaries()  # the done cells time the longest-first order
        try:
            with signals_stop():
                for wave in _waves(todo):  # cells taking parameters run after their sources
                    ready = []
                    for cell in wave:
                        taken = _take_parameters(store, cell, methods)
                        if isinstance(taken, CellRecord):
                            record(taken)
                        else:
                            ready.append(taken)
                    for rec in executor.run(longest_first(ready, timed)):
                        record(rec, executor.arrived())
                    flush()
        except (KeyboardInterrupt, BackendError) as exc:  # a lost Dask scheduler too
            why = "the Dask scheduler was lost" if isinstance(exc, BackendError) else None
            flush()  # finished records held for a shared transaction are stored as finished
            _record_interrupted(store, executor.in_flight.values(), provenance, why)
            with contextlib.suppress(KernbenchError):  # the interrupt is what to report
                backup_store(store)
            store.export_csv()
            raise
        except BaseException:  # e.g. a full disk: back up what is committed if still possible
            with contextlib.suppress(Exception):
                flush()
            with contextlib.suppress(Exception):
                backup_store(store)
            raise
        finally:
            with contextlib.suppress(Exception):
                store.set_meta(ACTIVE_RUN, None)
        backup_store(store)
        store.export_csv()
    summary.seconds = time.perf_counter() - t0
    return summary


def _with_sources(todo: list[Cell], full: Sequence[Cell], known: Mapping[str, str]) -> list[Cell]:
    """``todo`` plus the unfinished source cells its ``take`` methods need (``--only`` may have
    left them out), sources first."""
    by_id = {c.cell_id: c for c in full}
    have = {c.cell_id for c in todo}
    extra: list[Cell] = []
    stack = [c.source_id for c in todo if c.source_id]
    while stack:
        cid = stack.pop()
        if cid in have or known.get(cid) in FINAL_STATUSES or cid not in by_id:
            continue
        have.add(cid)
        extra.append(by_id[cid])
        if by_id[cid].source_id:
            stack.append(by_id[cid].source_id)
    return extra + todo


def _waves(todo: Sequence[Cell]) -> list[list[Cell]]:
    """Cells in dependency waves: a cell runs in a wave after the source it takes from.

    Every wave ends when its slowest cell does, and a core idles meanwhile. So only the cells
    that others take from (usually quick SVM selections) run in the early waves, each as early
    as its own source allows; every cell nothing takes from runs in the last wave, where the
    long cells of a table keep both cores busy to the end.
    """
    in_todo = {c.cell_id: c for c in todo}
    depth: dict[str, int] = {}

    def level(c: Cell) -> int:
        if c.cell_id not in depth:
            src = in_todo.get(c.source_id) if c.source_id else None
            depth[c.cell_id] = 0 if src is None else level(src) + 1
        return depth[c.cell_id]

    sources = {c.source_id for c in todo if c.source_id in in_todo}
    last = 1 + max((level(in_todo[s]) for s in sources), default=-1)
    waves: dict[int, list[Cell]] = {}
    for c in todo:
        waves.setdefault(level(c) if c.cell_id in sources else last, []).append(c)
    return [waves[k] for k in sorted(waves)]


def _take_parameters(
    store: Store, cell: Cell, methods: Mapping[str, MethodSpec]
) -> Cell | CellRecord:
    """``cell`` with the parameters it takes from its finished source cell filled in, or a
    ``failed`` record saying which source did not finish."""
    take = cell.method.take
    if take is None:
        return cell
    from kernbench.spec.param_transforms import TRANSFORMS

    row = store.row(cell.source_id) if cell.source_id else None
    if row is None or row["status"] != "done":
        why = "was not run" if row is None else f"is {row['status']}: {row.get('error') or ''}"
        return cell_record(
            cell,
            "failed",
            error=f"takes {', '.join(take.params)} from {take.source!r} (realisation "
            f"{cell.realisation}), whose cell {why}".rstrip(": "),
        )
    chosen = {**methods[take.source].params, **(row.get("params") or {})}
    values = {
        target: TRANSFORMS[transform](chosen[param])
        for target, (param, transform) in take.params.items()
    }
    return replace(cell, taken=tuple(sorted(values.items())))


def _reuse_finished(
    store: Store, todo: Sequence[Cell], sources: Sequence[str | os.PathLike[str]], out: Path
) -> set[str]:
    """Copy the ``done`` rows of ``todo``'s identities from other stores; return the ids taken."""
    wanted = {c.cell_id for c in todo}
    taken: set[str] = set()
    for source in sources:
        if Path(source).resolve() == out.resolve() or not wanted - taken:
            continue
        with Store(source) as src:
            rows = src.finished_rows(wanted - taken)
        for row in rows:
            row["result"] = {**row["result"], "reused_from": str(source)}
        store.put_rows(rows)
        taken.update(row["cell_id"] for row in rows)
    return taken


def _record_interrupted(
    store: Store, cells: Iterable[Cell], provenance: dict, why: str | None = None
) -> None:
    """Mark the cells in flight when the run was stopped (a rerun retries them)."""
    for cell in list(cells):
        store.record(
            cell_record(
                cell,
                "interrupted",
                error=f"the run was interrupted ({why or 'SIGINT/SIGTERM'}) while this cell "
                "was in flight",
                result={"provenance": provenance},
            )
        )
