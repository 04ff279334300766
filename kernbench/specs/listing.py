"""Lists in messages cut to what a reader takes in: the first few, then how many more."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["cut_list"]


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
