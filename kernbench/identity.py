"""Canonical JSON and the hashes built on it (cell identities, stored JSON columns)."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from typing import Any

import numpy as np


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
    """Canonical JSON (sorted keys, no spaces) used for storage and hashing."""
    return json.dumps(to_jsonable(obj), sort_keys=True, separators=(",", ":"))


def digest(obj: Any) -> str:
    """sha256 hex digest of the canonical JSON of ``obj`` (64 characters)."""
    return hashlib.sha256(dumps(obj).encode()).hexdigest()
