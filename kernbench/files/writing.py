"""How every verb opens a file it writes: never through a symlink it did not create.

A results directory may be shared or unpacked from elsewhere, so a name in it
(``report.html``, ``cells.csv``, ``.kernbench.lock``) may be a symlink planted to make kernbench
overwrite another file. Three rules, one helper each:

* a file replaced as a whole (tables, CSV, HTML, figures, backups) is written by
  :func:`replace_file`: into a temporary file that ``mkstemp`` creates exclusively
  (``O_CREAT | O_EXCL | O_NOFOLLOW``, a fresh random name), then renamed over the target, and a
  rename replaces a symlink itself, never what it points to;
* a file opened in place (the run lock) goes through :func:`open_no_follow` (``O_NOFOLLOW``);
* a file another library opens by name (sqlite's store and its ``-wal``/``-shm``) is checked
  first with :func:`refuse_symlinks`.

A refusal is an ``OSError`` with ``errno.ELOOP`` naming the path; the CLI's error boundary turns
it into one line (exit 2).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

__all__ = ["open_no_follow", "refuse_symlinks", "replace_file", "write_text_file"]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


#: permissions of a new file as ``open`` would give it (``mkstemp`` makes 0600)
_FILE_MODE = 0o666 & ~_umask()


def _symlink_error(path: str | os.PathLike[str]) -> OSError:
    return OSError(errno.ELOOP, "is a symbolic link, which kernbench does not write through", path)


def refuse_symlinks(*paths: str | os.PathLike[str]) -> None:
    """Raise ``OSError(ELOOP)`` if any of ``paths`` is a symbolic link (absent paths pass)."""
    for path in paths:
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            continue
        if stat.S_ISLNK(info.st_mode):
            raise _symlink_error(path)


def open_no_follow(path: str | os.PathLike[str], flags: int, mode: int = 0o644) -> int:
    """``os.open(path, flags | O_NOFOLLOW | O_CLOEXEC)``; a symlink is ``OSError(ELOOP)``."""
    try:
        return os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _symlink_error(path) from None
        raise


def replace_file(target: str | os.PathLike[str], write: Callable[[Path], object]) -> Path:
    """Write ``target`` as a whole: ``write(tmp)`` fills a new temporary file beside it, which is
    then renamed over ``target`` (a symlink at ``target`` is replaced, its target untouched).

    ``write`` receives the path of an empty regular file this process created exclusively. On
    any error the temporary file is removed and the error propagates; ``target`` is unchanged.
    """
    target = Path(target)
    if target.is_dir() and not target.is_symlink():
        raise IsADirectoryError(errno.EISDIR, "Is a directory", str(target))
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    tmp = Path(name)
    try:
        os.fchmod(fd, _FILE_MODE)
        os.close(fd)
        fd = -1
        write(tmp)
        os.replace(tmp, target)
    except BaseException as exc:
        if fd >= 0:
            os.close(fd)
        with contextlib.suppress(OSError):
            tmp.unlink()
        if isinstance(exc, OSError) and exc.filename == name:  # name the file the user knows
            raise type(exc)(exc.errno, exc.strerror, str(target)) from None
        raise
    return target


def write_text_file(target: str | os.PathLike[str], text: str, encoding: str = "utf-8") -> Path:
    """:func:`replace_file` with ``text`` as the new content."""
    return replace_file(target, lambda tmp: tmp.write_text(text, encoding=encoding))
