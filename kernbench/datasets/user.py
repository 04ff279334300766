"""Datasets of your own: catalogue entries validated like a spec, and data files named in a spec.

Two ways in, neither needs an edit of the installed package:

* a **user catalogue**, a YAML file with a ``datasets:`` list of entries in the package
  catalogue's format, named by a spec (``catalog: my_datasets.yaml``, relative to the spec) or by
  ``$KERNBENCH_CATALOG``. Every entry is validated before use (:func:`validate_entry`); an error
  names the file and the key path (``my_datasets.yaml: datasets[1].recipe.label_column: ...``).
  ``files[].path`` is looked up beside the catalogue file first, then in the cache and mirror.
* a **data file in a spec**: ``{name: mine, file: data/my.libsvm, format: libsvm}``
  (:func:`file_dataset_entry`), relative to the spec. The file is read while the spec is
  validated, so a malformed line is reported with the file and line number before any work; its
  sha256 (checked against an optional ``sha256:``) becomes part of every cell's identity.

Both end up as catalogue mappings given to :func:`kernbench.datasets.catalog.register_entry`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kernbench.datasets.user_catalogue import (
    _SHA_RE,
    CATALOG_ENV,
    ENTRY_KEYS,
    REQUIRED_KEYS,
    load_catalogue_file,
    validate_entry,
)
from kernbench.errors import DataError
from kernbench.files.checking import _NAME_RE, _Checker, _show

__all__ = [
    "CATALOG_ENV",
    "ENTRY_KEYS",
    "FILE_DATASET_KEYS",
    "REQUIRED_KEYS",
    "file_dataset_entry",
    "load_catalogue_file",
    "register_catalogue_file",
    "validate_entry",
]

#: keys a spec's dataset may have besides name, label, options and protocol
FILE_DATASET_KEYS = {
    "file",
    "format",
    "sha256",
    "task",
    "positive",
    "label_column",
    "delimiter",
    "header",
}
_FORMATS = ("libsvm", "csv", "keel")
_SUFFIX_FORMATS = {
    ".libsvm": "libsvm",
    ".svm": "libsvm",
    ".svmlight": "libsvm",
    ".csv": "csv",
}


def register_catalogue_file(file: str | Path) -> list[str]:
    """Validate a user catalogue and register its entries in this process; their names."""
    from kernbench.datasets.catalog import register_entry

    names = []
    for raw in load_catalogue_file(file):
        register_entry(raw, origin=str(file))
        names.append(raw["name"])
    return names


# -- a data file named in a spec -----------------------------------------------------------------
def _format_of(ck: _Checker, d: Mapping[str, Any], file: Path, path: str) -> str:
    if d.get("format") is not None:
        return ck.choice(d["format"], f"{path}.format", _FORMATS)
    stem = file.name
    for compressed in (".gz", ".bz2", ".Z", ".zip"):
        stem = stem.removesuffix(compressed)
    fmt = _SUFFIX_FORMATS.get(Path(stem).suffix.lower())
    if fmt is None:
        raise ck.fail(
            f"{path}.format",
            f"cannot tell the format of {file.name!r} from its name; add "
            f"format: {' | '.join(_FORMATS)}",
        )
    return fmt


def _header_lines(file: Path, delimiter: str | None, label_column: int) -> int:
    """1 when the first non-empty line has a non-numeric feature field (a header), else 0."""
    from kernbench.datasets.parsers import read_bytes

    lines = read_bytes(file).decode("utf-8", errors="replace").splitlines()
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        fields = [f.strip() for f in (line.split(delimiter) if delimiter else line.split())]
        if fields:
            del fields[label_column % len(fields)]
        for field in fields:
            try:
                float(field)
            except ValueError:
                return i + 1
        return 0
    return 0


def file_dataset_entry(ck: _Checker, d: Mapping[str, Any], path: str) -> dict[str, Any]:
    """The catalogue mapping of a spec dataset ``{name, file, format, ...}``; reads the file.

    The task follows from the labels: ``positive`` given, or exactly two labels -> binary (+1 =
    ``positive``, else the greater label); more labels -> multi-class (0..K-1 in sorted order).
    ``task`` says it instead: ``regression`` (the label column holds real-valued targets),
    ``multiclass`` (two labels stay classes 0 and 1) or ``binary``.

    Raises
    ------
    SpecError
        (from ``ck``) a missing file, a wrong ``sha256``, a malformed line (with its number), a
        label in ``positive`` that the file lacks, or a single class.
    """
    import numpy as np

    from kernbench.datasets.catalog import _entry_from_dict
    from kernbench.datasets.fetch import sha256_file
    from kernbench.datasets.recipes import label_text, pool_from_entry

    name = ck.string(d["name"], f"{path}.name", pattern=_NAME_RE)
    written = ck.string(d["file"], f"{path}.file")
    file = (Path(ck.file).parent / written).expanduser().resolve()
    if not file.is_file():
        raise ck.fail(f"{path}.file", f"no such file: {file}")
    fmt = _format_of(ck, d, file, path)
    if fmt == "libsvm":
        for key in ("label_column", "delimiter", "header"):
            if key in d:
                raise ck.fail(f"{path}.{key}", f"{key!r} does not apply to format 'libsvm'")
    try:
        actual = sha256_file(file)
    except OSError as exc:
        raise ck.fail(f"{path}.file", f"cannot read {file}: {exc}") from None
    if d.get("sha256") is not None:
        declared = d["sha256"]
        if not isinstance(declared, str) or not _SHA_RE.match(declared.lower()):
            raise ck.fail(
                f"{path}.sha256", f"expected 64 hex digits (quoted), got {_show(declared)}"
            )
        declared = declared.lower()
        if declared != actual:
            raise ck.fail(
                f"{path}.sha256",
                f"checksum mismatch for {file}: expected {declared}, actual {actual}",
            )
    task = d.get("task")
    if task is not None:
        task = ck.choice(task, f"{path}.task", ("binary", "multiclass", "regression"))
    positive = d.get("positive")
    if positive is not None and task in ("multiclass", "regression"):
        raise ck.fail(f"{path}.positive", f"a {task} task has no +1 class: remove 'positive'")
    if positive is not None:
        values = positive if isinstance(positive, list) else [positive]
        if not values:
            raise ck.fail(f"{path}.positive", "expected a label or a list of labels")
        for j, v in enumerate(values):
            where = f"{path}.positive" + (f"[{j}]" if isinstance(positive, list) else "")
            if isinstance(v, bool):
                raise ck.fail(
                    where, f"got {v}: YAML reads yes/no/true/false as booleans; quote the label"
                )
            if not isinstance(v, str | int | float):
                raise ck.fail(where, f"expected a label, got {_show(v)}")
        positive = [label_text(v) for v in values]
    file_format = {"libsvm": "libsvm", "csv": "uci-csv", "keel": "keel-dat"}[fmt]
    recipe: dict[str, Any] = {"kind": "libsvm" if fmt == "libsvm" else "table", "file": str(file)}
    if fmt != "libsvm":
        label_column = ck.integer(d.get("label_column", -1), f"{path}.label_column")
        delimiter = d.get("delimiter", ",")
        if delimiter is not None:
            ck.string(delimiter, f"{path}.delimiter")
        recipe.update(label_column=label_column, delimiter=delimiter)
        header = d.get("header")
        if header is None:
            skip = _header_lines(file, delimiter, label_column) if fmt == "csv" else 0
        else:
            skip = int(ck.boolean(header, f"{path}.header"))
        if skip:
            recipe["skip_lines"] = skip
    regression = task == "regression"
    raw: dict[str, Any] = {
        "name": name,
        "title": f"{name} ({written})",
        "task": "regression" if regression else "multiclass",
        "d": 1,
        "classes": 0 if regression else 2,
        "source": "file",
        "description": f"{written} ({fmt}), named in {ck.file}",
        "files": [{"path": str(file), "sha256": actual, "format": file_format}],
        "recipe": recipe,
    }
    try:  # read every line now: a malformed one is reported before any work
        probe = pool_from_entry(_entry_from_dict(raw))
    except DataError as exc:
        raise ck.fail(f"{path}.file", str(exc)) from None
    n, dim = probe.X.shape
    if fmt == "libsvm":
        raw["recipe"]["n_features"] = int(dim)
    raw.update(n=int(n), d=int(dim))
    if regression:
        if n < 2 or np.ptp(probe.y) == 0:
            raise ck.fail(f"{path}.file", f"{file}: the regression targets are all equal")
        raw["labels"] = "real-valued targets"
        return raw
    names = list(probe.class_names)
    if len(names) < 2:
        raise ck.fail(f"{path}.file", f"{file} has a single class ({names}); need two or more")
    if positive is not None:
        for label in positive:
            if label not in names:
                raise ck.fail(
                    f"{path}.positive",
                    f"label {label!r} does not occur in {file} (labels: {', '.join(names)})",
                )
    elif len(names) == 2 and task != "multiclass":
        positive = [names[1]]
    if task == "binary" and positive is None:
        raise ck.fail(
            f"{path}.positive",
            f"{file} has {len(names)} labels ({', '.join(names)}): a binary task needs `positive`",
        )
    if positive is not None:
        raw.update(task="binary", classes=2)
        raw["recipe"]["positive"] = positive
        y_pos = sum(int(c) for lab, c in _counts(probe).items() if lab in positive)
        raw["class_counts"] = {"-1": int(n) - y_pos, "1": y_pos}
        raw["labels"] = f"+1 = {', '.join(positive)}; -1 = the rest"
    else:
        raw.update(classes=len(names), class_counts=_counts(probe))
        raw["labels"] = f"classes 0..{len(names) - 1} = {', '.join(names)}"
    return raw


def _counts(pool: Any) -> dict[str, int]:
    import numpy as np

    counts = np.bincount(pool.y, minlength=len(pool.class_names))
    return {name: int(c) for name, c in zip(pool.class_names, counts, strict=True)}
