"""One error boundary for store and file-system faults.

Corruption, permissions, a full disk and wrong file types are the user's environment, not a bug:
they become a :class:`~kernbench.errors.StoreError` with one line naming the path and what to do
(exit 2), never an internal error. :func:`describe_sqlite_error` and :func:`describe_os_error`
write that line; the store wraps every sqlite call with the first, the CLI's boundary applies the
second to any ``OSError`` that reaches it.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path

from kernbench.errors import StoreError


def describe_sqlite_error(exc: sqlite3.Error, path: str | os.PathLike[str]) -> str:
    """One line: which store, what went wrong, what to do."""
    text = str(exc) or type(exc).__name__
    low = text.lower()
    directory = Path(path).parent
    if "could not decode" in low:  # a damaged page: bytes that are not the text stored there
        text = text.split(" with text ", 1)[0]  # the garbled bytes themselves are not shown
        low = "malformed"
    if "malformed" in low or "not a database" in low or "no such table" in low:
        return (
            f"results store {path} is damaged ({text}); restore the last backup with "
            f"`kernbench restore {directory}`, or move the file away to start afresh"
        )
    if "disk is full" in low or "disk i/o error" in low:
        return (
            f"cannot write results store {path} ({text}); free space on that file system, "
            "then rerun the same command to resume"
        )
    if "readonly" in low or "read-only" in low or "unable to open" in low:
        return (
            f"cannot write results store {path} ({text}); the results directory is not "
            "writable: fix its permissions or choose another --out"
        )
    if "locked" in low or "busy" in low:
        return f"results store {path} is locked by another process ({text}); retry later"
    return f"results store {path}: {text}"


def store_error(exc: sqlite3.Error, path: str | os.PathLike[str]) -> StoreError:
    return StoreError(describe_sqlite_error(exc, path))


_OS_ADVICE = {
    errno.ENOSPC: "free space on that file system, then rerun the same command to resume",
    errno.EDQUOT: "free space (disk quota exceeded), then rerun the same command to resume",
    errno.EACCES: "fix its permissions or choose another --out",
    errno.EPERM: "fix its permissions or choose another --out",
    errno.EROFS: "the file system is read-only: choose another --out",
    errno.EISDIR: "it is a directory where a file is expected: move it away",
    errno.ENOTDIR: "a part of the path is a file where a directory is expected",
    errno.EEXIST: "it already exists: move it away or choose another path",
    errno.ELOOP: "remove the link (kernbench writes only files it created)",
    errno.EFBIG: "point kernbench at the right file",
}


def describe_os_error(exc: OSError) -> str:
    """One line naming the file, the system's reason and what to do."""
    where = exc.filename if exc.filename is not None else "(unknown path)"
    if exc.filename2 is not None:
        where = f"{where} -> {exc.filename2}"
    reason = exc.strerror or str(exc) or type(exc).__name__
    advice = _OS_ADVICE.get(exc.errno or -1, "")
    return f"{where}: {reason}" + (f"; {advice}" if advice else "")


def os_error(exc: OSError) -> StoreError:
    return StoreError(describe_os_error(exc))
