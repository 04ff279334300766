"""Errors meant for people. Each maps to CLI exit code 2 (usage, spec or data problem)."""

from __future__ import annotations

from collections.abc import Iterable


class KernbenchError(Exception):
    """Base class: a problem the user can fix; the CLI prints the message without a traceback.

    Control and bidirectional-format characters in the message are escaped (:func:`printable`).
    """

    def __init__(self, *args: object) -> None:
        super().__init__(*(printable(a) if isinstance(a, str) else a for a in args))


class UsageError(KernbenchError):
    """A bad command-line option value."""

    def __init__(self, option: str, message: str) -> None:
        super().__init__(f"{option}: {message}")


class SpecError(KernbenchError):
    """A malformed experiment spec.

    The message names the file, the key path (``methods.CGENS.grid.C[2]``), the bad value and what
    was expected.
    """

    def __init__(self, file: str, path: str, message: str) -> None:
        self.file = file
        self.path = path
        self.detail = message
        where = f"{file}: {path}" if path else file
        super().__init__(f"{where}: {message}")


class DataError(KernbenchError):
    """A dataset that cannot be obtained, parsed or verified."""


class ChecksumError(DataError):
    """A file whose sha256 differs from the catalogue's."""

    def __init__(self, path: str, expected: str, actual: str) -> None:
        self.path = path
        self.expected = expected
        self.actual = actual
        super().__init__(
            f"checksum mismatch for {path}\n"
            f"  expected sha256: {expected}\n"
            f"  actual sha256:   {actual}"
        )


class CatalogueError(DataError):
    """A malformed entry in a user dataset catalogue: names the file and the key path."""

    def __init__(self, file: str, path: str, message: str) -> None:
        self.file = file
        self.path = path
        self.detail = message
        where = f"{file}: {path}" if path else file
        super().__init__(f"{where}: {message}")


class StoreError(KernbenchError):
    """The results store cannot be opened or is held by another run."""


def printable(text: str) -> str:
    """``text`` with control and bidirectional-format characters escaped (``\\u202e``).

    Every message the CLI prints goes through this, so a hostile name cannot reorder or hide
    what the terminal shows. Newlines and tabs between lines of a message are kept.
    """
    import unicodedata

    out = []
    for ch in text:
        if ch in "\n\t" or unicodedata.category(ch) not in ("Cc", "Cf", "Zl", "Zp"):
            out.append(ch)
        else:
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
    return "".join(out)


def cut_list(items: Iterable[object], limit: int = 5, sep: str = ", ") -> str:
    """``items`` joined by ``sep``, at most ``limit`` of them, then ``and N more``.

    Parameters
    ----------
    items : iterable
        What to list (each shown with ``str``).
    limit : int
        How many to show before the count.
    sep : str
        The separator.

    Returns
    -------
    str
        ``"a, b, c and 23 more"``; the whole list when it has at most ``limit + 1`` items (a
        count of one more is no shorter than the item).

    Examples
    --------
    >>> cut_list(range(10), 3)
    '0, 1, 2 and 7 more'
    """
    shown = [str(x) for x in items]
    if len(shown) <= limit + 1:
        return sep.join(shown)
    return f"{sep.join(shown[:limit])} and {len(shown) - limit} more"
