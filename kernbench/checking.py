"""Validation shared by every file kernbench reads from a user: YAML loading with limits, and a
checker whose errors name the file, the key path, the bad value and what was expected.

The spec (:mod:`kernbench.spec`) and the user dataset catalogues both use it.
"""

from __future__ import annotations

import difflib
import math
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from kernbench.errors import SpecError

__all__ = ["_NAME_RE", "_Checker", "_show", "_suggest", "load_yaml"]

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,99}$")
_MAX_SPEC_CHARS = 256 * 1024  # a real spec is a few kB; PyYAML needs seconds per 100 kB
_MAX_FLOW_DEPTH = 64


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _suggest(word: str, choices: Any) -> str:
    """``; did you mean 'x'?`` for the closest choices (case-insensitive), or ``""``."""
    by_lower: dict[str, str] = {}
    for c in map(str, choices):
        by_lower.setdefault(c.lower(), c)
    close = difflib.get_close_matches(str(word).lower(), list(by_lower), n=3, cutoff=0.6)
    return f"; did you mean {' or '.join(repr(by_lower[c]) for c in close)}?" if close else ""


class _Checker:
    """Carries the file name so every error can name it."""

    def __init__(self, file: str) -> None:
        self.file = file

    def fail(self, path: str, message: str) -> SpecError:
        return SpecError(self.file, path, message)

    def mapping(self, value: Any, path: str, what: str = "a mapping") -> dict[str, Any]:
        if not isinstance(value, Mapping):
            raise self.fail(path, f"expected {what}, got {_show(value)}")
        for key in value:
            if not isinstance(key, str):
                raise self.fail(path or "(top level)", f"keys must be strings, got {_show(key)}")
        return dict(value)

    def known_keys(self, value: Mapping[str, Any], allowed: set[str], path: str) -> None:
        for key in value:
            if key not in allowed:
                prefix = f"{path}." if path else ""
                segment = key if key and key == key.strip() else repr(key)  # '' or ' x' visible
                raise self.fail(
                    f"{prefix}{segment}",
                    f"unknown key {key!r}{_suggest(key, allowed)} "
                    f"(allowed: {', '.join(sorted(allowed))})",
                )

    def string(self, value: Any, path: str, *, pattern: re.Pattern[str] | None = None) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.fail(path, f"expected a non-empty string, got {_show(value)}")
        if pattern is not None and not pattern.match(value):
            raise self.fail(
                path,
                f"{_show(value)} is not a valid name (letters, digits, '_', '-', '.'; "
                "at most 100 characters; no path separators)",
            )
        return value

    def integer(self, value: Any, path: str, *, low: int | None = None, high: int | None = None):
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(path, f"expected an integer, got {_show(value)}")
        if (low is not None and value < low) or (high is not None and value > high):
            raise self.fail(path, f"expected an integer in [{low}, {high}], got {value}")
        return value

    def number(self, value: Any, path: str, *, low: float | None = None, high: float | None = None):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(path, f"expected a number, got {_show(value)}")
        if not math.isfinite(value):
            raise self.fail(path, f"expected a finite number, got {_show(value)}")
        if (low is not None and value < low) or (high is not None and value > high):
            raise self.fail(path, f"expected a number in [{low}, {high}], got {value}")
        return value

    def boolean(self, value: Any, path: str) -> bool:
        if not isinstance(value, bool):
            raise self.fail(path, f"expected true or false, got {_show(value)}")
        return value

    def choice(self, value: Any, path: str, choices: tuple[str, ...]) -> str:
        if value not in choices:
            raise self.fail(
                path,
                f"expected one of {', '.join(map(repr, choices))}, got {_show(value)}"
                f"{_suggest(value, choices) if isinstance(value, str) else ''}",
            )
        return value


def load_yaml(path: str | os.PathLike[str]) -> Any:
    """Read a YAML file with ``yaml.safe_load``; any failure is a SpecError naming the file."""
    file = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SpecError(file, "", "no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError(file, "", f"cannot read spec: {exc}") from None
    if len(text) > _MAX_SPEC_CHARS:
        raise SpecError(
            file, "", f"spec has {len(text)} characters, more than {_MAX_SPEC_CHARS}; refusing it"
        )
    if _flow_depth(text) > _MAX_FLOW_DEPTH:  # PyYAML's scanner is quadratic in this depth
        raise SpecError(
            file, "", f"invalid YAML: nesting too deep (over {_MAX_FLOW_DEPTH} [ or {{)"
        )
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SpecError(file, "", f"invalid YAML: {where}{problem}") from None
    except RecursionError:
        raise SpecError(file, "", "invalid YAML: nesting too deep") from None


def _flow_depth(text: str) -> int:
    """Deepest nesting of ``[``/``{`` in ``text`` (quotes ignored: an upper bound is enough)."""
    depth = deepest = 0
    for ch in text:
        if ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest
