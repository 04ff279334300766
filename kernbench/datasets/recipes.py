"""Recipes: how a catalogue entry's raw files become the pooled ``(X, y)`` of the dataset.

The catalogue names a recipe (``recipe.kind``) with its arguments; this module implements each one.
Labels: binary -> {-1, +1} (``recipe.positive`` lists the raw labels mapped to +1); multi-class ->
0..K-1 in sorted order of the raw labels; regression -> the float64 targets. Parsed pools are
cached per process (:func:`load_pool`, ``functools.lru_cache``) and returned read-only.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kernbench.datasets.catalog import (
    ON_ENTRY_CHANGED,
    DatasetEntry,
    get_dataset,
    resolve_options,
)
from kernbench.datasets.fetch import require
from kernbench.datasets.parsers import (
    Table,
    read_delimited,
    read_ida_asc,
    read_keel,
    read_libsvm,
    to_float,
)
from kernbench.errors import DataError

__all__ = [
    "Pool",
    "binarise",
    "clear_caches",
    "label_text",
    "load_pool",
    "pool_from_entry",
    "read_ida_realisation",
    "svm_scale",
    "standardize_pool",
]


@dataclass(frozen=True)
class Pool:
    """A dataset's pooled examples.

    Attributes
    ----------
    X : ndarray, shape (n, d), float64 (read-only)
    y : ndarray, shape (n,), int64 (read-only); {-1, +1} or 0..K-1 (regression: float64 targets)
    train_mask : ndarray of bool or None
        The standard train/test partition for ``predefined: fixed`` datasets.
    files : tuple of str
        Raw files read (catalogue paths).
    flags : tuple of str
        E.g. ``rebuilt_scaling``, ``substitute``.
    """

    X: np.ndarray
    y: np.ndarray
    train_mask: np.ndarray | None = None
    files: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()
    class_names: tuple[str, ...] = field(default_factory=tuple)


def _path(entry: DatasetEntry, rel: str) -> str:
    for raw in entry.all_files():
        if raw.path == rel:
            return str(require(raw, entry.name))
    raise DataError(f"dataset {entry.name!r}: catalog.yaml lists no file {rel!r}")


def _read_table(entry: DatasetEntry, rel: str, recipe: dict[str, Any]) -> Table:
    raw = next((f for f in entry.all_files() if f.path == rel), None)
    fmt = raw.format if raw is not None else None
    path = _path(entry, rel)
    if fmt == "keel-dat":
        return read_keel(path)
    return read_delimited(path, recipe.get("delimiter", ","), recipe.get("skip_lines", 0))


def _sort_key(label: str) -> tuple[int, float | str]:
    try:
        return (0, float(label))
    except ValueError:
        return (1, label)


def map_labels(
    raw: np.ndarray, task: str, positive: list[str] | None
) -> tuple[np.ndarray, tuple[str, ...]]:
    """Raw string labels -> {-1, +1} (binary, +1 = ``positive``), 0..K-1 (sorted raw labels), or
    the float64 targets of a regression task (no names).

    Raises
    ------
    DataError
        A binary task without ``positive``; a missing class label (empty or NaN); a regression
        target that is not a finite number (the message gives its row, counted from 1 among the
        labels read).
    """
    raw = np.asarray(raw, dtype=str)
    if task == "regression":
        return regression_targets(raw), ()
    for i, value in enumerate(raw):
        if _is_missing_label(value):
            raise DataError(f"row {i + 1}: label {str(value)!r} is missing (not a class name)")
    if task == "binary":
        if not positive:
            raise DataError("a binary recipe needs `positive` labels")
        y = np.where(np.isin(raw, [str(p) for p in positive]), 1, -1).astype(np.int64)
        return y, ("-1", "+1")
    names = sorted(set(raw.tolist()), key=_sort_key)
    index = {name: i for i, name in enumerate(names)}
    return np.array([index[v] for v in raw], dtype=np.int64), tuple(names)


def _is_missing_label(value: str) -> bool:
    """An empty label, or one that reads as NaN (``nan``, ``NaN``): a row without a class."""
    if not value.strip():
        return True
    try:
        return math.isnan(float(value))
    except ValueError:
        return False


def regression_targets(raw: np.ndarray) -> np.ndarray:
    """Text targets -> float64; the first one that is not a finite number is a DataError."""
    out = np.empty(len(raw))
    for i, value in enumerate(raw):
        try:
            out[i] = float(value)
        except ValueError:
            out[i] = np.nan
        if not np.isfinite(out[i]):
            raise DataError(f"row {i + 1}: regression target {str(value)!r} is not a finite number")
    return out


def _table_recipe(entry: DatasetEntry, recipe: dict[str, Any], options: dict[str, Any]) -> Pool:
    rels = recipe.get("files") or [recipe["file"]]
    tables = [_read_table(entry, rel, recipe) for rel in rels]
    cells = np.concatenate([t.cells for t in tables])
    lines = np.concatenate([t.lines for t in tables])
    table = Table(cells, lines, ", ".join(t.path for t in tables))
    file_index = np.concatenate([np.full(len(t.cells), i) for i, t in enumerate(tables)])
    flags: list[str] = []
    if recipe.get("missing") == "drop_rows":
        keep = ~(table.cells == "?").any(axis=1)
        table, file_index = table.take(keep), file_index[keep]
    ncol = table.cells.shape[1]
    label_col = recipe["label_column"] % ncol
    split_col = recipe.get("split_column")
    drop = {c % ncol for c in recipe.get("drop_columns", [])} | {label_col}
    feature_cols = [c for c in range(ncol) if c not in drop]
    train_mask = None
    if split_col is not None:
        train_mask = table.cells[:, split_col] == "0"
    elif len(tables) == 2:
        train_mask = file_index == 0
    elif entry.predefined and entry.predefined.get("kind") == "fixed":
        train_mask = np.arange(len(table.cells)) < entry.predefined["sizes"][0]
    if "value_map" in recipe:
        vmap = {str(k): float(v) for k, v in recipe["value_map"].items()}
        sub = table.cells[:, feature_cols]
        bad = ~np.isin(sub, list(vmap))
        if bad.any():
            r, c = np.argwhere(bad)[0]
            raise DataError(
                f"{table.path}:{table.lines[r]}: malformed line: field {feature_cols[c] + 1} "
                f"{str(sub[r, c])!r} is not one of {sorted(vmap)}"
            )
        X = np.vectorize(vmap.__getitem__, otypes=[float])(sub)
    else:
        X = to_float(table, feature_cols)
    positive = [label_text(v) for v in recipe.get("positive") or ()]
    try:
        y, names = map_labels(table.cells[:, label_col], entry.task, positive)
    except DataError as exc:
        row = re.match(r"row (\d+): ", str(exc))
        if row is None:
            raise
        line = table.lines[int(row.group(1)) - 1]  # name the file's own line
        raise DataError(f"{table.path}:{line}: {str(exc)[row.end() :]}") from None
    if options.get("drop_constant"):
        keep_cols = X.max(axis=0) > X.min(axis=0)
        X = X[:, keep_cols]
        flags.append("dropped_constant_columns")
    return Pool(X, y, train_mask, tuple(rels), tuple(flags), names)


def read_ida_realisation(
    entry: DatasetEntry, k: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, tuple[str, ...]]:
    """Realisation ``k`` (1-based) of an IDA set: ``X_train, y_train, X_test, y_test, files``."""
    return _read_ida_cached(entry.name, k)


@functools.lru_cache(maxsize=256)
def _read_ida_cached(name: str, k: int) -> tuple:
    entry = get_dataset(name)
    stem = entry.predefined["stem"]
    rels = [
        f"{stem}_{part}_{what}_{k}.asc.gz"
        for part in ("train", "test")
        for what in ("data", "labels")
    ]
    Xtr, ytr, Xte, yte = (read_ida_asc(_path(entry, rel)) for rel in rels)
    out = []
    for X, y, rel in ((Xtr, ytr, rels[0]), (Xte, yte, rels[2])):
        y = y.ravel()
        if X.shape[0] != y.shape[0]:
            raise DataError(f"{rel}: {X.shape[0]} rows but {y.shape[0]} labels")
        if not np.isin(y, (-1.0, 1.0)).all():
            raise DataError(f"{rel}: labels must be -1/+1")
        out += [_frozen(X), _frozen(y.astype(np.int64))]
    return (*out, tuple(rels))


def _ida_pool(entry: DatasetEntry, recipe: dict[str, Any], options: dict[str, Any]) -> Pool:
    # realisation 1's train and test parts together are the whole IDA set (checked in the tests)
    Xtr, ytr, Xte, yte, files = read_ida_realisation(entry, 1)
    return Pool(np.vstack([Xtr, Xte]), np.concatenate([ytr, yte]), None, files)


def _german(entry: DatasetEntry, recipe: dict[str, Any], options: dict[str, Any]) -> Pool:
    if options["encoding"] == "ida":
        pool = load_pool("ida-german")
        return Pool(pool.X, pool.y, None, pool.files, ("ida_encoding",))
    table = _read_table(entry, "german/german.data", {"delimiter": None})
    cols = []
    for c in range(table.cells.shape[1] - 1):
        col = table.cells[:, c]
        if np.char.startswith(col, "A").all():  # symbolic attribute A11, A12, ...: one-hot
            levels = sorted(set(col.tolist()))
            cols.append((col[:, None] == np.array(levels)[None, :]).astype(np.float64))
        else:
            cols.append(to_float(table, [c]))
    y, names = map_labels(table.cells[:, -1], "binary", ["2"])
    return Pool(np.hstack(cols), y, None, ("german/german.data",), ("onehot",), names)


# flare.names codes for the letter attributes (columns 1-3)
_FLARE_CODES = ("ABCDEFH", "XRSAHK", "XOIC")


def _flare_solar(entry: DatasetEntry, recipe: dict[str, Any], options: dict[str, Any]) -> Pool:
    table = _read_table(entry, recipe["file"], {"delimiter": None, "skip_lines": 1})
    cells = table.cells
    letters = []
    for c, codes in enumerate(_FLARE_CODES):
        bad = ~np.isin(cells[:, c], list(codes))
        if bad.any():
            r = int(np.argmax(bad))
            raise DataError(f"{table.path}:{table.lines[r]}: malformed line: {str(cells[r, c])!r}")
        letters.append(np.array([codes.index(v) + 1 for v in cells[:, c]], dtype=np.float64))
    numeric = to_float(table, [3, 5, 6, 7, 8, 9])  # activity, previous, hist.-complex x2, area x2
    X = np.column_stack([*letters, numeric])
    evolution = to_float(table, [4]).ravel()
    y = np.where(evolution == 3, 1, -1).astype(np.int64)  # growth vs decay / no growth
    return Pool(X, y, None, (recipe["file"],), ("substitute",))


def _splice(entry: DatasetEntry, recipe: dict[str, Any], options: dict[str, Any]) -> Pool:
    table = _read_table(entry, recipe["file"], {})
    seq = table.cells[:, :-1]
    keep = np.isin(seq, list("ACGT")).all(axis=1)  # drop ambiguity codes D, N, S, R
    seq, labels = seq[keep], table.cells[keep, -1]
    X = np.searchsorted(np.array(list("ACGT")), seq).astype(np.float64) + 1.0  # A,C,G,T -> 1..4
    y, names = map_labels(labels, "binary", ["EI", "IE"])
    return Pool(X, y, None, (recipe["file"],), ("substitute",), names)


def label_text(value: Any) -> str:
    """A label as text: numbers without a spurious ``.0`` (``1.0`` -> ``"1"``), strings as is."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.number):
        return str(value)
    value = float(value)
    return str(int(value)) if value.is_integer() else repr(value)


def _libsvm(entry: DatasetEntry, recipe: dict[str, Any], options: dict[str, Any]) -> Pool:
    """One LIBSVM file, or ``files: [train, test]``: the two parts pooled, the first marked as
    the standard training part (features beyond a part's largest index are 0)."""
    rels = tuple(recipe.get("files") or [recipe["file"]])
    parts = [read_libsvm(_path(entry, rel), recipe.get("n_features")) for rel in rels]
    width = max(X.shape[1] for X, _ in parts)
    X = np.vstack([np.pad(X, ((0, 0), (0, width - X.shape[1]))) for X, _ in parts])
    y = np.concatenate([part_y for _, part_y in parts])
    train_mask = None if len(parts) == 1 else np.arange(len(y)) < len(parts[0][1])
    if entry.task == "regression":  # the line's leading number is the target as it is
        return Pool(X, np.asarray(y, dtype=np.float64), train_mask, rels)
    if entry.task == "binary" and not recipe.get("positive"):  # LIBSVM's convention: y > 0 is +1
        return Pool(X, np.where(y > 0, 1, -1).astype(np.int64), train_mask, rels)
    labels = np.array([label_text(v) for v in y], dtype=str)
    positive = [label_text(v) for v in recipe.get("positive") or ()]
    y_mapped, names = map_labels(labels, entry.task, positive)
    return Pool(X, y_mapped, train_mask, rels, (), names)


def svm_scale(X: np.ndarray, lower: float = -1.0, upper: float = 1.0) -> np.ndarray:
    """LIBSVM ``svm-scale`` semantics: each feature mapped linearly onto [lower, upper] using its
    min and max over ``X``; a constant feature becomes 0 (svm-scale omits it)."""
    lo, hi = X.min(axis=0), X.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    out = lower + (upper - lower) * (X - lo) / span
    out[:, hi <= lo] = 0.0
    return out


def standardize_pool(X: np.ndarray) -> np.ndarray:
    """Zero mean, unit (population) standard deviation per column over the pool, as IDA stored its
    sets; constant columns become 0."""
    mu, sd = X.mean(axis=0), X.std(axis=0)
    return (X - mu) / np.where(sd > 0, sd, 1.0)


def _rescaled(entry: DatasetEntry, recipe: dict[str, Any], options: dict[str, Any]) -> Pool:
    base = load_pool(recipe["base"])
    return Pool(svm_scale(base.X), base.y, None, base.files, (*base.flags, "rebuilt_scaling"))


def _sklearn(entry: DatasetEntry, recipe: dict[str, Any], options: dict[str, Any]) -> Pool:
    from sklearn import datasets

    bunch = getattr(datasets, recipe["loader"])()
    X, target = np.asarray(bunch.data, dtype=np.float64), np.asarray(bunch.target)
    if entry.task == "binary":  # breast_cancer: target 0 = malignant -> +1
        y = np.where(target == 0, 1, -1).astype(np.int64)
    elif entry.task == "regression":  # diabetes: the real-valued target as it is
        y = target.astype(np.float64)
    else:
        y = target.astype(np.int64)
    return Pool(X, y, None, (), ("embedded",))


_RECIPES: dict[str, Callable[[DatasetEntry, dict[str, Any], dict[str, Any]], Pool]] = {
    "table": _table_recipe,
    "ida_pool": _ida_pool,
    "german": _german,
    "flare_solar": _flare_solar,
    "splice": _splice,
    "libsvm": _libsvm,
    "rescaled": _rescaled,
    "sklearn": _sklearn,
}


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


def clear_caches() -> None:
    """Forget parsed pools and split files (a registered dataset's entry changed)."""
    _load_pool_cached.cache_clear()
    _read_ida_cached.cache_clear()


ON_ENTRY_CHANGED.append(clear_caches)


def load_pool(name: str, options: dict[str, Any] | None = None) -> Pool:
    """The pooled ``(X, y)`` of a file-based or embedded dataset (cached per process).

    Raises
    ------
    DataError
        For generated datasets (they have no pool), missing files, or parse errors.
    """
    entry = get_dataset(name)
    opts = resolve_options(entry.name, options)
    pool_opts = {k: v for k, v in opts.items() if k != "label_noise"}
    return _load_pool_cached(entry.name, json.dumps(pool_opts, sort_keys=True))


@functools.lru_cache(maxsize=64)
def _load_pool_cached(name: str, options_json: str) -> Pool:
    return pool_from_entry(get_dataset(name), json.loads(options_json))


def pool_from_entry(entry: DatasetEntry, options: dict[str, Any] | None = None) -> Pool:
    """Run ``entry``'s recipe (no caching; :func:`load_pool` is the cached way by name)."""
    kind = entry.recipe["kind"]
    if kind not in _RECIPES:
        raise DataError(f"dataset {entry.name!r} is generated ({kind}); it has no pooled data")
    pool = _RECIPES[kind](entry, entry.recipe, dict(options or {}))
    X = np.asarray(pool.X, dtype=np.float64)
    if not np.isfinite(X).all():
        raise DataError(f"dataset {entry.name!r}: non-finite feature values after parsing")
    opts = dict(options or {})
    if opts.get("positive"):
        pool = binarise(
            Pool(X, pool.y, pool.train_mask, pool.files, pool.flags, pool.class_names),
            opts["positive"],
            opts.get("negative"),
            entry.name,
        )
        X = pool.X
    return Pool(
        _frozen(X),
        _frozen(pool.y.astype(np.float64 if entry.task == "regression" else np.int64)),
        None if pool.train_mask is None else _frozen(pool.train_mask),
        pool.files,
        pool.flags,
        pool.class_names,
    )


def binarise(pool: Pool, positive: list[str], negative: list[str] | None, name: str = "") -> Pool:
    """A binary task from a multi-class pool: classes ``positive`` -> +1, ``negative`` (default:
    every other class) -> -1; rows of classes in neither list are dropped (one-vs-one).

    Raises
    ------
    DataError
        A listed class is not among the pool's class names.
    """
    # multi-class labels are indices 0..K-1; a loader without names is named by them
    names = list(pool.class_names) or [str(i) for i in range(int(pool.y.max()) + 1)]
    for label in [*positive, *(negative or [])]:
        if label not in names:
            raise DataError(f"dataset {name!r}: no class {label!r} (classes: {', '.join(names)})")
    pos = np.isin(pool.y, [names.index(c) for c in positive])
    keep = np.ones(pool.y.size, dtype=bool)
    if negative is not None:
        keep = pos | np.isin(pool.y, [names.index(c) for c in negative])
    y = np.where(pos, 1, -1)[keep].astype(np.int64)
    mask = None if pool.train_mask is None else pool.train_mask[keep]
    return Pool(pool.X[keep], y, mask, pool.files, (*pool.flags, "binarised"), ("-1", "+1"))
