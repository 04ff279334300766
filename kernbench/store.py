"""The results store: one sqlite file per experiment, written only by the driving process.

``results/<name>/results.sqlite`` holds two tables:

``meta``
    key/value JSON: ``spec`` (the validated spec as a dict, with the reference CSV path resolved),
    ``kernbench_version``, ``created_at``.
``cells``
    one row per cell (dataset label × realisation × method label): its identity hash, status
    (``done`` | ``failed`` | ``timeout`` | ``interrupted`` | ``skipped`` | ``pending``), the
    headline numbers, the chosen parameters and a JSON ``result`` with everything else (CV table,
    timings, model size, per-iteration trace, seeds, versions, split info).

Each finished cell is committed in its own transaction (WAL journal), so a killed run loses at most
the cells in flight and a reader (``kernbench table``) can read while a run writes.
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from kernbench.errors import StoreError

STORE_FILE = "results.sqlite"
CSV_FILE = "cells.csv"
STATUSES = ("done", "failed", "timeout", "interrupted", "skipped", "pending")
#: statuses that count as finished: a rerun does not recompute them
FINAL_STATUSES = ("done", "skipped")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS cells (
    cell_id      TEXT PRIMARY KEY,
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
    attempts     INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX IF NOT EXISTS cells_by_key ON cells (dataset, method, realisation);
"""


@dataclass
class CellRecord:
    """What the runner reports for one cell."""

    cell_id: str
    dataset: str
    realisation: int
    method: str
    estimator: str
    status: str
    test_error: float | None = None
    train_error: float | None = None
    params: dict[str, Any] = field(default_factory=dict)
    result: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    traceback: str | None = None
    started_at: float | None = None
    finished_at: float | None = None


def to_jsonable(obj: Any) -> Any:
    """Convert numpy scalars/arrays and tuples to JSON-compatible values (NaN/inf -> None)."""
    if isinstance(obj, Mapping):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return to_jsonable(obj.tolist())
    if isinstance(obj, np.generic):
        return to_jsonable(obj.item())
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, str | int | float | bool) or obj is None:
        return obj
    return repr(obj)


def dumps(obj: Any) -> str:
    """Canonical JSON (sorted keys) used for storage and hashing."""
    return json.dumps(to_jsonable(obj), sort_keys=True, separators=(",", ":"))


class Store:
    """Read/write access to one experiment's ``results.sqlite``.

    Parameters
    ----------
    directory : path
        The experiment's results directory (created if missing when ``create``).
    create : bool
        Create the directory and schema if absent; otherwise a missing store is a ``StoreError``.
    """

    def __init__(self, directory: str | os.PathLike[str], *, create: bool = False) -> None:
        self.directory = Path(directory)
        self.path = self.directory / STORE_FILE
        if not self.path.exists() and not create:
            raise StoreError(f"no results store at {self.path} (run `kernbench run SPEC` first)")
        if create:
            self.directory.mkdir(parents=True, exist_ok=True)
        try:
            self._con = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            self._con.execute("PRAGMA journal_mode=WAL")
            self._con.execute("PRAGMA synchronous=NORMAL")
            if create:
                self._con.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"cannot open results store {self.path}: {exc}") from exc

    # -- lifecycle ---------------------------------------------------------------------------
    def close(self) -> None:
        self._con.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- meta --------------------------------------------------------------------------------
    def set_meta(self, key: str, value: Any) -> None:
        with self._transaction():
            self._con.execute(
                "INSERT INTO meta(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, dumps(value)),
            )

    def get_meta(self, key: str, default: Any = None) -> Any:
        row = self._con.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else default

    # -- cells -------------------------------------------------------------------------------
    def statuses(self) -> dict[str, str]:
        """``cell_id -> status`` for every recorded cell."""
        return dict(self._con.execute("SELECT cell_id, status FROM cells"))

    def record(self, rec: CellRecord) -> None:
        """Insert or replace one cell in its own transaction (attempts counted across reruns)."""
        with self._transaction():
            row = self._con.execute(
                "SELECT attempts FROM cells WHERE cell_id = ?", (rec.cell_id,)
            ).fetchone()
            attempts = (row[0] + 1) if row else 1
            self._con.execute(
                "INSERT OR REPLACE INTO cells (cell_id, dataset, realisation, method, estimator, "
                "status, test_error, train_error, params, result, error, traceback, started_at, "
                "finished_at, attempts) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
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
                ),
            )
            _fault_commit_delay()

    def put_rows(self, rows: Iterable[Mapping[str, Any]]) -> None:
        """Insert or replace whole rows as :meth:`rows` returns them (one transaction; used by
        ``kernbench merge``, which keeps each row's attempts and timestamps)."""
        cols = [
            "cell_id", "dataset", "realisation", "method", "estimator", "status", "test_error",
            "train_error", "params", "result", "error", "traceback", "started_at", "finished_at",
            "attempts",
        ]  # fmt: skip
        values = [
            tuple(dumps(r.get(c) or {}) if c in ("params", "result") else r.get(c) for c in cols)
            for r in rows
        ]
        with self._transaction():
            self._con.executemany(
                f"INSERT OR REPLACE INTO cells ({', '.join(cols)}) "
                f"VALUES ({', '.join('?' * len(cols))})",
                values,
            )

    def delete(self, cell_ids: Iterable[str]) -> None:
        with self._transaction():
            self._con.executemany("DELETE FROM cells WHERE cell_id = ?", [(c,) for c in cell_ids])

    def rows(self) -> list[dict[str, Any]]:
        """Every cell as a dict (``params`` and ``result`` decoded)."""
        return _decoded(
            self._con.execute("SELECT * FROM cells ORDER BY dataset, method, realisation")
        )

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

    def integrity_ok(self) -> bool:
        return self._con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"

    def export_csv(self, path: str | os.PathLike[str] | None = None) -> Path:
        """Write the tidy one-row-per-cell CSV (``cells.csv``) atomically and return its path."""
        target = Path(path) if path is not None else self.directory / CSV_FILE
        frame = cells_frame(self.rows())
        tmp = target.with_suffix(".csv.tmp")
        frame.to_csv(tmp, index=False)
        os.replace(tmp, target)
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
        self._con.execute("ROLLBACK" if exc_type else "COMMIT")


def _decoded(cur: sqlite3.Cursor) -> list[dict[str, Any]]:
    """The cursor's cell rows as dicts with ``params`` and ``result`` decoded from JSON."""
    names = [d[0] for d in cur.description]
    out = []
    for values in cur:
        row = dict(zip(names, values, strict=True))
        row["params"] = json.loads(row["params"]) if row["params"] else {}
        row["result"] = json.loads(row["result"]) if row["result"] else {}
        out.append(row)
    return out


def _fault_commit_delay() -> None:
    """Fault injection for the crash-safety harness: ``KERNBENCH_FAULT_COMMIT_DELAY=<seconds>``
    sleeps inside the open transaction, so a SIGKILL lands mid-commit (tests/reliability)."""
    delay = os.environ.get("KERNBENCH_FAULT_COMMIT_DELAY")
    if delay:
        time.sleep(float(delay))


def _float_or_none(x: Any) -> float | None:
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def cells_frame(rows: list[dict[str, Any]]):
    """A pandas DataFrame with one row per cell: identity, status, headline numbers, timings,
    model size, and the chosen parameters flattened as ``param.<name>`` columns."""
    import pandas as pd

    records = []
    for r in rows:
        res = r.get("result") or {}
        rec = {
            "dataset": r["dataset"],
            "realisation": r["realisation"],
            "method": r["method"],
            "estimator": r["estimator"],
            "status": r["status"],
            "test_error": r["test_error"],
            "train_error": r["train_error"],
            "fit_time_s": res.get("fit_time_s"),
            "predict_time_s": res.get("predict_time_s"),
            "select_time_s": res.get("select_time_s"),
            "model_size": res.get("model_size"),
            "n_train": res.get("n_train"),
            "n_test": res.get("n_test"),
            "split": (res.get("split_info") or {}).get("split"),
            "error": r.get("error"),
            "cell_id": r["cell_id"],
            "attempts": r.get("attempts"),
        }
        for k, v in (r.get("params") or {}).items():
            rec[f"param.{k}"] = v
        records.append(rec)
    columns = [
        "dataset",
        "realisation",
        "method",
        "estimator",
        "status",
        "test_error",
        "train_error",
        "fit_time_s",
        "predict_time_s",
        "select_time_s",
        "model_size",
        "n_train",
        "n_test",
        "split",
        "error",
        "cell_id",
        "attempts",
    ]
    frame = pd.DataFrame.from_records(records)
    if frame.empty:
        return pd.DataFrame(columns=columns)
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
