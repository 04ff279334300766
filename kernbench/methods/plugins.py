"""Methods from outside the package: plug-in estimators, entry points and plug-in files.

A spec's ``estimator`` is one of

* a registered name (``cgens``): a method of this package, a method a plug-in file registers with
  ``@register("name")``, or a name a distribution publishes in the ``kernbench.methods``
  entry-point group (``my_method = my_package.module:MyClassifier`` in its metadata);
* ``package.module:Class``: any scikit-learn-compatible estimator importable where kernbench runs
  (``sklearn.svm:SVC``); ``STEM:Class`` names a class of the spec's plug-in file ``STEM.py``.

Every method from outside the package carries its provenance (:class:`MethodSource`): the
distribution and version it was imported from, or the sha256 of the plug-in file (whose code
travels with the cell, so a worker never reads the file). The provenance enters the cell's
identity, so a changed plug-in file or an upgraded distribution reruns its cells.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.metadata
import sys
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kernbench.cells.sources import MethodSource, PluginFile
from kernbench.methods.registry import _REGISTRY, get_method

__all__ = [
    "ENTRY_POINT_GROUP",
    "MethodSource",
    "PluginError",
    "PluginFile",
    "entry_point_methods",
    "load_plugin_file",
    "method_class",
    "module_provenance",
    "resolve_estimator",
]

#: the entry-point group through which a distribution registers named methods
ENTRY_POINT_GROUP = "kernbench.methods"


class PluginError(Exception):
    """A method that cannot be resolved or loaded (one line: what and why)."""


def load_plugin_file(plugin: PluginFile) -> types.ModuleType:
    """Execute a plug-in file's code once per content (cached by sha256) and return its module.

    The classes it registers with ``@register`` replace those of an earlier content of the same
    file. Raises :class:`PluginError` with the first line of whatever the code raised.
    """
    name = plugin.module_name
    if name in sys.modules:
        return sys.modules[name]
    module = types.ModuleType(name)
    module.__file__ = plugin.name
    sys.modules[name] = module
    try:
        exec(compile(plugin.code, plugin.name, "exec"), module.__dict__)  # noqa: S102
    except BaseException as exc:
        del sys.modules[name]
        if isinstance(exc, KeyboardInterrupt) and _stopping():
            raise  # a stop signal landed while the file loaded: not the plug-in's failure
        first = (str(exc).splitlines() or [""])[0][:200]
        raise PluginError(
            f"plug-in file {plugin.name} failed to load: {type(exc).__name__}: {first}"
        ) from None
    return module


def _stopping() -> bool:
    """Whether a stop signal (SIGINT, SIGTERM) has come (see :mod:`kernbench.stop_signals`)."""
    from kernbench.stop_signals import stop_signal

    return stop_signal() is not None


def entry_point_methods() -> dict[str, importlib.metadata.EntryPoint]:
    """The methods distributions publish in the ``kernbench.methods`` group, by name."""
    return {ep.name: ep for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}


def resolve_estimator(
    name: str, plugins: Sequence[PluginFile] = ()
) -> tuple[type, MethodSource | None]:
    """The class a spec's ``estimator`` names and its provenance (None for this package's own).

    Raises
    ------
    PluginError
        The module is missing, the class absent, an entry point fails, or the name is unknown.
    """
    cls = _resolve_class(name, plugins)
    return cls, _source(cls, {p.module_name: p for p in plugins})


def _resolve_class(name: str, plugins: Sequence[PluginFile]) -> type:
    """The class ``name`` resolves to (see :func:`resolve_estimator`), without its provenance."""
    by_stem = {p.stem: p for p in plugins}
    for plugin in plugins:  # a name registered by one of the spec's own plug-ins comes first
        module = load_plugin_file(plugin)
        for obj in vars(module).values():
            if (
                isinstance(obj, type)
                and obj.__module__ == module.__name__
                and vars(obj).get("registry_name") == name
            ):
                return obj
    if ":" in name:
        module_name, _, attr = name.partition(":")
        if not module_name or not attr:
            raise PluginError(f"{name!r}: expected 'package.module:Class'")
        if module_name.removesuffix(".py") in by_stem:
            plugin = by_stem[module_name.removesuffix(".py")]
            module = load_plugin_file(plugin)
        else:
            plugin = None
            module = _import(module_name, name)
        cls = getattr(module, attr, None)
        if cls is None:
            where = plugin.name if plugin else f"module {module_name!r}"
            raise PluginError(f"{where} has no attribute {attr!r}")
        return cls
    if name in _REGISTRY:
        return _REGISTRY[name]
    eps = entry_point_methods()
    if name in eps:
        try:
            cls = eps[name].load()
        except Exception as exc:  # noqa: BLE001 - whatever the distribution's import raises
            first = (str(exc).splitlines() or [""])[0][:200]
            raise PluginError(
                f"entry point {name!r} ({eps[name].value}) failed to load: "
                f"{type(exc).__name__}: {first}"
            ) from None
        return cls
    try:
        get_method(name)
    except KeyError as exc:
        raise PluginError(
            f"{exc.args[0]} (a registered name, an entry point of {ENTRY_POINT_GROUP!r}, "
            "or 'package.module:Class')"
        ) from None
    raise AssertionError("unreachable")  # pragma: no cover


def method_class(estimator: str, source: MethodSource | None) -> type:
    """The class of a planned method, in whatever process computes the cell: a plug-in file's
    code is executed from the carried text (checked against its sha256)."""
    plugins: tuple[PluginFile, ...] = ()
    if source is not None and source.code is not None:
        plugin = PluginFile(source.module, str(source.sha256), source.code)
        if hashlib.sha256(plugin.code.encode("utf-8")).hexdigest() != plugin.sha256:
            raise PluginError(f"plug-in file {plugin.name}: code does not match its sha256")
        plugins = (plugin,)
    return _resolve_class(estimator, plugins)


def _import(module_name: str, name: str) -> types.ModuleType:
    try:
        return importlib.import_module(module_name)
    except ImportError as exc:
        raise PluginError(
            f"cannot import {module_name!r} for {name!r}: {exc} "
            "(install it where kernbench runs, or check the spelling)"
        ) from None
    except Exception as exc:  # noqa: BLE001 - the module's own code failed
        first = (str(exc).splitlines() or [""])[0][:200]
        raise PluginError(
            f"importing {module_name!r} failed: {type(exc).__name__}: {first}"
        ) from None


def _source(cls: Any, plugin_modules: dict[str, PluginFile]) -> MethodSource | None:
    """The provenance of ``cls``: None for kernbench's own classes."""
    module_name = getattr(cls, "__module__", None) or ""
    if module_name in plugin_modules:
        p = plugin_modules[module_name]
        return MethodSource(module=p.name, sha256=p.sha256, code=p.code)
    if module_name == "kernbench" or module_name.startswith("kernbench."):
        return None
    return _module_source(module_name)


def _module_source(module_name: str) -> MethodSource:
    """An imported module's distribution and version, or its source file's sha256."""
    top = module_name.split(".")[0]
    dists = _distributions().get(top, [])
    if dists:
        dist = dists[0]
        return MethodSource(
            module=module_name, distribution=dist, version=importlib.metadata.version(dist)
        )
    file = getattr(sys.modules.get(module_name), "__file__", None)
    digest = hashlib.sha256(Path(file).read_bytes()).hexdigest() if file else None
    return MethodSource(module=module_name, sha256=digest)


@functools.cache
def _distributions() -> dict[str, list[str]]:
    """Top-level module -> the installed distributions providing it (read once: it scans every
    installed distribution's metadata)."""
    return importlib.metadata.packages_distributions()


def module_provenance(module_name: str) -> dict[str, Any]:
    """Import ``module_name`` here and return its provenance record (what a Dask worker answers
    to the driver's plug-in handshake)."""
    importlib.import_module(module_name)
    return _module_source(module_name).record()
