"""One run of a spec into a results directory, as three phases: prepare, select, drive.

:meth:`Run.prepare` plans the spec (the whole plan for the store, this run's cells after
``--realisations``, ``--only`` and ``cell_ids``), makes sure their data are here, connects the
executor, takes the directory's lock, opens and checks the store and writes the plan and the
run's metadata. :meth:`Run.select` leaves out the finished cells (unless ``fresh``), adds the
unfinished sources that ``take`` methods need and copies finished cells from ``--reuse``
directories. :meth:`Run.drive` hands the rest out longest first, wave after wave (a cell that
takes parameters runs after its source), and gives each record to the
:class:`~kernbench.runner.record_sink.RecordSink`, which stores it.

Workers compute; only this process writes the store. A cell that raises is recorded as
``failed`` with its message and traceback while the run goes on. SIGINT/SIGTERM stop the run:
the cells in flight are recorded as ``interrupted`` (a rerun retries them; never ``failed``,
whatever the signal broke inside a cell) and ``KeyboardInterrupt`` propagates (see
:mod:`kernbench.runner.lifecycle.stop`).
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import kernbench
from kernbench.cells.records import FINAL_STATUSES, CellRecord
from kernbench.runner.cell.compute import git_revision
from kernbench.runner.execution.backends import open_executor
from kernbench.runner.execution.executor import BackendError, Executor
from kernbench.runner.lifecycle.stop import signals_stop
from kernbench.runner.options import RunHooks, RunOptions
from kernbench.runner.plan.cells import Cell, plan_cells
from kernbench.runner.plan.order import longest_first
from kernbench.runner.record_sink import RecordSink, RunSummary
from kernbench.runner.results_dir import check_out_dir, default_out_dir
from kernbench.runner.todo import reuse_finished, take_parameters, waves, with_sources
from kernbench.specs.load import spec_to_dict
from kernbench.specs.types import Spec
from kernbench.store import Store
from kernbench.store.backup import check_store
from kernbench.store.lock import RunLock, describe_holder
from kernbench.store.sqlite import ACTIVE_RUN

if TYPE_CHECKING:
    from kernbench.runner.execution.early_workers import EarlyWorkers

__all__ = ["Run", "run_experiment"]


def run_experiment(
    spec: Spec,
    options: RunOptions | None = None,
    *,
    hooks: RunHooks | None = None,
    early: EarlyWorkers | None = None,
) -> RunSummary:
    """Run every planned cell of ``spec`` that is not finished; record each as it completes.

    Parameters
    ----------
    spec : Spec
    options : RunOptions, optional
        What to run, where, on what (defaults: every cell, ``results/<spec name>``, all cores).
    hooks : RunHooks, optional
        Progress hooks (the command line's bar and lines).
    early : EarlyWorkers, optional
        Workers started while the spec was read
        (:func:`kernbench.runner.execution.early_workers.start_early`); the executor uses them.

    Returns
    -------
    RunSummary
        Counts by status, the cells that did not finish, notes, warnings, times.

    Raises
    ------
    KeyboardInterrupt
        SIGINT/SIGTERM, once the cells in flight are recorded as ``interrupted``.
    """
    with Run(spec, options, hooks=hooks, early=early) as run:
        run.prepare()
        run.drive(run.select())
    run.summary.seconds = time.perf_counter() - run.started
    return run.summary


class Run:
    """One run (module doc); a context manager that lets go of what :meth:`prepare` took.

    Parameters
    ----------
    spec : Spec
    options : RunOptions, optional
    hooks : RunHooks, optional
    early : EarlyWorkers, optional
        See :func:`run_experiment`.

    Attributes
    ----------
    summary : RunSummary
        Filled in as the phases go.
    """

    def __init__(
        self,
        spec: Spec,
        options: RunOptions | None = None,
        *,
        hooks: RunHooks | None = None,
        early: EarlyWorkers | None = None,
    ) -> None:
        self.spec = spec
        self.options = options if options is not None else RunOptions()
        self.hooks = hooks if hooks is not None else RunHooks()
        self.early = early
        given = self.options.out_dir
        shown = Path(given) if given is not None else default_out_dir(spec)  # as named
        # absolute now: nothing that later changes the working directory moves where it writes
        self.out = Path(os.path.abspath(shown))
        check_out_dir(self.out)
        self.started = time.perf_counter()
        self.summary = RunSummary(out_dir=shown)
        self.provenance = {"git": git_revision(), "driver_host": socket.gethostname()}
        self._stack = contextlib.ExitStack()
        self._whole: list[Cell] = []  # the spec's plan, whatever this run runs
        self._cells: list[Cell] = []  # this run's cells
        self._known: dict[str, str] = {}  # the store's statuses as the run began
        self._store: Store | None = None
        self._executor: Executor | None = None

    def __enter__(self) -> Run:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()  # the store, the lock, then the executor

    # -- the phases --------------------------------------------------------------------------
    def prepare(self) -> None:
        """Plan, fetch the data, connect the executor, take the lock, open and check the store,
        write the plan and the run's metadata."""
        opts = self.options
        self._whole = plan_cells(self.spec, max_cells=opts.max_cells)
        cells = self._whole
        if opts.filtered:
            cells = plan_cells(self.spec, realisations=opts.realisations, only=opts.only)
        if opts.cell_ids is not None:
            cells = [c for c in cells if c.cell_id in opts.cell_ids]
        self._cells = cells
        self.summary.planned = len(cells)
        self._fetch_data()
        limit = opts.timeout_s if opts.timeout_s is not None else self.spec.protocol.timeout_s
        self._executor = self._stack.enter_context(
            open_executor(
                opts.backend,
                jobs=opts.jobs,
                scheduler=opts.scheduler,
                timeout_s=limit,
                threads=opts.threads,
                early=self.early,
            )
        )
        lock = self._stack.enter_context(RunLock(self.out, wait=opts.wait))
        self._store = self._stack.enter_context(Store(self.out, create=True))
        if lock.took_over is not None:
            gone = describe_holder(lock.took_over.holder)
            self.summary.notes.append(f"took over the lock of a run that is gone ({gone})")
        check_store(self._store)  # quick_check, and no finished cell of the backup missing
        self._known = self._store.statuses()
        self._write_plan()

    def select(self) -> list[Cell]:
        """The cells left to compute: not finished (all with ``fresh``), with the sources their
        ``take`` methods need, less those copied from ``reuse``; announced to ``on_start`` and
        in the store (``kernbench status``)."""
        store, opts = self._opened()[0], self.options
        known = self._known
        todo = [c for c in self._cells if opts.fresh or known.get(c.cell_id) not in FINAL_STATUSES]
        self.summary.skipped_done = len(self._cells) - len(todo)
        todo = with_sources(todo, self._whole, self._known)
        if opts.reuse and todo and not opts.fresh:
            taken = reuse_finished(store, todo, opts.reuse, self.out)
            self.summary.reused = len(taken)
            todo = [c for c in todo if c.cell_id not in taken]
        if self.hooks.on_start is not None:
            self.hooks.on_start(len(todo))
        store.set_meta(  # for `kernbench status` while this run goes on (cleared at its end)
            ACTIVE_RUN,
            {
                "pid": os.getpid(),
                "started_at": time.time(),
                "fresh": opts.fresh,
                "cells": [c.cell_id for c in todo],
                "keys": [[c.dataset.label, c.realisation, c.method.label] for c in todo],
            },
        )
        return todo

    def drive(self, todo: Sequence[Cell]) -> None:
        """Compute ``todo`` and store every record; on a stop, record the cells in flight as
        ``interrupted`` and re-raise."""
        store, executor = self._opened()
        sink = RecordSink(store, self.summary, self.provenance, self.hooks.on_cell)
        timed = store.summaries()  # the done cells time the longest-first order
        try:
            with signals_stop():
                self._compute(todo, executor, sink, timed)
        except (KeyboardInterrupt, BackendError) as exc:  # a lost Dask scheduler too
            why = "the Dask scheduler was lost" if isinstance(exc, BackendError) else None
            sink.stopped(executor.in_flight.values(), why)
            raise
        except BaseException:  # e.g. a full disk: back up what is committed if still possible
            sink.failed()
            raise
        finally:
            with contextlib.suppress(Exception):
                store.set_meta(ACTIVE_RUN, None)
        sink.finish()

    # -- internals ---------------------------------------------------------------------------
    def _opened(self) -> tuple[Store, Executor]:
        if self._store is None or self._executor is None:
            raise RuntimeError("Run.prepare() has not run")
        return self._store, self._executor

    def _fetch_data(self) -> None:
        """Make sure the data of this run's cells are here (downloads announced to
        ``on_data``)."""
        from kernbench.datasets import ensure_available

        for predefined in (False, True):
            names = {
                c.dataset.name
                for c in self._cells
                if (c.protocol.realisations == "predefined") is predefined
            }
            if names:
                ensure_available(sorted(names), predefined=predefined, report=self.hooks.on_data)

    def _write_plan(self) -> None:
        """The spec, its plan and the run's metadata into the store; a note when the store holds
        cells of another spec."""
        store = self._opened()[0]
        plan_ids = [c.cell_id for c in self._whole]
        others = len(self._known.keys() - set(plan_ids))
        if others:
            self.summary.notes.append(
                f"{self.out} also holds {others} cell(s) of another spec (or of an earlier "
                f"version of this one); tables and figures now show only the cells of "
                f"{self.spec.name!r}"
            )
        store.set_plan(spec_to_dict(self.spec), plan_ids)
        store.set_meta("kernbench_version", kernbench.__version__)
        store.set_meta("provenance", self.provenance)
        if store.get_meta("created_at") is None:
            store.set_meta("created_at", time.time())

    def _compute(
        self,
        todo: Sequence[Cell],
        executor: Executor,
        sink: RecordSink,
        timed: list[dict[str, Any]],
    ) -> None:
        """Wave after wave: parameters taken from finished sources, then the wave's cells
        longest first."""
        methods = {m.label: m for m in self.spec.methods}
        store = self._opened()[0]
        for wave in waves(todo):  # cells taking parameters run after their sources
            ready = []
            for cell in wave:
                taken = take_parameters(store, cell, methods)
                if isinstance(taken, CellRecord):
                    sink.add(taken)
                else:
                    ready.append(taken)
            for rec in executor.run(longest_first(ready, timed)):
                sink.add(rec, executor.arrived())
            sink.flush()
