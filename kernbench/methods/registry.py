"""Registry: snake_case method name -> estimator class.

A method module registers its class with ``@register("name")``; ``kernbench.methods`` imports every
method module so the registry is complete once the package is imported.
"""

from __future__ import annotations

import difflib
import inspect
from typing import Any

_REGISTRY: dict[str, type] = {}


def register(name: str):
    """Class decorator adding an estimator class to the registry under ``name``."""

    def deco(cls: type) -> type:
        if (
            name in _REGISTRY
            and _REGISTRY[name] is not cls
            and not _same_plugin(_REGISTRY[name], cls)
        ):
            raise ValueError(f"method name {name!r} registered twice")
        _REGISTRY[name] = cls
        cls.registry_name = name
        return cls

    return deco


def _same_plugin(old: type, new: type) -> bool:
    """True when both classes come from plug-in files (a later plug-in, or a changed content of
    the same file, takes the name over; a spec's own plug-ins are looked up first anyway)."""
    from kernbench.cells.sources import PLUGIN_PREFIX

    return old.__module__.startswith(PLUGIN_PREFIX) and new.__module__.startswith(PLUGIN_PREFIX)


def registry() -> dict[str, type]:
    """A copy of the registry, sorted by name."""
    return dict(sorted(_REGISTRY.items()))


def get_method(name: str) -> type:
    """The estimator class registered as ``name``; ``KeyError`` with suggestions otherwise."""
    try:
        return _REGISTRY[name]
    except KeyError:
        close = difflib.get_close_matches(name, list(_REGISTRY), n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        raise KeyError(f"unknown method {name!r}{hint}") from None


def default_params(cls: type) -> dict[str, Any]:
    """Constructor parameters of ``cls`` with their defaults."""
    sig = inspect.signature(cls.__init__)
    return {
        p.name: p.default
        for p in sig.parameters.values()
        if p.name != "self" and p.kind is not p.VAR_KEYWORD
    }
