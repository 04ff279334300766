"""A consistent backup of a results store, and restoring from it (``kernbench restore DIR``).

``run`` copies the store with sqlite's online backup API to ``<dir>/results.backup.sqlite`` after
every :data:`BACKUP_EVERY` finished cells and when it stops (finished, interrupted or failing).
The copy is made through the run's own connection, so it holds every committed cell even if the
store's ``-wal`` file was deleted under the running process; it is a self-contained file (no WAL)
written beside the store and renamed into place, so a kill mid-backup leaves the previous backup.

At start, ``run`` checks the store (``PRAGMA quick_check``) and compares it with the backup: a store
that fails the check, or lacks finished cells the backup holds (its ``-wal`` was deleted or it was
replaced), is refused with the command that restores it. :func:`restore_store` never loses a row:
it starts from the backup and adds every row of the damaged store that is still readable and not
in the backup (or finished where the backup's is not), and keeps the damaged files aside.
"""

from __future__ import annotations

import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from kernbench.cells.records import FINAL_STATUSES
from kernbench.errors import StoreError
from kernbench.files.writing import replace_file
from kernbench.store.boundary import os_error, store_error
from kernbench.store.lock import RunLock
from kernbench.store.sqlite import STORE_FILE, Store

BACKUP_FILE = "results.backup.sqlite"
#: finished cells between two backups during a run (``KERNBENCH_BACKUP_EVERY`` overrides)
BACKUP_EVERY = 20


def backup_every() -> int:
    value = os.environ.get("KERNBENCH_BACKUP_EVERY")
    return max(1, int(value)) if value else BACKUP_EVERY


def backup_store(store: Store) -> Path:
    """Copy ``store`` (every committed row) to ``<dir>/results.backup.sqlite`` atomically."""
    target = store.directory / BACKUP_FILE

    def write(tmp: Path) -> None:
        dst = sqlite3.connect(tmp, isolation_level=None)
        try:
            store.connection().backup(dst)
            dst.execute("PRAGMA journal_mode=DELETE")  # one self-contained file
        finally:
            dst.close()

    try:
        replace_file(target, write)
    except sqlite3.Error as exc:
        raise store_error(exc, target) from None
    except OSError as exc:
        raise os_error(exc) from None
    return target


def _finished_ids(con: sqlite3.Connection) -> set[str]:
    marks = ",".join("?" * len(FINAL_STATUSES))
    query = f"SELECT cell_id FROM cells WHERE status IN ({marks})"
    return {r[0] for r in con.execute(query, tuple(FINAL_STATUSES))}


def _open_backup(path: Path) -> sqlite3.Connection:
    con = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    return con


def check_store(store: Store) -> None:
    """Refuse a store that fails ``PRAGMA quick_check`` or lost finished cells of its backup."""
    restore = f"`kernbench restore {store.directory}`"
    problem = store.quick_check()
    if problem != "ok":
        raise StoreError(
            f"results store {store.path} fails its integrity check ({problem}); "
            f"restore the last backup with {restore}"
        )
    path = store.directory / BACKUP_FILE
    if not path.is_file():
        return
    try:
        con = _open_backup(path)
        try:
            in_backup = _finished_ids(con)
        finally:
            con.close()
    except sqlite3.Error:
        return  # an unreadable backup does not stop a run; the run writes a new one
    if store.created and in_backup:  # the store vanished, its backup did not
        raise StoreError(
            f"{store.directory} has no results store but a backup {path.name} with "
            f"{len(in_backup)} finished cell(s); restore them with {restore}, or move "
            f"{path.name} away to start afresh"
        )
    lost = in_backup - store.finished_ids()
    if lost:
        raise StoreError(
            f"results store {store.path} lacks {len(lost)} finished cell(s) that its backup "
            f"{path.name} holds (was its -wal file deleted or the file replaced?); "
            f"restore them with {restore}"
        )


@dataclass
class RestoreReport:
    directory: Path
    from_backup: int
    kept_from_store: int
    damaged_kept_as: list[Path]
    backup_time: float


def restore_store(directory: str | os.PathLike[str]) -> RestoreReport:
    """Rebuild ``<dir>/results.sqlite`` from its backup plus whatever the store still holds.

    The current store files (``results.sqlite`` and its ``-wal``/``-shm``) are renamed to
    ``results.sqlite.damaged-<time>`` (never deleted). Holds the run lock while it works.
    """
    directory = Path(directory)
    backup = directory / BACKUP_FILE
    if not backup.is_file():
        raise StoreError(f"no backup at {backup}: nothing to restore from")
    with RunLock(directory):
        try:
            con = _open_backup(backup)
            try:
                problem = con.execute("PRAGMA quick_check").fetchone()[0]
                n_backup = con.execute("SELECT COUNT(*) FROM cells").fetchone()[0]
            finally:
                con.close()
        except sqlite3.Error as exc:
            raise store_error(exc, backup) from None
        if problem != "ok":
            raise StoreError(f"the backup {backup} is damaged too ({problem}); cannot restore")
        old_rows, old_meta, old_plan = _salvage(directory)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        kept_as = []
        for suffix in ("", "-wal", "-shm"):
            src = directory / (STORE_FILE + suffix)
            if src.exists():
                dst = directory / f"{STORE_FILE}.damaged-{stamp}{suffix}"
                os.replace(src, dst)
                kept_as.append(dst)

        def write(tmp: Path) -> None:
            src_con = _open_backup(backup)
            dst = sqlite3.connect(tmp, isolation_level=None)
            try:
                src_con.backup(dst)
                dst.execute("PRAGMA journal_mode=WAL")
            finally:
                dst.close()
                src_con.close()

        try:
            replace_file(directory / STORE_FILE, write)
        except sqlite3.Error as exc:
            raise store_error(exc, directory / STORE_FILE) from None
        added = 0
        with Store(directory) as store:
            have = store.statuses()
            extra = [
                r
                for r in old_rows
                if r["cell_id"] not in have
                or (r["status"] in FINAL_STATUSES and have[r["cell_id"]] not in FINAL_STATUSES)
            ]
            if extra:
                store.put_rows(extra)
                added = len(extra)
            if old_plan is not None and old_meta.get("spec") is not None:
                store.set_plan(old_meta["spec"], old_plan)
    return RestoreReport(directory, n_backup, added, kept_as, backup.stat().st_mtime)


def _salvage(directory: Path) -> tuple[list[dict], dict, list[str] | None]:
    """Rows, meta and plan of the current store, as far as they can be read (else empty)."""
    try:
        with Store(directory, readonly=True) as old:
            rows = old.rows()
            meta = {"spec": old.get_meta("spec")}
            plan = old.plan_ids()
            return rows, meta, (sorted(plan) if plan is not None else None)
    except (StoreError, sqlite3.Error, OSError):
        return [], {}, None
