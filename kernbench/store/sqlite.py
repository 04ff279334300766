"""The results store: one sqlite file per experiment, written only by the driving process.

``results/<name>/results.sqlite`` holds four tables:

``meta``
    key/value JSON: ``spec`` (the validated spec as a dict, with the reference CSV path resolved),
    ``plan_size``, ``kernbench_version``, ``created_at``.
``plan``
    the identities of every cell of the spec last run into the store (the whole spec, whatever
    ``--only`` or ``--realisations`` ran). Tables and figures show these cells and no others, so a
    store that also holds cells of another spec (an edited spec, or two specs sharing ``--out``)
    never mixes their numbers.
``cells``
    one row per cell identity: dataset label, realisation, method label, status
    (``done`` | ``failed`` | ``timeout`` | ``interrupted`` | ``skipped`` | ``pending``), the
    headline numbers, the chosen parameters and a JSON ``result`` with everything else (CV table,
    timings, model size, per-iteration trace, seeds, versions, split info).
``history``
    earlier rows of a cell that a newer row replaced (``--fresh`` recomputations), and attempts
    that did not finish while a finished row was kept: nothing finished is ever deleted.

Each finished cell is committed as it reaches the driver (WAL journal; cells that arrived together
share one transaction), so a killed run loses at most the cells in flight, and a reader
(``kernbench table``) can read while a run writes. A finished row is only ever replaced by another
finished row of the same identity, in one transaction: an interrupted or failed recomputation
leaves the earlier result in place.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from kernbench.cells.identity import dumps
from kernbench.cells.records import (
    CELL_COLUMNS,
    FINAL_STATUSES,
    FRAME_COLUMNS,
    CellRecord,
    current_result,
    frame_record,
)
from kernbench.errors import StoreError
from kernbench.files.writing import refuse_symlinks, replace_file
from kernbench.store.boundary import os_error, store_error
from kernbench.store.faults import fault_max_pages, inside_commit, write_fault

STORE_FILE = "results.sqlite"
#: meta key of the run going on: pid, start time, whether ``--fresh``, the cells it computes
ACTIVE_RUN = "active_run"
CSV_FILE = "cells.csv"
#: the columns of a cell row (``cells``; ``history`` keeps the same and two of its own)
_ROW_COLUMNS = """
    cell_id      TEXT {key},
    dataset      TEXT NOT NULL,
    realisation  INTEGER NOT NULL,
    method       TEXT NOT NULL,
    estimator    TEXT NOT NULL,
    status       TEXT NOT NULL,
    test_error   REAL,
    train_error  REAL,
    params       TEXT,
    result       TEXT,
    error        TEXT,
    traceback    TEXT,
    started_at   REAL,
    finished_at  REAL,
    attempts     INTEGER NOT NULL DEFAULT 1"""
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS cells ({_ROW_COLUMNS.format(key="PRIMARY KEY")}
);
CREATE INDEX IF NOT EXISTS cells_by_key ON cells (dataset, method, realisation);
CREATE TABLE IF NOT EXISTS plan (cell_id TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS history ({_ROW_COLUMNS.format(key="NOT NULL")},
    archived_at  REAL NOT NULL,
    reason       TEXT NOT NULL
);
"""


def _sqlite_errors(method):
    """Turn any sqlite error of a store method into a one-line StoreError naming the file."""

    @functools.wraps(method)
    def wrapper(self: Store, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.Error as exc:
            raise store_error(exc, self.path) from None

    return wrapper


class Store:
    """Read/write access to one experiment's ``results.sqlite``.

    Parameters
    ----------
    directory : path
        The experiment's results directory (created if missing when ``create``).
    create : bool
        Create the directory and schema if absent; otherwise a missing store is a ``StoreError``.
    readonly : bool
        Open for reading only. sqlite still creates the ``-wal`` and ``-shm`` files of a WAL
        store when they are absent, and a read-only connection leaves them behind.
    immutable : bool
        Read the file as it is, without locks and without creating any file (implies
        ``readonly``). Only right when no other process has the store open: committed cells
        still in a ``-wal`` file are not seen.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        create: bool = False,
        readonly: bool = False,
        immutable: bool = False,
    ) -> None:
        self.directory = Path(directory)
        self.path = self.directory / STORE_FILE
        if self.path.is_dir():
            raise StoreError(f"{self.path} is a directory, not a results store; move it away")
        exists = self.path.exists()
        if not exists and not create:
            raise StoreError(f"no results store at {self.path} (run `kernbench run SPEC` first)")
        if exists and self.path.stat().st_size == 0:
            # never recreate silently: an emptied store is a lost store, the user must know
            raise StoreError(
                f"results store {self.path} is empty (0 bytes), its results are lost; restore "
                f"the last backup with `kernbench restore {self.directory}`, or move the file "
                "away to start afresh"
            )
        #: whether this call made the store (a fresh, empty one)
        self.created = create and not exists
        if self.created:
            _create_store(self.path)
        # a store in a directory we cannot write is opened immutable: sqlite needs to create
        # the -shm/-wal files even to read a WAL database
        self.readonly = readonly or immutable or (exists and not os.access(self.directory, os.W_OK))
        try:  # sqlite opens (and creates) these by name: never through a planted symlink
            refuse_symlinks(*(f"{self.path}{suffix}" for suffix in ("", "-wal", "-shm")))
        except OSError as exc:
            raise os_error(exc) from None
        try:
            if self.readonly:
                uri = f"{self.path.resolve().as_uri()}?mode=ro"
                if immutable or not os.access(self.directory, os.W_OK):
                    uri += "&immutable=1"
                self._con = sqlite3.connect(uri, uri=True, timeout=30.0, isolation_level=None)
            else:
                self._con = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
                self._con.execute("PRAGMA journal_mode=WAL")
                self._con.execute("PRAGMA synchronous=NORMAL")
                max_pages = fault_max_pages()
                if max_pages:
                    self._con.execute(f"PRAGMA max_page_count={int(max_pages)}")
            if not self._has_table("cells"):
                self._con.close()
                raise StoreError(
                    f"{self.path} is not a kernbench results store (it has no cells table); "
                    "move it away or choose another --out"
                )
            if create and not self.readonly:
                self._con.executescript(_SCHEMA)  # tables added since the store was made
        except sqlite3.Error as exc:
            raise store_error(exc, self.path) from None

    # -- lifecycle ---------------------------------------------------------------------------
    def close(self) -> None:
        self._con.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- meta --------------------------------------------------------------------------------
    @_sqlite_errors
    def set_meta(self, key: str, value: Any) -> None:
        with self._transaction():
            self._con.execute(
                "INSERT INTO meta(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, dumps(value)),
            )

    @_sqlite_errors
    def get_meta(self, key: str, default: Any = None) -> Any:
        row = self._con.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else default

    # -- cells -------------------------------------------------------------------------------
    @_sqlite_errors
    def statuses(self) -> dict[str, str]:
        """``cell_id -> status`` for every recorded cell."""
        return dict(self._con.execute("SELECT cell_id, status FROM cells"))

    def record(self, rec: CellRecord) -> bool:
        """Store one cell in its own transaction; return whether it became the cell's row.

        A finished row (``done``/``skipped``) is replaced only by another finished row, and the
        replaced one moves to ``history`` in the same transaction. An unfinished record
        (``failed``, ``timeout``, ``interrupted``) for a cell that already has a finished row
        goes to ``history`` and the finished row stays: an interrupted or failing ``--fresh``
        recomputation never loses a number. Attempts are counted across reruns.
        """
        return self.record_many([rec])[0]

    @_sqlite_errors
    def record_many(self, recs: Iterable[CellRecord]) -> list[bool]:
        """Store cells in one transaction (all or none), each as :meth:`record` stores it;
        return, per record, whether it became its cell's row."""
        with self._transaction():
            kept = [self._record(rec) for rec in recs]
            inside_commit()
        return kept

    def _record(self, rec: CellRecord) -> bool:
        """:meth:`record`'s writes, inside the caller's transaction."""
        finished_new = rec.status in FINAL_STATUSES
        old = self._con.execute(
            "SELECT status, attempts FROM cells WHERE cell_id = ?", (rec.cell_id,)
        ).fetchone()
        attempts = (old[1] + 1) if old else 1
        row = (
            rec.cell_id,
            rec.dataset,
            int(rec.realisation),
            rec.method,
            rec.estimator,
            rec.status,
            _float_or_none(rec.test_error),
            _float_or_none(rec.train_error),
            dumps(rec.params),
            dumps(rec.result),
            rec.error,
            rec.traceback,
            rec.started_at,
            rec.finished_at if rec.finished_at is not None else time.time(),
            attempts,
        )
        finished_old = old is not None and old[0] in FINAL_STATUSES
        if finished_old and not finished_new:
            self._archive_values(row, "attempt did not finish; the finished row was kept")
            self._con.execute(
                "UPDATE cells SET attempts = ? WHERE cell_id = ?", (attempts, rec.cell_id)
            )
            kept_old = True
        else:
            if finished_old:
                self._archive_row(rec.cell_id, "replaced by a newer finished row")
            self._con.execute(
                f"INSERT OR REPLACE INTO cells ({', '.join(CELL_COLUMNS)}) "
                f"VALUES ({', '.join('?' * len(CELL_COLUMNS))})",
                row,
            )
            kept_old = False
        return not kept_old

    def _archive_row(self, cell_id: str, reason: str) -> None:
        cols = ", ".join(CELL_COLUMNS)
        self._con.execute(
            f"INSERT INTO history ({cols}, archived_at, reason) "
            f"SELECT {cols}, ?, ? FROM cells WHERE cell_id = ?",
            (time.time(), reason, cell_id),
        )

    def _archive_values(self, row: tuple[Any, ...], reason: str) -> None:
        self._con.execute(
            f"INSERT INTO history ({', '.join(CELL_COLUMNS)}, archived_at, reason) "
            f"VALUES ({', '.join('?' * (len(CELL_COLUMNS) + 2))})",
            (*row, time.time(), reason),
        )

    @_sqlite_errors
    def history(self) -> list[dict[str, Any]]:
        """Archived rows (oldest first), decoded like :meth:`rows`, with ``reason``."""
        if not self._has_table("history"):
            return []
        return _decoded(self._con.execute("SELECT * FROM history ORDER BY archived_at, rowid"))

    @_sqlite_errors
    def put_rows(self, rows: Iterable[Mapping[str, Any]]) -> None:
        """Insert or replace whole rows as :meth:`rows` returns them (one transaction; used by
        ``kernbench merge`` and ``run --reuse``, which keep each row's attempts and timestamps)."""
        values = [
            tuple(
                dumps(r.get(c) or {}) if c in ("params", "result") else r.get(c)
                for c in CELL_COLUMNS
            )
            for r in rows
        ]
        with self._transaction():
            self._con.executemany(
                f"INSERT OR REPLACE INTO cells ({', '.join(CELL_COLUMNS)}) "
                f"VALUES ({', '.join('?' * len(CELL_COLUMNS))})",
                values,
            )

    @_sqlite_errors
    def archive(self, rows: Iterable[tuple[Mapping[str, Any], str]]) -> None:
        """Add whole rows (as :meth:`rows` returns them) to ``history``, each with its reason
        (one transaction; ``kernbench merge`` keeps there the copies it did not choose)."""
        values = [
            (
                *(
                    dumps(r.get(c) or {}) if c in ("params", "result") else r.get(c)
                    for c in CELL_COLUMNS
                ),
                time.time(),
                reason,
            )
            for r, reason in rows
        ]
        with self._transaction():
            self._con.executemany(
                f"INSERT INTO history ({', '.join(CELL_COLUMNS)}, archived_at, reason) "
                f"VALUES ({', '.join('?' * (len(CELL_COLUMNS) + 2))})",
                values,
            )

    # -- the plan: which cells the store's spec consists of -----------------------------------
    @_sqlite_errors
    def set_plan(self, spec: Mapping[str, Any], cell_ids: Iterable[str]) -> None:
        """Record ``spec`` and the identities of all its cells, in one transaction.

        From then on tables and figures read exactly these cells (see :meth:`plan_ids`).
        """
        ids = list(dict.fromkeys(cell_ids))
        with self._transaction():
            for key, value in (("spec", spec), ("plan_size", len(ids))):
                self._con.execute(
                    "INSERT INTO meta(key, value) VALUES (?, ?) "
                    "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                    (key, dumps(value)),
                )
            self._con.execute("DELETE FROM plan")
            self._con.executemany("INSERT INTO plan(cell_id) VALUES (?)", [(c,) for c in ids])

    @_sqlite_errors
    def plan_ids(self) -> set[str] | None:
        """Identities of the cells of the spec last run into the store (None for a store
        written before plans were recorded)."""
        if self.get_meta("plan_size") is None or not self._has_table("plan"):
            return None
        return {row[0] for row in self._con.execute("SELECT cell_id FROM plan")}

    def _has_table(self, name: str) -> bool:
        query = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"
        return self._con.execute(query, (name,)).fetchone() is not None

    @_sqlite_errors
    def rows(self) -> list[dict[str, Any]]:
        """Every cell as a dict (``params`` and ``result`` decoded)."""
        return _decoded(
            self._con.execute("SELECT * FROM cells ORDER BY dataset, method, realisation")
        )

    def row(self, cell_id: str) -> dict[str, Any] | None:
        """One cell's row, decoded as :meth:`rows` does (None if never recorded)."""
        rows = _decoded(self._con.execute("SELECT * FROM cells WHERE cell_id = ?", (cell_id,)))
        return rows[0] if rows else None

    @_sqlite_errors
    def finished_rows(self, cell_ids: Iterable[str]) -> list[dict[str, Any]]:
        """The ``done`` rows among ``cell_ids``, decoded as :meth:`rows` does (``--reuse``)."""
        wanted = list(dict.fromkeys(cell_ids))
        out: list[dict[str, Any]] = []
        for start in range(0, len(wanted), 500):  # stay under sqlite's host-parameter limit
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            query = f"SELECT * FROM cells WHERE status = 'done' AND cell_id IN ({marks})"
            out += _decoded(self._con.execute(query, chunk))
        return out

    @_sqlite_errors
    def summaries(self) -> list[dict[str, Any]]:
        """Every cell's identity, labels, status, error, times and attempts, and the CPU time its
        result records (``cpu_seconds``, None where it has none): the row without its
        parameters, result and traceback (cheap to read from a large store)."""
        columns = (
            "cell_id, dataset, realisation, method, estimator, status, error, "
            "started_at, finished_at, attempts"
        )
        try:  # sqlite's JSON functions read the one number without decoding the result
            cur = self._con.execute(
                f"SELECT {columns}, CASE WHEN json_valid(result) "
                "THEN json_extract(result, '$.cpu_time_s') END AS cpu_seconds FROM cells"
            )
        except sqlite3.OperationalError:  # an sqlite built without them
            cur = self._con.execute(f"SELECT {columns}, NULL AS cpu_seconds FROM cells")
        names = [d[0] for d in cur.description]
        return [dict(zip(names, values, strict=True)) for values in cur]

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[Store]:
        """One read transaction: the reads inside it all see the store in the same state, even
        while a run commits cells to it."""
        try:
            self._con.execute("BEGIN")
        except sqlite3.Error as exc:
            raise store_error(exc, self.path) from None
        try:
            yield self
        finally:
            with contextlib.suppress(sqlite3.Error):  # a read transaction has nothing to lose
                self._con.execute("COMMIT")

    @_sqlite_errors
    def integrity_ok(self) -> bool:
        return self._con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"

    @_sqlite_errors
    def quick_check(self) -> str:
        """``"ok"``, or sqlite's first complaint of ``PRAGMA quick_check``."""
        return str(self._con.execute("PRAGMA quick_check").fetchone()[0])

    @_sqlite_errors
    def finished_ids(self) -> set[str]:
        """Identities of the finished (``done``/``skipped``) cells."""
        marks = ",".join("?" * len(FINAL_STATUSES))
        query = f"SELECT cell_id FROM cells WHERE status IN ({marks})"
        return {r[0] for r in self._con.execute(query, tuple(FINAL_STATUSES))}

    def connection(self) -> sqlite3.Connection:
        """The open connection (for sqlite's online backup; see :mod:`kernbench.store.backup`)."""
        return self._con

    def export_csv(self, path: str | os.PathLike[str] | None = None) -> Path:
        """Write the tidy one-row-per-cell CSV (``cells.csv``) atomically and return its path."""
        target = Path(path) if path is not None else self.directory / CSV_FILE
        frame = cells_frame(self.rows())

        def write(tmp: Path) -> None:
            write_fault(tmp)
            frame.to_csv(tmp, index=False)

        try:
            replace_file(target, write)
        except OSError as exc:
            raise os_error(exc) from None
        return target

    # -- internals ---------------------------------------------------------------------------
    def _transaction(self) -> _Transaction:
        return _Transaction(self._con)


class _Transaction:
    def __init__(self, con: sqlite3.Connection) -> None:
        self._con = con

    def __enter__(self) -> None:
        self._con.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if exc_type is None:
            self._con.execute("COMMIT")
        else:
            with contextlib.suppress(sqlite3.Error):  # keep the original error
                self._con.execute("ROLLBACK")


def _create_store(path: Path) -> None:
    """Make an empty store with its schema in a side file and rename it into place.

    So any ``results.sqlite`` that exists has the schema: a file without it (or of 0 bytes) is
    damaged or foreign, and is refused instead of being silently recreated.
    """

    def build(tmp: Path) -> None:
        con = sqlite3.connect(tmp, isolation_level=None)
        try:
            con.execute("PRAGMA journal_mode=WAL")
            con.executescript(_SCHEMA)
        finally:
            con.close()

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        replace_file(path, build)
    except OSError as exc:
        raise os_error(exc) from None
    except sqlite3.Error as exc:
        raise store_error(exc, path) from None


def _decoded(cur: sqlite3.Cursor) -> list[dict[str, Any]]:
    """The cursor's cell rows as dicts with ``params`` and ``result`` decoded from JSON (trace
    keys under their current names: :func:`~kernbench.cells.records.current_result`)."""
    names = [d[0] for d in cur.description]
    out = []
    for values in cur:
        row = dict(zip(names, values, strict=True))
        row["params"] = json.loads(row["params"]) if row["params"] else {}
        row["result"] = current_result(json.loads(row["result"])) if row["result"] else {}
        out.append(row)
    return out


def _float_or_none(x: Any) -> float | None:
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def cells_frame(rows: list[dict[str, Any]]):
    """A pandas DataFrame with one row per cell: the :data:`~kernbench.cells.records.FRAME_COLUMNS`
    (identity, status, values, provenance) and the chosen parameters as ``param.<name>``."""
    import pandas as pd

    frame = pd.DataFrame.from_records([frame_record(r) for r in rows])
    if frame.empty:
        return pd.DataFrame(columns=list(FRAME_COLUMNS))
    return frame


def read_cells(directory: str | os.PathLike[str]):
    """All cells of one results directory as a DataFrame (see :func:`cells_frame`)."""
    with Store(directory) as store:
        return cells_frame(store.rows())


def find_stores(path: str | os.PathLike[str]) -> list[Path]:
    """Results directories at or below ``path`` (a store directory or a parent of several)."""
    p = Path(path)
    if (p / STORE_FILE).exists():
        return [p]
    return sorted(d.parent for d in p.glob(f"*/{STORE_FILE}"))
