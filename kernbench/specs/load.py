"""YAML experiment spec -> validated, typed :class:`~kernbench.specs.types.Spec`.

Only a safe YAML loader is used. Every problem raises :class:`~kernbench.errors.SpecError`
naming the file, the key path (``methods.CGENS.grid.C[2]``), the bad value and what was expected,
with "did you mean" suggestions for unknown keys, methods and datasets. Validation is complete
before any work: method parameters are checked against each estimator's own
``_parameter_constraints``, datasets and their options against the catalogue.
"""

from __future__ import annotations

import itertools
import math
import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from kernbench.cells.protocol import MAX_TIMEOUT_S, Protocol
from kernbench.cells.records import VALUES
from kernbench.cells.sources import PluginFile
from kernbench.datasets.user import FILE_DATASET_KEYS  # a data file in place of a catalogue name
from kernbench.errors import DataError
from kernbench.files.checking import _MAX_NODES, _NAME_RE, _Checker, _show, _suggest, load_yaml
from kernbench.files.reading import FileTooLarge, NotARegularFile
from kernbench.specs.compose import compose_spec
from kernbench.specs.keep import SELECT_KEYS
from kernbench.specs.types import DatasetSpec, MethodSpec, Spec, TableSpec, TakeSpec

_MAX_GRID = 10_000

TOP_KEYS = {"name", "title", "datasets", "protocol", "methods", "table", "catalog", "plugins"}
PROTOCOL_KEYS = set(Protocol.__dataclass_fields__)
METHOD_KEYS = {"estimator", "params", "grid", "take"}
TAKE_KEYS = {"from", "params"}
#: every key a mapping in ``datasets`` may have; those of a data file need ``file`` (see user.py)
DATASET_KEYS = {"name", "label", "options", "protocol"} | FILE_DATASET_KEYS
TABLE_KEYS = {"value", "spread", "format", "reference", "significance"}
REFERENCE_KEYS = {"file", "methods", "datasets", "stand_ins"}
TABLE_VALUES = tuple(VALUES)


def load_spec(
    path: str | os.PathLike[str],
    *,
    check_datasets: bool = True,
    dataset_checker: Callable[[str, dict[str, Any]], str] | None = None,
) -> Spec:
    """Parse and validate an experiment spec file.

    Parameters
    ----------
    path : path-like
        The YAML spec.
    check_datasets : bool
        Validate dataset names and options against the catalogue.
    dataset_checker : callable, optional
        ``(name, options) -> canonical name``; raises on an unknown name or bad option. Defaults to
        the catalogue's (:func:`kernbench.datasets.get_dataset` / ``validate_options``).

    Returns
    -------
    Spec

    Raises
    ------
    SpecError
        Naming the file, the key path and what was expected.
    """
    data = load_yaml(path)
    if isinstance(data, Mapping) and "extends" in data:
        data = compose_spec(data, path)
    return parse_spec(
        data,
        file=str(path),
        check_datasets=check_datasets,
        dataset_checker=dataset_checker,
    )


REMOVE_KEYS = SELECT_KEYS  # what keep: and remove: name (kernbench.specs.keep)


def _same_value(a: Any, b: Any) -> bool:
    """Whether two grid values are the same value (``1`` and ``1.0`` are; ``True`` and ``1``
    are not)."""
    return isinstance(a, bool) == isinstance(b, bool) and a == b


def parse_spec(
    data: Any,
    *,
    file: str = "<spec>",
    check_datasets: bool = True,
    dataset_checker: Callable[[str, dict[str, Any]], str] | None = None,
) -> Spec:
    """Validate an already-loaded spec mapping (see :func:`load_spec`)."""
    ck = _Checker(file)
    try:
        _check_size(ck, data)
        return _parse(ck, data, check_datasets, dataset_checker)
    except RecursionError:
        raise ck.fail("", "spec nested too deeply") from None


def _check_size(ck: _Checker, data: Any) -> None:
    """Refuse documents that expand to more than ``_MAX_NODES`` values.

    YAML aliases share one object, so a "billion laughs" document loads small but every walk over
    it (validation, hashing) expands it. Counting stops at the budget, so this costs at most
    ``_MAX_NODES`` steps whatever the document.
    """
    count = 0
    stack: list[tuple[Any, str]] = [(data, "")]
    while stack:
        value, path = stack.pop()
        count += 1
        if count > _MAX_NODES:
            raise ck.fail(
                path,
                f"the spec expands to more than {_MAX_NODES} values "
                "(YAML anchors/aliases repeated?); refusing it",
            )
        if isinstance(value, Mapping):
            stack.extend((v, f"{path}.{k}" if path else str(k)) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, f"{path}[{j}]") for j, v in enumerate(value))


def _parse(ck: _Checker, data: Any, check_datasets: bool, dataset_checker: Any) -> Spec:
    if data is None:
        raise ck.fail("", "the spec is empty; expected a mapping with name, datasets, methods")
    top = ck.mapping(data, "", "a mapping at the top level")
    ck.known_keys(top, TOP_KEYS, "")
    for key in ("name", "datasets", "methods"):
        if key not in top:
            raise ck.fail(key, f"missing required key {key!r}")
    name = ck.string(top["name"], "name", pattern=_NAME_RE)
    title = top.get("title", name)
    if not isinstance(title, str):
        raise ck.fail("title", f"expected a string, got {_show(title)}")
    raw_protocol = top.get("protocol", {})
    protocol = _parse_protocol(ck, raw_protocol)
    if "catalog" in top:
        _register_catalogue(ck, top["catalog"])
    datasets = _parse_datasets(ck, top["datasets"], check_datasets, dataset_checker, raw_protocol)
    plugins = _parse_plugins(ck, top.get("plugins"))
    methods = _parse_methods(ck, top["methods"], plugins, _task_kinds(datasets))
    if protocol.cv_folds < 2:
        for m in methods:
            if any(len(values) > 1 for values in m.grid.values()):
                raise ck.fail(
                    f"methods.{m.label}.grid",
                    "a grid with several values needs protocol.cv_folds >= 2 to choose among them",
                )
    table = _parse_table(ck, top.get("table", {}), methods, datasets)
    if check_datasets:  # once every part is well formed: which datasets each method can take
        _check_tasks(ck, datasets, methods)
    return Spec(
        name=name,
        title=title,
        path=ck.file,
        datasets=datasets,
        methods=methods,
        protocol=protocol,
        table=table,
    )


# -- protocol ------------------------------------------------------------------------------------
def _size(ck: _Checker, value: Any, path: str) -> float | int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ck.fail(path, f"expected a count (int >= 1) or a fraction in (0, 1), got {value!r}")
    if isinstance(value, int):
        return ck.integer(value, path, low=1, high=10**9)
    if not 0.0 < value < 1.0:
        raise ck.fail(path, f"expected a fraction in (0, 1) or an integer count, got {value}")
    return float(value)


def _preprocess(ck: _Checker, value: Any, at: str) -> Any:
    if value is not None:  # None: no preprocessing
        ck.choice(value, at, ("standardize", "minmax"))
    return value


def _minmax_range(ck: _Checker, rng: Any, at: str) -> tuple[float, float]:
    if not isinstance(rng, list) or len(rng) != 2:
        raise ck.fail(at, f"expected [low, high], got {_show(rng)}")
    lo = ck.number(rng[0], f"{at}[0]")
    hi = ck.number(rng[1], f"{at}[1]")
    if not lo < hi:
        raise ck.fail(at, f"expected low < high, got {rng}")
    return (float(lo), float(hi))


#: each protocol key's check (value, key path) -> the Protocol field's value, in checking order
_PROTOCOL_FIELDS: dict[str, Callable[[_Checker, Any, str], Any]] = {
    "realisations": lambda ck, v, at: ck.choice(v, at, ("predefined", "random")),
    "n_realisations": lambda ck, v, at: ck.integer(v, at, low=1, high=100_000),
    "train_size": _size,
    "test_size": _size,
    "stratify": lambda ck, v, at: ck.boolean(v, at),
    "seed": lambda ck, v, at: ck.integer(v, at, low=0, high=2**32 - 1),
    "cv_folds": lambda ck, v, at: ck.integer(v, at, low=1, high=100),
    "preprocess": _preprocess,
    "minmax_range": _minmax_range,
    "fallback": lambda ck, v, at: ck.choice(v, at, ("random", "fewer")),
    "per_class": lambda ck, v, at: ck.integer(v, at, low=1, high=10**9),
    "timeout_s": lambda ck, v, at: float(ck.number(v, at, low=0.001, high=MAX_TIMEOUT_S)),
    "decision_grid": lambda ck, v, at: ck.integer(v, at, low=2, high=1000),
    "grid_extent": lambda ck, v, at: float(ck.number(v, at, low=1e-9)),
}
#: keys whose ``null`` means the default (the others check ``null`` like any value)
_NULL_IS_DEFAULT = frozenset({"per_class", "timeout_s", "decision_grid", "grid_extent"})


def _parse_protocol(ck: _Checker, raw: Any, path: str = "protocol") -> Protocol:
    p = ck.mapping(raw if raw is not None else {}, path)
    ck.known_keys(p, PROTOCOL_KEYS, path)
    kw = {
        key: check(ck, p[key], f"{path}.{key}")
        for key, check in _PROTOCOL_FIELDS.items()
        if key in p and not (p[key] is None and key in _NULL_IS_DEFAULT)
    }
    proto = Protocol(**kw)
    if (
        isinstance(proto.train_size, float)
        and isinstance(proto.test_size, float)
        and proto.train_size + proto.test_size > 1.0
    ):
        raise ck.fail(f"{path}.test_size", "train_size + test_size must not exceed 1")
    return proto


# -- datasets ------------------------------------------------------------------------------------
def _default_dataset_checker(name: str, options: dict[str, Any]) -> str:
    from kernbench.datasets import get_dataset, validate_options

    entry = get_dataset(name)
    validate_options(entry.name, options)
    return entry.name


def _parse_datasets(
    ck: _Checker, raw: Any, check: bool, checker: Any, raw_protocol: Any = None
) -> tuple[DatasetSpec, ...]:
    if not isinstance(raw, list) or not raw:
        raise ck.fail("datasets", f"expected a non-empty list of dataset names, got {_show(raw)}")
    checker = checker or _default_dataset_checker
    out: list[DatasetSpec] = []
    labels: set[str] = set()
    for i, item in enumerate(raw):
        path = f"datasets[{i}]"
        protocol = None
        entry = None
        if isinstance(item, str):
            name, label, options = item, item, {}
        else:
            d = ck.mapping(item, path, "a dataset name or a mapping {name, label, options}")
            ck.known_keys(d, DATASET_KEYS, path)
            if "name" not in d:
                raise ck.fail(f"{path}.name", "missing required key 'name'")
            entry = _file_dataset(ck, d, path)
            name = d["name"]
            label = d.get("label", name)
            options = ck.mapping(d.get("options", {}) or {}, f"{path}.options")
            _check_plain(ck, options, f"{path}.options")
            if d.get("protocol") is not None:  # per-dataset overrides of the spec's protocol
                overrides = ck.mapping(d["protocol"], f"{path}.protocol")
                ck.known_keys(overrides, PROTOCOL_KEYS - {"seed"}, f"{path}.protocol")
                base = raw_protocol if isinstance(raw_protocol, Mapping) else {}
                protocol = _parse_protocol(ck, {**base, **overrides}, f"{path}.protocol")
        ck.string(name, path if isinstance(item, str) else f"{path}.name", pattern=_NAME_RE)
        ck.string(label, f"{path}.label", pattern=_NAME_RE)
        if check or entry is not None:
            try:
                (checker if entry is None else _default_dataset_checker)(name, options)
            except (DataError, KeyError, ValueError, TypeError) as exc:
                message = exc.args[0] if exc.args else str(exc)
                raise ck.fail(path, str(message)) from None
            entry = entry or _user_entry(name)
        if label in labels:
            raise ck.fail(path, f"duplicate dataset label {label!r} (give one a distinct 'label')")
        labels.add(label)
        out.append(
            DatasetSpec(name=name, label=label, options=options, protocol=protocol, entry=entry)
        )
    return tuple(out)


def _register_catalogue(ck: _Checker, value: Any) -> None:
    """``catalog: FILE`` (relative to the spec): validate its entries and make them known."""
    from kernbench.datasets.user import register_catalogue_file

    file = Path(ck.file).parent / ck.string(value, "catalog")
    if not file.exists():  # what exists but is no regular file is refused by the reader
        raise ck.fail("catalog", f"no such file: {file.resolve()}")
    try:
        register_catalogue_file(file)
    except DataError as exc:
        if getattr(exc, "path", None) is not None:  # the catalogue's own key path and file
            raise
        raise ck.fail("catalog", str(exc)) from None


def _file_dataset(ck: _Checker, d: dict[str, Any], path: str) -> dict[str, Any] | None:
    """A ``file:`` dataset: its catalogue mapping, registered in this process (else None)."""
    if "file" not in d:
        extra = sorted(FILE_DATASET_KEYS & set(d))
        if extra:
            raise ck.fail(f"{path}.{extra[0]}", f"{extra[0]!r} applies only with 'file'")
        return None
    from kernbench.datasets.catalog import register_entry
    from kernbench.datasets.user import file_dataset_entry

    raw = file_dataset_entry(ck, d, path)
    try:
        register_entry(raw, origin=ck.file)
    except DataError as exc:
        raise ck.fail(f"{path}.name", str(exc)) from None
    return raw


def _user_entry(name: str) -> dict[str, Any] | None:
    """The mapping of a dataset from a user catalogue (None for the package's own datasets)."""
    from kernbench.datasets import get_dataset

    try:
        return get_dataset(name).raw
    except DataError:
        return None


def _check_plain(ck: _Checker, value: Any, path: str, depth: int = 0) -> None:
    """Options and parameters must be plain scalars, lists and mappings of them."""
    if depth > 8:
        raise ck.fail(path, "nested too deeply")
    if isinstance(value, Mapping):
        for k, v in value.items():
            if not isinstance(k, str):
                raise ck.fail(path, f"keys must be strings, got {_show(k)}")
            _check_plain(ck, v, f"{path}.{k}", depth + 1)
    elif isinstance(value, list):
        for j, v in enumerate(value):
            _check_plain(ck, v, f"{path}[{j}]", depth + 1)
    elif isinstance(value, float) and not math.isfinite(value):
        raise ck.fail(path, f"expected a finite number, got {_show(value)}")
    elif not (value is None or isinstance(value, str | int | float | bool)):
        raise ck.fail(path, f"expected a number, string, boolean or null, got {_show(value)}")


# -- methods -------------------------------------------------------------------------------------
def _parse_methods(
    ck: _Checker,
    raw: Any,
    plugins: tuple[PluginFile, ...] = (),
    kinds: dict[str, list[str]] | None = None,
) -> tuple[MethodSpec, ...]:
    methods = ck.mapping(raw, "methods", "a mapping of method label -> {estimator, params, grid}")
    if not methods:
        raise ck.fail("methods", "expected at least one method")
    out: list[MethodSpec] = []
    for label, body in methods.items():
        path = f"methods.{label}"
        ck.string(label, path, pattern=_NAME_RE)
        m = ck.mapping(body, path, "a mapping {estimator, params, grid}")
        ck.known_keys(m, METHOD_KEYS, path)
        est_name, cls, source = _parse_estimator(ck, m, path, plugins, kinds)
        params = ck.mapping(m.get("params", {}) or {}, f"{path}.params")
        _check_plain(ck, params, f"{path}.params")
        grid = _parse_grid(ck, m.get("grid", {}) or {}, params, path)
        _validate_params(ck, cls, params, grid, path)
        _check_combinations(ck, cls, params, grid, path)
        out.append(
            MethodSpec(label=label, estimator=est_name, params=params, grid=grid, source=source)
        )
    takes = {
        label: _parse_take(ck, body["take"], f"methods.{label}.take", label, out)
        for label, body in methods.items()
        if isinstance(body, dict) and body.get("take") is not None
    }
    _check_take_cycles(ck, takes)
    return tuple(replace(m, take=takes.get(m.label)) for m in out)


def _parse_estimator(
    ck: _Checker,
    m: Mapping[str, Any],
    path: str,
    plugins: tuple[PluginFile, ...],
    kinds: dict[str, list[str]] | None,
) -> tuple[str, type, Any]:
    """A method's ``estimator``: its name, its class and where the class came from."""
    from kernbench.methods import registry
    from kernbench.methods.plugins import PluginError, resolve_estimator

    names = list(registry())
    if "estimator" not in m:
        raise ck.fail(
            f"{path}.estimator",
            f"missing required key 'estimator' (one of: {', '.join(names)})",
        )
    est_name = m["estimator"]
    if not isinstance(est_name, str) or not est_name.strip():
        raise ck.fail(
            f"{path}.estimator",
            f"expected a method name or 'package.module:Class', got {_show(est_name)}",
        )
    try:
        cls, source = resolve_estimator(est_name, plugins)
    except PluginError as exc:
        said = "did you mean" in str(exc)  # the registry's own suggestion: said once
        hint = _suggest(est_name, names) if ":" not in est_name and not said else ""
        raise ck.fail(f"{path}.estimator", f"{exc}{hint}") from None
    _check_estimator_kind(ck, cls, est_name, kinds, f"{path}.estimator")
    return est_name, cls, source


def _parse_grid(
    ck: _Checker, raw: Any, params: Mapping[str, Any], path: str
) -> dict[str, list[Any]]:
    """A method's ``grid``: non-empty lists of distinct plain values, none also fixed in
    ``params``, at most ``_MAX_GRID`` points in all."""
    grid_raw = ck.mapping(raw, f"{path}.grid")
    grid: dict[str, list[Any]] = {}
    n_points = 1
    for pname, values in grid_raw.items():
        gpath = f"{path}.grid.{pname}"
        if not isinstance(values, list):
            raise ck.fail(gpath, f"expected a list of values, got {_show(values)}")
        if not values:
            raise ck.fail(gpath, "expected a non-empty list of values")
        _check_plain(ck, values, gpath)
        if pname in params:
            raise ck.fail(gpath, f"{pname!r} is both fixed in params and searched in grid")
        for j, value in enumerate(values):
            if any(_same_value(value, earlier) for earlier in values[:j]):
                raise ck.fail(
                    f"{gpath}[{j}]", f"{_show(value)} is already in the grid; list each value once"
                )
        grid[pname] = list(values)
        n_points *= len(values)
        if n_points > _MAX_GRID:
            raise ck.fail(f"{path}.grid", f"grid has more than {_MAX_GRID} points")
    return grid


def _parse_take(
    ck: _Checker, raw: Any, path: str, label: str, methods: list[MethodSpec]
) -> TakeSpec:
    """``take: {from: LABEL, params: {target: source | {param: source, transform: NAME}}}``."""
    from kernbench.methods.plugins import method_class
    from kernbench.specs.param_transforms import TRANSFORMS

    t = ck.mapping(raw, path, "a mapping {from, params}")
    ck.known_keys(t, TAKE_KEYS, path)
    by_label = {m.label: m for m in methods}
    source = t.get("from")
    if not isinstance(source, str) or source not in by_label or source == label:
        others = [m for m in by_label if m != label]
        hint = _suggest(source, others) if isinstance(source, str) else ""
        raise ck.fail(
            f"{path}.from", f"expected the label of another method, got {_show(source)}{hint}"
        )
    src, me = by_label[source], by_label[label]
    raw_params = ck.mapping(t.get("params"), f"{path}.params", "a mapping target -> source")
    if not raw_params:
        raise ck.fail(f"{path}.params", "expected at least one parameter to take")
    me_cls = method_class(me.estimator, me.source)
    valid = set(me_cls().get_params(deep=False))
    taken: dict[str, tuple[str, str]] = {}
    for target, how in raw_params.items():
        tpath = f"{path}.params.{target}"
        if isinstance(how, str):
            how = {"param": how}
        how = ck.mapping(how, tpath, "a source parameter name or {param, transform}")
        ck.known_keys(how, {"param", "transform"}, tpath)
        param = how.get("param")
        transform = how.get("transform", "identity")
        if target not in valid:
            raise ck.fail(
                tpath, f"unknown parameter {target!r} for {me.estimator}{_suggest(target, valid)}"
            )
        if target in me.params or target in me.grid:
            raise ck.fail(tpath, f"{target!r} is taken from {source!r}; remove it from params/grid")
        if not isinstance(param, str) or (param not in src.grid and param not in src.params):
            known = sorted([*src.grid, *src.params])
            raise ck.fail(
                f"{tpath}.param",
                f"{source!r} neither searches nor fixes {_show(param)} "
                f"(it has: {', '.join(known)})",
            )
        if transform not in TRANSFORMS:
            raise ck.fail(
                f"{tpath}.transform",
                f"unknown transform {_show(transform)}{_suggest(str(transform), TRANSFORMS)} "
                f"(known: {', '.join(TRANSFORMS)})",
            )
        values = src.grid.get(param, [src.params.get(param)])
        try:
            mapped = [TRANSFORMS[transform](v) for v in values]
        except (TypeError, ValueError) as exc:
            raise ck.fail(f"{tpath}.transform", f"cannot map {source}.{param}: {exc}") from None
        _validate_params(ck, me_cls, me.params, {target: mapped}, path)
        _check_combinations(ck, me_cls, me.params, {**me.grid, target: mapped}, path)
        taken[target] = (param, transform)
    return TakeSpec(source=source, params=taken)


def _parse_plugins(ck: _Checker, raw: Any) -> tuple[PluginFile, ...]:
    """``plugins: [FILE.py, ...]``: Python files in the spec's directory tree, loaded now so that
    the methods they register are known to the rest of the spec."""
    from kernbench.methods.plugins import PluginError, load_plugin_file

    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ck.fail("plugins", f"expected a list of Python files, got {_show(raw)}")
    root = Path(ck.file).parent.resolve()
    out: list[PluginFile] = []
    for i, item in enumerate(raw):
        path = f"plugins[{i}]"
        name = ck.string(item, path)
        if not name.endswith(".py"):
            raise ck.fail(path, f"expected a Python file (*.py), got {_show(name)}")
        target = (Path(ck.file).parent / name).resolve()  # symlinks followed
        if Path(name).is_absolute() or not target.is_relative_to(root):
            raise ck.fail(
                path,
                f"{_show(name)} resolves to {target}, outside the spec's directory {root}; "
                "a plug-in file must lie in the spec's directory tree",
            )
        if not target.exists():
            raise ck.fail(path, f"no such file: {target}")
        try:
            plugin = PluginFile.read(target)
        except (NotARegularFile, FileTooLarge) as exc:
            raise ck.fail(path, f"{target}: {exc.strerror}; refusing it") from None
        except UnicodeDecodeError:
            raise ck.fail(path, f"{target} is not a UTF-8 text file") from None
        if any(p.stem == plugin.stem for p in out):
            raise ck.fail(path, f"two plug-in files named {plugin.stem!r}")
        try:
            load_plugin_file(plugin)
        except PluginError as exc:
            raise ck.fail(path, str(exc)) from None
        out.append(plugin)
    return tuple(out)


def _task_kinds(datasets: tuple[DatasetSpec, ...]) -> dict[str, list[str]]:
    """``"classification"`` / ``"regression"`` -> the labels of the spec's datasets of that kind
    (datasets whose task is unknown are left out)."""
    from kernbench.datasets import get_dataset

    kinds: dict[str, list[str]] = {}
    for ds in datasets:
        try:
            task = get_dataset(ds.name).task
        except Exception:  # noqa: BLE001 - a dataset the (test's) checker invented
            continue
        kinds.setdefault("regression" if task == "regression" else "classification", []).append(
            ds.label
        )
    return kinds


def _check_estimator_kind(
    ck: _Checker, cls: Any, name: str, kinds: dict[str, list[str]] | None, path: str
) -> None:
    """A scikit-learn estimator class, buildable with its defaults, of every dataset's kind."""
    from sklearn.base import is_classifier, is_regressor

    needed = ("fit", "predict", "get_params", "set_params")
    if not isinstance(cls, type) or not all(callable(getattr(cls, a, None)) for a in needed):
        raise ck.fail(
            path,
            f"{name!r} is not a scikit-learn estimator class (it needs {', '.join(needed)}; "
            "subclass sklearn.base.BaseEstimator)",
        )
    try:
        est = cls()
    except Exception as exc:  # noqa: BLE001 - the class's own constructor
        raise ck.fail(path, f"{name!r} cannot be built with its defaults: {exc}") from None
    checks = {"classification": is_classifier, "regression": is_regressor}
    for kind, labels in (kinds or {}).items():
        if not checks[kind](est):
            shown = ", ".join(labels[:3]) + (" ..." if len(labels) > 3 else "")
            raise ck.fail(
                path,
                f"{name!r} is not a {'classifier' if kind == 'classification' else 'regressor'}, "
                f"but the spec has {kind} datasets ({shown})",
            )


def _check_take_cycles(ck: _Checker, takes: dict[str, TakeSpec]) -> None:
    for start in takes:
        seen, label = [start], takes[start].source
        while label in takes:
            if label in seen:
                loop = " -> ".join([*seen[seen.index(label) :], label])
                raise ck.fail(f"methods.{start}.take.from", f"methods take from each other: {loop}")
            seen.append(label)
            label = takes[label].source


def _validate_params(
    ck: _Checker, cls: type, params: dict[str, Any], grid: dict[str, list[Any]], path: str
) -> None:
    """Check names against the constructor and values against ``_parameter_constraints``."""
    from sklearn.utils._param_validation import (
        InvalidParameterError,
        validate_parameter_constraints,
    )

    try:
        valid = set(cls().get_params(deep=False))
    except Exception as exc:  # noqa: BLE001 - the class's own constructor
        raise ck.fail(path, f"{cls.__name__} cannot be built with its defaults: {exc}") from None
    for pname in [*params, *grid]:
        if pname not in valid:
            where = "params" if pname in params else "grid"
            raise ck.fail(
                f"{path}.{where}.{pname}",
                f"unknown parameter {pname!r} for {cls.__name__}{_suggest(pname, valid)} "
                f"(parameters: {', '.join(sorted(valid))})",
            )

    def check(kw: dict[str, Any], where: str, value: Any) -> None:
        try:
            est = cls(**kw)
            constraints = getattr(est, "_parameter_constraints", None)
            if constraints:
                validate_parameter_constraints(
                    constraints, est.get_params(deep=False), caller_name=cls.__name__
                )
        except (InvalidParameterError, ValueError, TypeError) as exc:
            text = re.sub(rf"^The '\w+' parameter of {cls.__name__} ", "", str(exc))
            raise ck.fail(where, f"bad value {_show(value)}: {text}") from None

    base = dict(params)
    for pname, value in params.items():
        check(base, f"{path}.params.{pname}", value)
    for pname, values in grid.items():
        for j, value in enumerate(values):
            check({**base, pname: value}, f"{path}.grid.{pname}[{j}]", value)


def _check_combinations(
    ck: _Checker, cls: type, params: dict[str, Any], grid: dict[str, list[Any]], path: str
) -> None:
    """Check every grid point (with the fixed ``params``) against the estimator's constraints
    between parameters (``_cross_constraints``); the first refused one fails, named."""
    from kernbench.methods.constraints import cross_violation

    if not getattr(cls, "_cross_constraints", ()):
        return
    defaults = cls().get_params(deep=False)
    names = list(grid)
    for point in itertools.product(*(grid[n] for n in names)):
        combo = dict(zip(names, point))
        found = cross_violation(cls, {**params, **combo}, defaults=defaults)
        if found is None:
            continue
        rule, message = found
        full = {**defaults, **params, **combo}
        shown = [*rule.names, *(n for n in names if n not in rule.names)]
        where = "grid" if any(n in combo for n in rule.names) else "params"
        text = ", ".join(
            f"{n}: {full[n] if isinstance(full[n], str) else _show(full[n])}" for n in shown
        )
        raise ck.fail(f"{path}.{where}", f"incompatible parameters {text} ({message})")


# -- datasets x methods --------------------------------------------------------------------------
def _dataset_task(d: DatasetSpec) -> tuple[str, int]:
    """``(task, classes)`` of a dataset as a spec uses it (options may binarise a multi-class
    entry); ``("", 0)`` for a name the catalogue does not know (a test's own checker)."""
    from kernbench.datasets import get_dataset, resolve_options

    try:
        entry = get_dataset(d.name)
        options = resolve_options(entry.name, d.options)
    except (DataError, KeyError):
        return "", 0
    if entry.task == "multiclass" and options.get("positive"):
        return "binary", 2
    return entry.task, entry.classes


def _check_tasks(
    ck: _Checker, datasets: tuple[DatasetSpec, ...], methods: tuple[MethodSpec, ...]
) -> None:
    """Refuse a (dataset, method) pair whose cells could only fail: a binary-only method on a
    dataset of three or more classes (an estimator of the wrong kind, a classifier on regression
    targets, is refused with the method, by :func:`_check_estimator_kind`)."""
    from kernbench.methods.plugins import method_class

    tags = {m.label: method_class(m.estimator, m.source)().__sklearn_tags__() for m in methods}
    for i, d in enumerate(datasets):
        task, classes = _dataset_task(d)
        for m in methods:
            t = tags[m.label]
            clf = t.classifier_tags
            if task == "multiclass" and classes > 2 and clf is not None and not clf.multi_class:
                raise ck.fail(
                    f"datasets[{i}]",
                    f"dataset {d.label!r} has {classes} classes; method {m.label!r} "
                    f"({m.estimator}) is binary only: choose the +1 classes (`options: {{positive: "
                    f"[...]}}`, or `positive:` beside `file:`), or use a multi-class method",
                )


# -- table ---------------------------------------------------------------------------------------
def _is_regression(name: str) -> bool:
    """True for a catalogue dataset whose task is regression (False when it is not known)."""
    from kernbench.datasets import get_dataset

    try:
        return get_dataset(name).task == "regression"
    except Exception:  # noqa: BLE001 - a dataset the (test's) checker invented
        return False


def _parse_table(
    ck: _Checker, raw: Any, methods: tuple[MethodSpec, ...], datasets: tuple[DatasetSpec, ...]
) -> TableSpec:
    t = ck.mapping(raw if raw is not None else {}, "table")
    ck.known_keys(t, TABLE_KEYS, "table")
    kw: dict[str, Any] = {}
    if "value" in t:
        kw["value"] = ck.choice(t["value"], "table.value", TABLE_VALUES)
    if datasets and all(_is_regression(d.name) for d in datasets):
        # regression cells store no error rate: their table shows the RMSE unless told otherwise
        kw.setdefault("value", "test_rmse")
        if kw["value"] in ("test_error", "train_error"):
            raise ck.fail(
                "table.value",
                f"every dataset is a regression task, which has no {kw['value']}; use test_rmse",
            )
    if "spread" in t:
        kw["spread"] = ck.choice(t["spread"], "table.spread", ("std", "stderr"))
    if "format" in t:
        kw["format"] = ck.choice(t["format"], "table.format", ("md", "latex", "csv"))
    if "significance" in t:
        kw["significance"] = float(
            ck.number(t["significance"], "table.significance", low=1e-6, high=0.5)
        )
    if t.get("reference") is not None:
        kw.update(_parse_reference(ck, t["reference"], methods, datasets))
    return TableSpec(**kw)


def _parse_reference(
    ck: _Checker, ref: Any, methods: tuple[MethodSpec, ...], datasets: tuple[DatasetSpec, ...]
) -> dict[str, Any]:
    """``table.reference``: the published numbers' CSV and how its rows name our methods and
    data sets (TableSpec's ``reference*`` fields)."""
    r = ck.mapping(ref, "table.reference", "a mapping {file, methods, datasets}")
    ck.known_keys(r, REFERENCE_KEYS, "table.reference")
    if "file" not in r:
        raise ck.fail("table.reference.file", "missing required key 'file'")
    file = ck.string(r["file"], "table.reference.file")
    ref_path = (Path(ck.file).parent / file).resolve()
    _check_reference_place(ck, file, ref_path)
    if not ref_path.is_file():
        raise ck.fail("table.reference.file", f"no such file: {ref_path}")
    ds_labels = {d.label for d in datasets}
    return {
        "reference": str(ref_path),
        "reference_methods": _reference_methods(ck, r, {m.label for m in methods}),
        "reference_datasets": _reference_datasets(ck, r, ds_labels),
        "reference_stand_ins": _reference_stand_ins(ck, r, ds_labels),
    }


def _labelled(
    ck: _Checker, r: Mapping[str, Any], key: str, known: set[str], kind: str
) -> Iterator[tuple[str, Any, str]]:
    """(label, value, key path) of ``table.reference.<key>``, a mapping keyed by our ``kind``
    labels; an unknown label fails where it stands."""
    section = ck.mapping(r.get(key, {}) or {}, f"table.reference.{key}")
    for label, value in section.items():
        at = f"table.reference.{key}.{label}"
        if label not in known:
            raise ck.fail(at, f"no {kind} labelled {label!r}{_suggest(label, known)}")
        yield label, value, at


def _reference_methods(ck: _Checker, r: Mapping[str, Any], labels: set[str]) -> dict[str, Any]:
    """Method label -> the reference CSV's row filter (a bare name filters its method column)."""
    ref_methods: dict[str, Any] = {}
    for label, filt, at in _labelled(ck, r, "methods", labels, "method"):
        if isinstance(filt, str):
            filt = {"method": filt}
        filt = ck.mapping(filt, at, "a CSV method name or a mapping of column filters")
        _check_plain(ck, filt, at)
        ref_methods[label] = filt
    return ref_methods


def _reference_datasets(ck: _Checker, r: Mapping[str, Any], ds_labels: set[str]) -> dict[str, Any]:
    """Dataset label -> the reference CSV's dataset name, or a row filter with ``dataset``."""
    ref_ds: dict[str, Any] = {}
    for label, other, at in _labelled(ck, r, "datasets", ds_labels, "dataset"):
        if isinstance(other, Mapping):  # {dataset: NAME, <column>: value, ...}: a row filter
            if "dataset" not in other:
                raise ck.fail(at, "a dataset filter needs the key 'dataset'")
            ck.string(other["dataset"], f"{at}.dataset")
            _check_plain(ck, other, at)
        else:
            ck.string(other, at)
        ref_ds[label] = other
    return ref_ds


def _reference_stand_ins(ck: _Checker, r: Mapping[str, Any], ds_labels: set[str]) -> dict[str, Any]:
    """Dataset label -> the paper's data set it stands in for."""
    stand_ins: dict[str, Any] = {}
    for label, paper_data, at in _labelled(ck, r, "stand_ins", ds_labels, "dataset"):
        ck.string(paper_data, at)
        stand_ins[label] = paper_data
    return stand_ins


def _check_reference_place(ck: _Checker, file: str, ref_path: Path) -> None:
    """A reference file lives in the spec's directory tree or in kernbench's package data."""
    roots = (Path(ck.file).parent.resolve(), Path(__file__).resolve().parents[1])
    if not any(ref_path.is_relative_to(root) for root in roots):
        raise ck.fail(
            "table.reference.file",
            f"{_show(file)} resolves to {ref_path}, outside the spec's directory {roots[0]}; "
            "put the reference CSV beside the spec (e.g. reference/table.csv)",
        )


def spec_to_dict(spec: Spec) -> dict[str, Any]:
    """A JSON-ready dict of the spec (stored in the results store's meta table)."""
    from dataclasses import asdict

    return asdict(spec)
