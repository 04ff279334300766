"""One bounded reader for every file a user hands kernbench (spec, catalogue, reference CSV).

:func:`read_user_file` opens the path without blocking (a FIFO nobody writes to cannot hang it),
refuses anything that is not a regular file (FIFOs, character and block devices such as
``/dev/zero``, sockets, directories), refuses a file whose size from its metadata is over the
cap (a 3 GB sparse file is refused before a byte is read), and then reads at most ``cap + 1``
bytes, so a file that grows while it is read, or lies about its size (``/proc``), still costs no
more than the cap. Every refusal is a :class:`FileTooLarge` or :class:`NotARegularFile` (both
``OSError`` subclasses carrying the file name), turned into one line by each caller.
"""

from __future__ import annotations

import errno
import os
import stat

__all__ = ["FileTooLarge", "NotARegularFile", "read_user_file", "read_user_text"]

_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a directory"),
)


class NotARegularFile(OSError):
    """The path names a FIFO, a device, a socket or a directory, not a regular file."""


class FileTooLarge(OSError):
    """The file is larger than the cap of what kernbench reads from it."""


def _kind(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def _size(n: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


def read_user_file(path: str | os.PathLike[str], cap: int, what: str = "file") -> bytes:
    """The bytes of the regular file ``path``, refusing more than ``cap`` bytes.

    Parameters
    ----------
    path : path
        A file named by the user (symlinks to regular files are followed: reading is harmless).
    cap : int
        The most bytes accepted; the refusal names it.
    what : str
        What the file is, for the messages ("spec", "reference CSV").

    Raises
    ------
    FileNotFoundError, PermissionError, ...
        As ``open`` raises them.
    NotARegularFile
        A FIFO, a device, a socket or a directory (never opened for a blocking read).
    FileTooLarge
        The file's size from its metadata, or the bytes actually readable, exceed ``cap``.
    """
    name = os.fspath(path)
    fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotARegularFile(
                errno.EINVAL, f"is {_kind(info.st_mode)}, not a regular {what}", name
            )
        if info.st_size > cap:
            raise FileTooLarge(
                errno.EFBIG,
                f"{what} is {_size(info.st_size)}, more than the {_size(cap)} kernbench reads",
                name,
            )
        chunks: list[bytes] = []
        got = 0
        while got <= cap:
            chunk = os.read(fd, min(1 << 20, cap + 1 - got))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        if got > cap:
            raise FileTooLarge(
                errno.EFBIG, f"{what} is more than the {_size(cap)} kernbench reads", name
            )
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_user_text(path: str | os.PathLike[str], cap: int, what: str = "file") -> str:
    """:func:`read_user_file` decoded as UTF-8 (``UnicodeDecodeError`` when it is not)."""
    return read_user_file(path, cap, what).decode("utf-8")
