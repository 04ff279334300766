"""What a registered method takes: parameters, defaults, allowed values and meanings.

The allowed values come from the estimator's own ``_parameter_constraints`` (what ``fit``
enforces), the meanings from the ``Parameters`` section of its numpy-style docstring, so the
description cannot drift from the code (``kernbench methods NAME`` prints it).
"""

from __future__ import annotations

import inspect
import math
import re
from dataclasses import dataclass
from numbers import Integral, Real
from pathlib import Path
from typing import Any

from sklearn.utils._param_validation import Interval, Options, StrOptions, make_constraint

from kernbench.cells.sources import PluginFile
from kernbench.methods.registry import default_params, registry

__all__ = ["ParameterDoc", "describe_method", "docstring_parameters", "format_constraint"]


@dataclass(frozen=True)
class ParameterDoc:
    """One constructor parameter of an estimator."""

    name: str
    default: Any
    allowed: str
    meaning: str


def _number(value: float, integral: bool) -> str:
    if math.isinf(value):
        return "∞" if value > 0 else "-∞"
    return str(int(value)) if integral and float(value).is_integer() else f"{value:g}"


def _interval(c: Interval) -> str:
    kind = "int" if c.type is Integral else "float"
    integral = c.type is Integral
    lo, hi = c.left, c.right
    lo_closed = c.closed in ("left", "both")
    hi_closed = c.closed in ("right", "both")
    if lo is not None and hi is not None:
        return (
            f"{kind} in {'[' if lo_closed else '('}{_number(lo, integral)}, "
            f"{_number(hi, integral)}{']' if hi_closed else ')'}"
        )
    if lo is not None:
        return f"{kind} {'≥' if lo_closed else '>'} {_number(lo, integral)}"
    if hi is not None:
        return f"{kind} {'≤' if hi_closed else '<'} {_number(hi, integral)}"
    return kind


_SIMPLE = {"boolean": "bool", "random_state": "int, RandomState or None", "array-like": "array"}


def format_constraint(constraint: Any) -> str:
    """One scikit-learn parameter constraint as short text (``float > 0``, ``'a' | 'b'``)."""
    if constraint is None:
        return "None"
    if isinstance(constraint, str) and constraint in _SIMPLE:
        return _SIMPLE[constraint]
    if isinstance(constraint, Interval):
        return _interval(constraint)
    if isinstance(constraint, StrOptions | Options):
        return " | ".join(repr(v) for v in sorted(constraint.options, key=str))
    if isinstance(constraint, type):
        names = {Real: "float", Integral: "int", str: "str", dict: "dict", list: "list"}
        return names.get(constraint, constraint.__name__)
    if callable(constraint) and not isinstance(constraint, type):
        return "callable"
    return str(make_constraint(constraint))


def docstring_parameters(cls: type) -> dict[str, str]:
    """``name -> first sentence of its description`` from the ``Parameters`` section.

    A line naming several parameters (``tol, cache_size, delta``) gives its description to each;
    a parameter listed without a description maps to ``""``.
    """
    doc = inspect.getdoc(cls) or ""
    match = re.search(r"^Parameters\n-+\n(.*?)(?=^\S[^\n]*\n-+\n|\Z)", doc, re.S | re.M)
    if match is None:
        return {}
    out: dict[str, str] = {}
    names: list[str] = []
    lines: list[str] = []
    for line in [*match.group(1).splitlines(), "."]:
        if line and not line[0].isspace():  # "name : type, default=..." or "a, b, c"
            for name in names:
                out[name] = _first_sentence(lines)
            names = [n.strip() for n in line.split(":", 1)[0].split(",") if n.strip()]
            lines = []
        elif line.strip():
            lines.append(line.strip())
    return out


_MAX_MEANING = 120


def _first_sentence(lines: list[str]) -> str:
    """The description's first sentence, without reST markup, at most ~120 characters."""
    text = " ".join(lines)
    text = re.sub(r":\w+:`~?([^`]+)`", r"\1", text)  # :meth:`x` -> x
    text = text.replace("``", "")
    match = re.match(r"(.+?[.!?])(\s+[A-Z(]|$)", text)
    text = match.group(1) if match else text
    if len(text) > _MAX_MEANING:
        text = text[:_MAX_MEANING].rsplit(" ", 1)[0].rstrip(",;:") + " …"
    return text


def describe_method(name: str) -> tuple[type, list[ParameterDoc]]:
    """The class registered as ``name`` (or named so, case-insensitive) and its parameters.

    Raises
    ------
    KeyError
        Unknown method, with suggestions.
    """
    by_class = {cls.__name__.lower(): cls for cls in registry().values()}
    cls = by_class.get(name.lower())
    if cls is None:  # a registered name, an entry point, 'package.module:Class' or 'FILE:Class'
        from kernbench.methods.plugins import PluginError, resolve_estimator

        name, plugins = _plugin_file(name)
        try:
            cls = resolve_estimator(name, plugins)[0]
        except PluginError as exc:
            raise KeyError(str(exc)) from None
    meanings = docstring_parameters(cls)
    params = []
    for pname, default in default_params(cls).items():
        allowed = _allowed(cls, pname)
        meaning = meanings.get(pname) or _borrowed_meaning(cls, pname, allowed, by_class)
        params.append(ParameterDoc(pname, default, allowed, meaning))
    return cls, params


def _plugin_file(name: str) -> tuple[str, tuple[PluginFile, ...]]:
    """``my_method:Class`` or ``path/my_method.py:Class`` naming a plug-in file that exists (as a
    spec's ``plugins:`` does, relative to the current directory): ``("my_method:Class", (that
    file,))``; any other name as it is, with no plug-in file."""
    module, sep, attr = name.partition(":")
    path = Path(module if module.endswith(".py") else f"{module}.py")
    if not sep or not attr or not path.is_file():
        return name, ()
    return f"{path.stem}:{attr}", (PluginFile.read(path.resolve()),)


def _allowed(cls: type, pname: str) -> str:
    constraints = getattr(cls, "_parameter_constraints", {}) or {}
    return ", ".join(format_constraint(c) for c in constraints.get(pname, ())) or "-"


def _borrowed_meaning(cls: type, pname: str, allowed: str, by_class: dict[str, type]) -> str:
    """An undocumented parameter's meaning from the class its docstring refers to
    (``Parameters ... as :class:`SVMStump```), else from another method whose parameter of the
    same name allows the same values (marked ``(as in NAME)``)."""
    doc = inspect.getdoc(cls) or ""
    for ref in re.findall(r":class:`~?(?:[\w.]+\.)?(\w+)`", doc):
        other = by_class.get(ref.lower())
        if other is not None and other is not cls:
            meaning = docstring_parameters(other).get(pname)
            if meaning:
                return meaning
    for other in by_class.values():
        if other is cls or _allowed(other, pname) != allowed:
            continue
        meaning = docstring_parameters(other).get(pname)
        if meaning:
            return f"(as in {other.registry_name}) {meaning}"
    return ""
