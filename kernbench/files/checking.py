"""Validation shared by every file kernbench reads from a user: YAML loading with limits, and a
checker whose errors name the file, the key path, the bad value and what was expected.

The spec (:mod:`kernbench.specs.load`) and the user dataset catalogues both use it.
"""

from __future__ import annotations

import difflib
import math
import os
import re
from collections.abc import Mapping
from typing import Any

import yaml

from kernbench.errors import SpecError
from kernbench.files.reading import FileTooLarge, NotARegularFile, read_user_text

__all__ = ["_NAME_RE", "_Checker", "_show", "_suggest", "load_yaml"]

_NAME_RE = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9_.\-]{0,99}\Z")  # whole string: no "x\n"
_MAX_SPEC_CHARS = 256 * 1024  # a real spec is a few kB; PyYAML needs seconds per 100 kB
_MAX_FLOW_DEPTH = 64
_MAX_NODES = 100_000  # values in a document, aliases and merge keys expanded
#: what YAML 1.1 (PyYAML) reads as a string although it looks like a number: ``1e12``, ``-5E-3``
_YAML11_STRING_NUMBER = re.compile(r"[-+]?[0-9]+[eE][-+]?[0-9]+")


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
            if not path:  # the whole file: say what it is, never quote it (it may be any file)
                got = f"a {type(value).__name__}" + (
                    f" of {len(value)} characters" if isinstance(value, str) else ""
                )
                raise self.fail(path, f"expected {what}, but the file reads as {got}")
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
        if pattern is not None and not pattern.fullmatch(value):
            raise self.fail(
                path,
                f"{_show(value)} is not a valid name (letters, digits, '_', '-', '.'; "
                "at most 100 characters; no path separators)",
            )
        return value

    def integer(self, value: Any, path: str, *, low: int | None = None, high: int | None = None):
        if isinstance(value, str) and _YAML11_STRING_NUMBER.fullmatch(value.strip()):
            raise self.fail(
                path,
                f"expected an integer, got the string {_show(value)}: YAML 1.1 reads a number "
                "with an exponent but no dot as text; write the integer out",
            )
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(path, f"expected an integer, got {_show(value)}")
        if (low is not None and value < low) or (high is not None and value > high):
            raise self.fail(path, f"expected an integer in [{low}, {high}], got {value}")
        return value

    def number(self, value: Any, path: str, *, low: float | None = None, high: float | None = None):
        if isinstance(value, str) and _YAML11_STRING_NUMBER.fullmatch(value.strip()):
            raise self.fail(
                path,
                f"expected a number, got the string {_show(value)}: YAML 1.1 reads a number "
                "with an exponent but no dot as text; write it with a dot (e.g. 1.0e12)",
            )
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
    try:  # bounded: a device, a FIFO or a huge file is refused before it is read
        text = read_user_text(path, 4 * _MAX_SPEC_CHARS, "YAML file")
    except FileNotFoundError:
        raise SpecError(file, "", "no such file") from None
    except (FileTooLarge, NotARegularFile) as exc:
        raise SpecError(file, "", f"{exc.strerror}; refusing it") from None
    except OSError as exc:
        raise SpecError(file, "", f"cannot read it: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise SpecError(file, "", f"cannot read it: not UTF-8 text ({exc.reason})") from None
    if len(text) > _MAX_SPEC_CHARS:
        raise SpecError(
            file, "", f"spec has {len(text)} characters, more than {_MAX_SPEC_CHARS}; refusing it"
        )
    if _flow_depth(text) > _MAX_FLOW_DEPTH:  # PyYAML's scanner is quadratic in this depth
        raise SpecError(
            file, "", f"invalid YAML: nesting too deep (over {_MAX_FLOW_DEPTH} [ or {{)"
        )
    try:
        return yaml.load(text, Loader=_BudgetLoader)  # noqa: S506 (a SafeLoader subclass)
    except _OverBudget as exc:
        mark = exc.mark
        where = f" (at line {mark.line + 1})" if mark is not None else ""
        raise SpecError(
            file,
            "",
            f"the spec expands to more than {_MAX_NODES} values while loading{where} "
            "(YAML anchors, aliases or merge keys '<<' repeated?); refusing it",
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SpecError(file, "", f"invalid YAML: {where}{problem}") from None
    except RecursionError:
        raise SpecError(file, "", "invalid YAML: nesting too deep") from None


class _OverBudget(Exception):
    def __init__(self, mark: Any) -> None:
        self.mark = mark


_SAFE_BASE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser when present


class _BudgetLoader(_SAFE_BASE):
    """A safe YAML loader (libyaml's parser when installed, PyYAML's safe constructor) that
    charges every constructed value and every pair a merge key (``<<``) copies to a budget of
    ``_MAX_NODES``, and stops as soon as it is spent.

    Aliases share one node, so a "billion laughs" document composes small, but merge keys copy
    the merged mappings' pairs while loading (a chain of merges grows quadratically, a sequence
    of merges exponentially): counting after ``safe_load`` comes too late. Here the cost of
    loading is bounded by the budget whatever the document.
    """

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._spent = 0

    def _spend(self, n: int, node: yaml.Node) -> None:
        self._spent += n
        if self._spent > _MAX_NODES:
            raise _OverBudget(node.start_mark)

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        self._spend(1, node)  # also for an alias already built: each use is a value
        return super().construct_object(node, deep)

    def flatten_mapping(self, node: yaml.MappingNode) -> None:
        """PyYAML's merge-key expansion, each merged pair charged before it is copied."""
        merge: list[Any] = []
        index = 0
        while index < len(node.value):
            key_node, value_node = node.value[index]
            if key_node.tag == "tag:yaml.org,2002:merge":
                del node.value[index]
                if isinstance(value_node, yaml.MappingNode):
                    sources = [value_node]
                elif isinstance(value_node, yaml.SequenceNode):
                    sources = list(reversed(value_node.value))
                else:
                    sources = [value_node]
                for sub in sources:
                    if not isinstance(sub, yaml.MappingNode):
                        raise yaml.constructor.ConstructorError(
                            "while constructing a mapping",
                            node.start_mark,
                            f"expected a mapping (or a list of mappings) for merging, "
                            f"but found {sub.id}",
                            sub.start_mark,
                        )
                    self.flatten_mapping(sub)
                    self._spend(len(sub.value), node)
                    merge.extend(sub.value)
            elif key_node.tag == "tag:yaml.org,2002:value":
                key_node.tag = "tag:yaml.org,2002:str"
                index += 1
            else:
                index += 1
        if merge:
            self._spend(len(node.value), node)
            node.value = merge + node.value


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
