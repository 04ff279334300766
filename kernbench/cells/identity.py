"""Canonical JSON and the hashes built on it (cell identities, stored JSON columns)."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

#: types returned as they are (exact types: a subclass, such as an enum, takes the general path)
_PLAIN = frozenset((str, int, bool, type(None)))


def to_jsonable(obj: Any) -> Any:
    """Convert numpy scalars/arrays and tuples to JSON-compatible values (NaN/inf -> None)."""
    kind = type(obj)  # exact built-in types first: a stored record is mostly lists of floats
    if kind is float:
        return obj if math.isfinite(obj) else None
    if kind in _PLAIN:
        return obj
    if kind is dict or isinstance(obj, Mapping):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if kind is list or kind is tuple or isinstance(obj, list | tuple):
        return _jsonable_items(obj)
    if isinstance(obj, np.ndarray):
        return to_jsonable(obj.tolist())
    if isinstance(obj, np.generic):
        return to_jsonable(obj.item())
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, str | int | float | bool) or obj is None:
        return obj
    return repr(obj)


def _jsonable_items(items: Any) -> list[Any]:
    """:func:`to_jsonable` of each item, without a call per plain float (a trace's values)."""
    out = []
    for value in items:
        kind = type(value)
        if kind is float:
            out.append(value if math.isfinite(value) else None)
        elif kind in _PLAIN:
            out.append(value)
        else:
            out.append(to_jsonable(value))
    return out


def dumps(obj: Any) -> str:
    """Canonical JSON (sorted keys, no spaces) used for storage and hashing."""
    return json.dumps(to_jsonable(obj), sort_keys=True, separators=(",", ":"))


def digest(obj: Any) -> str:
    """sha256 hex digest of the canonical JSON of ``obj`` (64 characters)."""
    return hashlib.sha256(dumps(obj).encode()).hexdigest()
