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

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kernbench.errors import CatalogueError, DataError, SpecError
from kernbench.spec import _NAME_RE, _Checker, _show, load_yaml

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

#: environment variable naming a user catalogue file
CATALOG_ENV = "KERNBENCH_CATALOG"

#: keys every catalogue entry must have
REQUIRED_KEYS = ("name", "task", "d", "classes", "recipe")
#: every key an entry may have (the optional ones default to "-" or empty)
ENTRY_KEYS = REQUIRED_KEYS + (
    "title",
    "aliases",
    "n",
    "class_counts",
    "source",
    "url",
    "citation",
    "description",
    "labels",
    "encoding",
    "missing",
    "files",
    "requires",
    "options",
    "predefined",
    "substitution",
    "papers",
)
_TEXT_KEYS = ("title", "source", "url", "citation", "description", "labels", "encoding", "missing")
_FILE_KEYS = {"path", "sha256", "bytes", "format", "content_sha256", "sources", "provenance"}
_FILE_FORMATS = ("uci-csv", "keel-dat", "libsvm", "ida-asc")
_SOURCE_KEYS = {"url", "decompressed", "member", "archive_sha256"}
_OPTION_KEYS = {"type", "default", "min", "max", "choices", "doc"}
_OPTION_TYPES = ("int", "float", "bool", "str")
#: recipe kind -> (required keys, optional keys)
_RECIPES: dict[str, tuple[set[str], set[str]]] = {
    "table": (
        {"label_column"},
        {
            "file",
            "files",
            "delimiter",
            "positive",
            "drop_columns",
            "missing",
            "value_map",
            "split_column",
            "skip_lines",
        },
    ),
    "libsvm": ({"file"}, {"n_features", "positive"}),
    "generator": ({"function"}, set()),
    "sklearn": ({"loader"}, set()),
    "rescaled": ({"base"}, set()),
    "ida_pool": ({"stem"}, set()),
    "german": (set(), set()),
    "flare_solar": ({"file"}, set()),
    "splice": ({"file"}, set()),
}
#: predefined kind -> (required keys, optional keys)
_PREDEFINED: dict[str, tuple[set[str], set[str]]] = {
    "ida": ({"stem", "present", "total"}, {"sizes"}),
    "alias": ({"dataset"}, set()),
    "fixed": ({"sizes"}, set()),
    "substitute": ({"sizes"}, {"total", "standardize", "note"}),
}
_SHA_RE = re.compile(r"^[0-9a-f]{64}$")

#: keys a spec's dataset may have besides name, label, options and protocol
FILE_DATASET_KEYS = {"file", "format", "sha256", "positive", "label_column", "delimiter", "header"}
_FORMATS = ("libsvm", "csv", "keel")
_SUFFIX_FORMATS = {
    ".libsvm": "libsvm",
    ".svm": "libsvm",
    ".svmlight": "libsvm",
    ".csv": "csv",
}


class _CatalogueChecker(_Checker):
    def fail(self, path: str, message: str) -> CatalogueError:
        return CatalogueError(self.file, path, message)


# -- catalogue entries ---------------------------------------------------------------------------
def validate_entry(
    ck: _Checker, raw: Any, path: str, base_dir: Path | None = None
) -> dict[str, Any]:
    """Check one catalogue entry; return it with ``files[].path`` found beside the catalogue
    made absolute (and the recipe's file names with them).

    Parameters
    ----------
    ck : checker
        Names the file in errors (a spec's or a catalogue's).
    raw : object
        The entry as loaded from YAML.
    path : str
        Its key path (``datasets[3]``).
    base_dir : Path, optional
        The catalogue file's directory; None for the package catalogue (paths are cache paths).
    """
    e = ck.mapping(raw, path, "a mapping (a catalogue entry)")
    ck.known_keys(e, set(ENTRY_KEYS), path)
    for key in REQUIRED_KEYS:
        if key not in e:
            raise ck.fail(
                f"{path}.{key}",
                f"missing required key {key!r} (required: {', '.join(REQUIRED_KEYS)})",
            )
    e = dict(e)
    ck.string(e["name"], f"{path}.name", pattern=_NAME_RE)
    task = ck.choice(e["task"], f"{path}.task", ("binary", "multiclass"))
    ck.integer(e["d"], f"{path}.d", low=1)
    classes = ck.integer(e["classes"], f"{path}.classes", low=2)
    if task == "binary" and classes != 2:
        raise ck.fail(f"{path}.classes", f"a binary task has 2 classes, got {classes}")
    if e.get("n") is not None:
        ck.integer(e["n"], f"{path}.n", low=1)
    for key in _TEXT_KEYS:
        if e.get(key) is not None and not isinstance(e[key], str):
            raise ck.fail(f"{path}.{key}", f"expected a string, got {_show(e[key])}")
    for key in ("aliases", "requires", "papers"):
        values = e.get(key) or []
        if not isinstance(values, list):
            raise ck.fail(f"{path}.{key}", f"expected a list of strings, got {_show(values)}")
        pattern = None if key == "papers" else _NAME_RE
        for j, v in enumerate(values):
            ck.string(v, f"{path}.{key}[{j}]", pattern=pattern)
    if e.get("class_counts") is not None:
        counts = ck.mapping(e["class_counts"], f"{path}.class_counts")
        for label, count in counts.items():
            ck.integer(count, f"{path}.class_counts.{label}", low=0)
    renamed = _check_files(ck, e, path, base_dir)
    _check_recipe(ck, e, path, renamed)
    _check_options(ck, e, path)
    _check_predefined(ck, e, path)
    return e


def _check_files(ck: _Checker, e: dict[str, Any], path: str, base_dir: Path | None) -> dict:
    files = e.get("files") or []
    if not isinstance(files, list):
        raise ck.fail(f"{path}.files", f"expected a list of files, got {_show(files)}")
    renamed: dict[str, str] = {}
    out = []
    for j, item in enumerate(files):
        fpath = f"{path}.files[{j}]"
        f = dict(ck.mapping(item, fpath, "a mapping {path, sha256, ...}"))
        ck.known_keys(f, _FILE_KEYS, fpath)
        for key in ("path", "sha256"):
            if key not in f:
                raise ck.fail(f"{fpath}.{key}", f"missing required key {key!r}")
        rel = ck.string(f["path"], f"{fpath}.path")
        parts = Path(rel).parts
        if Path(rel).is_absolute() or ".." in parts:
            raise ck.fail(f"{fpath}.path", f"expected a relative path without '..', got {rel!r}")
        for key in ("sha256", "content_sha256"):
            if key in f and (not isinstance(f[key], str) or not _SHA_RE.match(f[key])):
                raise ck.fail(f"{fpath}.{key}", f"expected 64 hex digits, got {_show(f[key])}")
        if f.get("format") is not None:
            ck.choice(f["format"], f"{fpath}.format", _FILE_FORMATS)
        if f.get("bytes") is not None:
            ck.integer(f["bytes"], f"{fpath}.bytes", low=0)
        sources = f.get("sources") or []
        if not isinstance(sources, list):
            raise ck.fail(f"{fpath}.sources", f"expected a list, got {_show(sources)}")
        for k, src in enumerate(sources):
            spath = f"{fpath}.sources[{k}]"
            s = ck.mapping(src, spath, "a mapping {url, ...}")
            ck.known_keys(s, _SOURCE_KEYS, spath)
            url = ck.string(s.get("url"), f"{spath}.url")
            if not url.startswith("https://"):
                raise ck.fail(f"{spath}.url", f"expected an https:// URL, got {url!r}")
        if base_dir is not None and (base_dir / rel).is_file():  # beside the catalogue file
            renamed[rel] = f["path"] = str((base_dir / rel).resolve())
        out.append(f)
    e["files"] = out
    return renamed


def _check_recipe(ck: _Checker, e: dict[str, Any], path: str, renamed: dict[str, str]) -> None:
    rpath = f"{path}.recipe"
    r = dict(ck.mapping(e["recipe"], rpath, "a mapping {kind, ...}"))
    kind = ck.choice(r.get("kind"), f"{rpath}.kind", tuple(_RECIPES))
    required, optional = _RECIPES[kind]
    ck.known_keys(r, required | optional | {"kind"}, rpath)
    for key in sorted(required):
        if key not in r:
            raise ck.fail(f"{rpath}.{key}", f"missing required key {key!r} for kind {kind!r}")
    if kind == "table":
        if ("file" in r) == ("files" in r):
            raise ck.fail(rpath, "expected exactly one of 'file' or 'files'")
        ck.integer(r["label_column"], f"{rpath}.label_column")
        if e["task"] == "binary" and not r.get("positive"):
            raise ck.fail(f"{rpath}.positive", "a binary task needs the raw labels of the +1 class")
        for key in ("drop_columns",):
            for j, v in enumerate(r.get(key) or []):
                ck.integer(v, f"{rpath}.{key}[{j}]")
        if r.get("missing") is not None:
            ck.choice(r["missing"], f"{rpath}.missing", ("drop_rows",))
        if r.get("delimiter") is not None:
            ck.string(r["delimiter"], f"{rpath}.delimiter")
    if r.get("positive") is not None:
        positive = r["positive"]
        if not isinstance(positive, list) or not positive:
            raise ck.fail(f"{rpath}.positive", f"expected a list of labels, got {_show(positive)}")
        for j, v in enumerate(positive):
            if not isinstance(v, str | int | float) or isinstance(v, bool):
                raise ck.fail(f"{rpath}.positive[{j}]", f"expected a label, got {_show(v)}")
    if kind == "generator":
        from kernbench.datasets import generators

        if not callable(getattr(generators, str(r["function"]), None)):
            raise ck.fail(f"{rpath}.function", f"no generator {r['function']!r}")
    listed = {f["path"] for f in e["files"]} | set(renamed)
    names = [("file", r["file"])] if "file" in r else []
    names += [(f"files[{j}]", v) for j, v in enumerate(r.get("files") or [])]
    for key, name in names:
        ck.string(name, f"{rpath}.{key}")
        if name not in listed and not e.get("requires"):
            raise ck.fail(f"{rpath}.{key}", f"{name!r} is not one of the entry's files[].path")
    if "file" in r:
        r["file"] = renamed.get(r["file"], r["file"])
    if "files" in r:
        r["files"] = [renamed.get(v, v) for v in r["files"]]
    e["recipe"] = r


def _check_options(ck: _Checker, e: dict[str, Any], path: str) -> None:
    options = ck.mapping(e.get("options") or {}, f"{path}.options")
    for key, spec in options.items():
        opath = f"{path}.options.{key}"
        o = ck.mapping(spec, opath, "a mapping {type, default, doc, ...}")
        ck.known_keys(o, _OPTION_KEYS, opath)
        if "type" not in o:
            raise ck.fail(f"{opath}.type", "missing required key 'type'")
        ck.choice(o["type"], f"{opath}.type", _OPTION_TYPES)


def _check_predefined(ck: _Checker, e: dict[str, Any], path: str) -> None:
    if e.get("predefined") is None:
        return
    ppath = f"{path}.predefined"
    p = ck.mapping(e["predefined"], ppath, "a mapping {kind, ...}")
    kind = ck.choice(p.get("kind"), f"{ppath}.kind", tuple(_PREDEFINED))
    required, optional = _PREDEFINED[kind]
    ck.known_keys(p, required | optional | {"kind"}, ppath)
    for key in sorted(required):
        if key not in p:
            raise ck.fail(f"{ppath}.{key}", f"missing required key {key!r} for kind {kind!r}")
    if "sizes" in p:
        sizes = p["sizes"]
        if not isinstance(sizes, list) or len(sizes) != 2:
            raise ck.fail(f"{ppath}.sizes", f"expected [n_train, n_test], got {_show(sizes)}")
        for j, v in enumerate(sizes):
            ck.integer(v, f"{ppath}.sizes[{j}]", low=1)


def load_catalogue_file(file: str | Path) -> list[dict[str, Any]]:
    """The validated entries of a user catalogue file (``datasets:`` list, optional ``version``).

    Raises
    ------
    CatalogueError
        Naming the file and the key path of the first problem.
    """
    file = str(file)
    ck = _CatalogueChecker(file)
    try:
        data = load_yaml(file)
    except SpecError as exc:  # no such file, bad YAML: the same words, as a catalogue error
        raise CatalogueError(file, "", exc.detail) from None
    top = ck.mapping(data if data is not None else {}, "", "a mapping with a 'datasets' list")
    ck.known_keys(top, {"version", "datasets"}, "")
    entries = top.get("datasets")
    if not isinstance(entries, list) or not entries:
        raise ck.fail("datasets", f"expected a non-empty list of entries, got {_show(entries)}")
    base = Path(file).resolve().parent
    out = [validate_entry(ck, raw, f"datasets[{i}]", base) for i, raw in enumerate(entries)]
    seen: dict[str, int] = {}
    for i, e in enumerate(out):
        for key in (e["name"], *(e.get("aliases") or ())):
            if key.lower() in seen:
                raise ck.fail(
                    f"datasets[{i}].name", f"name {key!r} is used twice (see datasets[{seen[key]}])"
                )
            seen[key.lower()] = i
    return out


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
    for compressed in (".gz", ".bz2", ".zip"):
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

    Raises
    ------
    SpecError
        (from ``ck``) a missing file, a wrong ``sha256``, a malformed line (with its number), a
        label in ``positive`` that the file lacks, or a single class.
    """
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
    positive = d.get("positive")
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
    raw: dict[str, Any] = {
        "name": name,
        "title": f"{name} ({written})",
        "task": "multiclass",
        "d": 1,
        "classes": 2,
        "source": "file",
        "description": f"{written} ({fmt}), named in {ck.file}",
        "files": [{"path": str(file), "sha256": actual, "format": file_format}],
        "recipe": recipe,
    }
    try:  # read every line now: a malformed one is reported before any work
        probe = pool_from_entry(_entry_from_dict(raw))
    except DataError as exc:
        raise ck.fail(f"{path}.file", str(exc)) from None
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
    elif len(names) == 2:
        positive = [names[1]]
    n, dim = probe.X.shape
    raw.update(n=int(n), d=int(dim))
    if positive is not None:
        raw.update(task="binary", classes=2)
        raw["recipe"]["positive"] = positive
        y_pos = sum(int(c) for lab, c in _counts(probe).items() if lab in positive)
        raw["class_counts"] = {"-1": int(n) - y_pos, "1": y_pos}
        raw["labels"] = f"+1 = {', '.join(positive)}; -1 = the rest"
    else:
        raw.update(classes=len(names), class_counts=_counts(probe))
        raw["labels"] = f"classes 0..{len(names) - 1} = {', '.join(names)}"
    if fmt == "libsvm":
        raw["recipe"]["n_features"] = int(dim)
    return raw


def _counts(pool: Any) -> dict[str, int]:
    import numpy as np

    counts = np.bincount(pool.y, minlength=len(pool.class_names))
    return {name: int(c) for name, c in zip(pool.class_names, counts, strict=True)}
